/* GNND kernels (Wang, Zhao, Zeng 2022, Alg. 1-3) and their launchers.
 *
 * A k-NN list of K entries is kept as K/32 segments of 32 entries, each
 * sorted by (distance, id) and guarded by its own spin-lock (Sec. 4.3);
 * neighbour v always lives in segment v % nseg, so a duplicate check only
 * needs that one segment and one warp performs an insertion.  Kernels are
 * launched from this file only (CUDA 13 keeps kernel stubs file-local). */
#include "gnnd_internal.h"
#include "prims/dist.cuh"
#include "prims/key.cuh"
#include "prims/rng.cuh"
#include "prims/sort.cuh"
#include "prims/warp.cuh"

#include <math.h>
#include <stdint.h>

#define FULL VICK_FULL_MASK

__device__ __forceinline__ const float *row_of(const gnnd_dev &g, int64_t id) {
  return id < g.nA ? g.rowsA + id * g.d : g.rowsB + (id - g.nA) * g.d;
}

/* Coordinate dim of row id: half-precision rows of a compact build, else fp32. */
__device__ __forceinline__ float row_at(const gnnd_dev &g, int64_t id, int dim) {
  if (g.hrowsA) return __half2float(id < g.nA ? g.hrowsA[id * g.d + dim] : g.hrowsB[(id - g.nA) * g.d + dim]);
  return row_of(g, id)[dim];
}

/* Squared distance of rows u and v by one warp; every lane gets it. */
__device__ __forceinline__ float pair_l2(const gnnd_dev &g, int64_t u, int64_t v, int lane) {
  if (!g.hrowsA) return vick_warp_l2(row_of(g, u), row_of(g, v), g.d, lane);
  float s = 0.f;
  for (int j = lane; j < g.d; j += 32) {
    float q = row_at(g, u, j) - row_at(g, v, j);
    s = fmaf(q, q, s);
  }
  return vick_warp_sum(s);
}

/* GGM compares only pairs from different sub-graphs (Alg. 3, line 11);
 * a sample never pairs with itself. */
__device__ __forceinline__ bool pair_skipped(const gnnd_dev &g, int a, int b) {
  return a == b || (g.split > 0 && ((a < g.split) == (b < g.split)));
}


/* InsertIntoNNList with one spin-lock per segment (Sec. 4.3): the warp
 * finds the place by ballot and shifts the tail by one lane. */
__device__ int warp_insert(const gnnd_dev &g, int u, int v, float dv, int lane) {
  int s = v % g.nseg;
  int64_t base = (int64_t)u * g.K + (int64_t)s * GNND_SEG;
  volatile int *vid = g.ids + base;
  volatile float *vd = g.dist + base;
  volatile unsigned char *vf = g.flags + base;
  /* cheap reject before locking (re-checked under the lock); lane 0's read
   * is broadcast so the whole warp takes the same branch */
  if (dv > __shfl_sync(FULL, (float)vd[GNND_SEG - 1], 0)) return 0;
  int *lock = g.locks + (int64_t)u * g.nseg + s;
  if (lane == 0) {
    while (atomicCAS(lock, 0, 1) != 0) __nanosleep(32);
  }
  __syncwarp();
  __threadfence();
  int my_id = vid[lane];
  float my_d = vd[lane];
  int my_f = vf[lane];
  bool dup = __any_sync(FULL, my_id == v);
  int pos = __popc(__ballot_sync(FULL, vick_before(my_d, my_id, dv, v)));
  int ok = !dup && pos < GNND_SEG;
  int up_id = __shfl_up_sync(FULL, my_id, 1);
  float up_d = __shfl_up_sync(FULL, my_d, 1);
  int up_f = __shfl_up_sync(FULL, my_f, 1);
  if (ok && lane >= pos) {
    vid[lane] = lane == pos ? v : up_id;
    vd[lane] = lane == pos ? dv : up_d;
    vf[lane] = (unsigned char)(lane == pos ? 1 : up_f);
  }
  __threadfence();
  __syncwarp();
  if (lane == 0) atomicExch(lock, 0);
  return ok;
}

