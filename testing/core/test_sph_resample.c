/* vic_sph_resample: mass conservation (every mode and kernel, particles
 * far smaller and far larger than a pixel), the projected kernel's
 * central value against a direct integral, density-weighted means, the
 * same image for 1, 2 and 3 threads, and every rejected input with its
 * message. */
#include "test_util.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#define PI 3.14159265358979323846

/* n particles uniform in the cube centre +- half, smoothing lengths
 * log-uniform in [hmin, hmax], masses in [0.5, 1.5]. */
static void particles(int64_t n, double half, double hmin, double hmax, uint64_t seed, float *xyz, float *h,
                      float *m) {
  float *u = vt_uniform(n, 5, 1.0f, seed);
  for (int64_t i = 0; i < n; ++i) {
    for (int d = 0; d < 3; ++d) xyz[3 * i + d] = (float)((2.0 * u[5 * i + d] - 1.0) * half);
    h[i] = (float)(hmin * pow(hmax / hmin, u[5 * i + 3]));
    m[i] = 0.5f + u[5 * i + 4];
  }
  free(u);
}

static double sum_image(const vic_sph_image *im) {
  double s = 0;
  for (int64_t i = 0; i < (int64_t)im->nx * im->ny * im->nz; ++i) s += im->density[i];
  return s;
}

static void test_mass_conservation(vic_ctx *c) {
  const int64_t n = 20000;
  float *xyz = malloc(n * 3 * sizeof *xyz), *h = malloc(n * sizeof *h), *m = malloc(n * sizeof *m);
  /* region [-1, 1]^3, 128^2 pixels (0.0156 wide): supports 2h from 0.0002 to 0.4 px... 25 px;
   * positions within 0.5 so every kernel lies inside */
  particles(n, 0.5, 1e-4, 0.2, 11, xyz, h, m);
  double total = 0;
  for (int64_t i = 0; i < n; ++i) total += m[i];
  vic_data x = {xyz, n, 3, 0, VIC_L2, NULL};
  const vic_sph_kernel kernels[3] = {VIC_SPH_CUBIC_SPLINE, VIC_SPH_WENDLAND_C2, VIC_SPH_WENDLAND_C4};
  for (int kk = 0; kk < 3; ++kk)
    for (int mode = 0; mode < 2; ++mode) {
      vic_sph_options o;
      vic_sph_options_init(&o);
      o.kernel = kernels[kk];
      o.size[0] = o.size[1] = o.size[2] = 2.6; /* the rotated cube and its kernels fit inside */
      o.mode = mode == 0 ? VIC_SPH_PROJECTION : VIC_SPH_VOLUME;
      o.resolution[0] = mode == 0 ? 128 : 48;
      o.resolution[1] = mode == 0 ? 96 : 40; /* non-square cells */
      o.resolution[2] = 32;
      if (mode == 0) { /* an oblique view too */
        const double dir[3] = {1, 2, -0.5}, up[3] = {0, 0, 1};
        if (kk == 1) VT_OK(c, vic_sph_options_set_view(&o, dir, up));
        o.size[2] = 0;
      }
      vic_sph_image im;
      VT_OK(c, vic_sph_resample(c, &x, m, h, 0, NULL, &o, &im));
      double cell = im.spacing[0] * im.spacing[1] * (mode == 0 ? 1.0 : im.spacing[2]);
      double got = sum_image(&im) * cell;
      VT_CHECK(fabs(got / total - 1) < (mode == 0 ? 1e-5 : 1e-4), "kernel %d %s: integral %.9g vs mass %.9g", kk,
               mode == 0 ? "projection" : "volume", got, total);
      /* a projection conserves every particle's mass to rounding; a volume only those smaller than
       * 2 cells (the larger ones to the midpoint rule, vic_kernels_sph.h) */
      VT_CHECK(fabs(im.mass_deposited / total - 1) < (mode == 0 ? 1e-12 : 1e-4),
               "kernel %d mode %d: deposited %.15g vs %.15g", kk, mode, im.mass_deposited, total);
      printf("kernel %d %s: integral / mass - 1 = %.2e (float image), deposited - 1 = %.2e\n", kk,
             mode == 0 ? "projection" : "volume", got / total - 1, im.mass_deposited / total - 1);
      vic_sph_image_free(&im);
    }
  { /* particles smaller than 2 cells alone: a volume conserves their mass to rounding too */
    float *hs = malloc(n * sizeof *hs);
    for (int64_t i = 0; i < n; ++i) hs[i] = h[i] < 0.02f ? h[i] : 0.02f;
    vic_sph_options o;
    vic_sph_options_init(&o);
    o.mode = VIC_SPH_VOLUME;
    o.size[0] = o.size[1] = o.size[2] = 2.6;
    o.resolution[0] = o.resolution[1] = o.resolution[2] = 48;
    vic_sph_image im;
    VT_OK(c, vic_sph_resample(c, &x, m, hs, 0, NULL, &o, &im));
    VT_CHECK(fabs(im.mass_deposited / total - 1) < 1e-12, "small particles in a volume: deposited %.15g vs %.15g",
             im.mass_deposited, total);
    vic_sph_image_free(&im);
    free(hs);
  }
  /* a finite-depth projection keeps exactly the particles whose centre is in the slab */
  vic_sph_options o;
  vic_sph_options_init(&o);
  o.size[0] = o.size[1] = 2.0;
  o.size[2] = 0.4;
  o.resolution[0] = o.resolution[1] = 64;
  double inside = 0;
  for (int64_t i = 0; i < n; ++i)
    if (xyz[3 * i + 2] >= -0.2 && xyz[3 * i + 2] < 0.2) inside += m[i];
  vic_sph_image im;
  VT_OK(c, vic_sph_resample(c, &x, m, h, 0, NULL, &o, &im));
  VT_CHECK(fabs(im.mass_deposited / inside - 1) < 1e-9, "slab: deposited %.12g, mass inside %.12g",
           im.mass_deposited, inside);
  vic_sph_image_free(&im);
  free(xyz); free(h); free(m);
}

