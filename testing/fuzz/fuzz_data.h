/* The fixed data set the index fuzzer loads its files against, and the
 * per-process scratch file both fuzzers hand their input to the readers
 * through (they read files, not memory). */
#ifndef VIC_FUZZ_DATA_H
#define VIC_FUZZ_DATA_H

#include "vicinity.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { FUZZ_N = 96, FUZZ_D = 4 };

/* Deterministic points in [0, 1)^4 (a fixed linear congruential stream). */
static inline void fuzz_points(float *out) {
  uint64_t s = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < FUZZ_N * FUZZ_D; ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    out[i] = (float)(s >> 40) / (float)(1u << 24);
  }
}

/* "$TMPDIR/vic_fuzz_<pid><suffix>"; /dev/shm when present keeps it off the disk. */
static inline const char *fuzz_scratch(const char *suffix, char *buf, size_t size) {
  const char *dir = getenv("TMPDIR");
  if (!dir || !*dir) dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  snprintf(buf, size, "%s/vic_fuzz_%d%s", dir, (int)getpid(), suffix);
  return buf;
}

static inline int fuzz_write(const char *path, const uint8_t *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  int ok = fwrite(data, 1, size, f) == size;
  return fclose(f) == 0 && ok ? 0 : -1;
}

#endif
