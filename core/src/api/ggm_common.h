/* What vic_knn_add, vic_knn_merge and vic_knn_build_sharded share: the
 * backend they run on, rows as the steps take them, and the conversion of
 * lists between the public form (int64 ids, true distances, k wide) and
 * the steps' working form (ggm_engine.h). */
#ifndef VIC_GGM_COMMON_H
#define VIC_GGM_COMMON_H

#include "ggm_engine.h"

/* Validated, prepared (unit rows for cosine) and packed rows of x; *owned
 * is the copy to free, if one was made.  what names x in messages. */
vic_status vic__ggm_rows(vic_ctx *c, const vic_data *x, const char *what, vic_data *view, float **owned);

/* *gpu = 1 when the GPU runs the steps: the backend is not CPU and a device
 * is usable (a CUDA request without one fails with the probe's message). */
vic_status vic__ggm_backend(vic_ctx *c, int *gpu);

/* Public lists g of n rows (checked: size, ids in 0..n-1) into K-wide
 * working lists for the metric m. */
vic_status vic__ggm_lists_in(vic_ctx *c, const vic_knn *g, int64_t n, vic_metric m, const char *what, int32_t K,
                             int32_t *ids, float *dist);

/* Working lists (n x k) into a fresh public result: int64 ids, true
 * distances in (distance, id) order. */
vic_status vic__ggm_lists_out(vic_ctx *c, vic_metric m, int64_t n, int32_t k, const int32_t *ids, const float *dist,
                              vic_knn *out);

/* vic_knn_build's GNND on the GPU when the rows need more device memory
 * than the budget (or shard_size asks for shards).  Where the build fits
 * one device with its rows in half precision (the compact build: the K
 * candidates re-ranked in fp32), *compact gets its parameters -- the lists
 * kept at K or narrowed to k's segments, the samples lowered (to 8 at the
 * least) until the need fits -- with a warning that says so, and nothing
 * is built here (compact->K = 0 otherwise).  Else, where the budget (not
 * shard_size) decides and one_device is given, its plan: shards joined by
 * graph searches (vic__cuda_gnnd_one_device); else, or where that plan
 * does not fit or fails short of memory, the GGM sharded build in host
 * memory; each with a warning.  *taken = 0 when nothing was built;
 * otherwise true lists in ids/dist (n x k). */
typedef vic_status (*vic_gnnd_one_device_fn)(vic_ctx *c, const vic_data *x, const vic_build_options *o, int32_t k,
                                             const char *why, int64_t *ids, float *dist, vic_report *rep, int *taken);
vic_status vic__gnnd_out_of_core(vic_ctx *c, const vic_data *x, const vic_build_options *o, int32_t k, int64_t *ids,
                                 float *dist, vic_report *rep, int *taken, vic_ggm_params *compact,
                                 vic_gnnd_one_device_fn one_device);

/* The iteration cap of GNND with lists narrowed to k's segments: narrower
 * lists gain less per iteration and need more of them to converge (the
 * converge test still ends the descent when it stops improving). */
enum { VIC_GNND_NARROW_ITERATIONS = 20 };

/* A device's budget for GGM and GNND builds: the options' budget, else
 * nine tenths of what the device has free. */
size_t vic__ggm_device_budget(const vic_build_options *o, int device);
/* What a plan leaves of a device budget for the free memory's drift
 * between the core's measure and the kernels' own (they refuse a build
 * over their budget): 1/64 of it, 128 MiB at most. */
size_t vic__gnnd_budget_slack(size_t budget);
/* The compact build's parameters for n rows under budget bytes (K as in p
 * or narrowed to k's segments, samples lowered): 1 with *q set when one
 * fits, else 0. */
int vic__gnnd_compact_plan(const vic_ggm_params *p, int64_t n, int32_t d, int32_t k, size_t budget, vic_ggm_params *q);
/* A build too large for one device's fp32 lists (half rows, or shards over
 * several devices): where the caller left the list width to us (k_build
 * 0), lists narrowed to k's segments with the narrow cap on iterations --
 * the default K's few iterations leave large sets' lists far from
 * converged, the narrow lists converge in about the same time
 * (BENCHMARKS.md, issue 23). */
void vic__gnnd_large_plan(const vic_build_options *o, int32_t k, vic_ggm_params *p);

/* vic_knn_build's GNND over the context's devices (cuda_gnnd_multi.c): taken
 * (*taken = 1, true lists in ids/dist) when count >= 2, k <= 32, L2 or
 * cosine rows without a box, and n is large, its fp32 build over one
 * device's budget or shard_size cuts it; else nothing is done.  VIC_E_NOMEM
 * (with *taken either way) where no shard plan fits or a device ran short,
 * VIC_E_DEVICE / VIC_E_UNSUPPORTED where a device failed or refused a step:
 * the caller may build on one device instead.  x: prepared rows. */
vic_status vic__cuda_gnnd_multi(vic_ctx *c, const vic_data *x, const vic_build_options *o, int32_t k, int first,
                                int count, int64_t *ids, float *dist, vic_report *rep, int *taken);
/* The same plan on the context's first device alone, out of core: the
 * fewest shards whose cross search fits the device budget, the searches one
 * after the other, the budget given to every kernel call, progress and
 * cancel between the steps (not resumable: vic_knn_build_sharded with a
 * work_dir is).  Not taken (*taken = 0, VIC_OK) for k > 32, inner product,
 * a box, or where no shard count fits; why: the caller's words for the
 * report's reason.  x: prepared rows. */
vic_status vic__cuda_gnnd_one_device(vic_ctx *c, const vic_data *x, const vic_build_options *o, int32_t k,
                                     const char *why, int64_t *ids, float *dist, vic_report *rep, int *taken);
#endif