/* Fill the empty slots of every segment with random ids (one warp per
 * segment), without repeats inside a segment, then sort it.  Initial
 * graph: all slots.  GGM: the freed far half, from the other side. */
__global__ void fill_random_kernel(gnnd_dev g, int from_scratch) {
  int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  int lane = threadIdx.x & 31;
  if (w >= g.n * g.nseg) return; /* whole warp leaves together */
  int u = (int)(w / g.nseg), s = (int)(w % g.nseg);
  int64_t e = (int64_t)u * g.K + (int64_t)s * GNND_SEG + lane;
  int my_id = from_scratch ? GNND_EMPTY : g.ids[e];
  float my_d = from_scratch ? INFINITY : g.dist[e];
  int my_f = from_scratch ? 0 : g.flags[e];
  int64_t lo = 0, hi = g.n;
  if (g.split > 0) {
    if (u < g.split) lo = g.split; else hi = g.split;
  }
  /* ids congruent to s modulo nseg inside [lo, hi) */
  int64_t first = lo + (((int64_t)s - lo % g.nseg) % g.nseg + g.nseg) % g.nseg;
  int64_t count = first < hi ? (hi - first + g.nseg - 1) / g.nseg : 0;
  bool filled = my_id != GNND_EMPTY, fresh = false;
  for (int attempt = 0; attempt < 8; ++attempt) {
    bool need = !filled;
    if (!__any_sync(FULL, need && count > 0)) break;
    int cand = my_id;
    if (need) {
      cand = GNND_EMPTY;
      if (count > 0) {
        uint64_t h = vick_mix64(g.seed ^ vick_mix64(((uint64_t)u << 20) ^ ((uint64_t)s << 8) ^ (uint64_t)lane ^
                                          ((uint64_t)attempt << 52) ^ ((uint64_t)from_scratch << 60)));
        int64_t v = first + (int64_t)g.nseg * (int64_t)(h % (uint64_t)count);
        if (v != u) cand = (int)v;
      }
    }
    unsigned same = __match_any_sync(FULL, cand);
    unsigned filled_mask = __ballot_sync(FULL, filled);
    if (need && cand != GNND_EMPTY && (same & filled_mask) == 0 && __ffs(same) - 1 == lane) {
      my_id = cand;
      filled = fresh = true;
    }
  }
  unsigned todo = __ballot_sync(FULL, fresh);
  while (todo) {
    int src = __ffs(todo) - 1;
    todo &= todo - 1;
    int v = __shfl_sync(FULL, my_id, src);
    float dd = pair_l2(g, u, v, lane);
    if (lane == src) { my_d = dd; my_f = 1; }
  }
  vick_warp_sort(my_d, my_id, my_f); /* one segment, ascending, flags along */
  g.ids[e] = my_id;
  g.dist[e] = my_d;
  g.flags[e] = (unsigned char)my_f;
  if (lane == 0) g.locks[(int64_t)u * g.nseg + s] = 0;
}

/* GGM start (Alg. 3 lines 1-9): keep the nearest K/2 entries of each flat
 * list as OLD in their segments, set the rest aside in extra. */
__global__ void merge_split_kernel(gnnd_dev g, const int32_t *flat_ids, const float *flat_dist) {
  __shared__ int s_id[256];
  int64_t u = blockIdx.x;
  int t = threadIdx.x;
  int64_t e = u * g.K + t;
  int id = flat_ids[e];
  float d = flat_dist[e];
  if (id < 0) { id = GNND_EMPTY; d = INFINITY; }
  s_id[t] = id;
  g.ids[e] = GNND_EMPTY;
  g.dist[e] = INFINITY;
  g.flags[e] = 0;
  __syncthreads();
  int half = g.K / 2;
  bool kept = t < half && id != GNND_EMPTY;
  int slot = 0;
  if (kept) {
    int seg = id % g.nseg;
    for (int j = 0; j < t; ++j) slot += s_id[j] != GNND_EMPTY && s_id[j] % g.nseg == seg;
    if (slot < GNND_SEG) {
      int64_t at = u * g.K + (int64_t)seg * GNND_SEG + slot;
      g.ids[at] = id;
      g.dist[at] = d;
    } else {
      kept = false;
    }
  }
  g.extra[e] = kept ? GNND_EMPTY : id;
  g.extra_dist[e] = kept ? INFINITY : d;
}

