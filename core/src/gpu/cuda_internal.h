/* What the CUDA bridge's files share (cuda_knn_lists.c, cuda_grid_multi.c,
 * cuda_ggnn_index.c, and the GPU parts of density_cuda.c, peaks_cuda.c and
 * grnnd_tsdg_index.c): the device set of a context, a vick_call set up for
 * one device, and the translation of vick codes into the context's status
 * and message.  CUDA builds only. */
#ifndef VIC_CUDA_INTERNAL_H
#define VIC_CUDA_INTERNAL_H

#include "backend_cuda.h"
#include "vic_kernels.h"

/* The devices a call uses: first = the context's device, *count of them
 * (vic_ctx_options.devices resolved against the devices present).  Fails
 * with the context's error set, as vic__cuda_probe does. */
vic_status vic__cuda_devices(vic_ctx *c, int *first, int *count);

/* A call on `device` under the build's memory budget and the context's
 * seed.  threaded != 0: the call runs on a worker thread beside others, so
 * its poll only reads the context's cancel flag (the progress callback and
 * the context's error belong to the caller's thread). */
void vic__cuda_call_init(vic_ctx *c, vick_call *call, int device, size_t budget, int threaded);

/* A vick code as the context's status and message (VIC_OK for VICK_OK);
 * `what` names the step in the message ("GPU <what> ran out of ..."). */
vic_status vic__kernel_status(vic_ctx *c, int rc, const vick_call *call, const char *what);
/* The same for a kNN method, named as vic_method_name does. */
vic_status vic__cuda_translate(vic_ctx *c, int rc, const vick_call *call, vic_method m);

/* Rows as the kernels take them: packed row-major (a copy in *owned when
 * strided; NULL with call->message set when that copy finds no memory). */
const float *vic__cuda_packed_rows(const vic_data *x, float **owned, vick_call *call);

/* A call's transfer / kernel seconds and stages added to a report. */
void vic__cuda_copy_stages(vic_report *rep, const vick_call *call);
/* The timing log line of a kernel call: "GPU what on <device> ...". */
void vic__kernel_log(vic_ctx *c, const vick_call *call, const char *what);

/* Run job(arg, slot) for slot = 0 .. slots-1, one host thread per slot at
 * the same time (each slot drives one device); returns when all are done. */
void vic__cuda_parallel(int slots, void (*job)(void *arg, int slot), void *arg);

/* Exact grid kNN with the queries split over `count` devices from `first`
 * (vick_grid_knn_stream on each, one host thread per device), true
 * distances streamed into dst. */
vic_status vic__cuda_grid_multi(vic_ctx *c, const vick_points *p, const vic_build_options *o, int first, int count,
                                int32_t k, const vic__lists *dst, vic_report *rep);

/* GGNN for-all lists (Euclidean distances, ascending) of a sharded build:
 * see cuda_ggnn_index.c.  Unsharded builds are in cuda_knn_lists.c. */
vic_status vic__cuda_ggnn_forall_sharded(vic_ctx *c, const vic_data *x, const vic_build_options *o, int32_t k,
                                         int64_t *ids, float *dist, vic_report *rep);

#endif
