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

vic_status vic__density_order(vic_ctx *c, const float *rho, int64_t n, int64_t *order) {
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
  for (int64_t r = 0; r < n; ++r) {
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

/* Maxima are numbered in id order, so comparing numbers at equal density
 * is comparing ids: vic__denser on the numbers decides as on the points. */
vic_status vic__prominent_from_events(vic_ctx *c, int64_t m, const float *rho_max, int64_t n_events, const int32_t *a,
                                      const int32_t *b, const float *rho_e, double min_ratio, unsigned char *survive) {
  int64_t *up = vic__malloc(c, (size_t)(m > 0 ? m : 1) * sizeof *up, "region forest");
  if (!up) return VIC_E_NOMEM;
  for (int64_t q = 0; q < m; ++q) { up[q] = q; survive[q] = 1; }
  for (int64_t e = 0; e < n_events; ++e) {
    int64_t ra = find(up, a[e]), rb = find(up, b[e]);
    if (ra == rb) continue;
    int64_t hi = vic__denser(rho_max, ra, rb) ? ra : rb, lo = hi == ra ? rb : ra;
    if ((double)rho_max[lo] < min_ratio * (double)rho_e[e]) { up[lo] = hi; survive[lo] = 0; }
  }
  free(up);
  return VIC_OK;
}
