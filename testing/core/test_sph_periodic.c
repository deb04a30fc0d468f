/* A uniform periodic box (200,000 particles, unit box, total mass 1,
 * smoothing lengths from periodic kNN lists, k = 32): the projection
 * along z over exactly the box holds the whole mass (kernels crossing a
 * face come back through the opposite one), its 32 x 32 pixels scatter
 * about the mean no more than Poisson noise of the particles per pixel
 * allows, and the pixels along the faces agree with the interior (no edge
 * loss).  The slice through the box's middle averages to the mean density
 * within its noise. */
#include "test_util.h"

#include <math.h>
#include <string.h>

int main(void) {
  const int64_t n = vt_small() ? 50000 : 200000;
  const double box[3] = {1, 1, 1};
  float *xyz = vt_uniform(n, 3, 1.0f, 77), *h = malloc((size_t)n * sizeof *h);
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  vic_data x = {xyz, n, 3, 0, VIC_L2, box};
  vic_density_options dop;
  vic_density_options_init(&dop);
  dop.total_mass = 1.0;
  VT_OK(c, vic_knn_density(c, &x, 32, NULL, &dop, NULL, NULL, NULL, h));

  vic_sph_options o;
  vic_sph_options_init(&o);
  o.centre[0] = o.centre[1] = o.centre[2] = 0.5;
  o.resolution[0] = o.resolution[1] = 32;
  o.total_mass = 1.0;
  vic_sph_image im;
  VT_OK(c, vic_sph_resample(c, &x, NULL, h, 0, NULL, &o, &im));
  const int N = 32;
  double sum = 0, sum2 = 0, edge = 0, inner = 0;
  int ne = 0, ni = 0;
  for (int j = 0; j < N; ++j)
    for (int i = 0; i < N; ++i) {
      double v = im.density[j * N + i];
      sum += v;
      sum2 += v * v;
      if (i == 0 || j == 0 || i == N - 1 || j == N - 1) { edge += v; ne++; }
      else { inner += v; ni++; }
    }
  const double mean = sum / (N * N), sd = sqrt(sum2 / (N * N) - mean * mean);
  const double per_pixel = (double)n / (N * N), poisson = 1.0 / sqrt(per_pixel);
  printf("projection: mean %.6f (expected 1), scatter %.4f, Poisson %.4f; faces %.5f, interior %.5f\n", mean,
         sd / mean, poisson, edge / ne, inner / ni);
  VT_CHECK(fabs(mean - 1.0) < 1e-5, "mean surface density %.8f, expected the whole mass 1", mean);
  VT_CHECK(sd / mean < poisson && sd / mean > 0.2 * poisson, "pixel scatter %.4f against Poisson %.4f", sd / mean,
           poisson);
  /* the faces' mean is a mean of ne pixels: 4 sigma of that */
  VT_CHECK(fabs(edge / ne - inner / ni) < 4 * poisson / sqrt(ne), "faces %.5f vs interior %.5f", edge / ne, inner / ni);
  vic_sph_image_free(&im);

  o.mode = VIC_SPH_SLICE;
  VT_OK(c, vic_sph_resample(c, &x, NULL, h, 0, NULL, &o, &im));
  sum = 0;
  for (int q = 0; q < N * N; ++q) sum += im.density[q];
  /* the slice samples a layer about 2 r_k thick: ~ n (2 r_k) / N^2 particles per pixel */
  printf("slice: mean density %.4f (expected 1)\n", sum / (N * N));
  VT_CHECK(fabs(sum / (N * N) - 1.0) < 0.1, "slice mean density %.4f", sum / (N * N));
  vic_sph_image_free(&im);
  vic_ctx_destroy(c);
  free(xyz);
  free(h);
  return vt_finish("test_sph_periodic");
}
