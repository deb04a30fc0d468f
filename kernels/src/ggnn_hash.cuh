// The duplicate check of the GGNN query cache: a per-warp open-addressing
// hash set in shared memory of every id whose distance was computed since
// the set was last rebuilt.  It replaces one serial scan of best, prioq
// and the visited ring per lane and fetch (the cost that dominated both
// the build and the queries) by one or two probes per candidate, all lanes
// at once.  A computed id that was not kept stays in the set as well: the
// stopping bound only tightens, so it could never qualify again and its
// distance is not worth recomputing.
//
// When the set would pass half full it is rebuilt from best, prioq and the
// newest visited points, so it always holds every id of best and prioq (no
// id enters either twice) and the visited ring keeps its FIFO role.
#ifndef VIC_GGNN_HASH_CUH
#define VIC_GGNN_HASH_CUH

#include <stdint.h>

#define GGNN_HASH_EMPTY (-1)

__device__ __forceinline__ uint32_t ggnn_hash_slot(int32_t id, int bits) {
  return ((uint32_t)id * 2654435761u) >> (32 - bits);  // Fibonacci hashing: spreads consecutive ids
}

// Adds id (>= 0) to the set; true when it was not there.  Lanes may call it
// concurrently with different or equal ids: the CAS decides which one adds.
// Terminates because the set is kept at most half full.
__device__ __forceinline__ bool ggnn_hash_add(int32_t *hs, int bits, int32_t id) {
  const uint32_t mask = (1u << bits) - 1u;
  volatile int32_t *vs = hs;
  for (uint32_t h = ggnn_hash_slot(id, bits);; h = (h + 1u) & mask) {
    int32_t v = vs[h];
    if (v == id) return false;
    if (v == GGNN_HASH_EMPTY) {
      v = atomicCAS(hs + h, GGNN_HASH_EMPTY, id);
      if (v == GGNN_HASH_EMPTY) return true;
      if (v == id) return false;
    }
  }
}

__device__ __forceinline__ int ggnn_warp_sum(int v) {
  for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffffu, v, off);
  return v;
}

#endif
