/* The distance module of the kernels: squared Euclidean (L2) distances and
 * inner products in two arithmetic contracts.
 *
 * Exact (vick_*_exact): the CPU's arithmetic.  The core's CPU methods
 * accumulate in float, in dimension order, without fused multiply-adds
 * (x86-64 baseline); these do the same with explicit round-to-nearest
 * intrinsics so that nvcc cannot contract them into FMAs, and the GPU's
 * exact distances are bit-identical to the CPU's.  Used where a GPU result
 * must equal the CPU reference (brute-force re-ranking, grid, density).
 *
 * Fast: fused multiply-adds and a split of the dimensions over lanes, for
 * graph construction and search where only the order of candidates
 * matters.  Each split is one fixed arithmetic, so a pair gives the same
 * bits on every path that uses the same split:
 *  - lane share (vick_share_l2): the part of a distance one lane
 *    accumulates over dimensions first, first + stride, ...;
 *  - warp (vick_warp_l2): the shares of 32 lanes summed by the butterfly of
 *    warp.cuh, every lane gets the distance;
 *  - group: GROUP lanes per candidate (several candidates per warp, more
 *    row loads in flight): shares over the group's stride, summed with
 *    vick_group_sum<GROUP> (warp.cuh); vick_sq4 is the four-term step of a
 *    float4 share.
 * Lanes must read rows that exist: callers clamp a lane past the end to a
 * valid row and discard its result.  GRNND's float4 lane shares
 * (grnnd_common.cuh: gr_share4, the aligned path of gr_warp_l2,
 * gr_lane_l2) are splits with bits of their own, kept there (the reason
 * is given next to them); their scalar path and sums are these. */
#ifndef VICK_PRIMS_DIST_CUH
#define VICK_PRIMS_DIST_CUH

#include "warp.cuh"

#include <stdint.h>

/* ------------------------------------------------------------ exact */
__device__ __forceinline__ float vick_l2sq_exact(const float *a, const float *b, int d) {
  float s = 0.f;
  for (int j = 0; j < d; ++j) {
    float t = __fsub_rn(a[j], b[j]);
    s = __fadd_rn(s, __fmul_rn(t, t));
  }
  return s;
}
__device__ __forceinline__ float vick_neg_dot_exact(const float *a, const float *b, int d) {
  float s = 0.f;
  for (int j = 0; j < d; ++j) s = __fadd_rn(s, __fmul_rn(a[j], b[j]));
  return -s;
}
/* Minimum-image difference of one coordinate, as the CPU's vic__l2sq does:
 * |a-b| reduced modulo L, then L - t when over L/2.  L <= 0: open. */
__device__ __forceinline__ float vick_min_image(float a, float b, float L) {
  float t = fabsf(__fsub_rn(a, b));
  if (L > 0.f) {
    t = fmodf(t, L);
    if (t > 0.5f * L) t = __fsub_rn(L, t);
  }
  return t;
}
/* vic__l2sq with a box: minimum image per dimension (box[j] <= 0: open). */
__device__ __forceinline__ float vick_l2sq_exact_box(const float *a, const float *b, int d, const float *box) {
  float s = 0.f;
  for (int j = 0; j < d; ++j) {
    float t = vick_min_image(a[j], b[j], box[j]);
    s = __fadd_rn(s, __fmul_rn(t, t));
  }
  return s;
}

/* ------------------------------------------------------------- fast */
/* A lane's share over dimensions first, first + stride, ... < d. */
__device__ __forceinline__ float vick_share_l2(const float *a, const float *b, int d, int first, int stride) {
  float s = 0.f;
  for (int j = first; j < d; j += stride) {
    float t = a[j] - b[j];
    s = fmaf(t, t, s);
  }
  return s;
}
/* Sum of the four squared differences of a float4 slice. */
__device__ __forceinline__ float vick_sq4(float4 a, float4 b) {
  float t0 = a.x - b.x, t1 = a.y - b.y, t2 = a.z - b.z, t3 = a.w - b.w;
  return t0 * t0 + t1 * t1 + t2 * t2 + t3 * t3;
}
/* Squared distance of two rows by a whole warp: scalar lane shares
 * (coalesced reads), then the butterfly; every lane gets the result. */
__device__ __forceinline__ float vick_warp_l2(const float *a, const float *b, int d, int lane) {
  return vick_warp_sum(vick_share_l2(a, b, d, lane, 32));
}

#endif
