/* The core's GPU policy and the GGNN index kind, through the public API:
 *  - AUTO on the GPU with d > 3 and n > brute_max_n runs GNND, says so in
 *    the report's reason and still estimates the recall; on the CPU the
 *    same call keeps NN-Descent;
 *  - vic_index_build with method GGNN on a CUDA context builds the GPU
 *    graph (report: method ggnn, backend cuda, d_nn1 > 0); its searches
 *    (L2 and cosine, strided query rows) reach recall@10 >= 0.9 against an
 *    exact brute-force index and return ascending true distances that
 *    match the exact distances of the returned ids; saving it is refused
 *    with VIC_E_UNSUPPORTED and a message.
 * Skips (exit 77) where no CUDA device is usable. */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void test_auto_gnnd(void) {
  const int64_t n = 30000;
  const int32_t d = 16;
  float *rows = vt_clusters(n, d, 40, 11);
  vic_data x = {rows, n, d, 0, VIC_L2, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.k = 10;
  o.brute_max_n = 20000;
  o.recall_sample = 300;
  vic_knn r;
  vic_ctx *gpu = vt_ctx(VIC_BACKEND_CUDA, 3);
  VT_OK(gpu, vic_knn_build(gpu, &x, &o, &r));
  VT_CHECK(r.report.method == VIC_METHOD_GNND && r.report.backend == VIC_BACKEND_CUDA, "AUTO on the GPU: %s on %s",
           vic_method_name(r.report.method), vic_backend_name(r.report.backend));
  VT_CHECK(strstr(r.report.reason, "GNND") != NULL, "reason names GNND: '%s'", r.report.reason);
  VT_CHECK(r.report.recall_sample == 300 && r.report.recall_estimate >= 0.9 && r.report.recall_estimate <= 1.0,
           "recall estimated on 300 rows: %.4f (%lld)", r.report.recall_estimate, (long long)r.report.recall_sample);
  vic_knn_free(&r);
  /* n <= brute_max_n: still exact brute force on the GPU */
  vic_data small = {rows, 5000, d, 0, VIC_L2, NULL};
  VT_OK(gpu, vic_knn_build(gpu, &small, &o, &r));
  VT_CHECK(r.report.method == VIC_METHOD_BRUTE, "AUTO, n = 5000: %s", vic_method_name(r.report.method));
  vic_knn_free(&r);
  vic_ctx_destroy(gpu);
  /* the CPU keeps NN-Descent */
  vic_ctx *cpu = vt_ctx(VIC_BACKEND_CPU, 3);
  o.recall_sample = 0;
  VT_OK(cpu, vic_knn_build(cpu, &x, &o, &r));
  VT_CHECK(r.report.method == VIC_METHOD_NNDESCENT && r.report.backend == VIC_BACKEND_CPU, "AUTO on the CPU: %s",
           vic_method_name(r.report.method));
  vic_knn_free(&r);
  vic_ctx_destroy(cpu);
  free(rows);
}

static void test_ggnn_index(vic_metric metric) {
  const int64_t n = 40000, m = 500;
  const int32_t d = 24, k = 10;
  float *rows = vt_clusters(n + m, d, 60, 5 + (uint64_t)metric);
  vic_data x = {rows, n, d, 0, metric, NULL};
  /* queries strided: every other row of a 2d-wide buffer */
  float *qbuf = calloc((size_t)m * 2 * d, sizeof(float));
  for (int64_t i = 0; i < m; ++i) memcpy(qbuf + i * 2 * d, rows + (n + i) * d, (size_t)d * sizeof(float));
  vic_data q = {qbuf, m, d, 2 * d, metric, NULL};

  vic_ctx *gpu = vt_ctx(VIC_BACKEND_CUDA, 9);
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_GGNN;
  o.k = k;
  vic_index *ix = NULL, *ex = NULL;
  VT_OK(gpu, vic_index_build(gpu, &x, &o, &ix));
  const vic_report *br = vic_index_report(ix);
  VT_CHECK(br->method == VIC_METHOD_GGNN && br->backend == VIC_BACKEND_CUDA, "GGNN index: %s on %s (%s)",
           vic_method_name(br->method), vic_backend_name(br->backend), br->reason);
  VT_CHECK(br->dnn1_mean > 0 && br->dnn1_max >= br->dnn1_mean, "d_nn1 mean %g max %g", br->dnn1_mean, br->dnn1_max);
  VT_CHECK(vic_index_size(ix) > n * (int64_t)br->k * 4, "index size %lld counts the device graph",
           (long long)vic_index_size(ix));

  vic_ctx *cpu = vt_ctx(VIC_BACKEND_CPU, 9);
  o.method = VIC_METHOD_BRUTE;
  VT_OK(cpu, vic_index_build(cpu, &x, &o, &ex));
  vic_search_options so;
  vic_search_options_init(&so);
  so.k = k;
  so.tau = 0.3f;
  vic_knn got, ref;
  VT_OK(gpu, vic_index_search(gpu, ix, &q, &so, &got));
  VT_OK(cpu, vic_index_search(cpu, ex, &q, &so, &ref));
  double rc = vt_recall(&got, &ref);
  VT_CHECK(rc >= 0.9, "%s GGNN index recall@10 %.4f", vic_metric_name(metric), rc);
  VT_CHECK(got.report.method == VIC_METHOD_GGNN && got.report.backend == VIC_BACKEND_CUDA, "search report %s on %s",
           vic_method_name(got.report.method), vic_backend_name(got.report.backend));
  /* distances: ascending, and equal to the exact distance of the id found */
  int64_t bad = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int32_t t = 0; t < k; ++t) {
      int64_t id = got.ids[i * k + t];
      float dd = got.dist[i * k + t];
      if (id < 0 || id >= n) { bad++; continue; }
      if (t > 0 && dd < got.dist[i * k + t - 1]) bad++;
      double e = 0, na = 0, nb = 0, dot = 0;
      const float *a = rows + (n + i) * d, *b = rows + id * d;
      for (int j = 0; j < d; ++j) {
        e += ((double)a[j] - b[j]) * ((double)a[j] - b[j]);
        na += (double)a[j] * a[j];
        nb += (double)b[j] * b[j];
        dot += (double)a[j] * b[j];
      }
      double want = metric == VIC_COSINE ? 1.0 - dot / sqrt(na * nb) : sqrt(e);
      if (fabs(dd - want) > 1e-3 * fmax(1.0, fabs(want))) bad++;
    }
  VT_CHECK(bad == 0, "%s: %lld bad distances (order or value)", vic_metric_name(metric), (long long)bad);

  vic_status st = vic_index_save(gpu, ix, "/tmp/vic_test_ggnn_index.vidx");
  VT_CHECK(st == VIC_E_UNSUPPORTED && strstr(vic_ctx_error(gpu), "GGNN") != NULL, "save refused: %s: %s",
           vic_status_name(st), vic_ctx_error(gpu));
  vic_knn_free(&got);
  vic_knn_free(&ref);
  vic_index_free(ix);
  vic_index_free(ex);

  /* a CPU context asked for GGNN keeps the CPU graph, with a warning */
  o.method = VIC_METHOD_GGNN;
  vt_warnings = 0;
  VT_OK(cpu, vic_index_build(cpu, &x, &o, &ix));
  VT_CHECK(vic_index_report(ix)->method == VIC_METHOD_NNDESCENT && vt_warnings >= 1, "GGNN on a CPU context: %s",
           vic_method_name(vic_index_report(ix)->method));
  vic_index_free(ix);
  vic_ctx_destroy(cpu);
  vic_ctx_destroy(gpu);
  free(qbuf);
  free(rows);
}

