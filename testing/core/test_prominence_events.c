/* The prominence merge from events (prominence.h), the host step after
 * the slabs of the out-of-core peaks: on generated maxima and events it
 * (and its context-free form vic__prominent_events_run) keeps exactly
 * the maxima of the plain union-find loop below (int64
 * forest, no prefetches), for several sizes and ratios, the events with
 * repeated pairs, pairs of one maximum and ties of density.  With
 * VIC_BENCH_PROMINENCE=M,E (maxima, events) it also times both on a set
 * of that size (a micro-run, not a check).  Runs in CI. */
#include "prominence.h"
#include "denser_tree.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t find64(int64_t *up, int64_t i) {
  while (up[i] != i) { up[i] = up[up[i]]; i = up[i]; }
  return i;
}

/* The loop as it was before the int32 forest and the prefetches. */
static void reference(int64_t m, const float *rho_max, int64_t n_events, const int32_t *a, const int32_t *b,
                      const float *rho_e, double min_ratio, unsigned char *survive) {
  int64_t *up = malloc((size_t)(m > 0 ? m : 1) * sizeof *up);
  for (int64_t q = 0; q < m; ++q) { up[q] = q; survive[q] = 1; }
  for (int64_t e = 0; e < n_events; ++e) {
    int64_t ra = find64(up, a[e]), rb = find64(up, b[e]);
    if (ra == rb) continue;
    int64_t hi = vic__denser(rho_max, ra, rb) ? ra : rb, lo = hi == ra ? rb : ra;
    if ((double)rho_max[lo] < min_ratio * (double)rho_e[e]) { up[lo] = hi; survive[lo] = 0; }
  }
  free(up);
}

typedef struct {
  int64_t m, e;
  float *rho_max, *rho_e;
  int32_t *a, *b;
} event_set;

/* Densities of a few levels (ties), pairs mostly random with some
 * repeated and some of one maximum, saddles below both maxima. */
static event_set make_set(int64_t m, int64_t e, uint64_t seed) {
  event_set s = {m, e, malloc((size_t)m * 4), malloc((size_t)(e ? e : 1) * 4), malloc((size_t)(e ? e : 1) * 4),
                 malloc((size_t)(e ? e : 1) * 4)};
  uint64_t r = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t q = 0; q < m; ++q)
    s.rho_max[q] = (float)(1 + vt_xorshift(&r) % 64) * (vt_xorshift(&r) % 3 ? 1.0f : 10.0f);
  for (int64_t t = 0; t < e; ++t) {
    const uint64_t kind = vt_xorshift(&r) % 16;
    if (kind == 0 && t > 0) { s.a[t] = s.b[t - 1]; s.b[t] = s.a[t - 1]; }
    else {
      s.a[t] = (int32_t)(vt_xorshift(&r) % (uint64_t)m);
      s.b[t] = kind == 1 ? s.a[t] : (int32_t)(vt_xorshift(&r) % (uint64_t)m);
    }
    const float lo = s.rho_max[s.a[t]] < s.rho_max[s.b[t]] ? s.rho_max[s.a[t]] : s.rho_max[s.b[t]];
    s.rho_e[t] = lo * (float)(0.05 + 0.95 * (double)(vt_xorshift(&r) % 1000) / 999.0);
  }
  return s;
}

static void free_set(event_set *s) {
  free(s->rho_max);
  free(s->rho_e);
  free(s->a);
  free(s->b);
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); /* the loops are the calling thread's; other processes share this machine */
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void check(vic_ctx *c, int64_t m, int64_t e, double ratio, uint64_t seed) {
  if (m < 1 || m > INT32_MAX) return;
  event_set s = make_set(m, e, seed);
  unsigned char *want = malloc((size_t)m), *got = malloc((size_t)m);
  reference(m, s.rho_max, e, s.a, s.b, s.rho_e, ratio, want);
  memset(got, 7, (size_t)m);
  VT_OK(c, vic__prominent_from_events(c, m, s.rho_max, e, s.a, s.b, s.rho_e, ratio, got));
  int64_t differ = 0, kept = 0;
  for (int64_t q = 0; q < m; ++q) { differ += got[q] != want[q]; kept += want[q]; }
  /* the context-free form a host thread runs beside the device */
  int32_t *forest = malloc((size_t)m * sizeof *forest);
  memset(got, 7, (size_t)m);
  vic__prominent_events_run(m, s.rho_max, e, s.a, s.b, s.rho_e, ratio, forest, got);
  for (int64_t q = 0; q < m; ++q) differ += got[q] != want[q];
  free(forest);
  VT_CHECK(differ == 0, "m %lld, %lld events, ratio %.2f: %lld maxima differ from the plain loop", (long long)m,
           (long long)e, ratio, (long long)differ);
  /* a case that merges nothing or everything would not test the merge */
  if (e >= 4 * m && m >= 1000)
    VT_CHECK(kept > 1 && kept < m, "m %lld, ratio %.2f: %lld of the maxima survive", (long long)m, ratio,
             (long long)kept);
  free(want);
  free(got);
  free_set(&s);
}

static void bench(vic_ctx *c, const char *spec) {
  long long m = 0, e = 0;
  if (sscanf(spec, "%lld,%lld", &m, &e) != 2 || m < 1 || m > INT32_MAX || e < 0) return;
  event_set s = make_set(m, e, 99);
  unsigned char *want = malloc((size_t)m), *got = malloc((size_t)m);
  double t0 = now();
  reference(m, s.rho_max, e, s.a, s.b, s.rho_e, 1.5, want);
  double t1 = now();
  VT_OK(c, vic__prominent_from_events(c, m, s.rho_max, e, s.a, s.b, s.rho_e, 1.5, got));
  double t2 = now();
  VT_CHECK(memcmp(want, got, (size_t)m) == 0, "bench set: the survivors differ");
  printf("prominence from events, %lld maxima, %lld events: plain loop %.3f s, now %.3f s (cpu seconds of the calling thread)\n", m, e, t1 - t0, t2 - t1);
  free(want);
  free(got);
  free_set(&s);
}

int main(void) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  check(c, 1, 0, 1.5, 1);
  check(c, 1, 5, 1.5, 2);
  check(c, 2, 3, 1.5, 3);
  check(c, 17, 40, 1.2, 4);
  for (int i = 0; i < 3; ++i) {
    const double ratio[] = {1.05, 1.5, 2.5};
    check(c, 1000, 20000, ratio[i], 10 + (uint64_t)i);
    check(c, 200000, 2000000, ratio[i], 20 + (uint64_t)i);
  }
  const char *spec = getenv("VIC_BENCH_PROMINENCE");
  if (spec) bench(c, spec);
  vic_ctx_destroy(c);
  return vt_finish("test_prominence_events");
}