/* ParallelSample (Sec. 4.1): the nearest p NEW and p OLD entries of each
 * list become its forward samples; sampled NEW entries turn OLD. */
__global__ void sample_kernel(gnnd_dev g) {
  __shared__ int s_id[256];
  __shared__ float s_d[256];
  __shared__ unsigned char s_f[256];
  int64_t u = blockIdx.x;
  int t = threadIdx.x;
  int64_t e = u * g.K + t;
  int id = g.ids[e];
  float d = g.dist[e];
  int f = g.flags[e];
  bool valid = id != GNND_EMPTY;
  s_id[t] = id; s_d[t] = d; s_f[t] = (unsigned char)f;
  __syncthreads();
  int rank_new = 0, rank_old = 0;
  for (int j = 0; j < g.K; ++j) {
    if (s_id[j] == GNND_EMPTY || !vick_before(s_d[j], s_id[j], d, id)) continue;
    if (s_f[j]) rank_new++; else rank_old++;
  }
  if (valid && f && rank_new < g.p) {
    g.gnew[u * g.M + rank_new] = id;
    g.flags[e] = 0;
  }
  if (valid && !f && rank_old < g.p) g.gold[u * g.M + rank_old] = id;
  int n_new = __syncthreads_count(valid && f);
  int n_old = __syncthreads_count(valid && !f);
  if (t == 0) {
    g.fwd_new[u] = g.cnt_new[u] = min(n_new, g.p);
    g.fwd_old[u] = g.cnt_old[u] = min(n_old, g.p);
  }
}

/* Reverse samples: v in G_new[u] appends u to G_new[v] atomically while
 * that list has fewer than 2p entries; likewise for G_old. */
__global__ void reverse_kernel(gnnd_dev g) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= g.n * g.p) return;
  int64_t u = i / g.p;
  int j = (int)(i % g.p);
  if (j < g.fwd_new[u]) {
    int v = g.gnew[u * g.M + j];
    int pos = atomicAdd(&g.cnt_new[v], 1);
    if (pos < g.M) g.gnew[(int64_t)v * g.M + pos] = (int)u;
  }
  if (j < g.fwd_old[u]) {
    int v = g.gold[u * g.M + j];
    int pos = atomicAdd(&g.cnt_old[v], 1);
    if (pos < g.M) g.gold[(int64_t)v * g.M + pos] = (int)u;
  }
}

/* Remove repeats from each sample list (one warp per list, M <= 64). */
__global__ void dedup_kernel(gnnd_dev g) {
  int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  int lane = threadIdx.x & 31;
  if (w >= 2 * g.n) return;
  int64_t u = w >> 1;
  int32_t *L = (w & 1) ? g.gold + u * g.M : g.gnew + u * g.M;
  int *cnt = (w & 1) ? g.cnt_old + u : g.cnt_new + u;
  int m = min(*cnt, g.M);
  int a = lane < m ? L[lane] : -1;
  int b = lane + 32 < m ? L[lane + 32] : -1;
  bool dup_a = false, dup_b = false;
  for (int j = 0; j < 32; ++j) {
    int x = __shfl_sync(FULL, a, j);
    if (x >= 0 && j < lane && x == a) dup_a = true;
    if (x >= 0 && x == b) dup_b = true;
    int y = __shfl_sync(FULL, b, j);
    if (y >= 0 && j < lane && y == b) dup_b = true;
  }
  bool keep_a = a >= 0 && !dup_a, keep_b = b >= 0 && !dup_b;
  unsigned ma = __ballot_sync(FULL, keep_a), mb = __ballot_sync(FULL, keep_b);
  unsigned below = (1u << lane) - 1u;
  __syncwarp();
  if (keep_a) L[__popc(ma & below)] = a;
  if (keep_b) L[__popc(ma) + __popc(mb & below)] = b;
  if (lane == 0) *cnt = __popc(ma) + __popc(mb);
}

