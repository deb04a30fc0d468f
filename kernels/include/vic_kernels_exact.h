/* Exact GPU kNN: brute force for any d and the cell grid for d <= 3.
 * Both return, for every point, its k nearest other points ascending by
 * (working distance, id), equal to the core's CPU methods: the winners'
 * distances are computed exactly as the CPU computes them. */
#ifndef VIC_KERNELS_EXACT_H
#define VIC_KERNELS_EXACT_H

#include "vic_kernels.h"
#include "vic_kernels_stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest k the exact kernels select (per-row lists live in shared memory
 * or registers); larger k is VICK_ARGUMENT. */
#define VICK_EXACT_MAX_K 256

/* All-points exact kNN by brute force: 3xTF32 GEMM tiles (cuBLAS) on centred
 * rows give candidates, a block-wide selection keeps k + margin per row,
 * exact distances re-rank them, and rows whose margin cannot be certified
 * against the GEMM's error bound are recomputed by direct exact search.
 * Periodic boxes use the direct search throughout.  ids/dist: host, n*k. */
int vick_brute_knn(vick_call *call, const vick_points *x, int32_t k, int64_t *ids, float *dist);

/* All-points exact kNN on a cell grid (d <= 3, L2, periodic boxes with the
 * minimum image).  ids/dist: host, n*k. */
int vick_grid_knn(vick_call *call, const vick_points *x, int32_t k, int64_t *ids, float *dist);

/* As vick_grid_knn, but only the lists of rows [q0, q1) are computed and
 * returned (ids/dist: (q1-q0)*k, row q0 first).  Every point is indexed,
 * so a row's list equals vick_grid_knn's: ranges answered on several
 * devices give one device's lists. */
int vick_grid_knn_range(vick_call *call, const vick_points *x, int32_t k, int64_t q0, int64_t q1, int64_t *ids,
                        float *dist);

/* As vick_grid_knn_range, but the lists leave the device in chunks
 * through pinned memory into sink->write (vic_kernels_stream.h): ids as
 * int32 or int64, working or true distances, while later chunks compute.
 * The device holds the points, the grid and a ring of output chunks sized
 * to the budget, never necessarily the whole result.  vick_grid_knn and
 * vick_grid_knn_range are this with a sink that fills int64 lists. */
int vick_grid_knn_stream(vick_call *call, const vick_points *x, int32_t k, int64_t q0, int64_t q1,
                         const vick_sink *sink);

#ifdef __cplusplus
}
#endif
#endif
