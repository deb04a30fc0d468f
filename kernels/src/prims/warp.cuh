/* Warp reductions of every kernel family.
 *
 * Floating-point sums keep one fixed butterfly (xor offsets from the
 * widest down): every lane of the group ends with the same bits (each node
 * of the tree adds the same two values, in either order), and a distance
 * summed this way is the same number on every path that uses the same lane
 * shares.  cub::WarpReduce would associate the terms in another order (and
 * leave the result in lane 0 only), so float sums do not use it: switching
 * would change results in the last bit.  Integer sums have no order to
 * keep and come from cub::WarpReduce (one redux.sync on sm_80+).
 *
 * Groups: GROUP lanes (a power of two <= 32) aligned at multiples of GROUP
 * reduce among themselves; every lane of the warp must take part. */
#ifndef VICK_PRIMS_WARP_CUH
#define VICK_PRIMS_WARP_CUH

#include "key.cuh"

#include <cub/warp/warp_reduce.cuh>
#include <stdint.h>

#define VICK_FULL_MASK 0xffffffffu

/* Sum of v over each aligned group of GROUP lanes, in every lane. */
template <int GROUP>
__device__ __forceinline__ float vick_group_sum(float v) {
#pragma unroll
  for (int off = GROUP / 2; off > 0; off >>= 1) v += __shfl_xor_sync(VICK_FULL_MASK, v, off);
  return v;
}
/* The same with the group width known only at run time (group <= 32). */
__device__ __forceinline__ float vick_group_sum(float v, int group) {
  for (int off = group / 2; off > 0; off >>= 1) v += __shfl_xor_sync(VICK_FULL_MASK, v, off);
  return v;
}
__device__ __forceinline__ float vick_warp_sum(float v) { return vick_group_sum<32>(v); }

/* Sum of an int over the warp, in every lane. */
__device__ __forceinline__ int vick_warp_sum(int v) {
  typedef cub::WarpReduce<int> reduce;
  typename reduce::TempStorage unused; /* the shuffle / redux paths keep no shared state */
  return __shfl_sync(VICK_FULL_MASK, reduce(unused).Sum(v), 0);
}

/* The smallest 64-bit key (key.cuh's packed order) over the warp, in
 * every lane. */
__device__ __forceinline__ unsigned long long vick_warp_min_key(unsigned long long key) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    const unsigned long long o = __shfl_xor_sync(VICK_FULL_MASK, key, off);
    key = o < key ? o : key;
  }
  return key;
}

/* The (distance, id) smallest in vick_before order over the warp, in every
 * lane (ties in distance to the lower id: the same pair whatever the lane
 * layout). */
__device__ __forceinline__ void vick_warp_argmin(float &d, int32_t &id) {
#pragma unroll
  for (int off = 16; off > 0; off >>= 1) {
    float od = __shfl_xor_sync(VICK_FULL_MASK, d, off);
    int32_t oi = __shfl_xor_sync(VICK_FULL_MASK, id, off);
    if (vick_before(od, oi, d, id)) { d = od; id = oi; }
  }
}

#endif
