/* Vicinity from C: the 8 nearest neighbours, kNN densities and density
 * peaks of two clumps of points.  Build with find_package(Vicinity)
 * (CMakeLists.txt here) or pkg-config:
 *   cc knn_example.c $(pkg-config --cflags --libs vicinity) */
#include <vicinity.h>

#include <stdio.h>
#include <stdlib.h>

int main(void) {
  enum { N = 20000, D = 3, K = 8 };
  float *xyz = malloc(sizeof(float) * N * D);
  float *rho = malloc(sizeof(float) * N);
  if (!xyz || !rho) return 1;
  srand(7);
  for (int i = 0; i < N; ++i)      /* two clumps, centred at 0.3 and 0.7 */
    for (int c = 0; c < D; ++c) {
      float u = 0;
      for (int s = 0; s < 4; ++s) u += (float)rand() / RAND_MAX - 0.5f;
      xyz[i * D + c] = (i % 2 ? 0.7f : 0.3f) + 0.05f * u;
    }
  printf("Vicinity %s (header %d.%d)\n", vic_version_string(), VIC_VERSION_MAJOR, VIC_VERSION_MINOR);

  vic_ctx *ctx;
  if (vic_ctx_create(NULL, &ctx) != VIC_OK) return 1;
  vic_data points = {.rows = xyz, .n = N, .d = D, .metric = VIC_L2};

  vic_build_options o;            /* struct_size and defaults */
  vic_build_options_init(&o);
  o.k = K;
  vic_knn nn;
  if (vic_knn_build(ctx, &points, &o, &nn) != VIC_OK) {
    fprintf(stderr, "kNN failed: %s\n", vic_ctx_error(ctx));
    return 1;
  }
  printf("%s on %s (%s): point 0's nearest is %lld at %.4f\n", vic_method_name(nn.report.method),
         vic_backend_name(nn.report.backend), nn.report.reason, (long long)nn.ids[0], nn.dist[0]);

  vic_peaks peaks;                /* lists, densities and peaks in one call */
  if (vic_knn_density_peaks(ctx, &points, 32, NULL, NULL, NULL, NULL, rho, NULL, NULL, &peaks) != VIC_OK) {
    fprintf(stderr, "peaks failed: %s\n", vic_ctx_error(ctx));
    return 1;
  }
  for (int64_t p = 0; p < peaks.n_peaks; ++p)
    printf("peak %lld: %lld members around (%.3f, %.3f, %.3f)\n", (long long)p, (long long)peaks.peak_members[p],
           peaks.peak_centre[p * D], peaks.peak_centre[p * D + 1], peaks.peak_centre[p * D + 2]);
  int ok = peaks.n_peaks == 2;   /* the two clumps */

  vic_peaks_free(&peaks);
  vic_knn_free(&nn);
  vic_ctx_destroy(ctx);
  free(rho);
  free(xyz);
  return ok ? 0 : 1;
}
