/* The host side of a GPU graph search in one pass each way (gsearch_io.h,
 * vic__rows_check_*, vic__true_rows), which needs no GPU: rows validated
 * in parts by several slots while copied give the copy exactly and
 * vic_data_validate's status and words (first bad row, NaN, infinity,
 * range); results made true and checked in one pass equal
 * vic__true_dists followed by vic__check_distances.  The hooks are driven
 * the way the kernel layer drives them (pieces of rows, each split over
 * slots, stopping at a refused piece).  Runs in CI. */
#include "internal.h"
#include "test_util.h"
#ifdef VIC_WITH_CUDA
#include "gsearch_io.h"
#endif

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 5

/* The parts over rows [0, n) in pieces of `per` rows, each split over
 * SLOTS slots in reverse order (any order must do); returns 1 when a piece
 * was refused (the later ones then not scanned). */
static int drive_in(int (*in)(void *, int, float *, int64_t, int64_t), void *ctx, float *dst, int64_t n, int32_t d,
                    int64_t per) {
  for (int64_t a = 0; a < n; a += per) {
    const int64_t len = n - a < per ? n - a : per;
    int refused = 0;
    for (int t = SLOTS - 1; t >= 0; --t) {
      const int64_t r0 = a + len * t / SLOTS, r1 = a + len * (t + 1) / SLOTS;
      if (r0 < r1 && in(ctx, t, dst + r0 * d, r0, r1 - r0)) refused = 1;
    }
    if (refused) return 1;
  }
  return 0;
}

typedef struct {
  vic_rows_check *rc;
} part_ctx;

static int part_in(void *ctx, int t, float *dst, int64_t row0, int64_t rows) {
  return vic__rows_check_part(((part_ctx *)ctx)->rc, t, row0, row0 + rows, dst);
}

/* The parts' verdict and words against vic_data_validate's on x. */
static void compare_validation(vic_ctx *c, const vic_data *x, int64_t per, const char *what) {
  char want[1024];
  const vic_status ws = vic_data_validate(c, x);
  snprintf(want, sizeof want, "%s", vic_ctx_error(c));
  vic_rows_check rc;
  VT_CHECK(vic__rows_check_begin(c, x, SLOTS, &rc) == VIC_OK, "%s: begin: %s", what, vic_ctx_error(c));
  float *dst = calloc((size_t)x->n * (size_t)x->d, sizeof *dst);
  part_ctx pc = {&rc};
  const int refused = drive_in(part_in, &pc, dst, x->n, x->d, per);
  VT_CHECK(refused == (vic__rows_check_bad(&rc) != INT64_MAX), "%s: refused %d but bad row %lld", what, refused,
           (long long)vic__rows_check_bad(&rc));
  const vic_status gs = vic__rows_check_end(c, &rc);
  VT_CHECK(gs == ws, "%s: status %d, vic_data_validate %d", what, (int)gs, (int)ws);
  VT_CHECK(ws == VIC_OK || !strcmp(want, vic_ctx_error(c)), "%s: '%s' against vic_data_validate's '%s'", what,
           vic_ctx_error(c), want);
  if (ws == VIC_OK) /* every row copied packed, bit for bit */
    for (int64_t i = 0; i < x->n; ++i)
      VT_CHECK(!memcmp(dst + i * x->d, x->rows + i * (x->stride ? x->stride : x->d), (size_t)x->d * 4),
               "%s: row %lld not copied", what, (long long)i);
  free(dst);
}