/* One particle of support 1 over 201^2 pixels: the central pixel's
 * surface density against Sigma(0) = 2 int_0^1 W(z) dz (midpoint rule). */
static void test_central_value(vic_ctx *c) {
  float xyz[3] = {0, 0, 0}, h = 0.5f, m = 2.0f; /* pynbody: support 2h = 1 */
  vic_data x = {xyz, 1, 3, 0, VIC_L2, NULL};
  for (int kk = 0; kk < 3; ++kk) {
    double sig0 = 0;
    const int steps = 200000;
    for (int s = 0; s < steps; ++s) {
      double q = (s + 0.5) / steps, w;
      if (kk == 0) w = 8.0 / PI * (q < 0.5 ? 1 - 6 * q * q + 6 * q * q * q : 2 * pow(1 - q, 3));
      else if (kk == 1) w = 21.0 / (2 * PI) * pow(1 - q, 4) * (1 + 4 * q);
      else w = 495.0 / (32 * PI) * pow(1 - q, 6) * (1 + 6 * q + 35.0 / 3 * q * q);
      sig0 += 2.0 * w / steps;
    }
    vic_sph_options o;
    vic_sph_options_init(&o);
    o.kernel = (vic_sph_kernel)kk;
    o.size[0] = o.size[1] = 2.01;
    o.resolution[0] = o.resolution[1] = 201;
    vic_sph_image im;
    VT_OK(c, vic_sph_resample(c, &x, &m, &h, 0, NULL, &o, &im));
    double got = im.density[100 * 201 + 100];
    VT_CHECK(fabs(got / (m * sig0) - 1) < 2e-3, "kernel %d: Sigma(0) %.6g, expected %.6g", kk, got, m * sig0);
    /* the slice through the centre: W(0) averaged over the central pixel */
    o.mode = VIC_SPH_SLICE;
    vic_sph_image sl;
    VT_OK(c, vic_sph_resample(c, &x, &m, &h, 0, NULL, &o, &sl));
    double w0 = kk == 0 ? 8.0 / PI : kk == 1 ? 21.0 / (2 * PI) : 495.0 / (32 * PI);
    VT_CHECK(fabs(sl.density[100 * 201 + 100] / (m * w0) - 1) < 2e-3, "kernel %d: slice centre %.6g, W(0) %.6g", kk,
             sl.density[100 * 201 + 100], m * w0);
    vic_sph_image_free(&sl);
    vic_sph_image_free(&im);
  }
}

