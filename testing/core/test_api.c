/* The public API's contract: bad input gives a clear status and message,
 * inputs are never modified, exact brute force equals a naive reference. */
#include "test_util.h"

#include <math.h>
#include <string.h>

static void test_bad_input(void) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  vic_build_options o;
  vic_build_options_init(&o);
  vic_knn r;
  float pts[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  vic_data x = {pts, 4, 3, 0, VIC_L2, NULL};

  vic_data empty = x; empty.n = 0;
  VT_CHECK(vic_knn_build(c, &empty, &o, &r) == VIC_E_ARGUMENT, "n = 0");
  VT_CHECK(strstr(vic_ctx_error(c), "empty") != NULL, "message: %s", vic_ctx_error(c));
  VT_CHECK(r.ids == NULL && r.n == 0, "output zeroed on failure");

  vic_data nod = x; nod.d = 0;
  VT_CHECK(vic_knn_build(c, &nod, &o, &r) == VIC_E_ARGUMENT, "d = 0");
  o.k = 0;
  VT_CHECK(vic_knn_build(c, &x, &o, &r) == VIC_E_ARGUMENT, "k = 0");
  VT_CHECK(strstr(vic_ctx_error(c), "k must") != NULL, "message: %s", vic_ctx_error(c));
  o.k = 16;

  float nan_pts[12];
  memcpy(nan_pts, pts, sizeof pts);
  nan_pts[7] = NAN;
  vic_data xn = x; xn.rows = nan_pts;
  VT_CHECK(vic_knn_build(c, &xn, &o, &r) == VIC_E_NONFINITE, "NaN");
  VT_CHECK(strstr(vic_ctx_error(c), "row 2") != NULL, "NaN message names row 2: %s", vic_ctx_error(c));
  nan_pts[7] = INFINITY;
  VT_CHECK(vic_knn_build(c, &xn, &o, &r) == VIC_E_NONFINITE, "Inf");

  vic_data one = x; one.n = 1;
  VT_CHECK(vic_knn_build(c, &one, &o, &r) == VIC_E_ARGUMENT, "n = 1");

  /* k >= n clamps with a warning */
  o.method = VIC_METHOD_BRUTE;
  vt_warnings = 0;
  float before[12];
  memcpy(before, pts, sizeof pts);
  VT_OK(c, vic_knn_build(c, &x, &o, &r));
  VT_CHECK(r.k == 3 && r.report.k == 3 && r.report.k_requested == 16, "clamped k = %d", r.k);
  VT_CHECK(vt_warnings == 1 && r.report.warnings == 1, "one warning, got %d", vt_warnings);
  VT_CHECK(memcmp(before, pts, sizeof pts) == 0, "input unchanged");
  vic_knn_free(&r);

  double box[3] = {1, -1, 1};
  vic_data xb = x; xb.box = box;
  VT_CHECK(vic_knn_build(c, &xb, &o, &r) == VIC_E_ARGUMENT, "negative box");

  vic_data xc = x; xc.metric = VIC_COSINE;
  float zero[12] = {0};
  xc.rows = zero;
  VT_CHECK(vic_knn_build(c, &xc, &o, &r) == VIC_E_ARGUMENT, "cosine of zero vector");

  o.method = (vic_method)99;
  VT_CHECK(vic_knn_build(c, &x, &o, &r) == VIC_E_ARGUMENT, "unknown method");

  vic_ctx_destroy(c);
}

static void test_no_gpu(void) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CUDA, 1);
  if (vic_cuda_available(c)) { vic_ctx_destroy(c); return; }
  vic_build_options o;
  vic_build_options_init(&o);
  vic_knn r;
  float pts[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1};
  vic_data x = {pts, 4, 3, 0, VIC_L2, NULL};
  vic_status s = vic_knn_build(c, &x, &o, &r);
  VT_CHECK(s == VIC_E_NODEVICE, "explicit GPU without one: %s", vic_status_name(s));
  VT_CHECK(strlen(vic_ctx_error(c)) > 10, "message: %s", vic_ctx_error(c));
  vic_ctx_destroy(c);
}

static int cancel_at_once(void *user, const char *stage, double f) { (void)user; (void)stage; (void)f; return 1; }

