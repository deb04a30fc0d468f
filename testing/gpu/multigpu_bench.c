/* 1 vs N GPUs in one process, through the public API; one JSON line per
 * run, each compared with the first run of the same invocation.
 *
 *   multigpu_bench grid FILE NAME K DEVICES...
 *     exact grid kNN of a 3-d point file (.npy / .fvecs): per run the
 *     report's total, kernel and transfer seconds (overall = the slowest
 *     device) and each device's own; equal = the lists equal run 1's bit
 *     for bit.  A warm-up on the first 100,000 points precedes each run.
 *
 *   multigpu_bench ggnn DIR N M D K_BUILD SHARD TAU DET DEVICES...
 *     sharded GGNN on ggnn_truth.py's files in DIR (base.f32, query.f32,
 *     qtruth.i32, sample.i32, truth.i32): index build seconds, search of
 *     the M queries (k = 10, slack TAU; after one warm-up search), R@1 and
 *     R@10 against the exact lists, then the sharded for-all lists (k = 10)
 *     with C@1 / C@10 on the sample; rows differing from run 1.  DET = 1:
 *     the deterministic construction (ggnn.deterministic), 0: atomics.
 *
 * DEVICES: 1, 2, ... or -1 for all; a count may repeat (1 1 2 shows
 * whether one device repeats itself). */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include "bench_util.h"
#include "vic_io.h"
#include "vicinity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static vic_ctx *ctx(int devices) {
  vic_ctx_options o;
  vic_ctx_options_init(&o);
  o.backend = VIC_BACKEND_CUDA;
  o.devices = devices;
  vic_ctx *c = NULL;
  if (vic_ctx_create(&o, &c) != VIC_OK) {
    fprintf(stderr, "context creation failed (devices %d)\n", devices);
    exit(1);
  }
  return c;
}

static void must(vic_ctx *c, vic_status s, const char *what) {
  if (s == VIC_OK) return;
  fprintf(stderr, "%s: %s: %s\n", what, vic_status_name(s), vic_ctx_error(c));
  exit(1);
}

static int64_t rows_differing(const vic_knn *a, const vic_knn *b) {
  int64_t bad = 0;
  for (int64_t i = 0; i < a->n; ++i)
    bad += memcmp(a->ids + i * a->k, b->ids + i * b->k, (size_t)a->k * 8) != 0 ||
           memcmp(a->dist + i * a->k, b->dist + i * b->k, (size_t)a->k * 4) != 0;
  return bad;
}

static void print_stages(const vic_report *r) {
  printf(", \"stages\": {");
  for (int i = 0; i < r->n_stages; ++i)
    printf("%s\"%s\": %.4f", i ? ", " : "", r->stages[i].name, r->stages[i].seconds);
  printf("}");
}

static int bench_grid(int argc, char **argv) {
  if (argc < 6) return 2;
  vio_matrix m;
  char err[512];
  if (vio_load(argv[2], &m, err, sizeof err) != 0) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  const char *name = argv[3];
  int k = atoi(argv[4]);
  vic_data x = {m.rows, m.n, m.d, 0, VIC_L2, NULL};
  vic_data warm = x;
  warm.n = x.n < 100000 ? x.n : 100000;
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_GRID;
  o.k = k;
  vic_knn first;
  memset(&first, 0, sizeof first);
  for (int a = 5; a < argc; ++a) {
    int devices = atoi(argv[a]);
    vic_ctx *c = ctx(devices);
    vic_knn r;
    must(c, vic_knn_build(c, &warm, &o, &r), "warm-up");
    vic_knn_free(&r);
    must(c, vic_knn_build(c, &x, &o, &r), "grid");
    printf("{\"bench\": \"grid\", \"set\": \"%s\", \"n\": %lld, \"k\": %d, \"devices\": %d, \"total_s\": %.4f, "
           "\"kernel_s\": %.4f, \"transfer_s\": %.4f",
           name, (long long)x.n, k, devices, r.report.seconds_total, r.report.seconds_kernel,
           r.report.seconds_transfer);
    print_stages(&r.report);
    if (a == 5) {
      first = r;
      printf("}\n");
    } else {
      printf(", \"rows_differing\": %lld, \"equal\": \"%s\"}\n", (long long)rows_differing(&first, &r),
             rows_differing(&first, &r) == 0 ? "yes" : "no");
      vic_knn_free(&r);
    }
    fflush(stdout);
    vic_ctx_destroy(c);
  }
  vic_knn_free(&first);
  free(m.rows);
  return 0;
}

