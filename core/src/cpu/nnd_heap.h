/* The neighbour lists of NN-Descent: for every point a fixed-size max-heap
 * of K (distance, id) entries plus a state byte per entry.  Unfilled slots
 * hold (+inf, -1), so a heap is always "full" and its root is the bound a
 * candidate must beat.  Entries compare lexicographically by (distance, id)
 * like vic_topk, so the content after any sequence of pushes is the best K
 * of everything offered, whatever the order: this is what makes the
 * parallel build deterministic. */
#ifndef VIC_NND_HEAP_H
#define VIC_NND_HEAP_H

#include <math.h>
#include <stdint.h>

enum {
  NND_OLD = 0,   /* already joined (sampled into a new-candidate list) */
  NND_NEW = 1,   /* not yet sampled for a local join */
  NND_FRESH = 2  /* inserted during the current iteration; counted, then NEW */
};

typedef struct {
  int32_t *id;    /* n*K */
  float *dist;    /* n*K, working distances */
  uint8_t *state; /* n*K */
  int32_t K;
} nnd_heaps;

static inline int nnd__worse(float da, int32_t ia, float db, int32_t ib) {
  return da > db || (da == db && ia > ib);
}

/* Offer (d, j) to point i's heap; 1 when it entered.  A j already present is
 * refused, so every list holds distinct ids. */
static inline int nnd__push(const nnd_heaps *h, int64_t i, float d, int32_t j, uint8_t state) {
  const int32_t K = h->K;
  float *hd = h->dist + i * K;
  int32_t *hi = h->id + i * K;
  uint8_t *hs = h->state + i * K;
  if (!nnd__worse(hd[0], hi[0], d, j)) return 0;
  for (int32_t t = 0; t < K; ++t)
    if (hi[t] == j) return 0;
  int32_t p = 0;
  for (;;) {
    int32_t l = 2 * p + 1, r = l + 1, m;
    if (l >= K) break;
    m = (r < K && nnd__worse(hd[r], hi[r], hd[l], hi[l])) ? r : l;
    if (!nnd__worse(hd[m], hi[m], d, j)) break;
    hd[p] = hd[m]; hi[p] = hi[m]; hs[p] = hs[m];
    p = m;
  }
  hd[p] = d; hi[p] = j; hs[p] = state;
  return 1;
}

/* Sort point i's heap into ascending (distance, id) order in place. */
static inline void nnd__sort(const nnd_heaps *h, int64_t i) {
  const int32_t K = h->K;
  float *hd = h->dist + i * K;
  int32_t *hi = h->id + i * K;
  uint8_t *hs = h->state + i * K;
  for (int32_t size = K; size > 1; --size) {
    /* move the root (worst) behind the shrinking heap, then sift down */
    float rd = hd[0]; int32_t ri = hi[0]; uint8_t rs = hs[0];
    float d = hd[size - 1]; int32_t j = hi[size - 1]; uint8_t s = hs[size - 1];
    int32_t n = size - 1, p = 0;
    for (;;) {
      int32_t l = 2 * p + 1, r = l + 1, m;
      if (l >= n) break;
      m = (r < n && nnd__worse(hd[r], hi[r], hd[l], hi[l])) ? r : l;
      if (!nnd__worse(hd[m], hi[m], d, j)) break;
      hd[p] = hd[m]; hi[p] = hi[m]; hs[p] = hs[m];
      p = m;
    }
    hd[p] = d; hi[p] = j; hs[p] = s;
    hd[n] = rd; hi[n] = ri; hs[n] = rs;
  }
}

#endif
