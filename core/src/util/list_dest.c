/* Lists into their destination (list_dest.h). */
#define _GNU_SOURCE /* madvise, posix_memalign */
#include "list_dest.h"

#include <stdatomic.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#else
static int omp_get_thread_num(void) { return 0; }
static int omp_get_num_threads(void) { return 1; }
#endif
#ifdef __linux__
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>
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

/* Background population of a destination: threads take blocks of
 * the ids, then the distances, in order, and ask the kernel to map them
 * writable (MADV_POPULATE_WRITE: the contents are not touched, so the
 * writers may fill the same pages meanwhile). */
#define PREFAULT_MAX_THREADS 64
/* Small enough that the end of a pass (which waits for each thread's
 * current block) comes soon after it is asked for, even where populating
 * threads share the page tables' locks and each moves slowly. */
#define PREFAULT_BLOCK ((size_t)8 << 20)
/* Below this many bytes of distances the writers fault their pages in
 * themselves sooner than threads start. */
#define PREFAULT_MIN_DIST ((size_t)16 << 20)
struct vic__prefault {
#ifdef __linux__
  char *base[2];
  size_t bytes[2], blocks[2];
  atomic_size_t next; /* next block over both regions */
  atomic_int stop;
  int threads;
  pthread_t th[PREFAULT_MAX_THREADS];
#endif
  int unused;
};

#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
static void *prefault_main(void *arg) {
  struct vic__prefault *p = arg;
  for (;;) {
    if (atomic_load_explicit(&p->stop, memory_order_relaxed)) break;
    size_t b = atomic_fetch_add(&p->next, 1);
    int r = b < p->blocks[0] ? 0 : 1;
    if (r == 1) b -= p->blocks[0];
    if (b >= p->blocks[r]) break;
    size_t off = b * PREFAULT_BLOCK, len = p->bytes[r] - off < PREFAULT_BLOCK ? p->bytes[r] - off : PREFAULT_BLOCK;
    /* an older kernel (EINVAL) or memory that cannot be populated: the
     * writers fault the pages in themselves, as without this */
    if (madvise(p->base[r] + off, len, MADV_POPULATE_WRITE) != 0) atomic_store(&p->stop, 1);
  }
  return NULL;
}
#endif

vic__prefault *vic__lists_prefault(const vic__lists *dst, int64_t n, int32_t k, int threads) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
  const size_t entries = (size_t)n * (size_t)k;
  if (entries * sizeof(float) < PREFAULT_MIN_DIST || threads < 1) return NULL;
  struct vic__prefault *p = calloc(1, sizeof *p);
  if (!p) return NULL; /* advice only */
  const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  void *const from[2] = {dst->ids, dst->dist};
  const size_t len[2] = {entries * (size_t)dst->id_bytes, entries * sizeof(float)};
  for (int r = 0; r < 2; ++r) { /* whole pages inside the region */
    uintptr_t a = ((uintptr_t)from[r] + page - 1) & ~(page - 1), e = ((uintptr_t)from[r] + len[r]) & ~(page - 1);
    p->base[r] = (char *)a;
    p->bytes[r] = e > a ? e - a : 0;
    p->blocks[r] = (p->bytes[r] + PREFAULT_BLOCK - 1) / PREFAULT_BLOCK;
  }
  atomic_init(&p->next, 0);
  atomic_init(&p->stop, 0);
  if (threads > PREFAULT_MAX_THREADS) threads = PREFAULT_MAX_THREADS;
  for (p->threads = 0; p->threads < threads; ++p->threads)
    if (pthread_create(&p->th[p->threads], NULL, prefault_main, p) != 0) break;
  if (p->threads == 0) {
    free(p);
    return NULL;
  }
  return p;
#else
  (void)dst, (void)n, (void)k, (void)threads;
  return NULL;
#endif
}

void vic__lists_prefault_end(vic__prefault *p) {
  if (!p) return;
#ifdef __linux__
  atomic_store(&p->stop, 1);
  for (int t = 0; t < p->threads; ++t) pthread_join(p->th[t], NULL);
#endif
  free(p);
}
