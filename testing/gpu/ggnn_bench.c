/* GGNN benchmark on one data set against exact 10-NN (from ggnn_truth.py):
 * build time (upload included, stages), graph facts, for-all consensus
 * C@1/C@10 on a row sample, then a tau_query sweep over the query batch:
 * R@1, C@10 and microseconds per query (kernel time by CUDA events, median
 * of 3 runs after a warm-up; transfers apart).
 *
 *   ggnn_bench DIR N M D K [NSAMPLE] [TAU ...]
 *
 * GGNN_BUILD_CONFIGS="TB:IT:R[:UP],..." (environment) repeats build, for-all
 * and the sweep for each construction setting: tau_build TB, merge iteration
 * cap IT on the target layer (0 = default), R refinements and the cap UP on
 * the layers above (0 or absent = default); unset = the defaults once.
 *
 * DIR holds base.f32, query.f32, qtruth.i32, sample.i32, truth.i32. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include "bench_util.h"
#include "vic_kernels_ggnn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc < 6) {
    fprintf(stderr, "usage: ggnn_bench DIR N M D K [NSAMPLE] [TAU ...]\n");
    return 2;
  }
  const char *dir = argv[1];
  int64_t n = atoll(argv[2]), m = atoll(argv[3]);
  int d = atoi(argv[4]), k = atoi(argv[5]);
  int64_t ns = argc > 6 ? atoll(argv[6]) : 10000;
  float *x = bench_load(dir, "base.f32", (size_t)n * d * 4), *q = bench_load(dir, "query.f32", (size_t)m * d * 4);
  int32_t *qt = bench_load(dir, "qtruth.i32", (size_t)m * 40), *rows = bench_load(dir, "sample.i32", (size_t)ns * 4);
  int32_t *st = bench_load(dir, "truth.i32", (size_t)ns * 40);
  vick_call call;
  vick_ggnn_params p;
  vick_ggnn *g = NULL;
  int rc;

  /* warm-up: context creation and module loading stay out of the numbers */
  memset(&call, 0, sizeof call);
  vick_ggnn_params_init(&p);
  p.k = k;
  if ((rc = vick_ggnn_build(&call, x, n < 50000 ? n : 50000, d, &p, &g)) != VICK_OK) {
    fprintf(stderr, "warm-up build failed (%d): %s\n", rc, call.message);
    return 1;
  }
  vick_ggnn_free(g);

  const char *configs = getenv("GGNN_BUILD_CONFIGS");
  for (;;) {
  vick_ggnn_params_init(&p);
  p.k = k;
  if (configs && *configs) {
    float tb;
    int it, rf, up = 0, used = 0, more = 0;
    if (sscanf(configs, "%f:%d:%d%n", &tb, &it, &rf, &used) != 3) {
      fprintf(stderr, "bad GGNN_BUILD_CONFIGS at '%s' (want TB:IT:R[:UP],...)\n", configs);
      return 2;
    }
    configs += used;
    if (*configs == ':' && sscanf(configs, ":%d%n", &up, &more) == 1) configs += more;
    p.tau_build = tb;
    p.merge_iterations = it;
    p.refinements = rf;
    p.upper_iterations = up;
    if (*configs == ',') configs++;
  }
  printf("== config tau_build %.2f merge_iterations %d refinements %d upper_iterations %d\n", p.tau_build,
         p.merge_iterations, p.refinements, p.upper_iterations);
  memset(&call, 0, sizeof call);
  if ((rc = vick_ggnn_build(&call, x, n, d, &p, &g)) != VICK_OK) {
    fprintf(stderr, "build failed (%d): %s\n", rc, call.message);
    return 1;
  }
  vick_ggnn_info info;
  vick_ggnn_info_get(g, &info);
  printf("build n=%lld d=%d k=%d: %.3f s total (upload %.3f s, device steps %.3f s)\n", (long long)n, d, k,
         call.seconds_total, call.seconds_transfer, call.seconds_kernel);
  for (int i = 0; i < call.n_stages; ++i) printf("  stage %-8s %.3f s\n", call.stages[i].name, call.stages[i].seconds);
  printf("graph: L=%d g=%d s=%d s0=%d upper=%lld components=%lld entries=%d dnn1 mean %.4f max %.4f inverse links/pt %.2f, %.1f MiB\n",
         info.layers, info.growth, info.segment, info.segment0, (long long)info.upper_points,
         (long long)info.components, info.entry_points, info.dnn1_mean, info.dnn1_max, info.mean_inverse_links,
         info.device_bytes / 1048576.0);

  int kk = k < 10 ? k : 10;
  int64_t *fa = malloc((size_t)n * kk * 8);
  float *fd = malloc((size_t)n * kk * 4);
  if ((rc = vick_ggnn_forall(&call, g, kk, fa, fd)) != VICK_OK) {
    fprintf(stderr, "forall failed: %s\n", call.message);
    return 1;
  }
  printf("for-all on %lld sampled rows: C@1 %.4f C@10 %.4f\n", (long long)ns,
         bench_hits(fa, kk, st, 10, ns, rows, 1), bench_hits(fa, kk, st, 10, ns, rows, kk));
  double mean = 0, mx = 0;
  float *dn = malloc((size_t)n * 4);
  vick_ggnn_dnn1(&call, g, dn, &mean, &mx);
  printf("d_nn1: mean %.4f max %.4f (row 0: %.4f)\n", mean, mx, dn[0]);

  float taus_default[] = {0.0f, 0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.8f, 1.0f};
  int ntau = argc > 7 ? argc - 7 : (int)(sizeof taus_default / sizeof *taus_default);
  int64_t *ids = malloc((size_t)m * 10 * 8);
  float *dist = malloc((size_t)m * 10 * 4);
  printf("%8s %8s %8s %10s %10s\n", "tau", "R@1", "C@10", "us/query", "transfer_s");
  for (int t = 0; t < ntau; ++t) {
    float tau = argc > 7 ? (float)atof(argv[7 + t]) : taus_default[t];
    double sec[4];
    for (int r = 0; r < 4; ++r) {
      if ((rc = vick_ggnn_query(&call, g, q, m, 10, tau, 0, ids, dist)) != VICK_OK) {
        fprintf(stderr, "query failed: %s\n", call.message);
        return 1;
      }
      sec[r] = call.seconds_kernel;
    }
    qsort(sec + 1, 3, sizeof(double), cmp_double); /* run 0 is the warm-up */
    printf("%8.2f %8.4f %8.4f %10.4f %10.4f\n", tau, bench_hits(ids, 10, qt, 10, m, NULL, 1),
           bench_hits(ids, 10, qt, 10, m, NULL, 10), sec[2] * 1e6 / m, call.seconds_transfer);
  }
  vick_ggnn_free(g);
  free(fa); free(fd); free(dn); free(ids); free(dist);
  if (!configs || !*configs) break;
  }
  free(x); free(q); free(qt); free(rows); free(st);
  return 0;
}
