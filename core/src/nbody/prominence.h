/* Prominence of density maxima: how far a local maximum stands above the
 * saddle where its region first meets the region of a denser maximum.
 * peaks.c uses it to tell real clumps from noise maxima. */
#ifndef VIC_PROMINENCE_H
#define VIC_PROMINENCE_H

#include "internal.h"

/* For every point that starts a region (none of its kNN list is denser),
 * survive[i] = 1 when its region is never merged into a denser one, with
 * merging whenever rho(maximum) < min_ratio * rho(saddle) (persistence-
 * based clustering, Chazal et al. 2013, with a ratio instead of a
 * difference so that it is scale-free).  Other entries are 0.  The kNN
 * graph's edges are used as i's list holds them (i -> j). */
vic_status vic__prominent_maxima(vic_ctx *c, const vic_knn *nn, const float *rho, const int64_t *order,
                                 double min_ratio, unsigned char *survive);

/* The same merge from its events (vic_kernels_peaks.h explains why they
 * suffice): maxima 0 .. m-1 numbered in ascending point id with densities
 * rho_max; event e joins the regions of maxima a[e] and b[e] at a point
 * of density rho_e[e]; events in the order the loop above meets them.
 * survive[0, m) as above, per maximum. */
vic_status vic__prominent_from_events(vic_ctx *c, int64_t m, const float *rho_max, int64_t n_events, const int32_t *a,
                                      const int32_t *b, const float *rho_e, double min_ratio, unsigned char *survive);

/* The same on the caller's scratch (up: m int32; m < 2^31) and without a
 * context, so that a host thread can run it beside a device call. */
void vic__prominent_events_run(int64_t m, const float *rho_max, int64_t n_events, const int32_t *a, const int32_t *b,
                                const float *rho_e, double min_ratio, int32_t *up, unsigned char *survive);

/* order[0, n): point ids by descending density (ties: lower id first),
 * the order of vic__denser. */
vic_status vic__density_order(vic_ctx *c, const float *rho, int64_t n, int64_t *order);

#endif
