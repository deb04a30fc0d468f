/* What the SPH map's files share (sph_resample.c: policy and checks;
 * sph_tables.c: the kernels' tables; sph_cpu.c: the CPU deposit;
 * sph_cuda.c: the GPU bridge).  The cell formulas themselves live in
 * vic_kernels_sph.h, read by both backends. */
#ifndef VIC_SPH_INTERNAL_H
#define VIC_SPH_INTERNAL_H

#include "internal.h"
#include "vic_kernels_sph.h"

#define VIC_SPH_TABLE_N 256   /* projected cumulative: 257 x 257 over the support square */
#define VIC_SPH_RADIAL_N 4096 /* 3-d kernel: 4097 values over q in [0, 1] */

/* The normalised 3-d kernel of support 1 at q (exact formula). */
double vic__sph_kernel_exact(vic_sph_kernel k, double q);

/* Fills rtab (VIC_SPH_RADIAL_N + 1) with the 3-d kernel and ctab
 * ((VIC_SPH_TABLE_N + 1)^2, row b, column a) with the cumulative
 * C(a, b) = int_{-1}^{a} int_{-1}^{b} Sigma(x, y) dx dy of its projection
 * Sigma(x, y) = int W(sqrt(x^2 + y^2 + z^2)) dz, normalised so that
 * C(1, 1) = 1 exactly. */
void vic__sph_tables(vic_sph_kernel k, double *rtab, double *ctab);

/* The CPU deposit of vic_sph_resample into acc ((1 + n_arrays) x cells,
 * zeroed by the caller).  Deterministic: cells are owned by bands of rows,
 * each band sums its particles in particle order. */
vic_status vic__sph_cpu(vic_ctx *c, const vick_sph_frame *f, const vic_data *x, const float *h, const float *mass,
                        int32_t n_arrays, const float *const *arrays, const double *ctab, const double *rtab,
                        double *acc);

/* The GPU deposit (CUDA builds; otherwise VIC_E_NODEVICE). */
vic_status vic__sph_cuda(vic_ctx *c, const vick_sph_frame *f, const vic_data *x, const float *h, const float *mass,
                         int32_t n_arrays, const float *const *arrays, const double *ctab, const double *rtab,
                         double *acc, vic_report *rep);

#endif
