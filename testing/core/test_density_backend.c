/* Backend policy of the densities (issue 8), in every build: vic_knn_density
 * equals vic_knn_build (exact) + vic_density on the same backend; a forced
 * CUDA backend without a usable GPU is VIC_E_NODEVICE with a message that
 * says so, while AUTO runs (on the GPU when there is one, else the CPU)
 * with the same densities as the CPU to 1e-5. */
#include "test_util.h"

#include <math.h>
#include <string.h>

int main(void) {
  const int64_t n = 20000;
  const int32_t k = 16;
  float *u = vt_uniform(n, 3, 1.f, 3);
  vic_data x = {u, n, 3, 0, VIC_L2, NULL};
  vic_ctx *cpu = vt_ctx(VIC_BACKEND_CPU, 1), *aut = vt_ctx(VIC_BACKEND_AUTO, 1), *cuda = vt_ctx(VIC_BACKEND_CUDA, 1);
  float *a = malloc((size_t)n * 4), *b = malloc((size_t)n * 4), *c = malloc((size_t)n * 4);

  vic_build_options bo;
  vic_build_options_init(&bo);
  bo.k = k;
  bo.method = VIC_METHOD_GRID;
  vic_knn nn, fused;
  VT_OK(cpu, vic_knn_build(cpu, &x, &bo, &nn));
  VT_OK(cpu, vic_density(cpu, &x, &nn, NULL, NULL, a, NULL, NULL));
  VT_OK(cpu, vic_knn_density(cpu, &x, k, NULL, NULL, &fused, b, NULL, NULL));
  VT_CHECK(fused.n == n && fused.k == k && fused.report.backend == VIC_BACKEND_CPU, "cpu lists %lld x %d on %s",
           (long long)fused.n, (int)fused.k, vic_backend_name(fused.report.backend));
  VT_CHECK(memcmp(fused.ids, nn.ids, (size_t)n * k * sizeof *nn.ids) == 0, "cpu fused lists differ from vic_knn_build");
  VT_CHECK(memcmp(a, b, (size_t)n * 4) == 0, "cpu fused densities differ from vic_density");
  vic_knn_free(&fused);

  /* AUTO: GPU when usable, CPU otherwise; the same densities either way */
  VT_OK(aut, vic_density(aut, &x, &nn, NULL, NULL, c, NULL, NULL));
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) worst = fmax(worst, fabs((double)c[i] - a[i]) / a[i]);
  VT_CHECK(worst <= 1e-5, "AUTO densities differ from the CPU by %.3g", worst);

  int gpu = vic_cuda_available(cpu);
  vic_status s = vic_density(cuda, &x, &nn, NULL, NULL, c, NULL, NULL);
  if (!gpu) {
    VT_CHECK(s == VIC_E_NODEVICE, "forced CUDA without a GPU: %s", vic_status_name(s));
    VT_CHECK(strstr(vic_ctx_error(cuda), "density on the GPU was requested") != NULL, "message: %s",
             vic_ctx_error(cuda));
    s = vic_knn_density(cuda, &x, k, NULL, NULL, NULL, c, NULL, NULL);
    VT_CHECK(s == VIC_E_NODEVICE, "forced CUDA fused without a GPU: %s (%s)", vic_status_name(s), vic_ctx_error(cuda));
  } else {
    VT_CHECK(s == VIC_OK, "forced CUDA with a GPU: %s (%s)", vic_status_name(s), vic_ctx_error(cuda));
  }
  /* bad input is refused before any backend is chosen */
  s = vic_knn_density(aut, &x, 1, NULL, NULL, NULL, c, NULL, NULL);
  VT_CHECK(s == VIC_E_ARGUMENT, "k = 1: %s", vic_status_name(s));
  s = vic_knn_density(aut, &x, (int32_t)n, NULL, NULL, NULL, c, NULL, NULL);
  VT_CHECK(s == VIC_E_ARGUMENT, "k = n: %s", vic_status_name(s));

  vic_knn_free(&nn);
  free(a); free(b); free(c); free(u);
  vic_ctx_destroy(cpu); vic_ctx_destroy(aut); vic_ctx_destroy(cuda);
  return vt_finish("test_density_backend");
}
