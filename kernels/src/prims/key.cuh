/* The one (distance, id) order of every kernel family.
 *
 * The determinism contract (same input, same seed: same lists, on every
 * card and path) rests on all kernels breaking distance ties the same way:
 * the smaller distance first, then the lower id.  Two forms of it:
 *
 *  - vick_before(da, ia, db, ib): the comparison of (distance, id) pairs
 *    kept in separate registers or arrays (warp sorts, sorted lists,
 *    arg-min butterflies);
 *  - vick_key(d, id): the pair packed in one 64-bit key whose unsigned
 *    integer order is the same order (top-k lists, radix sorts: a
 *    cub::BlockRadixSort / DeviceRadixSort of these keys is the block and
 *    device sort of the family), VICK_KEY_NONE after every key.
 *
 * For distances >= +0 and ids >= 0 both forms agree.  (They differ only on
 * -0.f, which vick_key places before +0.f; no distance is -0.f.) */
#ifndef VICK_PRIMS_KEY_CUH
#define VICK_PRIMS_KEY_CUH

#include <stdint.h>

/* (da, ia) strictly before (db, ib). */
__device__ __forceinline__ bool vick_before(float da, int32_t ia, float db, int32_t ib) {
  return da < db || (da == db && ia < ib);
}

/* Order-preserving map of a float onto uint32 (negative values flipped,
 * positive ones offset) and its inverse. */
__device__ __forceinline__ uint32_t vick_float_order(float f) {
  uint32_t u = __float_as_uint(f);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
__device__ __forceinline__ float vick_float_unorder(uint32_t u) {
  return __uint_as_float((u & 0x80000000u) ? (u & 0x7fffffffu) : ~u);
}
/* (distance, id) packed into one unsigned key whose integer order is the
 * lexicographic order: ties in distance go to the lower id. */
__device__ __forceinline__ uint64_t vick_key(float dist, uint32_t id) {
  return ((uint64_t)vick_float_order(dist) << 32) | id;
}
#define VICK_KEY_NONE 0xffffffffffffffffull

#endif
