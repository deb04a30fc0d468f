/* Device helpers shared by every kernel file: status checks that turn a
 * failed CUDA / cuBLAS call into a vick code and a message, a per-call
 * device-memory budget, event timers, stage bookkeeping and the
 * cancellation poll, for every kernel family (GGNN and GNND included).
 * Nothing here keeps global state: everything lives in
 * the vick_call of the running call or in the caller's workspace.
 *
 * Style of an entry point (resources released in one place):
 *
 *   static int run(vick_call *call, my_ws *w, ...) {   // returns early on failure
 *     VICK_CUDA(call, cudaMemcpyAsync(...));
 *     my_kernel<<<g, b, 0, w->env.stream>>>(...);
 *     VICK_LAUNCH(call, "my_kernel");
 *     return VICK_OK;
 *   }
 *   int vick_my_method(vick_call *call, ...) {
 *     my_ws w = {};
 *     int rc = vick_begin(call, &w.env);
 *     if (rc == VICK_OK) rc = run(call, &w, ...);
 *     my_ws_free(&w);             // vick_buf_free for each buffer
 *     return vick_end(call, &w.env, rc);
 *   }
 */
#ifndef VICK_COMMON_CUH
#define VICK_COMMON_CUH

#include "lower_bound.cuh"
/* The CPU-identical distances (vick_l2sq_exact, vick_neg_dot_exact,
 * vick_min_image) and the (distance, id) key order (vick_key, vick_before)
 * are kernel primitives: prims/dist.cuh, prims/key.cuh. */
#include "prims/dist.cuh"
#include "prims/key.cuh"
#include "vic_kernels.h"

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

