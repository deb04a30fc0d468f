/* Peers of GNND in the same run, through the public API on the GPU:
 * exact brute force, GNND itself (the API's overhead included: option
 * resolution, distance conversion) and GGNN when this build offers it.
 * Recall@10 on the same sample and exact lists as gnnd_bench.
 *
 *   gnnd_peers DATA.f32 N D SAMPLE.i32 TRUTH.i32 NSAMPLE */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include "bench_util.h"
#include "vicinity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv) {
  if (argc < 7) {
    fprintf(stderr, "usage: gnnd_peers DATA.f32 N D SAMPLE.i32 TRUTH.i32 NSAMPLE\n");
    return 2;
  }
  int64_t n = atoll(argv[2]), ns = atoll(argv[6]);
  int32_t d = atoi(argv[3]);
  float *x = bench_load(NULL, argv[1], (size_t)n * d * 4);
  int32_t *S = bench_load(NULL, argv[4], (size_t)ns * 4), *T = bench_load(NULL, argv[5], (size_t)ns * 40);
  vic_ctx_options co;
  vic_ctx_options_init(&co);
  co.backend = VIC_BACKEND_CUDA;
  co.seed = 42;
  vic_ctx *c;
  if (vic_ctx_create(&co, &c) != VIC_OK) return 1;
  vic_data data = {x, n, d, 0, VIC_L2, NULL};
  struct { const char *label; vic_method m; int K, p, it; } runs[] = {
      {"warm-up gnnd 20k", VIC_METHOD_GNND, 32, 8, 2},
      {"gnnd (defaults)", VIC_METHOD_GNND, 0, 16, 10},
      {"gnnd K=64 p=24 it=6", VIC_METHOD_GNND, 64, 24, 6},
      {"ggnn (defaults)", VIC_METHOD_GGNN, 0, 0, 0},
      {"brute (exact)", VIC_METHOD_BRUTE, 0, 0, 0},
  };
  printf("# peer seconds kernel_s transfer_s recall@10\n");
  for (size_t r = 0; r < sizeof runs / sizeof runs[0]; ++r) {
    vic_build_options o;
    vic_build_options_init(&o);
    o.k = 10;
    o.recall_sample = 0;
    o.method = runs[r].m;
    if (runs[r].m == VIC_METHOD_GNND) {
      o.gnnd.k_build = runs[r].K;
      o.gnnd.samples = runs[r].p;
      o.gnnd.iterations = runs[r].it;
    }
    vic_data v = data;
    if (r == 0) v.n = 20000;
    vic_knn out;
    double t = bench_now();
    vic_status s = vic_knn_build(c, &v, &o, &out);
    t = bench_now() - t;
    if (s != VIC_OK) {
      printf("%s: %s: %s\n", runs[r].label, vic_status_name(s), vic_ctx_error(c));
      continue;
    }
    int64_t hit = 0;
    if (r > 0)
      for (int64_t i = 0; i < ns; ++i)
        for (int tt = 0; tt < 10; ++tt)
          for (int u = 0; u < 10; ++u)
            if (out.ids[(int64_t)S[i] * 10 + u] == T[i * 10 + tt]) { hit++; break; }
    printf("%s: %.3f %.3f %.3f %.4f (%s)\n", runs[r].label, t, out.report.seconds_kernel, out.report.seconds_transfer,
           (double)hit / (double)(ns * 10), out.report.reason);
    fflush(stdout);
    vic_knn_free(&out);
  }
  vic_ctx_destroy(c);
  free(x); free(S); free(T);
  return 0;
}
