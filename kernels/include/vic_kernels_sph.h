/* SPH maps (vic_sph_resample): the geometry and kernel look-ups that the
 * core's CPU deposit (core/src/nbody/sph_cpu.c) and the GPU kernels
 * (kernels/src/sph_map.cu) both evaluate, written once here as
 * host-and-device inline functions so that both backends compute every
 * cell's weight with the same formula.  The core owns the definitions:
 * it builds the frame and the two kernel tables (core/src/nbody/sph_tables.c);
 * these functions only read them.  Plain C, no CUDA types.
 *
 * Conventions.  A particle at world position p (periodic image shift s
 * added) has frame coordinates (a, b, c) = ((p + s - origin) . axis_k),
 * in cell units x = a / cell[0], y = b / cell[1], z = c / cell[2]; cell
 * (i, j, k) covers [i, i+1) x [j, j+1) x [k, k+1) in those units.  Its
 * kernel has support radius H (world units; the core turns the smoothing
 * length into H with the SPH convention).
 *  - projection: cell (i, j) receives m * (C(x1,y1) - C(x0,y1) - C(x1,y0)
 *    + C(x0,y0)) with x0 = (i - x) / Hx clamped to [-1, 1] etc.: C is the
 *    cumulative of the line-of-sight integral of the normalised kernel
 *    over the support square, so this is the kernel's exact integral over
 *    the pixel (to the table's interpolation) and the weights of a
 *    particle telescope to 1: mass is conserved to rounding whatever the
 *    particle's size against the pixel.
 *  - slice and volume: the normalised 3-d kernel W(q) / H^3 averaged over
 *    s x s (x s) sub-samples of each cell, s = 1 when H >= 2 cells and up
 *    to VICK_SPH_MAX_SUB for smaller particles, so that a particle smaller
 *    than a cell still lands in the cells it overlaps.  In a volume, a
 *    particle smaller than 2 cells has its weights normalised over its
 *    whole footprint (its mass is conserved to rounding). */
#ifndef VIC_KERNELS_SPH_H
#define VIC_KERNELS_SPH_H

#include "vic_kernels.h"

#include <math.h>

#ifdef __CUDACC__
#define VICK_HD __host__ __device__ __forceinline__
#else
#define VICK_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

enum { VICK_SPH_PROJECTION = 0, VICK_SPH_SLICE = 1, VICK_SPH_VOLUME = 2 };
#define VICK_SPH_MAX_SUB 4       /* sub-samples per cell edge for particles smaller than 2 cells */
#define VICK_SPH_MAX_CHANNELS 64 /* mass plus at most 63 weighted arrays */

typedef struct {
  int mode;               /* VICK_SPH_* */
  int nx, ny, nz;         /* cells along the three axes (nz = 1 unless volume) */
  double origin[3];       /* world position of the region's corner (cell edges start here) */
  double axis[3][3];      /* orthonormal u, v, w: image x, image y, line of sight / slice normal / volume z */
  double cell[3];         /* cell sizes along the axes (cell[2] only for the volume) */
  double inv_cell[3];
  double depth;           /* projection: particles with 0 <= c < depth count (0 = every c); slice: plane at c = depth */
  double box[3];          /* periodic lengths per world axis (0 = open); positions are wrapped into [0, box) */
  int shift_lo[3], shift_hi[3]; /* periodic image shifts (in box lengths) tried per world axis */
  int n_shifts;           /* product of the ranges: images tried per particle */
  double support_of_h;    /* support radius over smoothing length: 2 (pynbody) or 1 (Gadget) */
  double unit_mass;       /* mass of each particle when no masses are given */
  int table_n;            /* projected cumulative: (table_n + 1)^2 doubles over [-1, 1]^2 */
  int radial_n;           /* 3-d kernel: radial_n + 1 doubles over q in [0, 1] */
} vick_sph_frame;

/* ------------------------------------------------------------- look-ups */
/* Where a coordinate a in [-1, 1] falls in the table: cell *i, fraction *f. */
VICK_HD void vick_sph_table_pos(int T, double a, int *i, double *f) {
  double t = (a + 1.0) * 0.5 * T;
  int k = (int)t;
  if (k > T - 1) k = T - 1;
  if (k < 0) k = 0;
  *i = k;
  *f = t - k;
}

/* Bilinear interpolation of the projected cumulative at table positions
 * (ia, fa) along a and (ib, fb) along b. */
