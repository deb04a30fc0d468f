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
