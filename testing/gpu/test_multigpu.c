/* Several GPUs in one process against one GPU and the CPU:
 *  - grid kNN: row ranges of vick_grid_knn_range equal the whole call's
 *    lists (any GPU count); with 2+ devices, vic_knn_build with devices =
 *    all equals devices = 1 bit for bit; one GPU equals the CPU grid up to
 *    rounding (a few rows are not bit-identical: printed);
 *  - sharded GGNN (2 shards, deterministic construction): index queries
 *    and for-all lists reach the recall floor against exact search; a
 *    repeated 1-device build gives the same lists; with 2+ devices the
 *    report shows a second device at work and the lists equal the
 *    1-device run's;
 *  - asking for more devices than present fails with both numbers.
 * The multi-GPU comparisons are skipped, with a line saying so, on one GPU.
 * `test_multigpu small` runs small sizes (compute-sanitizer).
 * Exit 77 where no CUDA device is usable. */
#include "test_util.h"
#include "vic_kernels_exact.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int small_run;

static vic_ctx *ctx(vic_backend be, int devices) {
  vic_ctx_options o;
  vic_ctx_options_init(&o);
  o.backend = be;
  o.devices = devices;
  o.seed = 5;
  vic_ctx *c = NULL;
  if (vic_ctx_create(&o, &c) != VIC_OK) {
    fprintf(stderr, "context creation failed\n");
    exit(1);
  }
  return c;
}

static int64_t rows_differing(const vic_knn *a, const vic_knn *b) {
  if (a->n != b->n || a->k != b->k) return a->n > b->n ? a->n : b->n;
  int64_t bad = 0;
  for (int64_t i = 0; i < a->n; ++i)
    bad += memcmp(a->ids + i * a->k, b->ids + i * b->k, (size_t)a->k * 8) != 0 ||
           memcmp(a->dist + i * a->k, b->dist + i * b->k, (size_t)a->k * 4) != 0;
  return bad;
}

/* ranges of one GPU's grid against its whole call */
static void test_grid_ranges(const float *rows, int64_t n, int32_t k) {
  vick_points p = {rows, n, 3, 3, VICK_METRIC_L2, NULL};
  int64_t *all_i = malloc((size_t)n * k * 8), *part_i = malloc((size_t)n * k * 8);
  float *all_d = malloc((size_t)n * k * 4), *part_d = malloc((size_t)n * k * 4);
  vick_call call;
  memset(&call, 0, sizeof call);
  VT_CHECK(vick_grid_knn(&call, &p, k, all_i, all_d) == VICK_OK, "grid: %s", call.message);
  int64_t cut[4] = {0, n / 3, n / 3 + 1, n};
  for (int r = 0; r < 3; ++r) {
    memset(&call, 0, sizeof call);
    int rc = vick_grid_knn_range(&call, &p, k, cut[r], cut[r + 1], part_i + cut[r] * k, part_d + cut[r] * k);
    VT_CHECK(rc == VICK_OK, "range [%lld, %lld): %s", (long long)cut[r], (long long)cut[r + 1], call.message);
  }
  VT_CHECK(memcmp(all_i, part_i, (size_t)n * k * 8) == 0 && memcmp(all_d, part_d, (size_t)n * k * 4) == 0,
           "grid ranges differ from the whole call");
  memset(&call, 0, sizeof call);
  VT_CHECK(vick_grid_knn_range(&call, &p, k, 5, 5, part_i, part_d) == VICK_ARGUMENT, "empty range accepted");
  free(all_i);
  free(part_i);
  free(all_d);
  free(part_d);
}

