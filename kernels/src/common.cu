/* Implementation of the shared device helpers (common.cuh) and of the
 * device queries of vic_kernels.h. */
#include "common.cuh"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int vick_fail(vick_call *call, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(call->message, sizeof call->message, fmt, ap);
  va_end(ap);
  return code;
}

static const char *base_name(const char *path) {
  const char *s = strrchr(path, '/');
  return s ? s + 1 : path;
}

/* The vick code of a failed CUDA call. */
static int cuda_code(cudaError_t e) {
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) return VICK_NODEVICE;
  return e == cudaErrorMemoryAllocation ? VICK_NOMEM : VICK_DEVICE;
}

int vick_cuda_fail(vick_call *call, cudaError_t e, const char *what, const char *file, int line) {
  cudaGetLastError(); /* clear a sticky-free error so the next call starts clean */
  return vick_fail(call, cuda_code(e), "%s failed: %s (%s) at %s:%d", what, cudaGetErrorName(e), cudaGetErrorString(e),
                   base_name(file), line);
}

int vick_cublas_fail(vick_call *call, cublasStatus_t e, const char *what, const char *file, int line) {
  int code = (e == CUBLAS_STATUS_ALLOC_FAILED) ? VICK_NOMEM : VICK_DEVICE;
  return vick_fail(call, code, "%s failed: %s at %s:%d", what, cublasGetStatusString(e), base_name(file), line);
}

double vick_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int vick_device_count(char *message, size_t size) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();
    if (message && size) snprintf(message, size, "%s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
    return e == cudaErrorNoDevice ? 0 : -1;
  }
  if (message && size) message[0] = '\0';
  return n;
}

int vick_device_info(int device, char *name, size_t size, size_t *free_bytes, size_t *total_bytes) {
  cudaDeviceProp p;
  if (cudaGetDeviceProperties(&p, device) != cudaSuccess) { cudaGetLastError(); return VICK_NODEVICE; }
  if (name && size) snprintf(name, size, "%s", p.name);
  if (free_bytes || total_bytes) {
    int prev = 0;
    size_t f = 0, t = 0;
    if (cudaGetDevice(&prev) != cudaSuccess || cudaSetDevice(device) != cudaSuccess ||
        cudaMemGetInfo(&f, &t) != cudaSuccess) {
      cudaGetLastError();
      return VICK_DEVICE;
    }
    cudaSetDevice(prev);
    if (free_bytes) *free_bytes = f;
    if (total_bytes) *total_bytes = t;
  }
  return VICK_OK;
}

/* The call's budget on the current device: what it holds now plus 90% of the
 * free memory, capped by the call's memory budget. The other 10% stays for
 * cuBLAS workspaces, CUB temporaries measured only at run time, and other
 * processes. */
static int budget_from_free(vick_call *call, vick_env *env) {
  size_t f = 0, t = 0;
  VICK_CUDA(call, cudaMemGetInfo(&f, &t));
  const size_t usable = env->used + f / 10 * 9;
  env->budget = (call->memory_budget && call->memory_budget < usable) ? call->memory_budget : usable;
  return VICK_OK;
}

int vick_begin(vick_call *call, vick_env *env) { return vick_begin_on(call, env, call->device); }

int vick_begin_on(vick_call *call, vick_env *env, int device) {
  memset(env, 0, sizeof *env);
  env->t_start = vick_now();
  call->seconds_transfer = call->seconds_kernel = call->seconds_total = 0;
  call->peak_bytes = 0;
  call->n_stages = 0;
  call->message[0] = '\0';
  int count = 0;
  VICK_CUDA(call, cudaGetDeviceCount(&count));
  if (device < 0 || device >= count)
    return vick_fail(call, VICK_NODEVICE, "CUDA device %d does not exist (%d present)", device, count);
  VICK_CUDA(call, cudaSetDevice(device));
  VICK_CUDA(call, cudaStreamCreateWithFlags(&env->stream, cudaStreamNonBlocking));
  VICK_CUDA(call, cudaEventCreate(&env->ev_a));
  VICK_CUDA(call, cudaEventCreate(&env->ev_b));
  return budget_from_free(call, env);
}

int vick_budget_again(vick_call *call, vick_env *env) {
  VICK_CUDA(call, cudaSetDevice(call->device));
  return budget_from_free(call, env);
}

int vick_end(vick_call *call, vick_env *env, int rc) {
  if (env->ev_a) cudaEventDestroy(env->ev_a);
  if (env->ev_b) cudaEventDestroy(env->ev_b);
  if (env->stream) cudaStreamDestroy(env->stream);
  env->ev_a = env->ev_b = NULL;
  env->stream = NULL;
  call->seconds_total = vick_now() - env->t_start;
  return rc;
}

