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

/* order[0, n): point ids by descending density (ties: lower id first),
 * the order of vic__denser. */
vic_status vic__density_order(vic_ctx *c, const float *rho, int64_t n, int64_t *order);

#endif
