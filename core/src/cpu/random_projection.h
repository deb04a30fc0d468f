/* A Johnson-Lindenstrauss random projection of rows to a few dimensions.
 * Projection trees only need rough hyperplane sides, and building them on
 * 784-d rows streams the whole data set once per tree level; on projected
 * rows the trees are nearly free and fit in cache. */
#ifndef VIC_RANDOM_PROJECTION_H
#define VIC_RANDOM_PROJECTION_H

#include "internal.h"

/* rows of x times a seeded d x dout matrix of random signs / sqrt(dout):
 * *out receives n x dout floats (caller frees) and view describes them. */
vic_status vic__random_projection(vic_ctx *c, const vic_data *x, int32_t dout, uint64_t seed, float **out,
                                  vic_data *view);

#endif
