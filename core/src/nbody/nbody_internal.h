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

/* density.c's policy, shared with density_peaks.c: the SPH convention,
 * total_mass and masses checked; *gpu = 1 when the context's backend
 * runs this on the GPU (a forced GPU without one fails); after a failed
 * GPU attempt, VIC_OK to go on with the CPU (AUTO, with a warning) or the
 * failure itself. */
vic_status vic__check_density_options(vic_ctx *c, int64_t n, const float *mass, const vic_density_options *o);
vic_status vic__density_use_gpu(vic_ctx *c, const char *what, int *gpu);
vic_status vic__density_after_gpu(vic_ctx *c, vic_status s, const char *what);

/* The checks of x and k every density entry point makes, in one wording. */
vic_status vic__check_density_input(vic_ctx *c, const vic_data *x, int32_t k);
/* Lists of a device pipeline on the exact grid (density.c, density_peaks.c):
 * the report says grid, CUDA, k and "<on_device> on the device"; host ids
 * and distances are allocated only when the caller keeps the lists. */
vic_status vic__device_grid_lists(vic_ctx *c, const vic_data *x, int32_t k, int keep, const char *on_device,
                                  vic_knn *out);
/* A row whose k neighbours all lie at distance 0 has no finite density. */
vic_status vic__fail_duplicate_row(vic_ctx *c, int64_t row, int32_t k);
/* Nonzero when GPU densities hold a value a float did not (inf, NaN, or an
 * underflow to 0 or a subnormal without masses): the CPU recomputes them
 * in logs and names the cause. */
int vic__density_needs_cpu_check(vic_ctx *c, int64_t n, const float *mass, const float *knn_density,
                                 const float *sph_density);
/* The report of finished device lists: exact (recall 1), total time since
 * t0, warnings, and the d_nn1 statistics when the lists were kept. */
void vic__finish_device_lists(vic_ctx *c, vic_knn *lists, int kept, double t0);

/* The volume of x (data_volume.c): the box length on periodic axes times
 * the points' extent on open ones; an error when it is 0. */
vic_status vic__data_volume(vic_ctx *c, const vic_data *x, double *volume);

#endif
