/* The core's side of the GPU backend.  Implemented by the cuda_*.c files
 * when the library is built with CUDA, and by cuda_none.c otherwise, so the
 * policy code in knn_build.c never needs #ifdefs. */
#ifndef VIC_BACKEND_CUDA_H
#define VIC_BACKEND_CUDA_H

#include "internal.h"
#include "list_dest.h"

/* VIC_OK when the context's device is usable; otherwise VIC_E_NODEVICE
 * with a message saying why (not built with CUDA, no device, driver). */
vic_status vic__cuda_probe(vic_ctx *c);
/* All-points kNN lists of one method on the GPU into host ids/dist (n*k),
 * self excluded, true distances (the method table's gpu_lists).  Fill
 * transfer/kernel seconds and stages in rep.  VIC_E_NOMEM, VIC_E_DEVICE or
 * VIC_E_UNSUPPORTED (a kernel limit) lets the caller fall back to the CPU.
 * CUDA builds only, except GNND's, which answers VIC_E_NODEVICE without. */
vic_status vic__cuda_brute_lists(vic_ctx *c, const vic_data *x, const vic_build_options *o, vic_method m, int32_t k,
                                 int64_t *ids, float *dist, vic_report *rep);
vic_status vic__cuda_gnnd_lists(vic_ctx *c, const vic_data *x, const vic_build_options *o, vic_method m, int32_t k,
                                int64_t *ids, float *dist, vic_report *rep);
vic_status vic__cuda_ggnn_lists(vic_ctx *c, const vic_data *x, const vic_build_options *o, vic_method m, int32_t k,
                                int64_t *ids, float *dist, vic_report *rep);

/* Exact grid lists (d <= 3, L2) on the context's GPUs streamed into dst:
 * true distances, ids in dst's width, written by the context's threads
 * while the device computes the next chunks.  Same fallback codes as
 * vic__cuda_brute_lists; on failure dst's contents are unspecified. */
vic_status vic__cuda_grid_into(vic_ctx *c, const vic_data *x, const vic_build_options *o, int32_t k,
                               const vic__lists *dst, vic_report *rep);

/* GGNN search index (vic_index kind GGNN): the hierarchical graph stays on
 * the device behind an opaque handle.  Build takes prepared rows (unit rows
 * for cosine) and fills the report's method, stages, times and d_nn1;
 * search takes prepared query rows and returns true distances in the
 * rows' metric, ascending.  A build without CUDA answers VIC_E_NODEVICE.
 * check_rows: x is not validated yet; the build validates it
 * (vic_data_validate's words), where it can while uploading it. */
vic_status vic__cuda_ggnn_index_build(vic_ctx *c, const vic_data *x, const vic_build_options *o, void **handle,
                                      vic_report *rep, int check_rows);
vic_status vic__cuda_ggnn_index_search(vic_ctx *c, void *handle, const vic_data *q, int32_t k, float tau,
                                       int32_t max_visits, int64_t *ids, float *dist, vic_report *rep);
/* Whether a search of m queries for k neighbours in the index's metric
 * goes through the fused path below (one graph on one device, L2, a batch
 * for GGNN's own query rather than the small-batch procedure). */
int vic__cuda_ggnn_index_fused(const void *handle, vic_metric metric, int64_t m, int32_t k);
/* The search with the queries validated in their copy into the staging and
 * the results made true distances and checked in their copy out (the
 * graph search's hooks): raw queries, after vic__data_shape alone. */
vic_status vic__cuda_ggnn_index_search_fused(vic_ctx *c, void *handle, const vic_data *q, int32_t k, float tau,
                                             int32_t max_visits, int64_t *ids, float *dist, vic_report *rep);
int64_t vic__cuda_ggnn_index_bytes(const void *handle);
void vic__cuda_ggnn_index_free(void *handle);

#endif
