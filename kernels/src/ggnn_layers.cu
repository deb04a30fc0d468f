// GGNN layer bookkeeping: the random partition of the rows, the exact kNN
// inside each segment of a new top layer, and the weighted reservoir
// sampling that picks the points of the next layer up.
#include "ggnn_cache.cuh"
#include "ggnn_steps.cuh"
#include "prims/rng.cuh"

#include <cub/cub.cuh>

__global__ void ggnn_k_perm_keys(uint32_t *keys, int32_t *vals, int64_t n, uint64_t seed) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  keys[i] = (uint32_t)vick_mix64(seed ^ vick_mix64((uint64_t)i));
  vals[i] = (int32_t)i;
}

__global__ void ggnn_k_gather(float *dst, const float *__restrict__ src, const int32_t *__restrict__ perm, int64_t n,
                              int d) {
  int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n * d) return;
  int64_t i = t / d;
  dst[t] = src[(int64_t)perm[i] * d + (t - i * d)];
}

static int ggnn_permute_run(vick_call *call, vick_env *env, vick_ggnn *g, const float *x_in, uint64_t seed,
                            vick_buf *cub_tmp, vick_buf *k0, vick_buf *k1, vick_buf *v0) {
  const int64_t n = g->n;
  size_t need = 0;
  VICK_TRY(vick_buf_alloc(call, env, k0, n * sizeof(uint32_t), "GGNN permutation keys"));
  VICK_TRY(vick_buf_alloc(call, env, k1, n * sizeof(uint32_t), "GGNN permutation keys"));
  VICK_TRY(vick_buf_alloc(call, env, v0, n * sizeof(int32_t), "GGNN permutation"));
  uint32_t *key0 = (uint32_t *)k0->p, *key1 = (uint32_t *)k1->p;
  int32_t *val0 = (int32_t *)v0->p;
  ggnn_k_perm_keys<<<(unsigned)((n + 255) / 256), 256>>>(key0, val0, n, seed);
  VICK_LAUNCH(call, "ggnn_k_perm_keys");
  VICK_CUDA(call, cub::DeviceRadixSort::SortPairs(nullptr, need, key0, key1, val0, g->perm, (int)n));
  VICK_TRY(vick_buf_reserve(call, env, cub_tmp, need, "GGNN sort temporaries"));
  VICK_CUDA(call, cub::DeviceRadixSort::SortPairs(cub_tmp->p, need, key0, key1, val0, g->perm, (int)n));
  ggnn_k_gather<<<(unsigned)((n * g->d + 255) / 256), 256>>>(g->x, x_in, g->perm, n, g->d);
  VICK_LAUNCH(call, "ggnn_k_gather");
  return VICK_OK;
}

int ggnn_permute(vick_call *call, vick_env *env, vick_ggnn *g, const float *x_in, uint64_t seed, vick_buf *cub_tmp) {
  vick_buf k0 = {}, k1 = {}, v0 = {};
  int rc = ggnn_permute_run(call, env, g, x_in, seed, cub_tmp, &k0, &k1, &v0);
  vick_buf_free(env, &k0);
  vick_buf_free(env, &k1);
  vick_buf_free(env, &v0);
  return rc;
}

// Segment [start, end) of layer l in layer-local ids.
__device__ static inline void ggnn_segment(int l, int64_t seg, int64_t n0, int nseg0, int s_up, int64_t *start,
                                           int64_t *end) {
  if (l == 0) {
    *start = ggnn_seg0_start(seg, n0, nseg0);
    *end = ggnn_seg0_start(seg + 1, n0, nseg0);
  } else {
    *start = seg * s_up;
    *end = *start + s_up;
  }
}

// One block per segment, one warp per point: distances to every point of
// the segment in shared memory, then each lane ranks its entries by
// (distance, id) so that the k smallest land in order without a sort.
__global__ void ggnn_k_brute(const float *__restrict__ x, int d, int k, int l, int64_t n0, int nseg0, int s_up,
                             const int32_t *__restrict__ base, int pool, int32_t *out_g, float *out_d) {
  extern __shared__ __align__(16) char smem[];
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
  const size_t d4 = ((size_t)d + 3) / 4 * 4;
  const size_t pool4 = ((size_t)pool + 3) / 4 * 4;  // keeps every warp's qv 16-byte aligned for float4
  float *qv = (float *)smem + (size_t)w * (d4 + pool4);
  float *row = qv + d4;
  int64_t start, end;
  ggnn_segment(l, blockIdx.x, n0, nseg0, s_up, &start, &end);
  const int m = (int)(end - start);
  const int T = ggnn_team(d), teams = 32 / T, tm = lane / T, tl = lane % T;
  const bool vec = (d & 3) == 0;
  for (int64_t z = start + w; z < end; z += nw) {
    int64_t bz = base ? base[z] : z;
    ggnn_load_vec(qv, x + bz * d, d);
    for (int r = 0; r < m; r += teams) {
      int j = r + tm;
      float acc = 0.f;
      if (j < m) {
        int64_t bj = base ? base[start + j] : start + j;
        const float *p = x + bj * d;
        if (vec) {
          for (int t = tl * 4; t < d; t += T * 4) {
            acc += vick_sq4(__ldg((const float4 *)(p + t)), *(const float4 *)(qv + t));
          }
        } else {
          for (int t = tl; t < d; t += T) { float u = __ldg(p + t) - qv[t]; acc += u * u; }
        }
      }
      acc = vick_group_sum(acc, T);
      if (j < m && tl == 0) row[j] = (start + j == z) ? __int_as_float(0x7f800000) : sqrtf(acc);
    }
    __syncwarp();
    const int zl = (int)(z - start);
    for (int j = lane; j < m; j += 32) {
      if (j == zl) continue;
      float dj = row[j];
      int rank = 0;
      for (int t = 0; t < m; ++t)
        if (t != zl && vick_before(row[t], t, dj, j)) rank++;
      if (rank < k) {
        out_g[z * k + rank] = (int32_t)(start + j);
        out_d[z * k + rank] = dj;
      }
    }
    for (int r = m - 1 + lane; r < k; r += 32) {
      out_g[z * k + r] = -1;
      out_d[z * k + r] = __int_as_float(0x7f800000);
    }
    __syncwarp();
  }
}