static int bench_ggnn(int argc, char **argv) {
  if (argc < 11) return 2;
  const char *dir = argv[2];
  int64_t n = atoll(argv[3]), m = atoll(argv[4]), shard = atoll(argv[7]);
  int d = atoi(argv[5]), kb = atoi(argv[6]);
  float tau = (float)atof(argv[8]);
  int det = atoi(argv[9]);
  const int64_t ns = 10000;
  float *base = bench_load(dir, "base.f32", (size_t)n * d * 4), *qr = bench_load(dir, "query.f32", (size_t)m * d * 4);
  int32_t *qt = bench_load(dir, "qtruth.i32", (size_t)m * 40), *sample = bench_load(dir, "sample.i32", (size_t)ns * 4);
  int32_t *st = bench_load(dir, "truth.i32", (size_t)ns * 40);
  vic_data x = {base, n, d, 0, VIC_L2, NULL}, q = {qr, m, d, 0, VIC_L2, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_GGNN;
  o.k = 10;
  o.ggnn.k_build = kb;
  o.shard_size = shard;
  o.ggnn.deterministic = det;
  o.recall_sample = 0;
  vic_search_options so;
  vic_search_options_init(&so);
  so.k = 10;
  so.tau = tau;
  vic_knn first_q, first_f;
  memset(&first_q, 0, sizeof first_q);
  memset(&first_f, 0, sizeof first_f);
  for (int a = 10; a < argc; ++a) {
    int devices = atoi(argv[a]);
    vic_ctx *c = ctx(devices);
    vic_index *ix = NULL;
    must(c, vic_index_build(c, &x, &o, &ix), "index build");
    const vic_report *br = vic_index_report(ix);
    vic_knn r, f;
    must(c, vic_index_search(c, ix, &q, &so, &r), "warm-up search");
    vic_knn_free(&r);
    must(c, vic_index_search(c, ix, &q, &so, &r), "search");
    printf("{\"bench\": \"ggnn_sharded\", \"n\": %lld, \"d\": %d, \"k_build\": %d, \"shard_size\": %lld, "
           "\"deterministic\": %d, \"devices\": %d, \"build_s\": %.4f, \"build_kernel_s\": %.4f",
           (long long)n, d, kb, (long long)shard, det, devices, br->seconds_total, br->seconds_kernel);
    print_stages(br);
    printf(", \"queries\": %lld, \"tau\": %.2f, \"search_s\": %.4f, \"search_kernel_s\": %.4f, "
           "\"us_per_query\": %.3f, \"R@1\": %.4f, \"R@10\": %.4f",
           (long long)m, tau, r.report.seconds_total, r.report.seconds_kernel, 1e6 * r.report.seconds_total / m,
           bench_hits(r.ids, 10, qt, 10, m, NULL, 1), bench_hits(r.ids, 10, qt, 10, m, NULL, 10));
    vic_index_free(ix);
    must(c, vic_knn_build(c, &x, &o, &f), "for-all");
    printf(", \"forall_s\": %.4f, \"forall_C@1\": %.4f, \"forall_C@10\": %.4f", f.report.seconds_total,
           bench_hits(f.ids, 10, st, 10, ns, sample, 1), bench_hits(f.ids, 10, st, 10, ns, sample, 10));
    print_stages(&f.report);
    if (a == 10) {
      first_q = r;
      first_f = f;
      printf("}\n");
    } else {
      int64_t dq = rows_differing(&first_q, &r), df = rows_differing(&first_f, &f);
      printf(", \"query_rows_differing\": %lld, \"forall_rows_differing\": %lld, \"identical\": \"%s\"}\n",
             (long long)dq, (long long)df, dq == 0 && df == 0 ? "yes" : "no");
      vic_knn_free(&r);
      vic_knn_free(&f);
    }
    fflush(stdout);
    vic_ctx_destroy(c);
  }
  vic_knn_free(&first_q);
  vic_knn_free(&first_f);
  free(base);
  free(qr);
  free(qt);
  free(sample);
  free(st);
  return 0;
}

int main(int argc, char **argv) {
  int rc = 2;
  if (argc > 1 && strcmp(argv[1], "grid") == 0) rc = bench_grid(argc, argv);
  if (argc > 1 && strcmp(argv[1], "ggnn") == 0) rc = bench_ggnn(argc, argv);
  if (rc == 2)
    fprintf(stderr, "usage: multigpu_bench grid FILE NAME K DEVICES... | "
                    "multigpu_bench ggnn DIR N M D K_BUILD SHARD TAU DET DEVICES...\n");
  return rc;
}
