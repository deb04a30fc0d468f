/* The kernel tables of the SPH maps (sph_internal.h).  The cubic spline
 * is vic_density's (density_math.h); the Wendland functions are those of
 * Dehnen & Aly (2012), all with support radius 1 and unit integral over
 * 3-d space.  The projected cumulative is integrated numerically once per
 * call: the line-of-sight integral by composite Gauss-Legendre on a fine
 * radial grid, then every table cell by 4 x 4 Gauss-Legendre, summed into
 * the cumulative and normalised by its total, so the weights of every
 * particle add up to 1 to rounding whatever the quadrature's error. */
#include "sph_internal.h"
#include "density_math.h"

#include <stdlib.h>

#define SPH_PI 3.14159265358979323846

double vic__sph_kernel_exact(vic_sph_kernel k, double q) {
  if (q >= 1.0) return 0.0;
  double t = 1.0 - q;
  switch (k) {
  case VIC_SPH_WENDLAND_C2: return 21.0 / (2.0 * SPH_PI) * t * t * t * t * (1.0 + 4.0 * q);
  case VIC_SPH_WENDLAND_C4: {
    double t3 = t * t * t;
    return 495.0 / (32.0 * SPH_PI) * t3 * t3 * (1.0 + 6.0 * q + 35.0 / 3.0 * q * q);
  }
  default: return vic__m4_norm(3) * vic__m4_shape(q);
  }
}

/* 4-point Gauss-Legendre on [-1, 1]. */
static const double GL_X[4] = {-0.8611363115940526, -0.3399810435848563, 0.3399810435848563, 0.8611363115940526};
static const double GL_W[4] = {0.3478548451374538, 0.6521451548625461, 0.6521451548625461, 0.3478548451374538};

/* Sigma(R) = 2 int_0^sqrt(1-R^2) W(sqrt(R^2 + z^2)) dz on 64 panels (the
 * cubic spline's kink at q = 1/2 costs second order in the panel width). */
static double projected(vic_sph_kernel k, double R) {
  if (R >= 1.0) return 0.0;
  const double zmax = sqrt(1.0 - R * R);
  const int panels = 64;
  const double hw = 0.5 * zmax / panels;
  double s = 0;
  for (int p = 0; p < panels; ++p) {
    double mid = (2 * p + 1) * hw;
    for (int g = 0; g < 4; ++g) {
      double z = mid + hw * GL_X[g];
      s += GL_W[g] * vic__sph_kernel_exact(k, sqrt(R * R + z * z));
    }
  }
  return 2.0 * s * hw;
}

void vic__sph_tables(vic_sph_kernel k, double *rtab, double *ctab) {
  const int R = VIC_SPH_RADIAL_N, T = VIC_SPH_TABLE_N, P = 4096;
  for (int i = 0; i <= R; ++i) rtab[i] = vic__sph_kernel_exact(k, (double)i / R);
  double *sig = malloc((size_t)(P + 2) * sizeof *sig); /* Sigma at R = i / P */
  for (int i = 0; i <= P; ++i) sig[i] = projected(k, (double)i / P);
  sig[P + 1] = 0;
  /* cell integrals, then the 2-d running sum */
  const double hc = 1.0 / T; /* half a table cell: cells are 2/T wide */
  for (int b = 0; b <= T; ++b) ctab[(size_t)b * (T + 1)] = 0;
  for (int a = 0; a <= T; ++a) ctab[a] = 0;
  for (int b = 0; b < T; ++b) {
    double yc = -1.0 + (2 * b + 1) * hc;
    double row = 0;
    for (int a = 0; a < T; ++a) {
      double xc = -1.0 + (2 * a + 1) * hc, cellsum = 0;
      for (int gy = 0; gy < 4; ++gy)
        for (int gx = 0; gx < 4; ++gx) {
          double xx = xc + hc * GL_X[gx], yy = yc + hc * GL_X[gy];
          double r = sqrt(xx * xx + yy * yy) * P;
          int i = (int)r;
          double v = i >= P ? 0.0 : sig[i] + (r - i) * (sig[i + 1] - sig[i]);
          cellsum += GL_W[gx] * GL_W[gy] * v;
        }
      row += cellsum * hc * hc;
      ctab[(size_t)(b + 1) * (T + 1) + a + 1] = ctab[(size_t)b * (T + 1) + a + 1] + row;
    }
  }
  const double total = ctab[(size_t)T * (T + 1) + T];
  for (size_t i = 0; i < (size_t)(T + 1) * (T + 1); ++i) ctab[i] /= total;
  ctab[(size_t)T * (T + 1) + T] = 1.0;
  free(sig);
}
