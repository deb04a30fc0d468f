/* Persistence-based merging of density maxima over the kNN graph (the
 * ToMATo scheme of Chazal, Guibas, Oudot & Skraba 2013).  Points enter in
 * descending density; a point with no denser neighbour opens a region;
 * any other point joins the region of its densest denser neighbour, and
 * when its denser neighbours belong to several regions it is a saddle
 * between them: the lower region's maximum is merged into the higher one
 * unless it stands at least min_ratio times above the saddle.  Noise
 * maxima stand a few estimator standard deviations above their
 * surroundings and merge; clumps stand orders of magnitude above. */
#include "prominence.h"
#include "denser_tree.h"

#include <string.h>

typedef struct {
  float rho;
  int64_t id;
} by_rho;

static int descending(const void *a, const void *b) {
  const by_rho *p = a, *q = b;
  if (p->rho != q->rho) return p->rho > q->rho ? -1 : 1;
  return p->id < q->id ? -1 : (p->id > q->id);
}

static int64_t find(int64_t *up, int64_t i) {
  while (up[i] != i) { up[i] = up[up[i]]; i = up[i]; }
  return i;
}

static int ascending_u64(const void *a, const void *b) {
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* Merges sorted runs a[0, na) and b[0, nb) into out. */
static void merge_u64(const uint64_t *a, int64_t na, const uint64_t *b, int64_t nb, uint64_t *out) {
  int64_t i = 0, j = 0, o = 0;
  while (i < na && j < nb) out[o++] = b[j] < a[i] ? b[j++] : a[i++];
  while (i < na) out[o++] = a[i++];
  while (j < nb) out[o++] = b[j++];
}

/* The density order as one sort of 64-bit keys (~bits(rho) << 32 | id:
 * densities are >= 0, whose bits order as the values, so ascending keys
 * are descending density with ties to the lower id): runs sorted in
 * parallel, then merged pairwise in parallel rounds.  The keys are
 * distinct, so the result does not depend on the thread count. */
static vic_status order_by_keys(vic_ctx *c, const float *rho, int64_t n, int64_t *order) {
  uint64_t *key = vic__malloc(c, (size_t)n * sizeof *key, "density order keys");
  uint64_t *tmp = key ? vic__malloc(c, (size_t)n * sizeof *tmp, "density order keys") : NULL;
  if (!tmp) { free(key); return VIC_E_NOMEM; }
  const int threads = vic__threads(c);
  int64_t runs = 1;
  while (runs < 4 * (int64_t)threads && n / (2 * runs) >= 4096) runs *= 2;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    uint32_t b;
    memcpy(&b, &rho[i], sizeof b);
    if (b == 0x80000000u) b = 0; /* -0 equals +0: ties go by id */
    key[i] = ((uint64_t)~b << 32) | (uint64_t)i;
  }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (int64_t r = 0; r < runs; ++r) {
    const int64_t a = n * r / runs, b = n * (r + 1) / runs;
    qsort(key + a, (size_t)(b - a), sizeof *key, ascending_u64);
  }
  for (int64_t width = 1; width < runs; width *= 2) {
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
    for (int64_t r = 0; r < runs; r += 2 * width) {
      const int64_t a = n * r / runs, m = n * (r + width < runs ? r + width : runs) / runs,
                    b = n * (r + 2 * width < runs ? r + 2 * width : runs) / runs;
      merge_u64(key + a, m - a, key + m, b - m, tmp + a);
    }
    uint64_t *t = key;
    key = tmp;
    tmp = t;
  }
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int64_t i = 0; i < n; ++i) order[i] = (int64_t)(key[i] & 0xffffffffu);
  free(key);
  free(tmp);
  return VIC_OK;
}

vic_status vic__density_order(vic_ctx *c, const float *rho, int64_t n, int64_t *order) {
  if (n <= ((int64_t)1 << 32)) return order_by_keys(c, rho, n, order);
  by_rho *tmp = vic__malloc(c, (size_t)n * sizeof *tmp, "density order");
  if (!tmp) return VIC_E_NOMEM;
  for (int64_t i = 0; i < n; ++i) { tmp[i].rho = rho[i]; tmp[i].id = i; }
  qsort(tmp, (size_t)n, sizeof *tmp, descending);
  for (int64_t i = 0; i < n; ++i) order[i] = tmp[i].id;
  free(tmp);
  return VIC_OK;
}

