/* GNND on the GPU through the public API, against the exact CPU method:
 * recall@k above a threshold, true distances that match the rows, no self
 * and no repeats, ascending lists; L2 and cosine; the out-of-GPU-memory
 * path (shards) and the half-precision in-memory build (a budget the fp32
 * build exceeds) within 0.02 of the in-memory build; bad parameters refused.
 * Exits 77 (skip) where no CUDA device is usable. */
#include "test_util.h"

#include <math.h>
#include <string.h>

static double recall(const vic_knn *got, const vic_knn *ref) {
  int64_t hit = 0, tot = 0;
  for (int64_t i = 0; i < ref->n; ++i)
    for (int32_t t = 0; t < ref->k; ++t) {
      int64_t want = ref->ids[i * ref->k + t];
      if (want < 0) continue;
      tot++;
      for (int32_t u = 0; u < got->k; ++u)
        if (got->ids[i * got->k + u] == want) { hit++; break; }
    }
  return tot ? (double)hit / (double)tot : 1.0;
}

/* Every entry: a real other point, its true distance, ascending, no repeat. */
static void check_lists(const vic_data *x, const vic_knn *r, const char *what) {
  int64_t bad = 0;
  for (int64_t i = 0; i < r->n && bad < 5; ++i) {
    const float *a = x->rows + i * (x->stride ? x->stride : x->d);
    for (int32_t t = 0; t < r->k; ++t) {
      int64_t v = r->ids[i * r->k + t];
      float dv = r->dist[i * r->k + t];
      if (v < 0 || v >= x->n || v == i) { bad++; fprintf(stderr, "%s: row %lld slot %d id %lld\n", what, (long long)i, t, (long long)v); continue; }
      const float *b = x->rows + v * (x->stride ? x->stride : x->d);
      double s = 0, na = 0, nb = 0, dot = 0;
      for (int32_t j = 0; j < x->d; ++j) {
        s += ((double)a[j] - b[j]) * ((double)a[j] - b[j]);
        na += (double)a[j] * a[j]; nb += (double)b[j] * b[j]; dot += (double)a[j] * b[j];
      }
      double want = x->metric == VIC_COSINE ? 1.0 - dot / sqrt(na * nb) : sqrt(s);
      if (fabs(want - dv) > 1e-3 * (1.0 + fabs(want))) { bad++; fprintf(stderr, "%s: row %lld slot %d dist %g want %g\n", what, (long long)i, t, dv, want); }
      if (t > 0 && dv < r->dist[i * r->k + t - 1]) { bad++; fprintf(stderr, "%s: row %lld not ascending\n", what, (long long)i); }
      for (int32_t u = 0; u < t; ++u)
        if (r->ids[i * r->k + u] == v) { bad++; fprintf(stderr, "%s: row %lld repeats %lld\n", what, (long long)i, (long long)v); }
    }
  }
  VT_CHECK(bad == 0, "%s: %lld bad entries", what, (long long)bad);
}

