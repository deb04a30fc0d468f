/* vic_sph_resample on the GPU against the CPU: a Plummer sphere with
 * masses and two mapped arrays, projected along z, along an oblique view
 * and with a finite depth; a periodic box projected over exactly the box;
 * a slice and a volume; every kernel once.  Images agree to float
 * rounding (each cell within 1e-4 relative plus 1e-6 of the image's
 * maximum; the GPU sums tiles in float), means where the density is above
 * 1e-3 of its maximum, and the GPU projection holds the particles' mass
 * to 1e-5.  Skips (exit 77) where no CUDA device is usable. */
#include "test_util.h"
#include "nbody_models.h"

#include <math.h>
#include <string.h>

static int compare(const char *what, const vic_sph_image *g, const vic_sph_image *c) {
  const int64_t cells = (int64_t)c->nx * c->ny * c->nz;
  double mx = 0;
  for (int64_t q = 0; q < cells; ++q) mx = fmax(mx, fabs(c->density[q]));
  int64_t bad = 0, badm = 0;
  double worst = 0;
  for (int64_t q = 0; q < cells; ++q) {
    double d = fabs((double)g->density[q] - c->density[q]), tol = 1e-4 * fabs(c->density[q]) + 1e-6 * mx;
    if (d > tol) bad++;
    if (c->density[q] > 1e-9 * mx) worst = fmax(worst, d / fabs(c->density[q]));
    if (c->density[q] > 1e-3 * mx)
      for (int a = 0; a < c->n_arrays; ++a) {
        double gm = g->means[(size_t)a * cells + q], cm = c->means[(size_t)a * cells + q];
        if (!(fabs(gm - cm) <= 1e-4 * fabs(cm) + 1e-5)) badm++;
      }
  }
  printf("%s: %lld cells, GPU vs CPU worst relative %.2e, %lld cells and %lld means out of tolerance; GPU %.4f s "
         "(kernels %.4f s), CPU %.4f s\n",
         what, (long long)cells, worst, (long long)bad, (long long)badm, g->report.seconds_total,
         g->report.seconds_kernel, c->report.seconds_total);
  VT_CHECK(g->report.backend == VIC_BACKEND_CUDA, "%s: the GPU run did not run on the GPU", what);
  VT_CHECK(bad == 0 && badm == 0, "%s: %lld cells, %lld means differ", what, (long long)bad, (long long)badm);
  return bad == 0;
}

static void both(const char *what, vic_ctx *gpu, vic_ctx *cpu, const vic_data *x, const float *m, const float *h,
                 int na, const float *const *arrays, const vic_sph_options *o, double mass_inside) {
  vic_sph_image g, c;
  VT_OK(gpu, vic_sph_resample(gpu, x, m, h, na, arrays, o, &g));
  VT_OK(cpu, vic_sph_resample(cpu, x, m, h, na, arrays, o, &c));
  compare(what, &g, &c);
  if (mass_inside > 0) {
    double s = 0;
    for (int64_t q = 0; q < (int64_t)g.nx * g.ny; ++q) s += g.density[q];
    s *= g.spacing[0] * g.spacing[1];
    VT_CHECK(fabs(s / mass_inside - 1) < 1e-5, "%s: GPU map holds %.9g of %.9g", what, s, mass_inside);
  }
  vic_sph_image_free(&g);
  vic_sph_image_free(&c);
}

int main(int argc, char **argv) {
  const int64_t n = vt_gpu_start(argc, argv) ? 20000 : 300000;
  vic_ctx *cpu = vt_ctx(VIC_BACKEND_CPU, 1), *gpu = vt_ctx(VIC_BACKEND_CUDA, 1);

  float *xyz = malloc((size_t)n * 3 * sizeof *xyz), *h = malloc((size_t)n * sizeof *h);
  float *m = malloc((size_t)n * sizeof *m), *vz = malloc((size_t)n * sizeof *vz), *r = malloc((size_t)n * sizeof *r);
  const double centre[3] = {0, 0, 0};
  nb_plummer(xyz, n, 1.0, centre, 0.999, 5);
  float *u = vt_uniform(n, 1, 1.0f, 9);
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    m[i] = 0.5f + u[i];
    total += m[i];
    vz[i] = xyz[3 * i + 2] * 2 - 1;
    r[i] = sqrtf(xyz[3 * i] * xyz[3 * i] + xyz[3 * i + 1] * xyz[3 * i + 1]);
  }
  vic_data x = {xyz, n, 3, 0, VIC_L2, NULL};
  VT_OK(cpu, vic_knn_density(cpu, &x, 32, m, NULL, NULL, NULL, NULL, h));
  const float *arrays[2] = {vz, r};

  vic_sph_options o;
  vic_sph_options_init(&o);
  o.size[0] = o.size[1] = 200.0; /* everything inside: the mass check */
  o.resolution[0] = 1000;
  o.resolution[1] = 900;
  both("projection z, whole model", gpu, cpu, &x, m, h, 2, arrays, &o, total);
  o.size[0] = o.size[1] = 8.0;
  o.resolution[0] = o.resolution[1] = 512;
  both("projection z, +-4 a", gpu, cpu, &x, m, h, 2, arrays, &o, 0);
  const double dir[3] = {0.3, -1, 0.6}, up[3] = {0, 0, 1};
  VT_OK(cpu, vic_sph_options_set_view(&o, dir, up));
  o.size[2] = 2.0;
  o.kernel = VIC_SPH_WENDLAND_C2;
  both("oblique projection, depth 2 a, Wendland C2", gpu, cpu, &x, m, h, 2, arrays, &o, 0);
  vic_sph_options_init(&o);
  o.mode = VIC_SPH_SLICE;
  o.size[0] = o.size[1] = 6.0;
  o.resolution[0] = o.resolution[1] = 300;
  o.kernel = VIC_SPH_WENDLAND_C4;
  both("slice z = 0, Wendland C4", gpu, cpu, &x, m, h, 2, arrays, &o, 0);
  o.mode = VIC_SPH_VOLUME;
  o.kernel = VIC_SPH_CUBIC_SPLINE;
  o.size[2] = 6.0;
  o.resolution[0] = o.resolution[1] = o.resolution[2] = 64;
  both("volume 64^3", gpu, cpu, &x, m, h, 1, arrays, &o, 0);

  /* a periodic box projected over exactly the box */
  const double box[3] = {1, 1, 1};
  float *ub = vt_uniform(n, 3, 1.0f, 21);
  vic_data xb = {ub, n, 3, 0, VIC_L2, box};
  VT_OK(cpu, vic_knn_density(cpu, &xb, 32, NULL, NULL, NULL, NULL, NULL, h));
  vic_sph_options_init(&o);
  o.centre[0] = o.centre[1] = o.centre[2] = 0.5;
  o.resolution[0] = o.resolution[1] = 256;
  both("periodic box projection", gpu, cpu, &xb, NULL, h, 0, NULL, &o, (double)n);

  free(ub); free(u); free(xyz); free(h); free(m); free(vz); free(r);
  vic_ctx_destroy(cpu);
  vic_ctx_destroy(gpu);
  return vt_finish("test_gpu_sph");
}
