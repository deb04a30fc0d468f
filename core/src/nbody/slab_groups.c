/* Leftover rows of the slabs grouped by position (slab_plan.h). */
#include "slab_plan.h"

#include <math.h>
#include <stdlib.h>

typedef struct {
  double v;
  int64_t i;
} row_at;

static int by_coord(const void *a, const void *b) {
  const row_at *p = a, *q = b;
  return p->v < q->v ? -1 : p->v > q->v ? 1 : (p->i > q->i) - (p->i < q->i);
}

/* The smallest region holding the balls of rows[a, b). */
static void balls_region(const vic_data *x, const float *rk, const int64_t *rows, int64_t a, int64_t b,
                         vic_region *r) {
  for (int64_t t = a; t < b; ++t) {
    vic_region ball;
    vic__ball_region(x, rows[t], rk[rows[t]], &ball);
    if (t == a) *r = ball; else vic__region_union(r, &ball);
  }
}

/* rows[a, b) in two halves of equal counts along the dimension where
 * their positions spread widest; the lower half first.  0 without
 * memory. */
static int halve(const vic_data *x, int64_t *rows, int64_t a, int64_t b) {
  int axis = 0;
  double widest = -1;
  for (int j = 0; j < x->d; ++j) {
    double lo = INFINITY, hi = -INFINITY;
    for (int64_t t = a; t < b; ++t) {
      const double v = vic__slab_coord(x, rows[t], j);
      lo = fmin(lo, v);
      hi = fmax(hi, v);
    }
    if (hi - lo > widest) { widest = hi - lo; axis = j; }
  }
  row_at *ra = malloc((size_t)(b - a) * sizeof *ra);
  if (!ra) return 0;
  for (int64_t t = a; t < b; ++t) ra[t - a] = (row_at){vic__slab_coord(x, rows[t], axis), rows[t]};
  qsort(ra, (size_t)(b - a), sizeof *ra, by_coord);
  for (int64_t t = a; t < b; ++t) rows[t] = ra[t - a].i;
  free(ra);
  return 1;
}

static int by_start(const void *a, const void *b) {
  const int64_t p = *(const int64_t *)a, q = *(const int64_t *)b;
  return (p > q) - (p < q);
}

int vic__leftover_groups(const vic_data *x, const float *rk, int64_t *rows, int64_t L, int max_groups,
                         vic_group_count count, vic_group_fits fits, void *user, int64_t *off, vic_region *reg,
                         int64_t *most) {
  *most = 0;
  if (L <= 0 || max_groups < 1) return 0;
  /* groups as [lo[g], hi[g]) of rows, in the order they were made;
   * done[g] once their region fits */
  int64_t *lo = malloc((size_t)max_groups * sizeof *lo), *hi = malloc((size_t)max_groups * sizeof *hi);
  int64_t *m = malloc((size_t)max_groups * sizeof *m), *pts = calloc((size_t)max_groups, sizeof *pts);
  int *wait = malloc((size_t)max_groups * sizeof *wait);
  unsigned char *done = calloc((size_t)max_groups, 1);
  vic_region *r = malloc((size_t)max_groups * sizeof *r), *ask = malloc((size_t)max_groups * sizeof *ask);
  int groups = 0, status = lo && hi && m && pts && wait && done && r && ask ? 0 : -1;
  if (status == 0) {
    lo[0] = 0;
    hi[0] = L;
    balls_region(x, rk, rows, 0, L, &r[0]);
    groups = 1;
  }
  /* rounds: count the waiting groups' regions at once, keep those that
   * fit, halve the others (a k-d split of the rows' positions) */
  while (status == 0) {
    int n_wait = 0;
    for (int g = 0; g < groups; ++g)
      if (!done[g]) { wait[n_wait] = g; ask[n_wait++] = r[g]; }
    if (!n_wait) { status = 1; break; }
    count(ask, n_wait, m, user);
    int grown = groups;
    for (int w = 0; w < n_wait && status == 0; ++w) {
      const int g = wait[w];
      pts[g] = m[w];
      if (fits(m[w], hi[g] - lo[g], user)) { done[g] = 1; continue; }
      if (hi[g] - lo[g] < 2 || grown >= max_groups) { status = 2; break; } /* cannot split, or too many groups */
      if (!halve(x, rows, lo[g], hi[g])) { status = -1; break; }
      const int64_t mid = lo[g] + (hi[g] - lo[g]) / 2;
      lo[grown] = mid;
      hi[grown] = hi[g];
      hi[g] = mid;
      balls_region(x, rk, rows, lo[g], hi[g], &r[g]);
      balls_region(x, rk, rows, lo[grown], hi[grown], &r[grown]);
      ++grown;
    }
    groups = grown;
  }
  for (int g = 0; status != -1 && g < groups; ++g)
    if (pts[g] > *most) *most = pts[g];
  int result = status == 1 ? groups : status == 2 ? 0 : -1;
  if (result > 0) {
    /* groups in the order of their rows: (start, group) sorted by start */
    int64_t *key = malloc((size_t)groups * 2 * sizeof *key);
    if (!key) result = -1;
    for (int g = 0; key && g < groups; ++g) { key[2 * g] = lo[g]; key[2 * g + 1] = g; }
    if (key) qsort(key, (size_t)groups, 2 * sizeof *key, by_start);
    for (int t = 0; key && t < groups; ++t) {
      const int g = (int)key[2 * t + 1];
      off[t] = lo[g];
      reg[t] = r[g];
    }
    if (key) off[groups] = L;
    free(key);
  }
  free(lo);
  free(hi);
  free(m);
  free(pts);
  free(wait);
  free(done);
  free(r);
  free(ask);
  return result;
}
