/* Pinned double-buffered copies (staged_copy.cuh). */
#include "staged_copy.cuh"

#include <pthread.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif


/* memcpy by `threads` host threads (0: OpenMP's default): one thread
 * writing pageable memory (page faults included) cannot keep up with the
 * link.  Below VICK_WIDE_MIN bytes on the caller's thread
 * alone; above, always a team of the same size, each thread a part: a
 * region of another size would make OpenMP end and start pool threads
 * between this copy and the caller's own regions. */
void vick_copy_wide(void *dst, const void *src, size_t bytes, int threads) {
  vick_copy_wide2(dst, src, bytes, NULL, NULL, 0, threads);
}

void vick_copy_wide2(void *dst1, const void *src1, size_t bytes1, void *dst2, const void *src2, size_t bytes2,
                     int threads) {
#ifdef _OPENMP
  if (threads < 1) threads = omp_get_max_threads();
#else
  threads = 1;
#endif
  if (threads < 2 || bytes1 + bytes2 < VICK_WIDE_MIN) {
    memcpy(dst1, src1, bytes1);
    if (bytes2) memcpy(dst2, src2, bytes2);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    int t = 0, nt = 1;
#ifdef _OPENMP
    t = omp_get_thread_num();
    nt = omp_get_num_threads();
#endif
    const size_t a1 = bytes1 * (size_t)t / (size_t)nt, b1 = bytes1 * (size_t)(t + 1) / (size_t)nt;
    const size_t a2 = bytes2 * (size_t)t / (size_t)nt, b2 = bytes2 * (size_t)(t + 1) / (size_t)nt;
    memcpy((char *)dst1 + a1, (const char *)src1 + a1, b1 - a1);
    if (b2 > a2) memcpy((char *)dst2 + a2, (const char *)src2 + a2, b2 - a2);
  }
}

/* The pinned pairs kept per device while vick_pinned_keep holds them
 * (slots of the default size only): two, as a peaks run holds one on its
 * device while that device's slab calls take the other; busy: a stage
 * has the pair now. */
#define KEPT_DEVICES 64
#define KEPT_PAIRS 2
typedef struct {
  void *slot[2];
  int busy;
} kept_slots;
static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static int kept_holds;
static kept_slots kept_pair[KEPT_DEVICES][KEPT_PAIRS];

extern "C" void vick_pinned_keep(int hold) {
  void *drop[2 * KEPT_DEVICES * KEPT_PAIRS];
  int n = 0;
  pthread_mutex_lock(&kept_lock);
  kept_holds += hold ? 1 : -1;
  if (kept_holds < 0) kept_holds = 0;
  if (kept_holds == 0) /* a busy pair goes when its stage is freed */
    for (int d = 0; d < KEPT_DEVICES; ++d)
      for (int q = 0; q < KEPT_PAIRS; ++q) {
        kept_slots *k = &kept_pair[d][q];
        if (!k->slot[0] || k->busy) continue;
        drop[n++] = k->slot[0];
        drop[n++] = k->slot[1];
        k->slot[0] = k->slot[1] = NULL;
      }
  pthread_mutex_unlock(&kept_lock);
  for (int i = 0; i < n; ++i) vick_pinned_free(drop[i]);
}

int vick_stage_init(vick_call *call, vick_stage *s, size_t bytes) {
  memset(s, 0, sizeof *s);
  s->bytes = bytes ? bytes : VICK_STAGE_DEFAULT_BYTES;
  s->device = call->device;
  s->kept = -1;
  const int d = call->device;
  if (s->bytes == VICK_STAGE_DEFAULT_BYTES && d >= 0 && d < KEPT_DEVICES) {
    pthread_mutex_lock(&kept_lock);
    for (int q = 0; q < KEPT_PAIRS && kept_holds > 0 && s->kept < 0; ++q) {
      kept_slots *k = &kept_pair[d][q];
      if (!k->slot[0] || k->busy) continue;
      k->busy = 1;
      s->slot[0] = k->slot[0];
      s->slot[1] = k->slot[1];
      s->kept = q;
    }
    pthread_mutex_unlock(&kept_lock);
  }
  for (int i = 0; i < 2; ++i) {
    if (!s->slot[i]) VICK_TRY(vick_pinned_alloc(call, &s->slot[i], s->bytes, cudaHostAllocDefault, "staged copies"));
    VICK_CUDA(call, cudaEventCreateWithFlags(&s->done[i], cudaEventDisableTiming));
  }
  return VICK_OK;
}

