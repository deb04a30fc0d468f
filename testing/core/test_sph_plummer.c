/* A Plummer sphere of 1,000,000 particles (total mass 1, a = 1; under
 * sanitizers 100,000) with smoothing lengths from vic_knn_density (k = 32,
 * pynbody convention) projected along z onto 600 x 600 pixels over
 * +-6 a: in 10 logarithmic radial bins from 0.1 a to 5 a the map's mean
 * matches Sigma(R) = M a^2 / (pi (a^2 + R^2)^2), averaged over the same
 * pixels, within 5 %; the map integrates to the mass of the particles
 * whose kernels it holds; 1 thread and all of them give the same image bit for
 * bit.  The sample is drawn with cumulative mass fraction below
 * x_max = 0.999 (r < 38.7 a): its surface density inside 5 a is that of
 * the untruncated model of mass M / x_max to 2e-4. */
#include "test_util.h"
#include "nbody_models.h"

#include <string.h>

static double sigma_plummer(double M, double a, double R) {
  double s = a * a + R * R;
  return M * a * a / (NB_PI * s * s);
}

int main(void) {
  const int small = vt_small();
  const int64_t n = small ? 100000 : 1000000;
  const double a = 1.0, x_max = 0.999, M = 1.0, half = 6.0;
  const double bound = small ? 0.10 : 0.05;
  const double centre[3] = {0, 0, 0};
  float *xyz = malloc((size_t)n * 3 * sizeof *xyz), *h = malloc((size_t)n * sizeof *h);
  nb_plummer(xyz, n, a, centre, x_max, 2026);
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  vic_data x = {xyz, n, 3, 0, VIC_L2, NULL};
  vic_density_options dop;
  vic_density_options_init(&dop);
  dop.total_mass = M;
  VT_OK(c, vic_knn_density(c, &x, 32, NULL, &dop, NULL, NULL, NULL, h));

  vic_sph_options o;
  vic_sph_options_init(&o);
  o.size[0] = o.size[1] = 2 * half;
  o.resolution[0] = o.resolution[1] = 600;
  o.total_mass = M;
  vic_sph_image im;
  double t0 = 0;
  VT_OK(c, vic_sph_resample(c, &x, NULL, h, 0, NULL, &o, &im));
  t0 = im.report.seconds_total;

  /* mass: the particles whose whole kernel lies inside the map */
  double inside = 0, partial = 0;
  for (int64_t i = 0; i < n; ++i) {
    double H = 2.0 * h[i], px = fabs(xyz[3 * i]), py = fabs(xyz[3 * i + 1]);
    if (px + H < half && py + H < half) inside += M / n;
    else if (px - H < half && py - H < half) partial += M / n;
  }
  double integral = 0;
  const int64_t cells = (int64_t)im.nx * im.ny;
  for (int64_t q = 0; q < cells; ++q) integral += im.density[q];
  integral *= im.spacing[0] * im.spacing[1];
  printf("n = %lld: map integral %.9f, mass of kernels inside %.9f (+ %.2e straddling the edge), %.2f s\n",
         (long long)n, integral, inside, partial, t0);
  VT_CHECK(integral >= inside * (1 - 1e-5) && integral <= (inside + partial) * (1 + 1e-5),
           "integral %.9g outside [%.9g, %.9g]", integral, inside, inside + partial);

  /* radial bins */
  enum { BINS = 10 };
  const double r_lo = 0.1 * a, r_hi = 5 * a;
  double got[BINS] = {0}, want[BINS] = {0};
  int64_t cnt[BINS] = {0};
  for (int j = 0; j < im.ny; ++j)
    for (int i = 0; i < im.nx; ++i) {
      double X = im.origin[0] + i * im.spacing[0], Y = im.origin[1] + j * im.spacing[1], R = sqrt(X * X + Y * Y);
      if (R < r_lo || R >= r_hi) continue;
      int b = (int)(BINS * log(R / r_lo) / log(r_hi / r_lo));
      got[b] += im.density[(int64_t)j * im.nx + i];
      want[b] += sigma_plummer(M / x_max, a, R);
      cnt[b]++;
    }
  double worst = 0;
  printf("Sigma map / analytic - 1 per bin (0.1 a .. 5 a):");
  for (int b = 0; b < BINS; ++b) {
    double e = got[b] / want[b] - 1;
    printf(" %+.4f(%lld px)", e, (long long)cnt[b]);
    if (fabs(e) > worst) worst = fabs(e);
  }
  printf("\n");
  VT_CHECK(worst < bound, "worst radial bin %.4f (bound %.2f)", worst, bound);

  /* the same image with 1 thread (the first ran with all of them) */
  vic_ctx_options co;
  vic_ctx_options_init(&co);
  co.backend = VIC_BACKEND_CPU;
  co.threads = 1;
  vic_ctx *c1;
  vic_ctx_create(&co, &c1);
  vic_sph_image i1;
  VT_OK(c1, vic_sph_resample(c1, &x, NULL, h, 0, NULL, &o, &i1));
  VT_CHECK(memcmp(i1.density, im.density, cells * sizeof(float)) == 0, "1 thread and all threads give different images");
  printf("deposit: %.3f s with 1 thread\n", i1.report.seconds_total);
  vic_sph_image_free(&i1);
  vic_ctx_destroy(c1);
  vic_sph_image_free(&im);
  vic_ctx_destroy(c);
  free(xyz);
  free(h);
  return vt_finish("test_sph_plummer");
}
