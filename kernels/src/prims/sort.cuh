/* The warp sort of every kernel family: 32 (distance, id) entries, one per
 * lane, sorted ascending in vick_before order by a bitonic network in
 * registers (no shared memory, no barrier but the shuffles).  Any number of
 * payload values ride along with their entry.
 *
 * With distinct (distance, id) pairs the result is the one sorted order, so
 * any correct sort gives the same lanes; the network is also the one all
 * families used before, so entries that compare equal land where they did.
 *
 * Larger sorts: cub::WarpMergeSort for several entries per lane (see
 * grnnd_common.cuh), cub::BlockRadixSort / DeviceRadixSort over vick_key
 * keys (key.cuh) for a block or a device. */
#ifndef VICK_PRIMS_SORT_CUH
#define VICK_PRIMS_SORT_CUH

#include "key.cuh"
#include "warp.cuh"

/* The partner's value of p when this lane takes the partner's entry. */
template <typename P>
__device__ __forceinline__ void vick_sort_carry(P &p, int j, bool take) {
  P o = __shfl_xor_sync(VICK_FULL_MASK, p, j);
  if (take) p = o;
}

/* Ascending sort of the warp's (d, id) entries, lane t ends with the t-th;
 * payload... move with their entry.  Every lane of the warp must call. */
template <typename... P>
__device__ __forceinline__ void vick_warp_sort(float &d, int32_t &id, P &...payload) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int k = 2; k <= 32; k <<= 1) {
#pragma unroll
    for (int j = k >> 1; j > 0; j >>= 1) {
      float od = __shfl_xor_sync(VICK_FULL_MASK, d, j);
      int32_t oi = __shfl_xor_sync(VICK_FULL_MASK, id, j);
      bool want_min = ((lane & j) == 0) == ((lane & k) == 0);
      bool take = want_min ? vick_before(od, oi, d, id) : vick_before(d, id, od, oi);
      (vick_sort_carry(payload, j, take), ...);
      if (take) { d = od; id = oi; }
    }
  }
}

/* The same network over one packed 64-bit key per lane (vick_key, or a
 * key with flag bits: the integer order decides), lane t ends with the
 * t-th smallest. */
__device__ __forceinline__ unsigned long long vick_warp_sort_key(unsigned long long key, int lane) {
#pragma unroll
  for (int k = 2; k <= 32; k <<= 1)
#pragma unroll
    for (int j = k >> 1; j > 0; j >>= 1) {
      const unsigned long long o = __shfl_xor_sync(VICK_FULL_MASK, key, j);
      const bool low = (lane & j) == 0, up = (lane & k) == 0;
      key = low == up ? (o < key ? o : key) : (o > key ? o : key);
    }
  return key;
}

#endif