static void validation_cases(vic_ctx *c) {
  const int64_t n = 2000;
  const int32_t d = 24, stride = 27;
  float *x = vt_uniform(n, stride, 3.f, 7);
  vic_data v = {x, n, d, stride, VIC_L2, NULL, NULL};
  compare_validation(c, &v, 300, "clean, strided");
  v.metric = VIC_INNER_PRODUCT;
  compare_validation(c, &v, 300, "clean, inner product");
  v.metric = VIC_L2;
  /* a bad row in the first piece, in a later one, the last row, two bad
   * rows in one piece (different slots: the first must be named) and two
   * in different pieces */
  const int64_t rows[][2] = {{0, -1}, {5, -1}, {1234, -1}, {n - 1, -1}, {910, 650}, {1999, 301}};
  for (int r = 0; r < 6; ++r)
    for (int kind = 0; kind < 2; ++kind) {
      float *y = malloc((size_t)n * stride * sizeof *y);
      memcpy(y, x, (size_t)n * stride * sizeof *y);
      y[rows[r][0] * stride + 3] = kind ? INFINITY : NAN;
      if (rows[r][1] >= 0) y[rows[r][1] * stride + 20] = kind ? -INFINITY : NAN;
      vic_data w = v;
      w.rows = y;
      char what[64];
      snprintf(what, sizeof what, "%s at rows %lld, %lld", kind ? "inf" : "NaN", (long long)rows[r][0],
               (long long)rows[r][1]);
      compare_validation(c, &w, 300, what);
      VT_CHECK(vic_data_validate(c, &w) == VIC_E_NONFINITE && strstr(vic_ctx_error(c), kind ? "infinite" : "NaN"),
               "%s: %s", what, vic_ctx_error(c));
      free(y);
    }
  /* out of float range: refused after every row was seen */
  float *y = malloc((size_t)n * stride * sizeof *y);
  memcpy(y, x, (size_t)n * stride * sizeof *y);
  y[777 * stride + 1] = 3e38f;
  y[778 * stride + 1] = -3e38f;
  vic_data w = v;
  w.rows = y;
  compare_validation(c, &w, 300, "too large");
  VT_CHECK(vic_data_validate(c, &w) == VIC_E_NONFINITE && strstr(vic_ctx_error(c), "too large"), "range: %s",
           vic_ctx_error(c));
  /* cosine: the zero row */
  memcpy(y, x, (size_t)n * stride * sizeof *y);
  memset(y + 1500 * stride, 0, (size_t)d * sizeof *y);
  w.metric = VIC_COSINE;
  compare_validation(c, &w, 300, "cosine zero row");
  free(y);
  /* the shape checks come first, in the same words */
  vic_data e = v;
  e.n = 0;
  vic_rows_check rc;
  VT_CHECK(vic__rows_check_begin(c, &e, SLOTS, &rc) == VIC_E_ARGUMENT && strstr(vic_ctx_error(c), "empty"),
           "empty: %s", vic_ctx_error(c));
  e = v;
  e.stride = 3;
  VT_CHECK(vic__data_shape(c, &e) == VIC_E_ARGUMENT && strstr(vic_ctx_error(c), "stride"), "stride: %s",
           vic_ctx_error(c));
  free(x);
}

/* Results: the one pass against vic__true_dists then vic__check_distances. */
static void result_cases(vic_ctx *c) {
  const int64_t n = 3000;
  const int32_t k = 7;
  int64_t *ids = malloc((size_t)n * k * sizeof *ids), *ids2 = malloc((size_t)n * k * sizeof *ids2);
  float *w = malloc((size_t)n * k * sizeof *w), *ref = malloc((size_t)n * k * sizeof *ref),
        *got = malloc((size_t)n * k * sizeof *got);
  const vic_metric metrics[3] = {VIC_L2, VIC_COSINE, VIC_INNER_PRODUCT};
  for (int mi = 0; mi < 3; ++mi)
    for (int bad = 0; bad < 3; ++bad) {
      for (int64_t e = 0; e < n * k; ++e) {
        ids[e] = e % 11 == 3 ? -1 : (e * 7919) % 100000;
        w[e] = metrics[mi] == VIC_INNER_PRODUCT ? -0.37f * (float)(e % 97) : 0.013f * (float)(e % 97);
      }
      if (bad >= 1) w[2100 * k + 4] = INFINITY;           /* a bad row late */
      if (bad == 2) w[40 * k + 1] = NAN, ids[40 * k + 2] = -1, w[40 * k + 2] = NAN; /* and one early (and a NaN where no id) */
      memcpy(ref, w, (size_t)n * k * sizeof *w);
      vic__true_dists(c, metrics[mi], n * k, ids, ref);
      const vic_status ws = vic__check_distances(c, n, k, ids, ref, "index search");
      char want[1024];
      snprintf(want, sizeof want, "%s", vic_ctx_error(c));
      /* in three parts of rows, as three slots would */
      int64_t first = INT64_MAX;
      const int64_t cut[4] = {0, 1000, 2222, n};
      for (int p = 0; p < 3; ++p) {
        const int64_t r0 = cut[p], r1 = cut[p + 1];
        const int64_t b = vic__true_rows(metrics[mi], k, r1 - r0, ids + r0 * k, w + r0 * k, ids2 + r0 * k, got + r0 * k);
        if (b != INT64_MAX && r0 + b < first) first = r0 + b;
      }
      const vic_status gs = vic__distance_verdict(c, first, k, ids2, got, "index search");
      VT_CHECK(gs == ws && (ws == VIC_OK || !strcmp(want, vic_ctx_error(c))), "metric %d bad %d: %d '%s' against %d '%s'",
               (int)metrics[mi], bad, (int)gs, vic_ctx_error(c), (int)ws, want);
      VT_CHECK(!memcmp(ids, ids2, (size_t)n * k * sizeof *ids) && !memcmp(ref, got, (size_t)n * k * sizeof *got),
               "metric %d bad %d: results differ", (int)metrics[mi], bad);
    }
  free(ids);
  free(ids2);
  free(w);
  free(ref);
  free(got);
}