int vick_buf_alloc(vick_call *call, vick_env *env, vick_buf *b, size_t bytes, const char *what) {
  b->p = NULL;
  b->bytes = 0;
  if (bytes == 0) bytes = 1;
  if (bytes > vick_budget_left(env))
    return vick_fail(call, VICK_NOMEM, "%s needs %.1f MiB of device memory; %.1f MiB of the %.1f MiB budget are left", what,
                     bytes / 1048576.0, vick_budget_left(env) / 1048576.0, env->budget / 1048576.0);
  cudaError_t e = cudaMalloc(&b->p, bytes);
  if (e != cudaSuccess) {
    b->p = NULL;
    cudaGetLastError();
    return vick_fail(call, e == cudaErrorMemoryAllocation ? VICK_NOMEM : VICK_DEVICE,
                     "cudaMalloc of %.1f MiB for %s failed: %s", bytes / 1048576.0, what, cudaGetErrorString(e));
  }
  b->bytes = bytes;
  env->used += bytes;
  if (env->used > call->peak_bytes) call->peak_bytes = env->used;
  return VICK_OK;
}

int vick_buf_reserve(vick_call *call, vick_env *env, vick_buf *b, size_t bytes, const char *what) {
  if (b->p && b->bytes >= bytes) return VICK_OK;
  vick_buf_free(env, b);
  return vick_buf_alloc(call, env, b, bytes, what);
}

int vick_alloc_kept(vick_call *call, vick_env *env, void **p, size_t bytes, const char *what) {
  vick_env unbudgeted;
  size_t peak = call->peak_bytes;
  if (!env) {
    memset(&unbudgeted, 0, sizeof unbudgeted);
    unbudgeted.budget = SIZE_MAX;
    env = &unbudgeted;
  }
  vick_buf b;
  int rc = vick_buf_alloc(call, env, &b, bytes, what);
  if (env == &unbudgeted) call->peak_bytes = peak; /* no call's memory to report */
  *p = b.p;
  return rc;
}

void vick_free_kept(void *p) {
  if (p) cudaFree(p);
}

void *vick_buf_keep(vick_env *env, vick_buf *b) {
  void *p = b->p;
  if (p) env->used -= b->bytes;
  b->p = NULL;
  b->bytes = 0;
  return p;
}

int vick_pinned_alloc(vick_call *call, void **p, size_t bytes, unsigned flags, const char *what) {
  *p = NULL;
  cudaError_t e = cudaHostAlloc(p, bytes, flags);
  if (e != cudaSuccess) {
    *p = NULL;
    cudaGetLastError();
    return vick_fail(call, cuda_code(e), "cudaHostAlloc of %.1f MiB of pinned memory for %s failed: %s",
                     bytes / 1048576.0, what, cudaGetErrorString(e));
  }
  return VICK_OK;
}

void vick_pinned_free(void *p) {
  if (p) cudaFreeHost(p);
}

void vick_buf_free(vick_env *env, vick_buf *b) {
  if (b->p) {
    cudaFree(b->p);
    env->used -= b->bytes;
  }
  b->p = NULL;
  b->bytes = 0;
}

void vick_stage_add(vick_call *call, const char *name, double seconds) {
  for (int i = 0; i < call->n_stages; ++i)
    if (strcmp(call->stages[i].name, name) == 0) { call->stages[i].seconds += seconds; return; }
  int cap = (int)(sizeof call->stages / sizeof call->stages[0]);
  if (call->n_stages >= cap) return;
  snprintf(call->stages[call->n_stages].name, sizeof call->stages[0].name, "%s", name);
  call->stages[call->n_stages++].seconds = seconds;
}

int vick_timer_start(vick_call *call, vick_env *env) {
  VICK_CUDA(call, cudaEventRecord(env->ev_a, env->stream));
  return VICK_OK;
}

int vick_timer_stop(vick_call *call, vick_env *env, double *acc, const char *stage) {
  VICK_CUDA(call, cudaEventRecord(env->ev_b, env->stream));
  VICK_CUDA(call, cudaEventSynchronize(env->ev_b));
  float ms = 0.f;
  VICK_CUDA(call, cudaEventElapsedTime(&ms, env->ev_a, env->ev_b));
  if (acc) *acc += 1e-3 * ms;
  if (stage) vick_stage_add(call, stage, 1e-3 * ms);
  return VICK_OK;
}

int vick_copy_to_device(vick_call *call, vick_env *env, void *dst, const void *src, size_t bytes) {
  VICK_TRY(vick_timer_start(call, env));
  VICK_CUDA(call, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, env->stream));
  return vick_timer_stop(call, env, &call->seconds_transfer, NULL);
}

int vick_copy_to_host(vick_call *call, vick_env *env, void *dst, const void *src, size_t bytes) {
  VICK_TRY(vick_timer_start(call, env));
  VICK_CUDA(call, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, env->stream));
  return vick_timer_stop(call, env, &call->seconds_transfer, NULL);
}

int vick_poll(vick_call *call, const char *stage, double fraction) {
  if (call->progress && call->progress(call->user, stage, fraction))
    return vick_fail(call, VICK_CANCELLED, "cancelled during GPU stage '%s'", stage);
  return VICK_OK;
}