cudaError_t ggnn_brute_segments(const vick_ggnn *g, int l, int32_t *out_g, float *out_d) {
  const ggnn_layer *ly = &g->layer[l];
  int nseg0 = g->layer[0].nseg;
  int pool = l == 0 ? (int)((g->n + nseg0 - 1) / nseg0) : g->s_up;
  size_t d4 = ((size_t)g->d + 3) / 4 * 4;
  int warps = 4;
  size_t bytes = (size_t)warps * (d4 + ((size_t)pool + 3) / 4 * 4) * sizeof(float);
  cudaError_t e = cudaFuncSetAttribute(ggnn_k_brute, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
  if (e != cudaSuccess) return e;
  ggnn_k_brute<<<ly->nseg, warps * 32, bytes>>>(g->x, g->d, g->k, l, g->n, nseg0, g->s_up, ly->base, pool, out_g,
                                                 out_d);
  return cudaGetLastError();
}

// Efraimidis-Spirakis: key = log(u) / w, keep the s largest keys; a point
// in a sparse region (large d_nn1) is more likely to represent it above.
#define GGNN_SEL_THREADS 256
#define GGNN_SEL_ITEMS 8
__global__ void ggnn_k_select(int l, int k, int64_t n0, int nseg0, int g, int s_up, const float *__restrict__ dist_lo,
                              const int32_t *__restrict__ base_lo, uint64_t seed, int32_t *down, int32_t *base) {
  typedef cub::BlockRadixSort<float, GGNN_SEL_THREADS, GGNN_SEL_ITEMS, int32_t> Sort;
  __shared__ typename Sort::TempStorage tmp;
  int64_t seg = blockIdx.x, cstart, cend, e0, e1;
  ggnn_segment(l - 1, seg * g, n0, nseg0, s_up, &cstart, &e0);
  ggnn_segment(l - 1, seg * g + g - 1, n0, nseg0, s_up, &e1, &cend);
  const int m = (int)(cend - cstart);
  float key[GGNN_SEL_ITEMS];
  int32_t val[GGNN_SEL_ITEMS];
#pragma unroll
  for (int i = 0; i < GGNN_SEL_ITEMS; ++i) {
    int idx = threadIdx.x * GGNN_SEL_ITEMS + i;
    if (idx < m) {
      int64_t p = cstart + idx;
      float w = fmaxf(dist_lo[p * k], 1e-12f);
      if (!(w < 3e38f)) w = 3e38f;  // no neighbour: +inf distance, cap the weight
      uint64_t h = vick_mix64(seed ^ vick_mix64(((uint64_t)l << 40) ^ (uint64_t)p));
      float u = ((float)(h >> 40) + 1.0f) * (1.0f / 16777216.0f);  // (0, 1]
      key[i] = logf(u) / w;
      val[i] = (int32_t)p;
    } else {
      key[i] = -__int_as_float(0x7f800000);
      val[i] = -1;
    }
  }
  Sort(tmp).SortDescending(key, val);
#pragma unroll
  for (int i = 0; i < GGNN_SEL_ITEMS; ++i) {
    int rank = threadIdx.x * GGNN_SEL_ITEMS + i;
    if (rank < s_up) {
      int64_t o = seg * s_up + rank;
      down[o] = val[i];  // the plan keeps s_up <= m, so val[i] >= 0 here
      base[o] = val[i] < 0 ? -1 : (base_lo ? base_lo[val[i]] : val[i]);
    }
  }
}

cudaError_t ggnn_select(vick_ggnn *g, int l, uint64_t seed) {
  ggnn_layer *ly = &g->layer[l];
  const ggnn_layer *lo = &g->layer[l - 1];
  ggnn_k_select<<<ly->nseg, GGNN_SEL_THREADS>>>(l, g->k, g->n, g->layer[0].nseg, g->g, g->s_up, lo->dist, lo->base,
                                                 seed, ly->down, ly->base);
  return cudaGetLastError();
}

__global__ void ggnn_k_dnn1(const float *__restrict__ dist, int k, int64_t n, float *dnn1) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dnn1[i] = dist[i * k];
}

cudaError_t ggnn_extract_dnn1(vick_ggnn *g) {
  ggnn_k_dnn1<<<(unsigned)((g->n + 255) / 256), 256>>>(g->layer[0].dist, g->k, g->n, g->dnn1);
  return cudaGetLastError();
}