void vick_stage_free(vick_stage *s) {
  const int d = s->device;
  int keep = 0;
  if (s->slot[0] && s->slot[1] && s->bytes == VICK_STAGE_DEFAULT_BYTES && d >= 0 && d < KEPT_DEVICES) {
    /* the slots' last copies are done before another stage may take them
     * (the copies wait for theirs, but a failed one may leave one queued) */
    int idle = 1;
    for (int i = 0; i < 2; ++i)
      if (s->done[i] && cudaEventSynchronize(s->done[i]) != cudaSuccess) idle = 0;
    if (!idle) cudaGetLastError();
    pthread_mutex_lock(&kept_lock);
    if (s->kept >= 0) { /* back to the device's pair, or freed when no one holds them or the copies failed */
      kept_slots *k = &kept_pair[d][s->kept];
      k->busy = 0;
      keep = kept_holds > 0 && idle;
      if (!keep) k->slot[0] = k->slot[1] = NULL;
    } else if (kept_holds > 0 && idle) { /* kept where the device has room for another pair */
      for (int q = 0; q < KEPT_PAIRS && !keep; ++q) {
        kept_slots *k = &kept_pair[d][q];
        if (k->slot[0]) continue;
        k->slot[0] = s->slot[0];
        k->slot[1] = s->slot[1];
        k->busy = 0;
        keep = 1;
      }
    }
    pthread_mutex_unlock(&kept_lock);
  }
  for (int i = 0; i < 2; ++i) {
    if (!keep) vick_pinned_free(s->slot[i]);
    if (s->done[i]) cudaEventDestroy(s->done[i]);
    s->slot[i] = NULL;
    s->done[i] = NULL;
  }
  s->kept = -1;
}

/* Pieces of `unit`-byte elements; out_unit is the host element size
 * (4 -> 8 widens int32 ids). */
static int to_host(vick_call *call, vick_env *env, vick_stage *s, void *dst, const void *src, int64_t count,
                   size_t unit, size_t out_unit) {
  if (count <= 0) return VICK_OK;
  const double t0 = vick_now();
  const int64_t per = (int64_t)(s->bytes / unit);
  const int64_t pieces = (count + per - 1) / per;
  for (int64_t p = 0; p <= pieces; ++p) {
    if (p < pieces) { /* start piece p */
      const int64_t a = p * per, m = count - a < per ? count - a : per;
      VICK_CUDA(call, cudaMemcpyAsync(s->slot[p & 1], (const char *)src + a * unit, (size_t)m * unit,
                                      cudaMemcpyDeviceToHost, env->stream));
      VICK_CUDA(call, cudaEventRecord(s->done[p & 1], env->stream));
    }
    if (p > 0) { /* place piece p - 1 while p copies */
      const int64_t q = p - 1, a = q * per, m = count - a < per ? count - a : per;
      VICK_CUDA(call, cudaEventSynchronize(s->done[q & 1]));
      if (out_unit == unit) {
        vick_copy_wide((char *)dst + a * out_unit, s->slot[q & 1], (size_t)m * unit, call->threads);
      } else {
        const int32_t *in = (const int32_t *)s->slot[q & 1];
        int64_t *out = (int64_t *)dst + a;
#pragma omp parallel for schedule(static) if (m > 65536)
        for (int64_t i = 0; i < m; ++i) out[i] = in[i];
      }
    }
  }
  call->seconds_transfer += vick_now() - t0;
  return VICK_OK;
}

int vick_staged_to_host(vick_call *call, vick_env *env, vick_stage *s, void *dst, const void *src, size_t bytes) {
  if (bytes % 4 == 0) return to_host(call, env, s, dst, src, (int64_t)(bytes / 4), 4, 4);
  return to_host(call, env, s, dst, src, (int64_t)bytes, 1, 1);
}

int vick_staged_to_host_wide(vick_call *call, vick_env *env, vick_stage *s, int64_t *dst, const int32_t *src,
                             int64_t count) {
  return to_host(call, env, s, dst, src, count, 4, 8);
}

