/* The GPU side of vic_density and vic_knn_density (density_cuda.c): in a
 * CUDA build it calls the density kernels; without CUDA every call answers
 * VIC_E_NODEVICE ("not built with CUDA"), so density.c's policy needs no
 * #ifdefs.  Inputs are already checked by the caller. */
#ifndef VIC_DENSITY_CUDA_H
#define VIC_DENSITY_CUDA_H

#include "internal.h"

/* Densities from host lists nn of x on the context's device.  VIC_E_NOMEM,
 * VIC_E_DEVICE: the caller may fall back to the CPU. */
vic_status vic__cuda_density(vic_ctx *c, const vic_data *x, const vic_knn *nn, const float *mass, double unit_mass,
                             vic_sph_convention sph, float *knn_density, float *sph_density, float *smoothing_length);

/* Exact grid lists of x (d <= 3, L2, k < n) and the densities from them in
 * one device call; out (ids/dist allocated by the caller, n*k, or NULL
 * pointers when the lists are not wanted) gets true distances and its
 * report's GPU times and stages.  *bad_row: the first row whose list
 * cannot give a density (duplicates), or -1. */
vic_status vic__cuda_knn_density(vic_ctx *c, const vic_data *x, int32_t k, const float *mass, double unit_mass,
                                 vic_sph_convention sph, float *knn_density, float *sph_density,
                                 float *smoothing_length, int64_t *ids, float *dist, vic_report *rep,
                                 int64_t *bad_row);

#ifdef VIC_WITH_CUDA
#include "cuda_internal.h"
#include "vic_kernels_density.h"
/* Shared with peaks_cuda.c: the formulas' constants (calls are set up,
 * their codes read and their times logged by cuda_internal.h's). */
vick_density_params vic__density_params(int32_t d, double unit_mass, vic_sph_convention sph);
/* A run in one piece on one device: its stages and peak into rep (one
 * slab, one device), then its timing log line. */
void vic__kernel_report_one(vic_ctx *c, vic_report *rep, const vick_call *call, const char *what);
/* The slabs' int32 neighbour ids (n entries) into the caller's int64 ids. */
void vic__ids_widen(int64_t *dst, const int32_t *src, size_t n);
#endif

#endif
