/* The GPU side of vic_knn_density_peaks (density_peaks.c): grid lists,
 * densities and peaks in one device run whose lists never reach the host
 * unless asked for; the core's rules (peaks_rules.h, prominence.h) decide
 * between the kernel steps.  Without CUDA: VIC_E_NODEVICE. */
#ifndef VIC_PEAKS_CUDA_H
#define VIC_PEAKS_CUDA_H

#include "internal.h"

/* x: validated, L2, d <= 3, 2 <= k < n; o: checked peak options.
 * knn_density is required (the peaks use it); sph_density,
 * smoothing_length, ids and dist (n*k, allocated by the caller) may be
 * NULL.  rep gets GPU times and stages.  *bad_row >= 0: a list cannot
 * give a density (duplicates); nothing else is filled then.  On success
 * out holds what vic_peaks_find returns. */
vic_status vic__cuda_density_peaks(vic_ctx *c, const vic_data *x, int32_t k, const float *mass, double unit_mass,
                                   vic_sph_convention sph, const vic_peak_options *o, float *knn_density,
                                   float *sph_density, float *smoothing_length, int64_t *ids, float *dist,
                                   vic_report *rep, int64_t *bad_row, vic_peaks *out);

#endif