static void test_means_and_threads(void) {
  const int64_t n = 30000;
  float *xyz = malloc(n * 3 * sizeof *xyz), *h = malloc(n * sizeof *h), *m = malloc(n * sizeof *m);
  particles(n, 1.0, 1e-3, 0.1, 12, xyz, h, m);
  float *three = malloc(n * sizeof *three), *xs = malloc(n * sizeof *xs);
  for (int64_t i = 0; i < n; ++i) { three[i] = 3.0f; xs[i] = xyz[3 * i]; }
  const float *arrays[2] = {three, xs};
  vic_data x = {xyz, n, 3, 0, VIC_L2, NULL};
  for (int mode = 0; mode < 3; ++mode) {
    vic_sph_image im[3];
    for (int t = 1; t <= 3; ++t) {
      vic_ctx_options co;
      vic_ctx_options_init(&co);
      co.backend = VIC_BACKEND_CPU;
      co.threads = t;
      vic_ctx *c;
      vic_ctx_create(&co, &c);
      vic_sph_options o;
      vic_sph_options_init(&o);
      o.mode = (vic_sph_mode)mode;
      o.size[0] = o.size[1] = o.size[2] = 1.6;
      o.resolution[0] = 100;
      o.resolution[1] = 90;
      o.resolution[2] = 30;
      VT_OK(c, vic_sph_resample(c, &x, m, h, 2, arrays, &o, &im[t - 1]));
      vic_ctx_destroy(c);
    }
    const int64_t cells = (int64_t)im[0].nx * im[0].ny * im[0].nz;
    for (int t = 1; t < 3; ++t) {
      VT_CHECK(memcmp(im[0].density, im[t].density, cells * sizeof(float)) == 0,
               "mode %d: density differs between 1 and %d threads", mode, t + 1);
      VT_CHECK(memcmp(im[0].means, im[t].means, 2 * cells * sizeof(float)) == 0,
               "mode %d: means differ between 1 and %d threads", mode, t + 1);
    }
    int64_t bad = 0, filled = 0, slope_bad = 0;
    for (int64_t q = 0; q < cells; ++q) {
      float mean = im[0].means[q];
      if (im[0].density[q] > 0) {
        filled++;
        if (fabsf(mean - 3.0f) > 1e-5f) bad++;
        /* the mean of x lies within the cell's x -+ the largest support */
        double cx = im[0].origin[0] + (q % im[0].nx) * im[0].spacing[0];
        if (fabs(im[0].means[cells + q] - cx) > 0.21) slope_bad++;
      } else if (!isnan(mean)) bad++;
    }
    VT_CHECK(bad == 0 && filled > cells / 2, "mode %d: %lld bad means of a constant (%lld cells filled)", mode,
             (long long)bad, (long long)filled);
    VT_CHECK(slope_bad == 0, "mode %d: %lld cells with a mean x far from the cell", mode, (long long)slope_bad);
    for (int t = 0; t < 3; ++t) vic_sph_image_free(&im[t]);
  }
  free(xyz); free(h); free(m); free(three); free(xs);
}

static int stop_at_half(void *user, const char *stage, double f) {
  (void)user;
  return strcmp(stage, "sph map") == 0 && f > 0.5;
}

