/* The slab gathers (slab_gather.c), which need no GPU: a region's points
 * read from the rows sorted by slab, with or without a slab's own rows
 * copied whole, and read from the set by id, all equal -- the same packed
 * rows, the same ids, in the same order -- to a plain gather written
 * here (own rows, then every other point of the spanned slabs inside the
 * region, not flagged, ascending within each slab).  Plummer points with
 * tails, a periodic uniform set, a 2-d set and a strided one.  Runs in
 * CI. */
#include "slab_plan.h"
#include "test_util.h"
#include "nbody_models.h"

#include <math.h>
#include <string.h>

typedef struct {
  vic_slab_plan p;
  int64_t *start, *order;
  float *xs;
} buckets;

/* Ids by slab by vic__slab_bucket, checked against a plain count:
 * ascending ids within a slab, the sorted rows those ids' rows. */
static void bucket(vic_ctx *c, const vic_data *x, int64_t S, buckets *b) {
  VT_OK(c, vic__slab_plan_make(c, x, S, &b->p));
  b->start = calloc((size_t)S + 1, sizeof *b->start);
  b->order = malloc((size_t)x->n * sizeof *b->order);
  b->xs = malloc((size_t)x->n * x->d * sizeof *b->xs);
  VT_CHECK(vic__slab_bucket(x, &b->p, b->start, b->order, b->xs) == 0, "no buckets");
  int64_t *start = calloc((size_t)S + 1, sizeof *start), *order = malloc((size_t)x->n * sizeof *order);
  for (int64_t i = 0; i < x->n; ++i) start[vic__slab_of(&b->p, vic__slab_coord(x, i, b->p.axis)) + 1]++;
  for (int64_t s = 0; s < S; ++s) start[s + 1] += start[s];
  int64_t *at = malloc((size_t)S * sizeof *at);
  memcpy(at, start, (size_t)S * sizeof *at);
  for (int64_t i = 0; i < x->n; ++i) order[at[vic__slab_of(&b->p, vic__slab_coord(x, i, b->p.axis))]++] = i;
  VT_CHECK(memcmp(start, b->start, (size_t)(S + 1) * sizeof *start) == 0, "other slab starts");
  VT_CHECK(memcmp(order, b->order, (size_t)x->n * sizeof *order) == 0, "other bucket order");
  const int64_t stride = x->stride ? x->stride : x->d;
  int64_t bad = 0;
  for (int64_t t = 0; t < x->n; ++t) bad += memcmp(b->xs + t * x->d, x->rows + order[t] * stride, (size_t)x->d * 4) != 0;
  VT_CHECK(bad == 0, "%lld sorted rows are not their ids' rows", (long long)bad);
  free(at);
  free(start);
  free(order);
}

static void buckets_free(buckets *b) {
  vic__slab_plan_free(&b->p);
  free(b->start);
  free(b->order);
  free(b->xs);
}

/* The slabs whose range meets r along the cut axis: all of them when r
 * wraps there, open sides reaching the first or last slab. */
static void span(const vic_slab_plan *p, const vic_region *r, int64_t *s_lo, int64_t *s_hi) {
  const int a = p->axis;
  *s_lo = 0;
  *s_hi = p->n_slabs - 1;
  if (r->period[a] > 0) return;
  if (isfinite(r->lo[a])) *s_lo = vic__slab_of(p, r->lo[a]);
  if (isfinite(r->hi[a])) *s_hi = vic__slab_of(p, r->hi[a]);
}

/* The plain gather: own rows, then each spanned slab's other points
 * inside r in bucket order. */
static int64_t plain(const vic_data *x, const buckets *b, const vic_region *r, const int64_t *rows, int64_t n_rows,
                     int64_t s_lo, int64_t s_hi, const unsigned char *is_row, float *pts, uint32_t *gid) {
  const int d = x->d;
  const int64_t stride = x->stride ? x->stride : d;
  int64_t m = 0;
  for (int64_t t = 0; t < n_rows; ++t, ++m) {
    memcpy(pts + m * d, x->rows + rows[t] * stride, (size_t)d * sizeof *pts);
    gid[m] = (uint32_t)rows[t];
  }
  for (int64_t t = b->start[s_lo]; t < b->start[s_hi + 1]; ++t) {
    const int64_t i = b->order[t];
    if (is_row[i] || !vic__region_holds(r, x, i)) continue;
    memcpy(pts + m * d, x->rows + i * stride, (size_t)d * sizeof *pts);
    gid[m++] = (uint32_t)i;
  }
  return m;
}

