/* Checks shared by the n-body analysis calls (dnn1.c, density.c,
 * peaks.c), so that they reject bad input with the same words. */
#ifndef VIC_NBODY_INTERNAL_H
#define VIC_NBODY_INTERNAL_H

#include "internal.h"
#include "density_math.h"

/* VIC_OK when nn holds filled lists (n > 0, k > 0, ids and dist); what
 * names the calling analysis in the message. */
vic_status vic__check_lists(vic_ctx *c, const vic_knn *nn, const char *what);

/* VIC_OK when nn are lists of x (same n) and x is Euclidean: densities
 * and peaks are defined in a metric space of dimension x->d. */
vic_status vic__check_lists_of(vic_ctx *c, const vic_data *x, const vic_knn *nn, const char *what);

#endif