/* Triangular thread mapping (Eq. 1-2): pair t -> (a, b), b < a. */
__device__ __forceinline__ void tri_pair(int t, int &a, int &b) {
  int x = (int)ceilf(sqrtf(2.f * t + 2.25f) - 0.5f);
  while (x * (x - 1) / 2 > t) x--;
  while ((x + 1) * x / 2 <= t) x++;
  a = x;
  b = t - x * (x - 1) / 2;
}

#define CM_THREADS 256

/* Cross-matching of one object's samples in one thread block (Sec. 4.2)
 * and the selective update (Alg. 1 lines 9-31, Alg. 2).  NEW-NEW
 * distances use the triangular mapping; NEW-OLD distances are a tiled
 * "matrix product" whose tiles of GNND_CHUNK dimensions slide over d, each
 * thread accumulating a 2x2 block of pairs. */
__global__ void __launch_bounds__(CM_THREADS) crossmatch_kernel(gnnd_dev g) {
  extern __shared__ float sm[];
  const int M = g.M, W = GNND_CHUNK + 1; /* +1: rows land in different banks */
  float *vn = sm, *vo = vn + M * W, *dnn = vo + M * W, *dno = dnn + M * (M - 1) / 2;
  int *in = (int *)(dno + M * M), *io = in + M;
  int64_t s = blockIdx.x;
  int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  int mn = min(g.cnt_new[s], M), mo = min(g.cnt_old[s], M);
  if (mn == 0) return; /* uniform across the block */
  for (int i = tid; i < mn; i += CM_THREADS) in[i] = g.gnew[s * M + i];
  for (int i = tid; i < mo; i += CM_THREADS) io[i] = g.gold[s * M + i];
  int nnn = mn * (mn - 1) / 2;
  for (int i = tid; i < nnn; i += CM_THREADS) dnn[i] = 0.f;
  for (int i = tid; i < mn * mo; i += CM_THREADS) dno[i] = 0.f;
  int to = (mo + 1) / 2, ntile = ((mn + 1) / 2) * to;
  __syncthreads();
  for (int c0 = 0; c0 < g.d; c0 += GNND_CHUNK) {
    for (int idx = tid; idx < (mn + mo) * GNND_CHUNK; idx += CM_THREADS) {
      int r = idx / GNND_CHUNK, j = idx % GNND_CHUNK, dim = c0 + j;
      int id = r < mn ? in[r] : io[r - mn];
      float val = dim < g.d ? row_at(g, id, dim) : 0.f;
      (r < mn ? vn + r * W : vo + (r - mn) * W)[j] = val;
    }
    __syncthreads();
    for (int t = tid; t < nnn; t += CM_THREADS) {
      int a, b;
      tri_pair(t, a, b);
      if (g.split > 0 && pair_skipped(g, in[a], in[b])) continue; /* GGM: same sub-graph, never used */
      const float *x = vn + a * W, *y = vn + b * W;
      float acc = 0.f;
#pragma unroll 8
      for (int j = 0; j < GNND_CHUNK; ++j) { float q = x[j] - y[j]; acc = fmaf(q, q, acc); }
      dnn[t] += acc;
    }
    for (int t = tid; t < ntile; t += CM_THREADS) {
      int i = 2 * (t / to), o = 2 * (t % to);
      int i1 = min(i + 1, M - 1), o1 = min(o + 1, M - 1);
      if (g.split > 0) { /* GGM: skip a tile whose four pairs all lie inside one sub-graph */
        bool r0 = !pair_skipped(g, in[i], io[o]) || (o + 1 < mo && !pair_skipped(g, in[i], io[o + 1]));
        bool r1 = i + 1 < mn && (!pair_skipped(g, in[i + 1], io[o]) || (o + 1 < mo && !pair_skipped(g, in[i + 1], io[o + 1])));
        if (!r0 && !r1) continue;
      }
      const float *x0 = vn + i * W, *x1 = vn + i1 * W, *y0 = vo + o * W, *y1 = vo + o1 * W;
      float s00 = 0.f, s01 = 0.f, s10 = 0.f, s11 = 0.f;
#pragma unroll 8
      for (int j = 0; j < GNND_CHUNK; ++j) {
        float a0 = x0[j], a1 = x1[j], b0 = y0[j], b1 = y1[j];
        float q00 = a0 - b0, q01 = a0 - b1, q10 = a1 - b0, q11 = a1 - b1;
        s00 = fmaf(q00, q00, s00); s01 = fmaf(q01, q01, s01);
        s10 = fmaf(q10, q10, s10); s11 = fmaf(q11, q11, s11);
      }
      dno[i * mo + o] += s00;
      if (o + 1 < mo) dno[i * mo + o + 1] += s01;
      if (i + 1 < mn) {
        dno[(i + 1) * mo + o] += s10;
        if (o + 1 < mo) dno[(i + 1) * mo + o + 1] += s11;
      }
    }
    __syncthreads();
  }
  /* Selective update: per NEW sample its nearest other NEW and nearest
   * OLD; per OLD sample its nearest NEW; one warp-shuffle minimum each. */
  int inserted = 0;
  for (int task = warp; task < 2 * mn + mo; task += CM_THREADS / 32) {
    float bd = INFINITY;
    int bid = GNND_EMPTY, tgt;
    if (task < mn) {
      int i = task;
      tgt = in[i];
      for (int j = lane; j < mn; j += 32) {
        if (j == i) continue;
        int hi = max(i, j), lo = min(i, j);
        float d = dnn[hi * (hi - 1) / 2 + lo];
        int c = in[j];
        if (!pair_skipped(g, tgt, c) && vick_before(d, c, bd, bid)) { bd = d; bid = c; }
      }
    } else if (task < 2 * mn) {
      int i = task - mn;
      tgt = in[i];
      for (int j = lane; j < mo; j += 32) {
        float d = dno[i * mo + j];
        int c = io[j];
        if (!pair_skipped(g, tgt, c) && vick_before(d, c, bd, bid)) { bd = d; bid = c; }
      }
    } else {
      int o = task - 2 * mn;
      tgt = io[o];
      for (int j = lane; j < mn; j += 32) {
        float d = dno[j * mo + o];
        int c = in[j];
        if (!pair_skipped(g, tgt, c) && vick_before(d, c, bd, bid)) { bd = d; bid = c; }
      }
    }
    vick_warp_argmin(bd, bid);
    if (bid != GNND_EMPTY) inserted += warp_insert(g, tgt, bid, bd, lane);
  }
  if (lane == 0 && inserted) atomicAdd(g.counter, (unsigned long long)inserted);
}

