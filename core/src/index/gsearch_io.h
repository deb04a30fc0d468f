/* The host side of one graph search on the GPU in one pass each way,
 * through the kernel layer's hooks (vick_gsearch_hooks): the queries are
 * validated (vic_data_validate's checks and words) while the host threads
 * copy them into the pinned staging, and the results are made true
 * distances and checked (vic__check_distances') while they are copied out
 * to the caller's arrays; no other pass over either. */
#ifndef VIC_GSEARCH_IO_H
#define VIC_GSEARCH_IO_H

#ifdef VIC_WITH_CUDA
#include "internal.h"
#include "vic_kernels_grnnd.h"

typedef struct {
  vic_rows_check rows;
  const vic_data *q;
  vic_metric metric; /* of the working distances */
  int32_t k;
  int64_t *ids;
  float *dist;
  int64_t *bad; /* per slot: the first result row with a non-finite distance */
  int threads;
} vic_gsearch_io;

/* Hooks *h over q's rows (raw: the index's metric, not cosine) into ids
 * and dist (q->n x k) for a call of `threads` host threads (its
 * vick_call.threads); checks q's shape first. */
vic_status vic__gsearch_io_begin(vic_ctx *c, const vic_data *q, vic_metric metric, int32_t k, int64_t *ids,
                                 float *dist, int threads, vic_gsearch_io *io, vick_gsearch_hooks *h);

/* The verdict after the call that returned rc: refused or badly ranged
 * queries get vic_data_validate's message, a failed call its own (or the
 * queries' when they are bad too, as when they were validated first),
 * non-finite results vic__check_distances' message (what_results: the
 * call's name there); frees what begin made. */
vic_status vic__gsearch_io_end(vic_ctx *c, vic_gsearch_io *io, int rc, const vick_call *call, const char *what_call,
                               const char *what_results);
#endif

#endif
