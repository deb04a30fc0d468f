/* The visited set of the graph searches: a per-warp open-addressing hash
 * set of non-negative ids in shared memory (linear probing, Fibonacci
 * hashing so that consecutive ids spread).  One or two probes per id, all
 * lanes at once, instead of a scan of the lists per candidate.
 *
 * The caller owns the table (1 << bits int32 slots), clears it with
 * vick_visited_clear and keeps it at most half full (rebuilding it from
 * what must stay visible when it would pass that): vick_visited_add then
 * always terminates. */
#ifndef VICK_PRIMS_VISITED_CUH
#define VICK_PRIMS_VISITED_CUH

#include <stdint.h>

#define VICK_VISITED_EMPTY (-1)

__device__ __forceinline__ uint32_t vick_visited_slot(int32_t id, int bits) {
  return ((uint32_t)id * 2654435761u) >> (32 - bits);
}

/* Warp-cooperative clear of the 1 << bits slots (lane: 0..31). */
__device__ __forceinline__ void vick_visited_clear(int32_t *set, int bits, int lane) {
  for (int j = lane; j < (1 << bits); j += 32) set[j] = VICK_VISITED_EMPTY;
}

/* Adds id (>= 0); true when it was not there.  Lanes may call it at once
 * with different or equal ids: the CAS decides which one adds. */
__device__ __forceinline__ bool vick_visited_add(int32_t *set, int bits, int32_t id) {
  const uint32_t mask = (1u << bits) - 1u;
  volatile int32_t *vs = set;
  for (uint32_t h = vick_visited_slot(id, bits);; h = (h + 1u) & mask) {
    int32_t v = vs[h];
    if (v == id) return false;
    if (v == VICK_VISITED_EMPTY) {
      v = atomicCAS(set + h, VICK_VISITED_EMPTY, id);
      if (v == VICK_VISITED_EMPTY) return true;
      if (v == id) return false;
    }
  }
}

#endif
