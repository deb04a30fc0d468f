/* Geometry and kernels shared by the n-body analysis (dnn1.c, density.c,
 * peaks.c) and by the GPU density bridge, so that every backend uses the
 * same constants.  Pure functions of d; no state. */
#ifndef VIC_DENSITY_MATH_H
#define VIC_DENSITY_MATH_H

#include <math.h>
#include <stdint.h>

/* Volume of the unit ball in d dimensions, pi^(d/2) / Gamma(d/2 + 1):
 * 2 (d = 1), pi (d = 2), 4 pi / 3 (d = 3), pi^3 / 6 (d = 6). */
static inline double vic__log_unit_ball_volume(int32_t d) {
  return 0.5 * d * log(3.14159265358979323846) - lgamma(0.5 * d + 1.0);
}
/* (It underflows to 0 for d above about 780; densities use the log.) */
static inline double vic__unit_ball_volume(int32_t d) { return exp(vic__log_unit_ball_volume(d)); }

/* The cubic spline (M4, Monaghan & Lattanzio 1985) written with support
 * radius 1, the form of Gadget-2: w(q) = 1 - 6q^2 + 6q^3 for q <= 1/2,
 * 2(1-q)^3 for 1/2 < q <= 1, 0 beyond; unnormalised. */
static inline double vic__m4_shape(double q) {
  if (q < 0.5) return 1.0 - 6.0 * q * q + 6.0 * q * q * q;
  if (q < 1.0) { double t = 1.0 - q; return 2.0 * t * t * t; }
  return 0.0;
}

/* The log of the constant sigma_d such that sigma_d / R^d * w(r / R) integrates to 1
 * over d-dimensional space for support radius R: 1 / (d V_d I_d) with
 * I_d = int_0^1 w(q) q^(d-1) dq, evaluated in closed form.  Gives the
 * familiar 8 / pi in 3-d, 40 / (7 pi) in 2-d and 4 / 3 in 1-d. */
static inline double vic__log_m4_norm(int32_t d) {
  /* int_0^{1/2} (1 - 6q^2 + 6q^3) q^(d-1) dq + int_{1/2}^1 2 (1-q)^3 q^(d-1) dq,
   * the second expanded as 2 (1 - 3q + 3q^2 - q^3). */
  double D = (double)d, h = 0.5;
  double a = pow(h, D) / D - 6.0 * pow(h, D + 2) / (D + 2) + 6.0 * pow(h, D + 3) / (D + 3);
  double b = 2.0 * ((1.0 - pow(h, D)) / D - 3.0 * (1.0 - pow(h, D + 1)) / (D + 1) +
                    3.0 * (1.0 - pow(h, D + 2)) / (D + 2) - (1.0 - pow(h, D + 3)) / (D + 3));
  return -(log(D) + vic__log_unit_ball_volume(d) + log(a + b));
}
static inline double vic__m4_norm(int32_t d) { return exp(vic__log_m4_norm(d)); }

#endif
