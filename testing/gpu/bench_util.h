/* What every GPU bench program needs: a monotonic clock, raw binary
 * files read whole (the data and truth files the run scripts write), with
 * the run stopped by a message when a file is short or missing -- a bench
 * must never time garbage -- and the recall of lists against exact ones.
 * Header-only: the benches are also linked by
 * plain gcc lines (build_*_carry.sh) without CMake. */
#ifndef VIC_BENCH_UTIL_H
#define VIC_BENCH_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* bytes from dir/name (or from name alone when dir is NULL); exits 2 when
 * they cannot be read. */
static inline void *bench_load(const char *dir, const char *name, size_t bytes) {
  char path[1024];
  snprintf(path, sizeof path, "%s%s%s", dir ? dir : "", dir ? "/" : "", name);
  FILE *f = fopen(path, "rb");
  void *b = malloc(bytes ? bytes : 1);
  if (!f || !b || fread(b, 1, bytes, f) != bytes) {
    fprintf(stderr, "cannot read %zu bytes from %s\n", bytes, path);
    exit(2);
  }
  fclose(f);
  return b;
}

/* Recall of c against c: the share of each row's first c truth ids
 * (truth rows of tstride ids) found among the first c of its list (lists
 * of stride k >= c; list row which[i], or i when which is NULL).  The
 * C@c of GGNN's paper and the recall@c of the ANN benchmarks. */
static inline double bench_hits(const int64_t *ids, int k, const int32_t *truth, int tstride, int64_t rows,
                                const int32_t *which, int c) {
  int64_t hit = 0;
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t *a = ids + (which ? (int64_t)which[i] : i) * k;
    for (int t = 0; t < c; ++t)
      for (int u = 0; u < c; ++u)
        if (a[u] == truth[i * tstride + t]) { hit++; break; }
  }
  return (double)hit / (double)(rows * c);
}

#endif
