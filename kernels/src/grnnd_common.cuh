/* Device helpers of the GRNND / TSDG / graph-search kernels: the
 * warp-cooperative squared distance (GRNND Alg. 5) and a warp sort that
 * drops repeated keys (CUB's WarpMergeSort).  Random numbers, the warp
 * sort of one key per lane and the warp sums are the prims' (prims/). */
#ifndef VICK_GRNND_COMMON_CUH
#define VICK_GRNND_COMMON_CUH

#include "common.cuh"
#include "prims/rng.cuh"
#include "prims/sort.cuh"

#include <cub/warp/warp_merge_sort.cuh>

#define GR_FULL 0xffffffffu

/* A lane's share of a squared distance between rows of one n x d array:
 * float4 slices lane, lane + 32, ... when d % 4 == 0 and the rows are
 * 16-byte aligned (every row of a cudaMalloc'd array then is), else the
 * dimensions lane, lane + 32, ...  gr_warp_l2 and GRNND's batched
 * distances (grnnd_build.cu) both sum these shares in the same butterfly
 * tree, so a pair gives the same bits on every path.
 *
 * The float4 share is a split of its own, not prims/dist.cuh's scalar
 * share: four fused terms per slice in slice order give other bits than
 * one term per dimension, and GRNND's and TSDG's graphs (which keep a
 * candidate by comparing such distances) and the tests' fixed results
 * were made with it; the scalar fallback is the prims' share. */
__device__ __forceinline__ bool gr_rows4(const float *a, const float *b, int d) {
  return (d & 3) == 0 && (((uintptr_t)a | (uintptr_t)b) & 15) == 0;
}
__device__ __forceinline__ float gr_share4(float4 a, float4 b, float s) {
  const float t0 = a.x - b.x, t1 = a.y - b.y, t2 = a.z - b.z, t3 = a.w - b.w;
  s = fmaf(t0, t0, s);
  s = fmaf(t1, t1, s);
  s = fmaf(t2, t2, s);
  return fmaf(t3, t3, s);
}

/* Squared distance of two rows by one warp (Alg. 5): lane shares, then a
 * butterfly; every lane gets the same bits (each node of the tree adds the
 * same two values, in either order). */
__device__ __forceinline__ float gr_warp_l2(const float *a, const float *b, int d, int lane) {
  float s = 0.f;
  if (gr_rows4(a, b, d)) {
    const float4 *a4 = (const float4 *)a, *b4 = (const float4 *)b;
    for (int j = lane; j < (d >> 2); j += 32) s = gr_share4(__ldg(a4 + j), __ldg(b4 + j), s);
  } else {
    s = vick_share_l2(a, b, d, lane, 32);
  }
  return vick_warp_sum(s);
}

/* Squared distance by one thread (a: shared memory, read by every lane at
 * once; b: a row in global memory): float4 loads when aligned, so a warp
 * computes 32 distances with many loads in flight instead of 32 warp
 * reductions one after another.  Two interleaved accumulators: bits of
 * their own (not prims/dist.cuh's), which the graph searches' candidate
 * order and their repeatable results depend on. */
__device__ __forceinline__ float gr_lane_l2(const float *a, const float *b, int d) {
  float s0 = 0.f, s1 = 0.f;
  if ((d & 3) == 0 && ((uintptr_t)a & 15) == 0 && ((uintptr_t)b & 15) == 0) {
    const float4 *a4 = (const float4 *)a, *b4 = (const float4 *)b;
#pragma unroll 8
    for (int j = 0; j < (d >> 2); ++j) {
      const float4 x = a4[j], y = __ldg(b4 + j);
      float t0 = x.x - y.x, t1 = x.y - y.y, t2 = x.z - y.z, t3 = x.w - y.w;
      s0 = fmaf(t0, t0, s0);
      s1 = fmaf(t1, t1, s1);
      s0 = fmaf(t2, t2, s0);
      s1 = fmaf(t3, t3, s1);
    }
  } else {
    for (int j = 0; j < d; ++j) {
      float t = a[j] - __ldg(b + j);
      s0 = fmaf(t, t, s0);
    }
  }
  return s0 + s1;
}

/* Keys carry a flag in bit 31 of the id half (ids < 2^31): two keys are the
 * same entry when they agree apart from it. */
#define GR_FLAG 0x80000000ull
__device__ __forceinline__ unsigned long long gr_plain(unsigned long long k) { return k & ~GR_FLAG; }
/* (distance, id) first, the flag last: the copies of one entry sort next to
 * each other even when another id has exactly the same distance */