static void test_cancel(void) {
  vic_ctx_options co;
  vic_ctx_options_init(&co);
  co.backend = VIC_BACKEND_CPU;
  co.progress = cancel_at_once;
  vic_ctx *c;
  vic_ctx_create(&co, &c);
  int64_t n = 5000;
  float *pts = vt_uniform(n, 16, 1.f, 3);
  vic_data x = {pts, n, 16, 0, VIC_L2, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_BRUTE;
  vic_knn r;
  VT_CHECK(vic_knn_build(c, &x, &o, &r) == VIC_E_CANCELLED, "cancel");
  VT_CHECK(r.ids == NULL, "nothing returned after cancel");
  vic_ctx_destroy(c);
  free(pts);
}

static void test_brute_metrics(void) {
  int64_t n = vt_small() ? 300 : 1500;
  int32_t d = 24, k = 12;
  float *pts = vt_clusters(n, d, 5, 7);
  /* duplicates: exact ties must go to the lower id */
  memcpy(pts + 10 * d, pts + 3 * d, d * sizeof(float));
  memcpy(pts + 11 * d, pts + 3 * d, d * sizeof(float));
  vic_metric metrics[3] = {VIC_L2, VIC_COSINE, VIC_INNER_PRODUCT};
  for (int mi = 0; mi < 3; ++mi) {
    vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
    vic_data x = {pts, n, d, 0, metrics[mi], NULL};
    vic_build_options o;
    vic_build_options_init(&o);
    o.method = VIC_METHOD_BRUTE;
    o.k = k;
    vic_knn r;
    VT_OK(c, vic_knn_build(c, &x, &o, &r));
    int64_t bad = vt_naive_mismatch(&r, &x, NULL, k, 1e-4);
    VT_CHECK(bad == 0, "%s: %lld rows differ", vic_metric_name(metrics[mi]), (long long)bad);
    VT_CHECK(r.report.method == VIC_METHOD_BRUTE && r.report.backend == VIC_BACKEND_CPU, "report");
    VT_CHECK(r.report.recall_estimate == 1.0, "exact recall 1");
    if (metrics[mi] == VIC_L2) {
      VT_CHECK(r.ids[3 * k] == 10 && r.ids[3 * k + 1] == 11 && r.dist[3 * k] == 0.f, "duplicate ties by id");
      VT_CHECK(r.ids[10 * k] == 3 && r.ids[10 * k + 1] == 11, "duplicate ties by id (row 10)");
    }
    for (int64_t i = 0; i < n; ++i)
      for (int32_t t = 0; t < k; ++t) VT_CHECK(r.ids[i * k + t] != i, "self excluded");
    vic_knn_free(&r);
    vic_ctx_destroy(c);
  }
  free(pts);
}

/* Data far from the origin: the product form of brute force must not lose
 * the small differences to cancellation (a unit cloud offset by 1000). */
static void test_brute_offset(void) {
  int64_t n = 2000;
  int32_t d = 32, k = 8;
  float *pts = vt_clusters(n, d, 4, 11);
  for (int64_t i = 0; i < n * d; ++i) pts[i] = pts[i] * 0.01f + 1000.f;
  memcpy(pts + 7 * d, pts + 5 * d, d * sizeof(float));
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  vic_data x = {pts, n, d, 0, VIC_L2, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_BRUTE;
  o.k = k;
  vic_knn r;
  VT_OK(c, vic_knn_build(c, &x, &o, &r));
  int64_t bad = vt_naive_mismatch(&r, &x, NULL, k, 1e-3);
  VT_CHECK(bad == 0, "offset data: %lld rows differ", (long long)bad);
  VT_CHECK(r.ids[5 * k] == 7 && r.dist[5 * k] == 0.f, "duplicate found first at distance 0");
  vic_knn_free(&r);
  vic_ctx_destroy(c);
  free(pts);
}

/* vic_report_stage_seconds: every stage a call lists is found with its
 * seconds, an absent name or a missing report gives -1. */
static void test_report_stages(void) {
  int64_t n = 500;
  float *pts = vt_clusters(n, 3, 3, 5);
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  vic_data x = {pts, n, 3, 0, VIC_L2, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_GRID;
  o.k = 4;
  vic_knn r;
  VT_OK(c, vic_knn_build(c, &x, &o, &r));
  VT_CHECK(r.report.n_stages > 0, "the grid build lists no stages");
  for (int i = 0; i < r.report.n_stages; ++i)
    VT_CHECK(vic_report_stage_seconds(&r.report, r.report.stages[i].name) == r.report.stages[i].seconds,
             "stage %s not found", r.report.stages[i].name);
  VT_CHECK(vic_report_stage_seconds(&r.report, "no such stage") == -1.0, "an absent stage has -1");
  VT_CHECK(vic_report_stage_seconds(NULL, "grid") == -1.0 && vic_report_stage_seconds(&r.report, NULL) == -1.0,
           "NULL report or name: -1");
  vic_knn_free(&r);
  vic_ctx_destroy(c);
  free(pts);
}

int main(void) {
  test_report_stages();
  test_brute_offset();
  test_bad_input();
  test_no_gpu();
  test_cancel();
  test_brute_metrics();
  return vt_finish("test_api");
}