/* Merge the segments (and GGM's set-aside entries) of each list into its
 * flat top-k, ascending by (distance, id), repeats removed. */
__global__ void finalize_kernel(gnnd_dev g, int32_t k, int32_t *out_ids, float *out_dist) {
  __shared__ int s_id[512];
  __shared__ float s_d[512];
  __shared__ unsigned char s_ok[512];
  int64_t u = blockIdx.x;
  int t = threadIdx.x;
  int id;
  float d;
  if (t < g.K) { id = g.ids[u * g.K + t]; d = g.dist[u * g.K + t]; }
  else { id = g.extra[u * g.K + t - g.K]; d = g.extra_dist[u * g.K + t - g.K]; }
  s_id[t] = id;
  s_d[t] = d;
  __syncthreads();
  bool ok = id != GNND_EMPTY && id >= 0;
  for (int j = 0; j < t && ok; ++j) ok = s_id[j] != id;
  s_ok[t] = ok;
  int nvalid = __syncthreads_count(ok);
  int rank = 0;
  for (int j = 0; j < (int)blockDim.x; ++j) rank += s_ok[j] && vick_before(s_d[j], s_id[j], d, id);
  if (ok && rank < k) { out_ids[u * k + rank] = id; out_dist[u * k + rank] = d; }
  if (t >= nvalid && t < k) { out_ids[u * k + t] = -1; out_dist[u * k + t] = INFINITY; }
}