static void run_case(vic_metric metric, int64_t n, int32_t d, double min_recall) {
  vic_ctx *gpu = vt_ctx(VIC_BACKEND_CUDA, 3), *cpu = vt_ctx(VIC_BACKEND_CPU, 3);
  float *pts = vt_clusters(n, d, 20, 11 + (uint64_t)metric);
  vic_data x = {pts, n, d, 0, metric, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.k = 10;
  o.recall_sample = 0;
  o.method = VIC_METHOD_BRUTE;
  vic_knn exact, got, sharded;
  VT_OK(cpu, vic_knn_build(cpu, &x, &o, &exact));
  o.method = VIC_METHOD_GNND;
  VT_OK(gpu, vic_knn_build(gpu, &x, &o, &got));
  VT_CHECK(got.report.method == VIC_METHOD_GNND && got.report.backend == VIC_BACKEND_CUDA, "ran %s on %s",
           vic_method_name(got.report.method), vic_backend_name(got.report.backend));
  double r = recall(&got, &exact);
  printf("%s n=%lld d=%d: recall@10 %.4f\n", vic_metric_name(metric), (long long)n, (int)d, r);
  VT_CHECK(r >= min_recall, "%s recall %.4f < %.2f", vic_metric_name(metric), r, min_recall);
  check_lists(&x, &got, "gnnd");

  o.shard_size = n / 4; /* four shards: six pair merges */
  VT_OK(gpu, vic_knn_build(gpu, &x, &o, &sharded));
  double rs = recall(&sharded, &exact);
  printf("%s sharded (4 shards): recall@10 %.4f\n", vic_metric_name(metric), rs);
  VT_CHECK(rs >= r - 0.02, "sharded recall %.4f vs in-memory %.4f", rs, r);
  check_lists(&x, &sharded, "sharded");

  /* a budget between the half-precision build's need (about 1,180 bytes a
   * row here) and the fp32 one's (about 1,650): in memory with half rows,
   * the candidates re-ranked in fp32, not sharded */
  vic_knn half;
  o.shard_size = 0;
  o.device_memory_budget = (size_t)n * 1400 + ((size_t)1 << 20);
  VT_OK(gpu, vic_knn_build(gpu, &x, &o, &half));
  double rh = recall(&half, &exact);
  printf("%s half rows: recall@10 %.4f (%s)\n", vic_metric_name(metric), rh, half.report.reason);
  VT_CHECK(strstr(half.report.reason, "half-precision") != NULL, "not the half-precision build: %s", half.report.reason);
  VT_CHECK(rh >= r - 0.02, "half-row recall %.4f vs fp32 %.4f", rh, r);
  check_lists(&x, &half, "half rows");
  vic_knn_free(&half);
  vic_knn_free(&exact);
  vic_knn_free(&got);
  vic_knn_free(&sharded);
  free(pts);
  vic_ctx_destroy(gpu);
  vic_ctx_destroy(cpu);
}

/* Tiny sets (fewer points than one list segment) and strided rows: every
 * other point is reachable, so the lists must be exact. */
static void tiny_and_strided(void) {
  vic_ctx *gpu = vt_ctx(VIC_BACKEND_CUDA, 9), *cpu = vt_ctx(VIC_BACKEND_CPU, 9);
  const int32_t d = 8, stride = 11;
  const int64_t n = 40;
  float *pts = vt_uniform(n, stride, 1.f, 21);
  vic_data x = {pts, n, d, stride, VIC_L2, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.k = 5;
  o.recall_sample = 0;
  o.method = VIC_METHOD_BRUTE;
  vic_knn exact, got;
  VT_OK(cpu, vic_knn_build(cpu, &x, &o, &exact));
  o.method = VIC_METHOD_GNND;
  VT_OK(gpu, vic_knn_build(gpu, &x, &o, &got));
  double r = recall(&got, &exact);
  printf("tiny strided n=40: recall@5 %.4f\n", r);
  VT_CHECK(r >= 0.99, "tiny strided recall %.4f", r);
  check_lists(&x, &got, "tiny strided");
  vic_knn_free(&exact);
  vic_knn_free(&got);
  free(pts);
  vic_ctx_destroy(gpu);
  vic_ctx_destroy(cpu);
}

static void bad_parameters(void) {
  vic_ctx *gpu = vt_ctx(VIC_BACKEND_CUDA, 3);
  float *pts = vt_uniform(500, 8, 1.f, 5);
  vic_data x = {pts, 500, 8, 0, VIC_L2, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_GNND;
  o.recall_sample = 0;
  o.gnnd.samples = 40;
  vic_knn r;
  VT_CHECK(vic_knn_build(gpu, &x, &o, &r) != VIC_OK, "p = 40 accepted");
  VT_CHECK(strstr(vic_ctx_error(gpu), "samples") != NULL, "message: %s", vic_ctx_error(gpu));
  free(pts);
  vic_ctx_destroy(gpu);
}

int main(int argc, char **argv) {
  const int small = vt_gpu_start(argc, argv);
  run_case(VIC_L2, small ? 4000 : 20000, 32, 0.95);
  run_case(VIC_COSINE, small ? 2000 : 10000, 48, 0.95);
  tiny_and_strided();
  bad_parameters();
  return vt_finish("test_gnnd");
}
