/* The core's side of the GPU backend.  Implemented by cuda_dispatch.c when
 * the library is built with CUDA, and by cuda_none.c otherwise, so the
 * policy code in knn_build.c never needs #ifdefs. */
#ifndef VIC_BACKEND_CUDA_H
#define VIC_BACKEND_CUDA_H

#include "internal.h"

/* VIC_OK when the context's device is usable; otherwise VIC_E_NODEVICE
 * with a message saying why (not built with CUDA, no device, driver). */
vic_status vic__cuda_probe(vic_ctx *c);
/* 1 when the GPU backend implements method m. */
int vic__cuda_has_method(vic_method m);
/* All-points kNN lists on the GPU into host ids/dist (n*k), self excluded.
 * Fills transfer/kernel seconds and stages in rep.  VIC_E_NOMEM or
 * VIC_E_DEVICE lets the caller fall back to the CPU. */
vic_status vic__cuda_knn(vic_ctx *c, const vic_data *x, const vic_build_options *o, vic_method m, int32_t k,
                         int64_t *ids, float *dist, vic_report *rep);

#endif