/* One gather by every way that applies, compared with the plain one. */
static void compare(const char *name, const vic_data *x, const buckets *b, const vic_region *r, const int64_t *rows,
                    int64_t n_rows, int64_t s_lo, int64_t s_hi, int64_t own, unsigned char *is_row) {
  const int d = x->d;
  for (int64_t t = 0; t < n_rows; ++t) is_row[rows[t]] = 1;
  float *want = malloc((size_t)x->n * d * sizeof *want);
  uint32_t *wid = malloc((size_t)x->n * sizeof *wid);
  const int64_t mw = plain(x, b, r, rows, n_rows, s_lo, s_hi, is_row, want, wid);
  for (int way = 0; way < 3; ++way) {
    if (way == 2 && own < 0) continue;
    const vic_slab_source src = {x, way == 0 ? NULL : b->xs, b->start, b->order};
    float *pts = NULL;
    uint32_t *gid = NULL;
    int64_t m = -1;
    for (int threads = 1; threads <= 3; threads += 2) {
      VT_CHECK(vic__slab_gather(&src, r, rows, n_rows, s_lo, s_hi, way == 2 ? own : -1, is_row, threads, &pts, &gid,
                                &m) == 0, "%s: gather %d failed", name, way);
      VT_CHECK(m == mw, "%s (way %d, %d threads): %lld points gathered, %lld wanted", name, way, threads, (long long)m,
               (long long)mw);
      if (m == mw) {
        VT_CHECK(memcmp(pts, want, (size_t)m * d * sizeof *pts) == 0, "%s (way %d): other rows", name, way);
        VT_CHECK(memcmp(gid, wid, (size_t)m * sizeof *gid) == 0, "%s (way %d): other ids", name, way);
      }
      free(pts);
      free(gid);
    }
  }
  for (int64_t t = 0; t < n_rows; ++t) is_row[rows[t]] = 0;
  free(want);
  free(wid);
}

static void test_set(const char *name, const vic_data *x, int64_t S, double halo) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  buckets b;
  bucket(c, x, S, &b);
  unsigned char *is_row = calloc((size_t)x->n, 1);
  int64_t *rows = malloc((size_t)x->n * sizeof *rows);
  int checked = 0;
  for (int64_t s = 0; s < S; ++s) {
    vic_region reg;
    vic__slab_region(x, &b.p, s, halo, &reg);
    int64_t s_lo, s_hi;
    span(&b.p, &reg, &s_lo, &s_hi);
    const int64_t n_own = b.start[s + 1] - b.start[s];
    char what[160];
    /* the slab's own rows in bucket order: whole or not */
    snprintf(what, sizeof what, "%s, slab %lld's first region", name, (long long)s);
    memcpy(rows, b.order + b.start[s], (size_t)n_own * sizeof *rows);
    compare(what, x, &b, &reg, rows, n_own, s_lo, s_hi, s, is_row);
    /* every third of them, backwards, in a ball around the first: a retry's rows */
    int64_t nr = 0;
    for (int64_t t = n_own - 1; t >= 0; t -= 3) rows[nr++] = b.order[b.start[s] + t];
    if (nr > 0) {
      vic_region ball;
      vic__ball_region(x, rows[0], 4 * halo, &ball);
      int64_t a, z;
      span(&b.p, &ball, &a, &z);
      if (a > s) a = s;
      if (z < s) z = s;
      snprintf(what, sizeof what, "%s, slab %lld's retried rows", name, (long long)s);
      compare(what, x, &b, &ball, rows, nr, a, z, -1, is_row);
    }
    ++checked;
  }
  VT_CHECK(checked == S, "%s: %d of %lld slabs checked", name, checked, (long long)S);
  free(is_row);
  free(rows);
  buckets_free(&b);
  vic_ctx_destroy(c);
}

int main(void) {
  const int64_t n = vt_small() ? 6000 : 20000;
  float *pl = malloc((size_t)n * 3 * sizeof *pl);
  nb_plummer(pl, n, 1.0, (const double[3]){0, 0, 0}, 0.999, 7);
  vic_data xp = {pl, n, 3, 0, VIC_L2, NULL};
  test_set("plummer tails", &xp, 7, 0.2);
  float *u = vt_uniform(n, 3, 10.f, 5);
  const double box[3] = {10, 10, 10};
  vic_data xb = {u, n, 3, 0, VIC_L2, box};
  test_set("uniform periodic", &xb, 5, 0.5);
  float *u2 = vt_uniform(n, 2, 1.f, 8);
  vic_data x2 = {u2, n, 2, 0, VIC_L2, NULL};
  test_set("uniform 2-d", &x2, 4, 0.05);
  /* rows of 4 floats, 3 used: the sorted rows are packed */
  float *w = malloc((size_t)n * 4 * sizeof *w);
  for (int64_t i = 0; i < n; ++i) {
    memcpy(w + i * 4, pl + i * 3, 3 * sizeof *w);
    w[i * 4 + 3] = NAN;
  }
  vic_data xw = {w, n, 3, 4, VIC_L2, NULL};
  test_set("plummer, strided rows", &xw, 6, 0.2);
  /* past 2^20 points the buckets are counted in blocks by all threads */
  const int64_t nl = ((int64_t)1 << 20) + 4099;
  float *ul = vt_uniform(nl, 3, 1.f, 9);
  vic_data xl = {ul, nl, 3, 0, VIC_L2, NULL};
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  buckets bl;
  bucket(c, &xl, 9, &bl);
  buckets_free(&bl);
  vic_ctx_destroy(c);
  free(ul);
  free(pl);
  free(u);
  free(u2);
  free(w);
  return vt_finish("test_slab_gather");
}