struct gr_less_plain {
  __device__ __forceinline__ bool operator()(const unsigned long long &a, const unsigned long long &b) const {
    const unsigned long long pa = gr_plain(a), pb = gr_plain(b);
    return pa != pb ? pa < pb : a < b;
  }
};
__device__ __forceinline__ uint32_t gr_id(unsigned long long k) { return (uint32_t)k & 0x7fffffffu; }

/* Sort the IPT*32 keys s[0..) of one warp ascending (VICK_KEY_NONE last),
 * drop repeated entries (a repeat's flag is ORed into the copy kept) and
 * compact: s[0..return) are the distinct keys, the rest VICK_KEY_NONE. */
template <int IPT>
__device__ __forceinline__ int gr_warp_sort_unique(unsigned long long *s,
                                                   typename cub::WarpMergeSort<unsigned long long, IPT, 32>::TempStorage &tmp,
                                                   int lane) {
  unsigned long long it[IPT];
#pragma unroll
  for (int i = 0; i < IPT; ++i) it[i] = s[lane * IPT + i];
  cub::WarpMergeSort<unsigned long long, IPT, 32>(tmp).Sort(it, gr_less_plain());
  __syncwarp();
  /* blocked arrangement: lane holds positions lane*IPT .. lane*IPT+IPT-1 */
  unsigned long long prev = __shfl_up_sync(GR_FULL, it[IPT - 1], 1);
  unsigned long long next = __shfl_down_sync(GR_FULL, it[0], 1);
  if (lane == 0) prev = VICK_KEY_NONE;
  if (lane == 31) next = VICK_KEY_NONE;
  bool keep[IPT];
  int mine = 0;
#pragma unroll
  for (int i = 0; i < IPT; ++i) {
    unsigned long long p = i == 0 ? prev : it[i - 1];
    unsigned long long nx = i == IPT - 1 ? next : it[i + 1];
    keep[i] = it[i] != VICK_KEY_NONE && (p == VICK_KEY_NONE || gr_plain(p) != gr_plain(it[i]));
    if (keep[i] && nx != VICK_KEY_NONE && gr_plain(nx) == gr_plain(it[i])) it[i] |= (nx & GR_FLAG);
    mine += keep[i];
  }
  int incl = mine;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    int t = __shfl_up_sync(GR_FULL, incl, o);
    if (lane >= o) incl += t;
  }
  int total = __shfl_sync(GR_FULL, incl, 31);
  int pos = incl - mine;
  __syncwarp();
#pragma unroll
  for (int i = 0; i < IPT; ++i)
    if (keep[i]) s[pos++] = it[i];
  __syncwarp();
  for (int i = total + lane; i < IPT * 32; i += 32) s[i] = VICK_KEY_NONE;
  __syncwarp();
  return total;
}

/* A host-to-device copy on a side stream, ordered before the work queued
 * on env->stream after it, while the work queued there before it (the
 * builds' clears) runs beside the copy. */
static inline int gr_upload_beside(vick_call *call, vick_env *env, void *dst, const void *src, size_t bytes) {
  cudaStream_t side = NULL;
  cudaEvent_t done = NULL;
  const double t0 = vick_now();
  cudaError_t e = cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  if (e == cudaSuccess) e = cudaEventCreateWithFlags(&done, cudaEventDisableTiming);
  if (e == cudaSuccess) e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, side);
  if (e == cudaSuccess) e = cudaEventRecord(done, side);
  if (e == cudaSuccess) e = cudaStreamWaitEvent(env->stream, done, 0);
  if (e == cudaSuccess) e = cudaStreamSynchronize(side); /* the source may go once this returns */
  if (done) cudaEventDestroy(done);
  if (side) cudaStreamDestroy(side);
  if (e != cudaSuccess) return vick_cuda_fail(call, e, "upload beside the clears", __FILE__, __LINE__);
  call->seconds_transfer += vick_now() - t0;
  return VICK_OK;
}

/* The graph's mean degree from its edge count on the device (one 8-byte
 * counter the final kernels of GRNND and TSDG add to); nothing without
 * mean_degree. */
static inline int gr_mean_degree(vick_call *call, vick_env *env, const void *edges, int64_t n, double *mean_degree) {
  if (!mean_degree) return VICK_OK;
  unsigned long long e = 0;
  VICK_TRY(vick_copy_to_host(call, env, &e, edges, 8));
  *mean_degree = (double)e / (double)n;
  return VICK_OK;
}

#endif