VICK_HD double vick_sph_cumulative_at(const double *tab, int T, int ia, double fa, int ib, double fb) {
  const double *r0 = tab + (size_t)ib * (T + 1) + ia, *r1 = r0 + (T + 1);
  double lo = r0[0] + fa * (r0[1] - r0[0]), hi = r1[0] + fa * (r1[1] - r1[0]);
  return lo + fb * (hi - lo);
}

/* The projected cumulative at (a, b) in [-1, 1]^2. */
VICK_HD double vick_sph_cumulative(const double *tab, int T, double a, double b) {
  int ia, ib;
  double fa, fb;
  vick_sph_table_pos(T, a, &ia, &fa);
  vick_sph_table_pos(T, b, &ib, &fb);
  return vick_sph_cumulative_at(tab, T, ia, fa, ib, fb);
}

/* The normalised 3-d kernel of support 1 at q (0 beyond 1), linear in the table. */
VICK_HD double vick_sph_kernel(const double *tab, int R, double q) {
  if (q >= 1.0) return 0.0;
  double t = q * R;
  int i = (int)t;
  if (i > R - 1) i = R - 1;
  return tab[i] + (t - i) * (tab[i + 1] - tab[i]);
}

VICK_HD double vick_sph_clamp1(double t) { return t < -1.0 ? -1.0 : (t > 1.0 ? 1.0 : t); }

/* ------------------------------------------------------------ geometry */
/* Frame coordinates in cell units of the image `shift` (0 .. n_shifts-1)
 * of a particle at world position p (already wrapped into the box). */
VICK_HD void vick_sph_frame_coords(const vick_sph_frame *f, const double p[3], int shift, double out[3]) {
  double q[3];
  int s = shift;
  for (int d = 0; d < 3; ++d) {
    int span = f->shift_hi[d] - f->shift_lo[d] + 1;
    int sd = f->shift_lo[d] + s % span;
    s /= span;
    q[d] = p[d] + sd * f->box[d] - f->origin[d];
  }
  for (int k = 0; k < 3; ++k)
    out[k] = (q[0] * f->axis[k][0] + q[1] * f->axis[k][1] + q[2] * f->axis[k][2]) * f->inv_cell[k];
}

/* Position wrapped into [0, box) on periodic axes. */
VICK_HD void vick_sph_wrap(const vick_sph_frame *f, const float *row, double p[3]) {
  for (int d = 0; d < 3; ++d) {
    double v = row[d], L = f->box[d];
    if (L > 0) {
      v = fmod(v, L);
      if (v < 0) v += L;
      if (v >= L) v = 0;
    }
    p[d] = v;
  }
}

/* The cells a particle image at cell coordinates x (support H in world
 * units) may touch, clipped to the image: lo[k] .. hi[k] inclusive.
 * Returns 0 when it touches none (or lies outside the projection's
 * depth, or too far from the slice plane). */
VICK_HD int vick_sph_footprint(const vick_sph_frame *f, const double x[3], double H, int lo[3], int hi[3]) {
  const int n[3] = {f->nx, f->ny, f->nz};
  int dims = f->mode == VICK_SPH_VOLUME ? 3 : 2;
  if (f->mode == VICK_SPH_PROJECTION && f->depth > 0) {
    double c = x[2] * f->cell[2];
    if (!(c >= 0 && c < f->depth)) return 0;
  }
  if (f->mode == VICK_SPH_SLICE && !(fabs(x[2] * f->cell[2] - f->depth) < H)) return 0;
  for (int k = 0; k < 3; ++k) {
    if (k >= dims) { lo[k] = hi[k] = 0; continue; }
    double r = H * f->inv_cell[k];
    double a = floor(x[k] - r), b = floor(x[k] + r);
    if (b < 0 || a > n[k] - 1) return 0;
    lo[k] = a < 0 ? 0 : (int)a;
    hi[k] = b > n[k] - 1 ? n[k] - 1 : (int)b;
  }
  return 1;
}

/* --------------------------------------------------------- cell weights */
/* The cumulative at the corner (i, j) of the pixel grid (pixel edges in
 * cell units) for a particle at x, y with support rx, ry in cells.  A
 * pixel's weight is the difference of its four corners, so a particle's
 * weights telescope to its mass fraction inside the image. */
VICK_HD double vick_sph_corner(const double *tab, int T, double x, double y, double rx, double ry, int i, int j) {
  return vick_sph_cumulative(tab, T, vick_sph_clamp1((i - x) / rx), vick_sph_clamp1((j - y) / ry));
}