static void test_grid_devices(const char *name, const float *rows, int64_t n, int32_t k, int present) {
  vic_data x = {rows, n, 3, 0, VIC_L2, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_GRID;
  o.k = k;
  vic_knn one, cpu;
  vic_ctx *c1 = ctx(VIC_BACKEND_CUDA, 1), *cc = ctx(VIC_BACKEND_CPU, 1);
  VT_OK(c1, vic_knn_build(c1, &x, &o, &one));
  VT_OK(cc, vic_knn_build(cc, &x, &o, &cpu));
  /* GPU vs CPU within rounding (ties may swap ids); 1 vs N GPUs bit for bit */
  double *ref = malloc((size_t)n * k * sizeof *ref);
  for (int64_t i = 0; i < n * k; ++i) ref[i] = cpu.dist[i];
  int64_t off = vt_compare_knn(&one, cpu.ids, ref, 1e-5);
  VT_CHECK(off == 0, "%s: 1 GPU vs CPU: %lld rows differ beyond rounding", name, (long long)off);
  printf("grid %s: 1 GPU vs CPU: %lld rows not bit-identical, %lld beyond rounding\n", name,
         (long long)rows_differing(&one, &cpu), (long long)off);
  free(ref);
  if (present >= 2) {
    vic_knn many;
    vic_ctx *cn = ctx(VIC_BACKEND_CUDA, VIC_DEVICES_ALL);
    VT_OK(cn, vic_knn_build(cn, &x, &o, &many));
    int64_t bad = rows_differing(&one, &many);
    VT_CHECK(bad == 0, "%s: 1 vs %d GPUs: %lld rows differ", name, present, (long long)bad);
    VT_CHECK(vic_report_stage_seconds(&many.report, "dev1 total") >= 0, "%s: no second device in the report", name);
    printf("grid %s n=%lld k=%d: 1 GPU %.3f s (kernel %.3f), %d GPUs %.3f s (kernel %.3f), equal lists: %s\n", name,
           (long long)n, k, one.report.seconds_total, one.report.seconds_kernel, present, many.report.seconds_total,
           many.report.seconds_kernel, bad == 0 ? "yes" : "no");
    vic_knn_free(&many);
    vic_ctx_destroy(cn);
  }
  vic_knn_free(&one);
  vic_knn_free(&cpu);
  vic_ctx_destroy(c1);
  vic_ctx_destroy(cc);
}

static double recall_at(const vic_knn *got, const vic_knn *ref, int32_t at) {
  int64_t hit = 0;
  for (int64_t i = 0; i < ref->n; ++i)
    for (int32_t t = 0; t < at; ++t) {
      int found = 0;
      for (int32_t u = 0; u < at && !found; ++u) found = got->ids[i * got->k + u] == ref->ids[i * ref->k + t];
      hit += found;
    }
  return (double)hit / (double)(ref->n * at);
}

/* lists ascending by (distance, id), no repeated id, ids in range */
static int64_t bad_lists(const vic_knn *r, int64_t n) {
  int64_t bad = 0;
  for (int64_t i = 0; i < r->n; ++i) {
    const int64_t *id = r->ids + i * r->k;
    const float *d = r->dist + i * r->k;
    int ok = 1;
    for (int32_t t = 0; t < r->k; ++t) {
      if (id[t] < -1 || id[t] >= n) ok = 0;
      if (t > 0 && id[t] >= 0 && (d[t] < d[t - 1] || (d[t] == d[t - 1] && id[t] <= id[t - 1]))) ok = 0;
    }
    bad += !ok;
  }
  return bad;
}

typedef struct {
  vic_knn q, forall;
  double build_s, r1, r10, forall_recall;
} ggnn_run;

static void ggnn_once(int devices, const vic_data *x, const vic_data *q, const vic_knn *truth, int64_t shard,
                      ggnn_run *out) {
  vic_ctx *c = ctx(VIC_BACKEND_CUDA, devices);
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_GGNN;
  o.k = 10;
  o.shard_size = shard;
  o.ggnn.deterministic = 1;
  o.recall_sample = 0;
  vic_index *ix = NULL;
  VT_OK(c, vic_index_build(c, x, &o, &ix));
  const vic_report *br = vic_index_report(ix);
  out->build_s = br->seconds_total;
  if (devices != 1)
    VT_CHECK(vic_report_stage_seconds(br, "dev1 build") >= 0, "sharded build: no second device in the report");
  vic_search_options so;
  vic_search_options_init(&so);
  so.k = 10;
  VT_OK(c, vic_index_search(c, ix, q, &so, &out->q));
  out->r1 = recall_at(&out->q, truth, 1);
  out->r10 = recall_at(&out->q, truth, 10);
  VT_CHECK(bad_lists(&out->q, x->n) == 0, "merged query lists out of order: %lld rows",
           (long long)bad_lists(&out->q, x->n));
  vic_index_free(ix);
  VT_OK(c, vic_knn_build(c, x, &o, &out->forall));
  VT_CHECK(out->forall.report.method == VIC_METHOD_GGNN && out->forall.report.backend == VIC_BACKEND_CUDA,
           "for-all ran %s on %s", vic_method_name(out->forall.report.method),
           vic_backend_name(out->forall.report.backend));
  VT_CHECK(bad_lists(&out->forall, x->n) == 0, "merged for-all lists out of order");
  VT_OK(c, vic_knn_recall(c, x, &out->forall, small_run ? 200 : 2000, &out->forall_recall));
  vic_ctx_destroy(c);
}

static void ggnn_free(ggnn_run *r) {
  vic_knn_free(&r->q);
  vic_knn_free(&r->forall);
}

static void test_ggnn_shards(int present) {
  const int64_t n = small_run ? 8000 : 40000, m = small_run ? 200 : 1000;
  const int32_t d = 32;
  float *rows = vt_clusters(n + m, d, 24, 17); /* base and queries from one model */
  vic_data x = {rows, n, d, 0, VIC_L2, NULL};
  vic_data q = {rows + n * d, m, d, 0, VIC_L2, NULL};
  vic_ctx *cc = ctx(VIC_BACKEND_CPU, 1);
  vic_knn truth;
  VT_OK(cc, vic_knn_query_exact(cc, &x, &q, 10, &truth));
  vic_ctx_destroy(cc);

  ggnn_run a, a2, b;
  ggnn_once(1, &x, &q, &truth, n / 2, &a);
  printf("sharded GGNN (2 shards of %lld), 1 GPU: build %.3f s, R@1 %.4f, R@10 %.4f, for-all recall@10 %.4f\n",
         (long long)(n / 2), a.build_s, a.r1, a.r10, a.forall_recall);
  VT_CHECK(a.r10 >= 0.9 && a.forall_recall >= 0.9, "sharded recall: queries %.4f, for-all %.4f", a.r10,
           a.forall_recall);
  ggnn_once(1, &x, &q, &truth, n / 2, &a2);
  int64_t rep_q = rows_differing(&a.q, &a2.q), rep_f = rows_differing(&a.forall, &a2.forall);
  printf("sharded GGNN, 1 GPU repeated: rows differing: queries %lld, for-all %lld\n", (long long)rep_q,
         (long long)rep_f);
  VT_CHECK(rep_q == 0 && rep_f == 0, "the deterministic construction does not repeat on one GPU");
  if (present < 2) {
    printf("SKIP multi-GPU comparisons: this machine has %d CUDA device\n", present);
  } else {
    ggnn_once(VIC_DEVICES_ALL, &x, &q, &truth, n / 2, &b);
    int64_t dq = rows_differing(&a.q, &b.q), df = rows_differing(&a.forall, &b.forall);
    printf("sharded GGNN, %d GPUs: build %.3f s, R@1 %.4f, R@10 %.4f, for-all recall@10 %.4f; rows differing from "
           "1 GPU: queries %lld, for-all %lld\n", present, b.build_s, b.r1, b.r10, b.forall_recall, (long long)dq,
           (long long)df);
    VT_CHECK(dq == 0 && df == 0, "sharded GGNN: 1 vs %d GPUs differ", present);
    ggnn_free(&b);
  }
  ggnn_free(&a2);
  ggnn_free(&a);
  vic_knn_free(&truth);
  free(rows);
}

static void test_too_many(int present) {
  vic_ctx *c = ctx(VIC_BACKEND_CUDA, present + 1);
  float *rows = vt_uniform(1000, 3, 1.f, 9);
  vic_data x = {rows, 1000, 3, 0, VIC_L2, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.k = 4;
  vic_knn r;
  vic_status s = vic_knn_build(c, &x, &o, &r);
  char want[64];
  snprintf(want, sizeof want, "%d CUDA devices", present + 1);
  VT_CHECK(s == VIC_E_NODEVICE && strstr(vic_ctx_error(c), want), "%d of %d devices: %s '%s'", present + 1, present,
           vic_status_name(s), vic_ctx_error(c));
  vic_knn_free(&r);
  vic_ctx_destroy(c);
  free(rows);
}

int main(int argc, char **argv) {
  small_run = vt_gpu_start(argc, argv);
  char msg[256];
  int present = vick_device_count(msg, sizeof msg);
  if (present <= 0) vt_skip("no CUDA device");
  printf("%d CUDA device%s\n", present, present == 1 ? "" : "s");
  const int64_t n = small_run ? 20000 : 400000;
  float *u = vt_uniform(n, 3, 1.f, 21);
  float *cl = vt_clusters(n, 3, 12, 22);
  test_grid_ranges(u, n, 16);
  test_grid_devices("uniform", u, n, 16, present);
  test_grid_devices("clusters", cl, n, 32, present);
  test_ggnn_shards(present);
  test_too_many(present);
  free(u);
  free(cl);
  return vt_finish("test_multigpu");
}
