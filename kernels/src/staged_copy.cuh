/* Large copies between pageable host memory and the device through two
 * pinned slots: the device copies one slot while the host fills or
 * empties the other, so a copy runs at the link's speed instead of the
 * driver's pageable path.  Optionally widens int32 device ids into int64
 * host ids on the way out. */
#ifndef VICK_STAGED_COPY_CUH
#define VICK_STAGED_COPY_CUH

#include "common.cuh"

/* memcpy spread over `threads` host threads (0: OpenMP's default; the
 * call's vick_call.threads), from VICK_WIDE_MIN bytes on: one thread
 * writing pageable memory (page faults included) is far slower than the
 * link that filled the pinned staging. */
#define VICK_WIDE_MIN ((size_t)256 << 10)
void vick_copy_wide(void *dst, const void *src, size_t bytes, int threads);

/* Two copies (a search's ids and distances) by one team of `threads`,
 * each thread a part of both: one region instead of two. */
void vick_copy_wide2(void *dst1, const void *src1, size_t bytes1, void *dst2, const void *src2, size_t bytes2,
                     int threads);

typedef struct {
  void *slot[2];      /* pinned */
  cudaEvent_t done[2];
  size_t bytes;       /* per slot */
  int device;         /* the call's device: where kept slots go back (vick_pinned_keep) */
  int kept;           /* the slots are that device's kept pair */
} vick_stage;

/* The slots' default size: only such slots are kept between calls
 * (vick_pinned_keep). */
#define VICK_STAGE_DEFAULT_BYTES ((size_t)64 << 20)

/* Pinned slots of `bytes` each (0: VICK_STAGE_DEFAULT_BYTES).  vick_stage_free releases
 * them (also after a failed init; a zeroed stage is fine). */
int vick_stage_init(vick_call *call, vick_stage *s, size_t bytes);
void vick_stage_free(vick_stage *s);

/* bytes from device src to host dst, timed as transfer time. */
int vick_staged_to_host(vick_call *call, vick_env *env, vick_stage *s, void *dst, const void *src, size_t bytes);
/* count int32 values on the device to int64 on the host. */
int vick_staged_to_host_wide(vick_call *call, vick_env *env, vick_stage *s, int64_t *dst, const int32_t *src,
                             int64_t count);
/* rows of row_bytes each from device src to host dst, row r of src at
 * row row_of[r] of dst (a scatter through the pinned slots). */
int vick_staged_to_host_rows(vick_call *call, vick_env *env, vick_stage *s, void *dst, const void *src,
                             int64_t rows, size_t row_bytes, const int64_t *row_of);
/* rows of row_bytes each to device dst, written into the pinned slots by
 * fill (rows [row0, row0 + rows) to dst; nonzero refuses them: the copy
 * then stops, its copies ended, with VICK_ARGUMENT) by the call's threads
 * (call->threads >= 1), thread 0 .. call->threads - 1 a share of each slot. */
typedef int (*vick_rows_fill)(void *ctx, int thread, float *dst, int64_t row0, int64_t rows);
int vick_staged_rows_to_device(vick_call *call, vick_env *env, vick_stage *s, void *dst, int64_t rows,
                               size_t row_bytes, vick_rows_fill fill, void *ctx);
/* bytes from host src to device dst. */
int vick_staged_to_device(vick_call *call, vick_env *env, vick_stage *s, void *dst, const void *src, size_t bytes);

#endif