static void expect(vic_ctx *c, vic_status got, vic_status want, const char *words, const char *what) {
  VT_CHECK(got == want, "%s: status %s, expected %s", what, vic_status_name(got), vic_status_name(want));
  VT_CHECK(strstr(vic_ctx_error(c), words) != NULL, "%s: message '%s' lacks '%s'", what, vic_ctx_error(c), words);
}

static void test_validation(vic_ctx *c) {
  const int64_t n = 1000;
  float *xyz = malloc(n * 3 * sizeof *xyz), *h = malloc(n * sizeof *h), *m = malloc(n * sizeof *m);
  particles(n, 0.4, 0.01, 0.05, 13, xyz, h, m);
  vic_data x = {xyz, n, 3, 0, VIC_L2, NULL};
  vic_sph_options o;
  vic_sph_options_init(&o);
  vic_sph_image im;
  memset(&im, 0x7f, sizeof im);
  float keep = h[17];
  h[17] = -0.1f;
  expect(c, vic_sph_resample(c, &x, m, h, 0, NULL, &o, &im), VIC_E_ARGUMENT, "smoothing length of particle 17",
         "negative h");
  VT_CHECK(im.density == NULL && im.nx == 0, "a failed call leaves the image zeroed");
  h[17] = 0;
  expect(c, vic_sph_resample(c, &x, m, h, 0, NULL, &o, &im), VIC_E_ARGUMENT, "must be finite and > 0", "zero h");
  h[17] = NAN;
  expect(c, vic_sph_resample(c, &x, m, h, 0, NULL, &o, &im), VIC_E_ARGUMENT, "particle 17", "NaN h");
  h[17] = keep;
  expect(c, vic_sph_resample(c, &x, m, NULL, 0, NULL, &o, &im), VIC_E_ARGUMENT, "no smoothing lengths", "no h");
  float kx = xyz[3 * 5 + 1];
  xyz[3 * 5 + 1] = NAN;
  VT_CHECK(vic_sph_resample(c, &x, m, h, 0, NULL, &o, &im) == VIC_E_NONFINITE, "NaN position: %s", vic_ctx_error(c));
  xyz[3 * 5 + 1] = kx;
  m[3] = -1;
  expect(c, vic_sph_resample(c, &x, m, h, 0, NULL, &o, &im), VIC_E_ARGUMENT, "mass of particle 3", "negative mass");
  m[3] = 1;
  float *arr = malloc(n * sizeof *arr);
  for (int64_t i = 0; i < n; ++i) arr[i] = 1;
  arr[40] = INFINITY;
  const float *arrays[1] = {arr};
  expect(c, vic_sph_resample(c, &x, m, h, 1, arrays, &o, &im), VIC_E_NONFINITE, "particle 40", "Inf array value");
  expect(c, vic_sph_resample(c, &x, m, h, 1, NULL, &o, &im), VIC_E_ARGUMENT, "arrays is NULL", "NULL arrays");
  vic_data x2 = {xyz, n / 3, 2, 3, VIC_L2, NULL};
  expect(c, vic_sph_resample(c, &x2, m, h, 0, NULL, &o, &im), VIC_E_ARGUMENT, "3-d positions", "2-d data");
  vic_sph_options b = o;
  b.resolution[1] = 0;
  expect(c, vic_sph_resample(c, &x, m, h, 0, NULL, &b, &im), VIC_E_ARGUMENT, "resolution[1] must be >= 1",
         "zero resolution");
  b = o;
  b.size[0] = -1;
  expect(c, vic_sph_resample(c, &x, m, h, 0, NULL, &b, &im), VIC_E_ARGUMENT, "size[0] must be > 0", "negative size");
  b = o;
  b.size[1] = NAN;
  expect(c, vic_sph_resample(c, &x, m, h, 0, NULL, &b, &im), VIC_E_ARGUMENT, "must be finite", "NaN size");
  b = o;
  b.mode = VIC_SPH_VOLUME;
  b.size[2] = 0;
  expect(c, vic_sph_resample(c, &x, m, h, 0, NULL, &b, &im), VIC_E_ARGUMENT, "size[2] must be > 0", "flat volume");
  b = o;
  b.u[1] = 0.5;
  expect(c, vic_sph_resample(c, &x, m, h, 0, NULL, &b, &im), VIC_E_ARGUMENT, "orthonormal", "skew axes");
  b = o;
  b.mode = VIC_SPH_VOLUME;
  b.size[2] = 1;
  b.resolution[0] = b.resolution[1] = b.resolution[2] = 2048;
  expect(c, vic_sph_resample(c, &x, m, h, 0, NULL, &b, &im), VIC_E_ARGUMENT, "over the limit", "huge volume");
  b = o;
  b.max_bytes = 1000;
  expect(c, vic_sph_resample(c, &x, m, h, 0, NULL, &b, &im), VIC_E_ARGUMENT, "lower the resolution", "max_bytes");
  b = o;
  b.kernel = (vic_sph_kernel)7;
  expect(c, vic_sph_resample(c, &x, m, h, 0, NULL, &b, &im), VIC_E_ARGUMENT, "unknown SPH kernel", "bad kernel");
  const double box[3] = {1, 1, 1};
  vic_data xb = x;
  xb.box = box;
  b = o;
  const double dir[3] = {1, 1, 0};
  VT_OK(c, vic_sph_options_set_view(&b, dir, NULL));
  expect(c, vic_sph_resample(c, &xb, m, h, 0, NULL, &b, &im), VIC_E_UNSUPPORTED, "needs a depth",
         "oblique periodic column");
  b.size[2] = 1.0; /* with a depth it works */
  VT_OK(c, vic_sph_resample(c, &xb, m, h, 0, NULL, &b, &im));
  vic_sph_image_free(&im);
  /* an empty particle set gives an empty image (an MPI rank may hold none) */
  vic_data x0 = {NULL, 0, 3, 0, VIC_L2, NULL};
  VT_OK(c, vic_sph_resample(c, &x0, NULL, NULL, 0, NULL, &o, &im));
  VT_CHECK(im.nx == 256 && sum_image(&im) == 0, "empty set: %d cells wide, sum %g", im.nx, sum_image(&im));
  vic_sph_image_free(&im);
  /* the ABI: options no init call set are refused, the image says what
   * its library knows, and the fixed size holds */
  b = o;
  b.struct_size = 0;
  expect(c, vic_sph_resample(c, &x, m, h, 0, NULL, &b, &im), VIC_E_ARGUMENT, "vic_sph_options_init",
         "uninitialised options");
  VT_CHECK(vic_sph_options_set_view(&b, (const double[3]){0, 0, 1}, NULL) == VIC_E_ARGUMENT,
           "set_view on options no init call set");
  VT_OK(c, vic_sph_resample(c, &x, m, h, 0, NULL, &o, &im));
  VT_CHECK(sizeof im == VIC_SPH_IMAGE_BYTES && im.struct_size > offsetof(vic_sph_image, report) &&
               im.struct_size <= sizeof im && im.report.struct_size > offsetof(vic_report, warnings),
           "image struct_size %zu, report.struct_size %zu", im.struct_size, im.report.struct_size);
  vic_sph_image_free(&im);
  /* cancellation through the progress callback */
  vic_ctx_options co;
  vic_ctx_options_init(&co);
  co.backend = VIC_BACKEND_CPU;
  co.threads = 1;
  co.progress = stop_at_half;
  vic_ctx *cc;
  vic_ctx_create(&co, &cc);
  expect(cc, vic_sph_resample(cc, &x, m, h, 0, NULL, &o, &im), VIC_E_CANCELLED, "cancelled", "cancel");
  VT_CHECK(im.density == NULL, "a cancelled call returns no image");
  vic_ctx_destroy(cc);
  free(arr); free(xyz); free(h); free(m);
}

int main(void) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  test_mass_conservation(c);
  test_central_value(c);
  test_means_and_threads();
  test_validation(c);
  vic_ctx_destroy(c);
  return vt_finish("test_sph_resample");
}
