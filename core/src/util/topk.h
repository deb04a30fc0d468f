/* Bounded k-selection: a max-heap of the k best (distance, id) pairs seen,
 * ordered lexicographically so that ties go to the lower id.  Shared by
 * every CPU method so they agree on tie-breaking. */
#ifndef VIC_TOPK_H
#define VIC_TOPK_H

#include <math.h>
#include <stdint.h>

typedef struct {
  float *d;
  int64_t *id;
  int32_t k, size;
} vic_topk;

/* a worse than b in (distance, id) order */
static inline int vic__worse(float da, int64_t ia, float db, int64_t ib) {
  return da > db || (da == db && ia > ib);
}

static inline void vic__topk_init(vic_topk *h, float *d, int64_t *id, int32_t k) {
  h->d = d; h->id = id; h->k = k; h->size = 0;
}

/* The value a candidate must beat (+inf until the heap is full). */
static inline float vic__topk_bound(const vic_topk *h) {
  return h->size < h->k ? INFINITY : h->d[0];
}

static inline void vic__topk_sift_down(vic_topk *h, int32_t i) {
  for (;;) {
    int32_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < h->size && vic__worse(h->d[l], h->id[l], h->d[m], h->id[m])) m = l;
    if (r < h->size && vic__worse(h->d[r], h->id[r], h->d[m], h->id[m])) m = r;
    if (m == i) return;
    float td = h->d[i]; h->d[i] = h->d[m]; h->d[m] = td;
    int64_t ti = h->id[i]; h->id[i] = h->id[m]; h->id[m] = ti;
    i = m;
  }
}

/* Offer a candidate; returns 1 if it entered the heap. */
static inline int vic__topk_push(vic_topk *h, float d, int64_t id) {
  if (h->size < h->k) {
    int32_t i = h->size++;
    h->d[i] = d; h->id[i] = id;
    while (i > 0) {
      int32_t p = (i - 1) / 2;
      if (!vic__worse(h->d[i], h->id[i], h->d[p], h->id[p])) break;
      float td = h->d[i]; h->d[i] = h->d[p]; h->d[p] = td;
      int64_t ti = h->id[i]; h->id[i] = h->id[p]; h->id[p] = ti;
      i = p;
    }
    return 1;
  }
  if (!vic__worse(h->d[0], h->id[0], d, id)) return 0;
  h->d[0] = d; h->id[0] = id;
  vic__topk_sift_down(h, 0);
  return 1;
}

/* Sort the heap in place into ascending order and pad to k with (-1, +inf). */
static inline void vic__topk_finish(vic_topk *h) {
  int32_t n = h->size;
  while (h->size > 1) {
    int32_t last = h->size - 1;
    float td = h->d[0]; h->d[0] = h->d[last]; h->d[last] = td;
    int64_t ti = h->id[0]; h->id[0] = h->id[last]; h->id[last] = ti;
    h->size--;
    vic__topk_sift_down(h, 0);
  }
  h->size = n;
  for (int32_t i = n; i < h->k; ++i) { h->d[i] = INFINITY; h->id[i] = -1; }
}

/* Restore (distance, id) order after the working distances were turned into
 * true ones: distinct squared distances can round to the same float
 * distance, which must then be ordered by id.  Insertion sort: the list is
 * already sorted but for such runs, so this is linear in practice. */
static inline void vic__sort_pairs(float *d, int64_t *id, int32_t k) {
  for (int32_t i = 1; i < k; ++i) {
    float td = d[i];
    int64_t ti = id[i];
    if (ti < 0) break; /* padding (-1, +inf) stays at the end */
    int32_t j = i;
    while (j > 0 && vic__worse(d[j - 1], id[j - 1], td, ti)) { d[j] = d[j - 1]; id[j] = id[j - 1]; --j; }
    d[j] = td; id[j] = ti;
  }
}

#endif
