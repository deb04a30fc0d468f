/* The rules that make a local maximum a peak, shared by the CPU's
 * vic_peaks_find (peaks.c) and the device pipeline (peaks_cuda.c), so
 * that both decide with the same words and the same arithmetic. */
#ifndef VIC_PEAKS_RULES_H
#define VIC_PEAKS_RULES_H

#include "internal.h"

/* A peak's centre averages its members at least this fraction as dense
 * as the peak point (its core; see peaks.c). */
#define VIC__CORE_FRACTION 0.5f

/* VIC_OK when the options are finite and >= 0, else the user's message. */
vic_status vic__check_peak_options(vic_ctx *c, const vic_peak_options *o);

/* The prominence ratio below which a maximum merges into a denser one. */
double vic__prominence_ratio(const vic_peak_options *o, int64_t k);

/* The thresholds of a prominent local maximum: density, and delta against
 * min_delta or delta_factor times its k-th neighbour distance rk. */
int vic__peak_thresholds(const vic_peak_options *o, float rho, float delta, float rk);

/* ids[0, np) (peak points, saliency[p] that of ids[p]) reordered by
 * descending saliency, ties by id. */
vic_status vic__rank_by_saliency(vic_ctx *c, int64_t *ids, const float *saliency, int64_t np);

/* centre[p] from the core's offset sums (double, n_peaks x d) and counts:
 * peak point + mean offset, wrapped back into [0, L) on periodic axes. */
void vic__centres_from_sums(const vic_data *x, const int64_t *peak_point, const double *sum, const int64_t *taken,
                            int64_t np, float *centre);

#endif
