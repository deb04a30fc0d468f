/* Lists into their destination (list_dest.h). */
#define _GNU_SOURCE /* madvise, posix_memalign */
#include "list_dest.h"

#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#ifdef __linux__
#include <sys/mman.h>
#endif

/* One row's bytes into the destination.  Rows of whole 16-byte units at
 * 16-byte aligned places are written with streaming stores: the
 * destination's cache lines are written whole and never read first, which
 * saves a third of the memory traffic of a scatter into a result far
 * larger than the caches (the host's memory bandwidth is what limits it). */
static inline void put_row(char *dst, const char *src, size_t bytes, int stream) {
#if defined(__SSE2__)
  if (stream) {
    __m128i *d = (__m128i *)(void *)dst;
    const __m128i *s = (const __m128i *)(const void *)src;
    for (size_t i = 0; i < bytes / 16; ++i) _mm_stream_si128(d + i, _mm_loadu_si128(s + i));
    return;
  }
#endif
  (void)stream;
  memcpy(dst, src, bytes);
}

void vic__lists_scatter(const vic__lists *dst, int threads, int64_t row0, const uint32_t *rows, int64_t m, int32_t k,
                        const void *ids, const float *dist) {
  const size_t ib = (size_t)k * (size_t)dst->id_bytes, db = (size_t)k * sizeof(float);
  char *di = dst->ids, *dd = (char *)dst->dist;
  const char *si = ids, *sd = (const char *)dist;
  const int stream_i = ib % 16 == 0 && (uintptr_t)di % 16 == 0;
  const int stream_d = db % 16 == 0 && (uintptr_t)dd % 16 == 0;
#pragma omp parallel num_threads(threads)
  {
#pragma omp for schedule(static)
    for (int64_t r = 0; r < m; ++r) {
      const size_t row = (size_t)(row0 + (int64_t)rows[r]);
      put_row(di + row * ib, si + (size_t)r * ib, ib, stream_i);
      put_row(dd + row * db, sd + (size_t)r * db, db, stream_d);
    }
#if defined(__SSE2__)
    _mm_sfence(); /* the streaming stores are visible before the call returns */
#endif
  }
}

void vic__ids_narrow(int threads, const int64_t *src, int32_t *dst, int64_t count) {
#pragma omp parallel for num_threads(threads) schedule(static, 65536)
  for (int64_t i = 0; i < count; ++i) dst[i] = (int32_t)src[i];
}

/* Fixed blocks summed in order: the same figures for any thread count. */
#define DNN1_BLOCKS 1024
void vic__lists_dnn1(const vic__lists *d, int64_t n, int32_t k, int threads, vic_report *r) {
  double sum[DNN1_BLOCKS], mx[DNN1_BLOCKS];
  int64_t cnt[DNN1_BLOCKS];
  const int64_t per = (n + DNN1_BLOCKS - 1) / DNN1_BLOCKS;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 8)
  for (int b = 0; b < DNN1_BLOCKS; ++b) {
    double s = 0, m = 0;
    int64_t c = 0;
    const int64_t i1 = (b + 1) * per < n ? (b + 1) * per : n;
    for (int64_t i = b * per; i < i1; ++i) {
      if (vic__lists_id(d, i * k) < 0) continue;
      float v = d->dist[i * k];
      s += v;
      if (v > m) m = v;
      c++;
    }
    sum[b] = s;
    mx[b] = m;
    cnt[b] = c;
  }
  double total = 0, top = 0;
  int64_t count = 0;
  for (int b = 0; b < DNN1_BLOCKS; ++b) {
    total += sum[b];
    if (mx[b] > top) top = mx[b];
    count += cnt[b];
  }
  r->dnn1_mean = count ? total / (double)count : 0;
  r->dnn1_max = top;
}

void *vic__malloc_lists(vic_ctx *c, size_t bytes, const char *what) {
#ifdef __linux__
  const size_t huge = (size_t)2 << 20;
  if (bytes >= 8 * huge) {
    void *p = NULL;
    if (posix_memalign(&p, huge, bytes) != 0) {
      vic__fail(c, VIC_E_NOMEM, "out of host memory allocating %zu bytes for %s", bytes, what);
      return NULL;
    }
    /* advice only: without transparent huge pages it changes nothing */
    (void)madvise(p, bytes, MADV_HUGEPAGE);
    return p;
  }
#endif
  return vic__malloc(c, bytes, what);
}