int vick_staged_to_host_rows(vick_call *call, vick_env *env, vick_stage *s, void *dst, const void *src,
                             int64_t rows, size_t row_bytes, const int64_t *row_of) {
  if (rows <= 0) return VICK_OK;
  const double t0 = vick_now();
  const int64_t per = (int64_t)(s->bytes / row_bytes) > 0 ? (int64_t)(s->bytes / row_bytes) : 1;
  if ((size_t)per * row_bytes > s->bytes) return vick_fail(call, VICK_ARGUMENT, "a row is larger than a pinned slot");
  const int64_t pieces = (rows + per - 1) / per;
  for (int64_t p = 0; p <= pieces; ++p) {
    if (p < pieces) {
      const int64_t a = p * per, m = rows - a < per ? rows - a : per;
      VICK_CUDA(call, cudaMemcpyAsync(s->slot[p & 1], (const char *)src + (size_t)a * row_bytes, (size_t)m * row_bytes,
                                      cudaMemcpyDeviceToHost, env->stream));
      VICK_CUDA(call, cudaEventRecord(s->done[p & 1], env->stream));
    }
    if (p > 0) {
      const int64_t q = p - 1, a = q * per, m = rows - a < per ? rows - a : per;
      VICK_CUDA(call, cudaEventSynchronize(s->done[q & 1]));
      const char *in = (const char *)s->slot[q & 1];
#pragma omp parallel for schedule(static) if (m > 4096)
      for (int64_t i = 0; i < m; ++i)
        memcpy((char *)dst + (size_t)row_of[a + i] * row_bytes, in + (size_t)i * row_bytes, row_bytes);
    }
  }
  call->seconds_transfer += vick_now() - t0;
  return VICK_OK;
}

int vick_staged_to_device(vick_call *call, vick_env *env, vick_stage *s, void *dst, const void *src, size_t bytes) {
  if (bytes == 0) return VICK_OK;
  const double t0 = vick_now();
  const size_t per = s->bytes;
  const int64_t pieces = (int64_t)((bytes + per - 1) / per);
  for (int64_t p = 0; p < pieces; ++p) {
    const size_t a = (size_t)p * per, m = bytes - a < per ? bytes - a : per;
    if (p >= 2) VICK_CUDA(call, cudaEventSynchronize(s->done[p & 1])); /* the slot's last copy has left */
    vick_copy_wide(s->slot[p & 1], (const char *)src + a, m, call->threads);
    VICK_CUDA(call, cudaMemcpyAsync((char *)dst + a, s->slot[p & 1], m, cudaMemcpyHostToDevice, env->stream));
    VICK_CUDA(call, cudaEventRecord(s->done[p & 1], env->stream));
  }
  VICK_CUDA(call, cudaStreamSynchronize(env->stream));
  call->seconds_transfer += vick_now() - t0;
  return VICK_OK;
}

int vick_staged_rows_to_device(vick_call *call, vick_env *env, vick_stage *s, void *dst, int64_t rows,
                               size_t row_bytes, vick_rows_fill fill, void *ctx) {
  if (rows <= 0) return VICK_OK;
  if (call->threads < 1 || row_bytes == 0 || row_bytes > s->bytes)
    return vick_fail(call, VICK_ARGUMENT, "staged rows: needs call->threads >= 1 and rows that fit a slot");
  const double t0 = vick_now();
  const int64_t per = (int64_t)(s->bytes / row_bytes);
  const int64_t pieces = (rows + per - 1) / per;
  const int threads = call->threads;
  for (int64_t p = 0; p < pieces; ++p) {
    const int64_t a = p * per, m = rows - a < per ? rows - a : per;
    if (p >= 2) VICK_CUDA(call, cudaEventSynchronize(s->done[p & 1])); /* the slot's last copy has left */
    float *slot = (float *)s->slot[p & 1];
    int refused = 0;
    if (threads < 2 || (size_t)m * row_bytes < VICK_WIDE_MIN) {
      refused = fill(ctx, 0, slot, a, m);
    } else {
#pragma omp parallel num_threads(threads) reduction(| : refused)
      {
        int t = 0, nt = 1;
#ifdef _OPENMP
        t = omp_get_thread_num();
        nt = omp_get_num_threads();
#endif
        const int64_t r0 = m * t / nt, r1 = m * (t + 1) / nt;
        if (r0 < r1) refused |= fill(ctx, t, (float *)((char *)slot + (size_t)r0 * row_bytes), a + r0, r1 - r0) != 0;
      }
    }
    if (refused) {
      /* nothing may still read the slots when they are freed */
      VICK_CUDA(call, cudaStreamSynchronize(env->stream));
      return vick_fail(call, VICK_ARGUMENT, "staged rows: the rows were refused");
    }
    VICK_CUDA(call, cudaMemcpyAsync((char *)dst + (size_t)a * row_bytes, slot, (size_t)m * row_bytes,
                                    cudaMemcpyHostToDevice, env->stream));
    VICK_CUDA(call, cudaEventRecord(s->done[p & 1], env->stream));
  }
  VICK_CUDA(call, cudaStreamSynchronize(env->stream));
  call->seconds_transfer += vick_now() - t0;
  return VICK_OK;
}