#ifdef VIC_WITH_CUDA
/* The hooks as the kernel layer calls them, with a kernel's "results" (a
 * function of the staged queries) and the verdicts of gsearch_io_end. */
static void hook_cases(vic_ctx *c) {
  const int64_t n = 1500;
  const int32_t d = 16, k = 4;
  float *x = vt_uniform(n, d, 2.f, 9);
  for (int bad = 0; bad < 3; ++bad) {
    if (bad == 1) x[901 * d + 5] = NAN;
    if (bad == 2) { x[901 * d + 5] = 0.5f; x[3 * d] = 3e38f; x[4 * d] = -3e38f; }
    vic_data q = {x, n, d, 0, VIC_L2, NULL, NULL};
    const vic_status ws = vic_data_validate(c, &q);
    char want[1024];
    snprintf(want, sizeof want, "%s", vic_ctx_error(c));
    int64_t *ids = malloc((size_t)n * k * sizeof *ids), *kid = malloc((size_t)n * k * sizeof *kid);
    float *dist = malloc((size_t)n * k * sizeof *dist), *kd = malloc((size_t)n * k * sizeof *kd);
    float *staged = malloc((size_t)n * d * sizeof *staged);
    vic_gsearch_io io;
    vick_gsearch_hooks h;
    vick_call call;
    memset(&call, 0, sizeof call);
    VT_CHECK(vic__gsearch_io_begin(c, &q, VIC_L2, k, ids, dist, SLOTS, &io, &h) == VIC_OK, "begin: %s",
             vic_ctx_error(c));
    int rc = drive_in(h.in, h.ctx, staged, n, d, 256) ? VICK_ARGUMENT : VICK_OK;
    if (rc == VICK_OK) {
      for (int64_t i = 0; i < n; ++i)
        for (int t = 0; t < k; ++t) {
          kid[i * k + t] = t == 3 ? -1 : (i + t) % n;
          kd[i * k + t] = staged[i * d + t] * staged[i * d + t];
        }
      for (int s = 0; s < SLOTS; ++s) {
        const int64_t r0 = n * s / SLOTS, r1 = n * (s + 1) / SLOTS;
        h.out(h.ctx, s, kid + r0 * k, kd + r0 * k, r0, r1 - r0);
      }
    }
    const vic_status gs = vic__gsearch_io_end(c, &io, rc, &call, "graph search", "index search");
    VT_CHECK(gs == ws && (ws == VIC_OK || !strcmp(want, vic_ctx_error(c))), "hooks, case %d: %d '%s' against %d '%s'",
             bad, (int)gs, vic_ctx_error(c), (int)ws, want);
    if (ws == VIC_OK)
      for (int64_t e = 0; e < n * k; ++e)
        VT_CHECK(ids[e] == kid[e] && dist[e] == (kid[e] < 0 ? INFINITY : sqrtf(kd[e])), "hooks: entry %lld",
                 (long long)e);
    /* a call that failed before its last piece, on clean rows: the
     * kernel's own failure, not a validation message */
    if (bad == 0) {
      VT_CHECK(vic__gsearch_io_begin(c, &q, VIC_L2, k, ids, dist, SLOTS, &io, &h) == VIC_OK, "begin");
      snprintf(call.message, sizeof call.message, "graph search: out of device memory (test)");
      const vic_status fs = vic__gsearch_io_end(c, &io, VICK_NOMEM, &call, "graph search", "index search");
      VT_CHECK(fs == VIC_E_NOMEM, "kernel failure: %d '%s'", (int)fs, vic_ctx_error(c));
    }
    free(ids);
    free(kid);
    free(dist);
    free(kd);
    free(staged);
  }
  free(x);
}
#endif

int main(void) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  validation_cases(c);
  result_cases(c);
#ifdef VIC_WITH_CUDA
  hook_cases(c);
#endif
  vic_ctx_destroy(c);
  return vt_finish("test_search_io");
}