/* AUTO index with a usable GPU: the GPU graph (its reason says why), built
 * on the device, searched there, saved (edges copied back) and loaded; a CPU
 * context keeps the NN-Descent graph. */
static void test_auto_index(void) {
  const int64_t n = 30000, m = 300;
  const int32_t d = 16, k = 10;
  float *rows = vt_clusters(n + m, d, 40, 21);
  vic_data x = {rows, n, d, 0, VIC_L2, NULL};
  vic_data q = {rows + n * d, m, d, 0, VIC_L2, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.k = k;
  vic_ctx *gpu = vt_ctx(VIC_BACKEND_AUTO, 4), *cpu = vt_ctx(VIC_BACKEND_CPU, 4);
  vic_index *ix = NULL, *ex = NULL, *back = NULL;
  VT_OK(gpu, vic_index_build(gpu, &x, &o, &ix));
  const vic_report *br = vic_index_report(ix);
  VT_CHECK(br->method == VIC_METHOD_GRNND && br->backend == VIC_BACKEND_CUDA, "AUTO index on the GPU: %s on %s (%s)",
           vic_method_name(br->method), vic_backend_name(br->backend), br->reason);
  VT_CHECK(strstr(br->reason, "GPU") != NULL && strstr(br->reason, "fastest") != NULL, "AUTO's reason: '%s'",
           br->reason);
  o.method = VIC_METHOD_BRUTE;
  VT_OK(cpu, vic_index_build(cpu, &x, &o, &ex));
  vic_search_options so;
  vic_search_options_init(&so);
  so.k = k;
  vic_knn got, ref, again;
  VT_OK(gpu, vic_index_search(gpu, ix, &q, &so, &got));
  VT_OK(cpu, vic_index_search(cpu, ex, &q, &so, &ref));
  double rc = vt_recall(&got, &ref);
  VT_CHECK(rc >= 0.9, "AUTO (GRNND) index recall@10 %.4f", rc);
  /* the edges live on the device only: saving copies them back, and a
   * CPU context searches the loaded index by its host edges */
  const char *path = "/tmp/vic_test_auto_index.vidx";
  VT_OK(gpu, vic_index_save(gpu, ix, path));
  VT_OK(cpu, vic_index_load(cpu, path, &x, &back));
  remove(path);
  VT_OK(cpu, vic_index_search(cpu, back, &q, &so, &again));
  double rb = vt_recall(&again, &ref);
  VT_CHECK(rb >= 0.9, "loaded AUTO index on the CPU: recall@10 %.4f", rb);
  /* the device-only index searched on a CPU context: its edges come back for the CPU search */
  vic_knn_free(&again);
  VT_OK(cpu, vic_index_search(cpu, ix, &q, &so, &again));
  VT_CHECK(again.report.backend == VIC_BACKEND_CPU && vt_recall(&again, &ref) >= 0.9,
           "device-built index on a CPU context: %s, recall@10 %.4f", vic_backend_name(again.report.backend),
           vt_recall(&again, &ref));
  printf("AUTO index: %s, recall@10 %.4f (loaded, CPU %.4f); %s\n", vic_method_name(br->method), rc, rb, br->reason);
  vic_knn_free(&got);
  vic_knn_free(&ref);
  vic_knn_free(&again);
  vic_index_free(ix);
  vic_index_free(ex);
  vic_index_free(back);
  o.method = VIC_METHOD_AUTO;
  VT_OK(cpu, vic_index_build(cpu, &x, &o, &ix));
  VT_CHECK(vic_index_report(ix)->method == VIC_METHOD_NNDESCENT, "AUTO index on the CPU: %s",
           vic_method_name(vic_index_report(ix)->method));
  vic_index_free(ix);
  vic_ctx_destroy(gpu);
  vic_ctx_destroy(cpu);
  free(rows);
}

int main(int argc, char **argv) {
  (void)vt_gpu_start(argc, argv); /* the same cases in the small run */
  test_auto_gnnd();
  test_auto_index();
  test_ggnn_index(VIC_L2);
  test_ggnn_index(VIC_COSINE);
  return vt_finish("test_gpu_policy");
}