__global__ void offset_ids_kernel(int32_t *ids, int64_t count, int32_t offset) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count && ids[i] >= 0) ids[i] += offset;
}

static unsigned blocks_for(int64_t threads, int per_block) { return (unsigned)((threads + per_block - 1) / per_block); }

static size_t crossmatch_smem(int M) {
  return ((size_t)2 * M * (GNND_CHUNK + 1) + (size_t)M * (M - 1) / 2 + (size_t)M * M) * sizeof(float) +
         (size_t)2 * M * sizeof(int);
}

int gnnd__launch_random_init(vick_call *call, const gnnd_dev *g, cudaStream_t st) {
  fill_random_kernel<<<blocks_for(g->n * g->nseg * 32, 256), 256, 0, st>>>(*g, 1);
  return GNND_LAUNCHED(call, "gnnd random init");
}

int gnnd__launch_merge_init(vick_call *call, const gnnd_dev *g, const int32_t *flat_ids,
                                       const float *flat_dist, cudaStream_t st) {
  merge_split_kernel<<<(unsigned)g->n, g->K, 0, st>>>(*g, flat_ids, flat_dist);
  int rc = GNND_LAUNCHED(call, "ggm split");
  if (rc) return rc;
  fill_random_kernel<<<blocks_for(g->n * g->nseg * 32, 256), 256, 0, st>>>(*g, 0);
  return GNND_LAUNCHED(call, "ggm random refill");
}

int gnnd__launch_iteration(vick_call *call, const gnnd_dev *g, int iteration, cudaStream_t st) {
  int rc;
  sample_kernel<<<(unsigned)g->n, g->K, 0, st>>>(*g);
  if ((rc = GNND_LAUNCHED(call, "gnnd sample"))) return rc;
  reverse_kernel<<<blocks_for(g->n * g->p, 256), 256, 0, st>>>(*g);
  if ((rc = GNND_LAUNCHED(call, "gnnd reverse"))) return rc;
  dedup_kernel<<<blocks_for(2 * g->n * 32, 256), 256, 0, st>>>(*g);
  if ((rc = GNND_LAUNCHED(call, "gnnd dedup"))) return rc;
  size_t smem = crossmatch_smem(g->M);
  if (smem > 48 * 1024 &&
      (rc = GNND_CK(call, cudaFuncSetAttribute(crossmatch_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               (int)smem))))
    return rc;
  crossmatch_kernel<<<(unsigned)g->n, CM_THREADS, smem, st>>>(*g);
  (void)iteration;
  return GNND_LAUNCHED(call, "gnnd cross-matching");
}

int gnnd__launch_finalize(vick_call *call, const gnnd_dev *g, int32_t k, int32_t *out_ids,
                                     float *out_dist, cudaStream_t st) {
  int threads = g->K + (g->extra ? g->K : 0);
  finalize_kernel<<<(unsigned)g->n, threads, 0, st>>>(*g, k, out_ids, out_dist);
  return GNND_LAUNCHED(call, "gnnd finalize");
}

int gnnd__launch_offset_ids(vick_call *call, int32_t *ids, int64_t count, int32_t offset,
                                       cudaStream_t st) {
  if (count <= 0) return VICK_OK;
  offset_ids_kernel<<<blocks_for(count, 256), 256, 0, st>>>(ids, count, offset);
  return GNND_LAUNCHED(call, "gnnd id offset");
}