/* Record a failure in call->message and return code. */
int vick_fail(vick_call *call, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* A failed CUDA call: out-of-memory becomes VICK_NOMEM, anything else
 * VICK_DEVICE; the message names the call and the CUDA error. */
int vick_cuda_fail(vick_call *call, cudaError_t e, const char *what, const char *file, int line);
int vick_cublas_fail(vick_call *call, cublasStatus_t e, const char *what, const char *file, int line);

#define VICK_CUDA(call_, expr)                                                         \
  do {                                                                                 \
    cudaError_t vick_e_ = (expr);                                                      \
    if (vick_e_ != cudaSuccess) return vick_cuda_fail(call_, vick_e_, #expr, __FILE__, __LINE__); \
  } while (0)
/* After every launch: a bad configuration shows up here, a fault at the
 * next synchronising call (also checked). */
#define VICK_LAUNCH(call_, name)                                                       \
  do {                                                                                 \
    cudaError_t vick_e_ = cudaGetLastError();                                          \
    if (vick_e_ != cudaSuccess) return vick_cuda_fail(call_, vick_e_, "launch of " name, __FILE__, __LINE__); \
  } while (0)
#define VICK_CUBLAS(call_, expr)                                                       \
  do {                                                                                 \
    cublasStatus_t vick_e_ = (expr);                                                   \
    if (vick_e_ != CUBLAS_STATUS_SUCCESS) return vick_cublas_fail(call_, vick_e_, #expr, __FILE__, __LINE__); \
  } while (0)
/* Propagate a vick code from a helper. */
#define VICK_TRY(expr)                                                                 \
  do {                                                                                 \
    int vick_rc_ = (expr);                                                             \
    if (vick_rc_ != VICK_OK) return vick_rc_;                                          \
  } while (0)

/* ------------------------------------------------------------ environment */
/* What every entry point sets up: the device, one stream, the memory budget
 * and two event pairs for transfer and kernel timing. */
typedef struct {
  cudaStream_t stream;
  cudaEvent_t ev_a, ev_b;
  size_t budget;      /* bytes this call may hold on the device */
  size_t used;        /* bytes held now through vick_buf_alloc */
  double t_start;     /* host wall clock at vick_begin */
} vick_env;

/* Select call->device, clear the outcome fields, create the stream and
 * events, and fix the budget: call->memory_budget, or 90% of the free
 * device memory when that is 0 (never more than what is free). */
int vick_begin(vick_call *call, vick_env *env);
/* vick_begin on a given device: calls on an index run where its arrays
 * live, whatever call->device says. */
int vick_begin_on(vick_call *call, vick_env *env, int device);
/* A run that spans several calls takes its budget again from the new
 * call's memory_budget: what the caller held beside it at the start may be
 * gone (the memory the run holds counts against it as before). */
int vick_budget_again(vick_call *call, vick_env *env);
/* Release the stream and events, set seconds_total; returns rc unchanged. */
int vick_end(vick_call *call, vick_env *env, int rc);

double vick_now(void); /* monotonic host seconds */

/* ----------------------------------------------------------- device memory */
typedef struct {
  void *p;
  size_t bytes;
} vick_buf;

/* Allocate within the budget: VICK_NOMEM with a message naming `what`, the
 * size and the budget when it does not fit (checked before cudaMalloc, so
 * the device itself never runs out). */
int vick_buf_alloc(vick_call *call, vick_env *env, vick_buf *b, size_t bytes, const char *what);
void vick_buf_free(vick_env *env, vick_buf *b);
/* Make b hold at least bytes (CUB temporaries sized at run time): a larger
 * buffer replaces a smaller one, contents not kept. */
int vick_buf_reserve(vick_call *call, vick_env *env, vick_buf *b, size_t bytes, const char *what);
/* A buffer that outlives the call (an index's arrays, a workspace kept
 * across calls): allocated and counted like vick_buf_alloc (budget, peak,
 * message), then owned by the caller, which releases it with
 * vick_free_kept.  env NULL: no budget of its own (the owner sized it,
 * e.g. a workspace that grows between calls), the same checks and message
 * otherwise.  *p is NULL on failure. */
int vick_alloc_kept(vick_call *call, vick_env *env, void **p, size_t bytes, const char *what);
/* Release a vick_alloc_kept buffer (NULL: nothing), on the current device. */
void vick_free_kept(void *p);
/* Hand a vick_buf_alloc buffer out of the call (a result that outlives
 * it, released like a vick_alloc_kept one): env no longer counts its
 * bytes, b is left empty; returns the memory. */
void *vick_buf_keep(vick_env *env, vick_buf *b);
/* Page-locked host memory for staging (flags as cudaHostAlloc's), outside
 * the device budget: a failure gives the code vick_cuda_fail gives and a
 * message naming `what` and the size; *p is NULL then.  Released with
 * vick_pinned_free (NULL: nothing). */
int vick_pinned_alloc(vick_call *call, void **p, size_t bytes, unsigned flags, const char *what);
void vick_pinned_free(void *p);
/* Bytes still available under the budget. */
static inline size_t vick_budget_left(const vick_env *env) { return env->budget > env->used ? env->budget - env->used : 0; }

/* ------------------------------------------------------------------ timing */
/* Time a region on env->stream with events: start, then stop adds the
 * elapsed seconds to *acc (and to the named stage when name != NULL). */
int vick_timer_start(vick_call *call, vick_env *env);
int vick_timer_stop(vick_call *call, vick_env *env, double *acc, const char *stage);
/* Add seconds to a named stage of the call's report. */
void vick_stage_add(vick_call *call, const char *name, double seconds);

/* Copies timed as transfer time. */
int vick_copy_to_device(vick_call *call, vick_env *env, void *dst, const void *src, size_t bytes);
int vick_copy_to_host(vick_call *call, vick_env *env, void *dst, const void *src, size_t bytes);

/* -------------------------------------------------------------- progress */
/* Poll the caller between batches: VICK_CANCELLED when it asks to stop. */
int vick_poll(vick_call *call, const char *stage, double fraction);

static inline unsigned vick_blocks(int64_t work, int per_block) {
  return (unsigned)((work + per_block - 1) / per_block);
}

#endif
