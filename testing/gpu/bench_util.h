/* What every GPU bench program needs: a monotonic clock and raw binary
 * files read whole (the data and truth files the run scripts write), with
 * the run stopped by a message when a file is short or missing -- a bench
 * must never time garbage.  Header-only: the benches are also linked by
 * plain gcc lines (build_*_carry.sh) without CMake. */
#ifndef VIC_BENCH_UTIL_H
#define VIC_BENCH_UTIL_H

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

#endif
