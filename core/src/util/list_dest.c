/* Lists into their destination (list_dest.h). */
#define _GNU_SOURCE /* madvise, posix_memalign */
#include "list_dest.h"

#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#else
static int omp_get_thread_num(void) { return 0; }
static int omp_get_num_threads(void) { return 1; }
#endif
#ifdef __linux__
#include <sys/mman.h>
#endif
#if defined(__SSE2__)
#include <emmintrin.h>
#define VIC_STREAM_STORES 1
#endif

#ifdef VIC_STREAM_STORES
/* bytes (a multiple of 16) from s to the 16-byte aligned d with streaming
 * stores: a scattered row fills whole cache lines that nobody reads soon,
 * so they go to memory without being read first (half the memory traffic
 * of plain stores into lines not in the cache) */
static void stream_copy(char *d, const char *s, size_t bytes) {
  size_t i = 0;
  for (; i + 64 <= bytes; i += 64) {
    __m128i a = _mm_loadu_si128((const __m128i *)(s + i)), b = _mm_loadu_si128((const __m128i *)(s + i + 16));
    __m128i c = _mm_loadu_si128((const __m128i *)(s + i + 32)), e = _mm_loadu_si128((const __m128i *)(s + i + 48));
    _mm_stream_si128((__m128i *)(d + i), a);
    _mm_stream_si128((__m128i *)(d + i + 16), b);
    _mm_stream_si128((__m128i *)(d + i + 32), c);
    _mm_stream_si128((__m128i *)(d + i + 48), e);
  }
  for (; i < bytes; i += 16) _mm_stream_si128((__m128i *)(d + i), _mm_loadu_si128((const __m128i *)(s + i)));
}
#endif

void vic__lists_scatter(const vic__lists *dst, int threads, int64_t first, const uint32_t *rows, int64_t m, int32_t k,
                        const void *ids, const float *dist) {
  const size_t ib = (size_t)k * (size_t)dst->id_bytes, db = (size_t)k * sizeof(float);
  char *di = dst->ids;
  const char *si = ids;
  if (!rows) {
    /* consecutive rows: one contiguous block per thread, so each thread
     * writes (and first touches) its own stretch of the destination */
#pragma omp parallel num_threads(threads)
    {
      const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
      const int64_t a = m * t / nt, b = m * (t + 1) / nt;
      if (b > a) {
        memcpy(di + (size_t)(first + a) * ib, si + (size_t)a * ib, (size_t)(b - a) * ib);
        memcpy(dst->dist + (size_t)(first + a) * (size_t)k, dist + (size_t)a * (size_t)k, (size_t)(b - a) * db);
      }
    }
    return;
  }
#ifdef VIC_STREAM_STORES
  /* rows of a cache line or more in whole 16-byte units (the ids of a row
   * are as long as its distances or longer), 16-byte aligned bases:
   * streaming stores */
  const int stream = db >= 64 && db % 16 == 0 && ((uintptr_t)di | (uintptr_t)dst->dist) % 16 == 0;
  if (stream) {
#pragma omp parallel num_threads(threads)
    {
#pragma omp for schedule(static, 1024) nowait
      for (int64_t r = 0; r < m; ++r) {
        const size_t row = (size_t)(first + (int64_t)rows[r]);
        stream_copy(di + row * ib, si + (size_t)r * ib, ib);
        stream_copy((char *)(dst->dist + row * (size_t)k), (const char *)(dist + (size_t)r * (size_t)k), db);
      }
      _mm_sfence(); /* this thread's streamed rows visible before the team's barrier */
    }
    return;
  }
#endif
#pragma omp parallel for num_threads(threads) schedule(static, 1024)
  for (int64_t r = 0; r < m; ++r) {
    const size_t row = (size_t)(first + (int64_t)rows[r]);
    memcpy(di + row * ib, si + (size_t)r * ib, ib);
    memcpy(dst->dist + row * (size_t)k, dist + (size_t)r * (size_t)k, db);
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

void *vic__malloc_huge(size_t bytes) {
#ifdef __linux__
  if (bytes >= VIC_HUGE_MIN) {
    void *p = NULL;
    if (posix_memalign(&p, (size_t)2 << 20, bytes) != 0) return NULL;
    /* advice only: without transparent huge pages it changes nothing */
    (void)madvise(p, bytes, MADV_HUGEPAGE);
    return p;
  }
#endif
  return malloc(bytes ? bytes : 1);
}

void *vic__malloc_lists(vic_ctx *c, size_t bytes, const char *what) {
  if (bytes < VIC_HUGE_MIN) return vic__malloc(c, bytes, what);
  void *p = vic__malloc_huge(bytes);
  if (!p) vic__fail(c, VIC_E_NOMEM, "out of host memory allocating %zu bytes for %s", bytes, what);
  return p;
}

