/* The one random-number primitive of the kernels: the splitmix64
 * finaliser, used counter-based (a hash of seed and position), so no
 * generator state is shared between threads and a result depends only on
 * the seed and the position, never on scheduling.
 *
 * vick_mix64(z) is splitmix64's output step applied to z + golden gamma:
 * the value a splitmix64 generator whose state was z returns next.  It is
 * __host__ __device__ so host-side seeding (e.g. of per-shard or per-layer
 * seeds) draws the same numbers as the device.  The core's C generator
 * (core/src/internal.h, vic__rng_next) is the same function over its own
 * state; the two must stay equal. */
#ifndef VICK_PRIMS_RNG_CUH
#define VICK_PRIMS_RNG_CUH

#include <stdint.h>

__host__ __device__ __forceinline__ uint64_t vick_mix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* A number for the position (a, b, c) of a seeded stream: nested mixes,
 * so neighbouring positions give unrelated numbers. */
__host__ __device__ __forceinline__ uint64_t vick_rand3(uint64_t seed, uint64_t a, uint64_t b, uint64_t c) {
  return vick_mix64(seed ^ vick_mix64(a ^ vick_mix64(b ^ vick_mix64(c))));
}

#endif