vic_status vic__prominent_maxima(vic_ctx *c, const vic_knn *nn, const float *rho, const int64_t *order,
                                 double min_ratio, unsigned char *survive) {
  const int64_t n = nn->n, k = nn->k;
  int64_t *up = vic__malloc(c, (size_t)n * sizeof *up, "region forest");
  if (!up) return VIC_E_NOMEM;
  for (int64_t i = 0; i < n; ++i) { up[i] = -1; survive[i] = 0; }
  /* up[i] = -1: not entered yet.  A region's root is its maximum, so
   * comparing roots with vic__denser compares the regions' heights. */
  /* The loop is a chain of random reads (a row of ids, then up[] of each
   * id); prefetching rows a few points ahead and their up[] entries a few
   * points later overlaps them.  Prefetches change no result. */
  enum { ROW_AHEAD = 8, UP_AHEAD = 4 };
  for (int64_t r = 0; r < n; ++r) {
#if defined(__GNUC__)
    if (r + ROW_AHEAD < n) {
      const int64_t *row = nn->ids + order[r + ROW_AHEAD] * k;
      for (int64_t t = 0; t < k; t += 8) __builtin_prefetch(row + t);
    }
    if (r + UP_AHEAD < n) {
      const int64_t *row = nn->ids + order[r + UP_AHEAD] * k;
      for (int64_t t = 0; t < k; ++t)
        if (row[t] >= 0 && row[t] < n) __builtin_prefetch(up + row[t]);
    }
#endif
    int64_t i = order[r], best = -1;
    for (int64_t t = 0; t < k; ++t) {
      int64_t j = nn->ids[i * k + t];
      if (j >= 0 && j < n && up[j] >= 0 && (best < 0 || vic__denser(rho, j, best))) best = j;
    }
    if (best < 0) { up[i] = i; survive[i] = 1; continue; }
    int64_t root = find(up, best);
    up[i] = root;
    for (int64_t t = 0; t < k; ++t) {
      int64_t j = nn->ids[i * k + t];
      if (j < 0 || j >= n || up[j] < 0) continue;
      int64_t other = find(up, j);
      root = find(up, i);
      if (other == root) continue;
      int64_t hi = vic__denser(rho, other, root) ? other : root, lo = hi == other ? root : other;
      if ((double)rho[lo] < min_ratio * (double)rho[i]) { up[lo] = hi; survive[lo] = 0; }
    }
    if ((r & 0xFFFF) == 0 && vic__cancelled(c)) break;
  }
  free(up);
  return vic__cancelled(c) ? vic__fail(c, VIC_E_CANCELLED, "cancelled during stage 'peaks'") : VIC_OK;
}

static int32_t find32(int32_t *up, int32_t i) {
  while (up[i] != i) { up[i] = up[up[i]]; i = up[i]; }
  return i;
}

/* Maxima are numbered in id order, so comparing numbers at equal density
 * is comparing ids: vic__denser on the numbers decides as on the points.
 * The loop is a chain of random reads into up[] and rho_max[] (maxima by
 * the million, events by the hundred million); the events ahead are
 * known, so their maxima's up[] entries are prefetched far ahead and the
 * entries those point to (mostly the roots, after path halving) nearer:
 * the reads overlap instead of waiting one by one.  The forest is int32
 * (a and b are): half the bytes to miss in cache.  Neither the prefetches
 * nor the way paths are shortened change which root a region has, so the
 * survivors are those of the plain loop. */
void vic__prominent_events_run(int64_t m, const float *rho_max, int64_t n_events, const int32_t *a, const int32_t *b,
                                const float *rho_e, double min_ratio, int32_t *up, unsigned char *survive) {
  for (int64_t q = 0; q < m; ++q) { up[q] = (int32_t)q; survive[q] = 1; }
  enum { FAR = 32, NEAR = 12 };
  for (int64_t e = 0; e < n_events; ++e) {
#if defined(__GNUC__)
    if (e + FAR < n_events) {
      __builtin_prefetch(up + a[e + FAR], 1);
      __builtin_prefetch(up + b[e + FAR], 1);
    }
    if (e + NEAR < n_events) {
      const int32_t pa = up[a[e + NEAR]], pb = up[b[e + NEAR]];
      __builtin_prefetch(up + pa, 1);
      __builtin_prefetch(up + pb, 1);
      __builtin_prefetch(rho_max + pa);
      __builtin_prefetch(rho_max + pb);
    }
#endif
    const int32_t ra = find32(up, a[e]), rb = find32(up, b[e]);
    if (ra == rb) continue;
    const int32_t hi = vic__denser(rho_max, ra, rb) ? ra : rb, lo = hi == ra ? rb : ra;
    if ((double)rho_max[lo] < min_ratio * (double)rho_e[e]) { up[lo] = hi; survive[lo] = 0; }
  }
}

vic_status vic__prominent_from_events(vic_ctx *c, int64_t m, const float *rho_max, int64_t n_events, const int32_t *a,
                                      const int32_t *b, const float *rho_e, double min_ratio, unsigned char *survive) {
  if (m > INT32_MAX) return vic__fail(c, VIC_E_UNSUPPORTED, "prominence: %lld maxima pass int32", (long long)m);
  int32_t *up = vic__malloc(c, (size_t)(m > 0 ? m : 1) * sizeof *up, "region forest");
  if (!up) return VIC_E_NOMEM;
  vic__prominent_events_run(m, rho_max, n_events, a, b, rho_e, min_ratio, up, survive);
  free(up);
  return VIC_OK;
}