/* Fraction of a projected particle's mass in pixel (i, j): x, y its cell
 * coordinates, rx, ry its support in cells. */
VICK_HD double vick_sph_pixel_weight(const double *tab, int T, double x, double y, double rx, double ry, int i, int j) {
  double a0 = vick_sph_clamp1((i - x) / rx), a1 = vick_sph_clamp1((i + 1 - x) / rx);
  double b0 = vick_sph_clamp1((j - y) / ry), b1 = vick_sph_clamp1((j + 1 - y) / ry);
  if (a0 == a1 || b0 == b1) return 0.0;
  return vick_sph_cumulative(tab, T, a1, b1) - vick_sph_cumulative(tab, T, a0, b1) -
         vick_sph_cumulative(tab, T, a1, b0) + vick_sph_cumulative(tab, T, a0, b0);
}

/* Sub-samples per cell edge for a particle of support H (slice, volume). */
VICK_HD int vick_sph_subsamples(const vick_sph_frame *f, double H) {
  int dims = f->mode == VICK_SPH_VOLUME ? 3 : 2;
  double cmax = f->cell[0] > f->cell[1] ? f->cell[0] : f->cell[1];
  if (dims == 3 && f->cell[2] > cmax) cmax = f->cell[2];
  if (H >= 2.0 * cmax) return 1;
  int s = (int)ceil(2.0 * cmax / H);
  return s > VICK_SPH_MAX_SUB ? VICK_SPH_MAX_SUB : s;
}

/* Mean of the normalised kernel W(q) (support 1) over s^dims sub-samples
 * of cell (i, j, k) for a particle at cell coordinates x with support H;
 * in a slice the plane's offset from the particle is dz (world units). */
VICK_HD double vick_sph_cell_mean(const vick_sph_frame *f, const double *rtab, const double x[3], double H, int s,
                                  int i, int j, int k) {
  const int R = f->radial_n;
  const int vol = f->mode == VICK_SPH_VOLUME;
  const double dz = vol ? 0.0 : f->depth - x[2] * f->cell[2], invH = 1.0 / H, step = 1.0 / s;
  double sum = 0;
  const int sz = vol ? s : 1;
  for (int c = 0; c < sz; ++c) {
    double wz = vol ? (k + (c + 0.5) * step - x[2]) * f->cell[2] : dz;
    for (int b = 0; b < s; ++b) {
      double wy = (j + (b + 0.5) * step - x[1]) * f->cell[1];
      for (int a = 0; a < s; ++a) {
        double wx = (i + (a + 0.5) * step - x[0]) * f->cell[0];
        sum += vick_sph_kernel(rtab, R, sqrt(wx * wx + wy * wy + wz * wz) * invH);
      }
    }
  }
  return sum / (double)(vol ? s * s * s : s * s);
}

/* Sum of vick_sph_cell_mean over a volume particle's whole footprint
 * (unclipped): its normalisation when it is smaller than 2 cells. */
VICK_HD double vick_sph_volume_norm(const vick_sph_frame *f, const double *rtab, const double x[3], double H, int s) {
  int lo[3], hi[3];
  for (int k = 0; k < 3; ++k) {
    double r = H * f->inv_cell[k];
    lo[k] = (int)floor(x[k] - r);
    hi[k] = (int)floor(x[k] + r);
  }
  double sum = 0;
  for (int k = lo[2]; k <= hi[2]; ++k)
    for (int j = lo[1]; j <= hi[1]; ++j)
      for (int i = lo[0]; i <= hi[0]; ++i) sum += vick_sph_cell_mean(f, rtab, x, H, s, i, j, k);
  return sum;
}

/* ----------------------------------------------------------- entry point */
/* Deposit n particles on the context's device.  rows: host n x 3 floats
 * (stride floats apart); h: host smoothing lengths; mass: host or NULL;
 * channels: n_arrays host arrays of n floats, weighted by mass.  ctab /
 * rtab: the core's tables.  acc (host, (1 + n_arrays) x cells doubles)
 * receives per channel the deposited sum: mass (projection, volume) or
 * density (slice), then each array times that.  Cells = nx*ny*nz. */
int vick_sph_deposit(vick_call *call, const vick_sph_frame *f, const float *rows, int64_t n, int64_t stride,
                     const float *h, const float *mass, int n_arrays, const float *const *arrays, const double *ctab,
                     const double *rtab, double *acc);

#ifdef __cplusplus
}
#endif
#endif
