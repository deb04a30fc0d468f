/* GRNND (Li et al., GPU-parallel RNN-Descent), Alg. 3-6.
 *
 * Every vertex owns two fixed-capacity pools of R keys vick_key(distance,
 * id) in global memory with an insertion counter each: pool A is read in a
 * round, pool B written, then B becomes the read pool and A is cleared
 * (Alg. 4 lines 17-18).  One warp updates one vertex:
 *  - it loads its read pool, sorts it and drops repeats (warp merge sort);
 *  - disordered propagation: every live neighbour n_j is paired with a
 *    random other live neighbour n_i; when d(n_i, n_j) < max(d(v, n_i),
 *    d(v, n_j)) (the RNG rule) the farther one is redirected into the
 *    closer one's write pool and dropped from v's (Alg. 4 lines 3-10);
 *  - the survivors go to v's own write pool (lines 11-15).
 * WARP_INSERT (Alg. 6): a ballot over the pool rejects a present id; a
 * pool with room takes the key at an atomically claimed slot; a full pool
 * replaces its farthest key (warp max-reduction) by compare-and-swap when
 * the new key is nearer.  Concurrent inserts of one id can race past the
 * ballot; the next load drops such repeats.
 * Between outer iterations (Alg. 3 lines 12-16) every vertex copies its
 * pool to the write side and inserts itself into the pools of its nearest
 * ceil(rho * size) neighbours (reverse-edge sampling). */
#include "grnnd_common.cuh"
#include "vic_kernels_grnnd.h"

#include <stdlib.h>
#include <string.h>

#define GR_WARPS 4           /* warps (vertices) per block */
#define GR_IPT 4             /* pool keys per lane: R <= 128 */
#define GR_RMAX (GR_IPT * 32)

typedef cub::WarpMergeSort<unsigned long long, GR_IPT, 32> gr_sort;

struct gr_pools {
  unsigned long long *key; /* n * R */
  int *cnt;                /* n */
};

/* Alg. 6 by one warp: insert key into the pool of vertex t. */
__device__ void gr_warp_insert(gr_pools P, int R, int64_t t, unsigned long long key, int lane) {
  volatile unsigned long long *slot = P.key + t * R;
  const uint32_t id = (uint32_t)key;
  bool found = false;
  for (int i = lane; i < R; i += 32) {
    unsigned long long s = slot[i];
    found |= s != VICK_KEY_NONE && (uint32_t)s == id;
  }
  if (__any_sync(GR_FULL, found)) return;
  int c = 0;
  if (lane == 0) c = *(volatile int *)(P.cnt + t);
  c = __shfl_sync(GR_FULL, c, 0);
  if (c < R) {
    int pos = 0;
    if (lane == 0) {
      pos = atomicAdd(P.cnt + t, 1);
      if (pos < R) slot[pos] = key;
    }
    pos = __shfl_sync(GR_FULL, pos, 0);
    if (pos < R) return;
  }
  /* full: the farthest written key, replaced when the new one is nearer */
  unsigned long long worst = 0;
  int wi = -1;
  for (int i = lane; i < R; i += 32) {
    unsigned long long s = slot[i];
    if (s != VICK_KEY_NONE && s > worst) { worst = s; wi = i; }
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    unsigned long long w2 = __shfl_xor_sync(GR_FULL, worst, o);
    int i2 = __shfl_xor_sync(GR_FULL, wi, o);
    if (w2 > worst || (w2 == worst && i2 > wi)) { worst = w2; wi = i2; }
  }
  if (lane == 0 && wi >= 0 && key < worst)
    atomicCAS((unsigned long long *)(P.key + t * R + wi), worst, key);
}

/* Load v's pool into s (GR_RMAX keys), sorted, repeats dropped; returns the size. */
__device__ __forceinline__ int gr_load(gr_pools P, int R, int64_t v, unsigned long long *s, gr_sort::TempStorage &tmp,
                                       int lane) {
  int c = min(P.cnt[v], R);
  for (int i = lane; i < GR_RMAX; i += 32) s[i] = i < c ? P.key[v * R + i] : VICK_KEY_NONE;
  __syncwarp();
  return gr_warp_sort_unique<GR_IPT>(s, tmp, lane);
}

struct gr_smem {
  unsigned long long s[GR_WARPS][GR_RMAX];
  gr_sort::TempStorage tmp[GR_WARPS];
};

__global__ void gr_init_kernel(const float *x, int64_t n, int d, int S, int R, gr_pools P, uint64_t seed) {
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int64_t v = (int64_t)blockIdx.x * GR_WARPS + w;
  if (v >= n) return;
  const float *xv = x + v * d;
  for (int i = 0; i < S; ++i) {
    int64_t u = (int64_t)(gr_rand(seed, 1, (uint64_t)v, (uint64_t)i) % (uint64_t)(n - 1));
    if (u >= v) ++u;
    float dist = gr_warp_l2(xv, x + u * d, d, lane);
    gr_warp_insert(P, R, v, vick_key(dist, (uint32_t)u), lane);
  }
}

/* One round of Alg. 4 for the vertices of this launch: read A, write B. */
__global__ void gr_update_kernel(const float *x, int64_t n, int d, int R, gr_pools A, gr_pools B, uint64_t seed,
                                 uint64_t round) {
  __shared__ gr_smem sm;
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int64_t v = (int64_t)blockIdx.x * GR_WARPS + w;
  if (v >= n) return;
  unsigned long long *s = sm.s[w];
  const int c = gr_load(A, R, v, s, sm.tmp[w], lane);
  if (c >= 2) {
    /* visit the slots in a random rotation, each against a random partner */
    const uint64_t r0 = gr_rand(seed, round, (uint64_t)v, 77);
    const int start = (int)(r0 % (uint64_t)c);
    for (int t = 0; t < c; ++t) {
      const int j = (start + t) % c;
      const unsigned long long kj = s[j];
      int i = (int)(gr_rand(seed, round, (uint64_t)v, (uint64_t)t) % (uint64_t)(c - 1));
      if (i >= j) ++i;
      const unsigned long long ki = s[i];
      if (kj == VICK_KEY_NONE || ki == VICK_KEY_NONE) continue; /* warp-uniform */
      const uint32_t ni = (uint32_t)ki, nj = (uint32_t)kj;
      const float dij = gr_warp_l2(x + (int64_t)ni * d, x + (int64_t)nj * d, d, lane);
      const float dvi = vick_float_unorder((uint32_t)(ki >> 32)), dvj = vick_float_unorder((uint32_t)(kj >> 32));
      if (dij < fmaxf(dvi, dvj)) {
        const bool i_far = ki > kj;
        const uint32_t far = i_far ? ni : nj, close = i_far ? nj : ni;
        gr_warp_insert(B, R, close, vick_key(dij, far), lane);
        __syncwarp();
        if (lane == 0) s[i_far ? i : j] = VICK_KEY_NONE;
        __syncwarp();
      }
    }
  }
  for (int j = 0; j < c; ++j) {
    const unsigned long long kj = s[j];
    if (kj != VICK_KEY_NONE) gr_warp_insert(B, R, v, kj, lane);
  }
}

/* Reverse-edge sampling: copy v's pool A to B and insert v into the B pools
 * of its nearest ceil(rho * size) neighbours. */
__global__ void gr_reverse_kernel(int64_t n, int R, gr_pools A, gr_pools B, float rho) {
  __shared__ gr_smem sm;
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int64_t v = (int64_t)blockIdx.x * GR_WARPS + w;
  if (v >= n) return;
  unsigned long long *s = sm.s[w];
  const int c = gr_load(A, R, v, s, sm.tmp[w], lane);
  for (int j = 0; j < c; ++j) gr_warp_insert(B, R, v, s[j], lane);
  const int nr = min(c, (int)ceilf(rho * (float)c));
  for (int j = 0; j < nr; ++j) {
    const unsigned long long kj = s[j];
    gr_warp_insert(B, R, (uint32_t)kj, (kj & 0xffffffff00000000ull) | (uint64_t)v, lane);
  }
}

/* Sorted, repeat-free pools as flat lists (-1 / +inf padded). */
__global__ void gr_final_kernel(int64_t n, int R, gr_pools A, int32_t *ids, float *dist) {
  __shared__ gr_smem sm;
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int64_t v = (int64_t)blockIdx.x * GR_WARPS + w;
  if (v >= n) return;
  unsigned long long *s = sm.s[w];
  const int c = gr_load(A, R, v, s, sm.tmp[w], lane);
  for (int j = lane; j < R; j += 32) {
    const bool ok = j < c;
    ids[v * R + j] = ok ? (int32_t)(uint32_t)s[j] : -1;
    dist[v * R + j] = ok ? vick_float_unorder((uint32_t)(s[j] >> 32)) : __int_as_float(0x7f800000);
  }
}

void vick_grnnd_params_init(vick_grnnd_params *p) {
  p->s = 20;
  p->r = 96;
  p->t1 = 4;
  p->t2 = 15;
  p->rho = 0.6f;
  p->final_reverse = 0;
}

typedef struct {
  vick_env env;
  vick_buf x, key[2], cnt[2], ids, dist;
} gr_ws;

static int gr_clear(vick_call *call, gr_ws *w, int b, int64_t n, int R) {
  VICK_CUDA(call, cudaMemsetAsync(w->key[b].p, 0xff, (size_t)n * R * 8, w->env.stream));
  VICK_CUDA(call, cudaMemsetAsync(w->cnt[b].p, 0, (size_t)n * 4, w->env.stream));
  return VICK_OK;
}

static gr_pools gr_pool(gr_ws *w, int b) {
  gr_pools P = {(unsigned long long *)w->key[b].p, (int *)w->cnt[b].p};
  return P;
}

static int gr_run(vick_call *call, gr_ws *w, const float *rows, int64_t n, int d, const vick_grnnd_params *p,
                  int32_t *ids, float *dist, double *mean_degree) {
  const int R = p->r;
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->x, (size_t)n * d * 4, "GRNND rows"));
  for (int b = 0; b < 2; ++b) {
    VICK_TRY(vick_buf_alloc(call, &w->env, &w->key[b], (size_t)n * R * 8, "GRNND pools"));
    VICK_TRY(vick_buf_alloc(call, &w->env, &w->cnt[b], (size_t)n * 4, "GRNND pool counts"));
  }
  VICK_TRY(vick_copy_to_device(call, &w->env, w->x.p, rows, (size_t)n * d * 4));
  const float *x = (const float *)w->x.p;
  const unsigned blocks = vick_blocks(n, GR_WARPS);
  double kt = 0;
  VICK_TRY(vick_timer_start(call, &w->env));
  VICK_TRY(gr_clear(call, w, 0, n, R));
  VICK_TRY(gr_clear(call, w, 1, n, R));
  gr_init_kernel<<<blocks, 32 * GR_WARPS, 0, w->env.stream>>>(x, n, d, p->s, R, gr_pool(w, 0), call->seed);
  VICK_LAUNCH(call, "gr_init_kernel");
  VICK_TRY(vick_timer_stop(call, &w->env, &kt, "init"));
  int a = 0;
  uint64_t round = 0;
  for (int t1 = 0; t1 < p->t1; ++t1) {
    VICK_TRY(vick_timer_start(call, &w->env));
    for (int t2 = 0; t2 < p->t2; ++t2) {
      gr_update_kernel<<<blocks, 32 * GR_WARPS, 0, w->env.stream>>>(x, n, d, R, gr_pool(w, a), gr_pool(w, 1 - a),
                                                                   call->seed, ++round);
      VICK_LAUNCH(call, "gr_update_kernel");
      VICK_TRY(gr_clear(call, w, a, n, R));
      a = 1 - a;
    }
    VICK_TRY(vick_timer_stop(call, &w->env, &kt, "propagate"));
    if (t1 + 1 < p->t1 || p->final_reverse) {
      VICK_TRY(vick_timer_start(call, &w->env));
      gr_reverse_kernel<<<blocks, 32 * GR_WARPS, 0, w->env.stream>>>(n, R, gr_pool(w, a), gr_pool(w, 1 - a), p->rho);
      VICK_LAUNCH(call, "gr_reverse_kernel");
      VICK_TRY(gr_clear(call, w, a, n, R));
      a = 1 - a;
      VICK_TRY(vick_timer_stop(call, &w->env, &kt, "reverse"));
    }
    VICK_TRY(vick_poll(call, "grnnd", (double)(t1 + 1) / p->t1));
  }
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->ids, (size_t)n * R * 4, "GRNND graph"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->dist, (size_t)n * R * 4, "GRNND distances"));
  VICK_TRY(vick_timer_start(call, &w->env));
  gr_final_kernel<<<blocks, 32 * GR_WARPS, 0, w->env.stream>>>(n, R, gr_pool(w, a), (int32_t *)w->ids.p,
                                                               (float *)w->dist.p);
  VICK_LAUNCH(call, "gr_final_kernel");
  VICK_TRY(vick_timer_stop(call, &w->env, &kt, "final"));
  call->seconds_kernel += kt;
  VICK_TRY(vick_copy_to_host(call, &w->env, ids, w->ids.p, (size_t)n * R * 4));
  if (dist) VICK_TRY(vick_copy_to_host(call, &w->env, dist, w->dist.p, (size_t)n * R * 4));
  if (mean_degree) {
    int64_t e = 0;
    for (int64_t i = 0; i < n * R; ++i) e += ids[i] >= 0;
    *mean_degree = (double)e / (double)n;
  }
  return VICK_OK;
}

int vick_grnnd_build(vick_call *call, const float *rows, int64_t n, int32_t d, const vick_grnnd_params *p,
                     int32_t *ids, float *dist, double *mean_degree) {
  if (!call) return VICK_ARGUMENT;
  if (!rows || !ids || !p || n < 2 || d < 1)
    return vick_fail(call, VICK_ARGUMENT, "GRNND: needs rows, n >= 2, d >= 1 and an output graph");
  if (n >= ((int64_t)1 << 31) - 1) return vick_fail(call, VICK_ARGUMENT, "GRNND: n = %lld >= 2^31 - 1", (long long)n);
  if (p->r < 8 || p->r > GR_RMAX || p->s < 1 || p->s > p->r || p->t1 < 1 || p->t2 < 1 || !(p->rho > 0.f) ||
      p->rho > 1.f)
    return vick_fail(call, VICK_ARGUMENT,
                     "GRNND: parameters out of range (S = %d in 1..R, R = %d in 8..%d, T1 = %d, T2 = %d >= 1, "
                     "rho = %g in (0, 1])",
                     (int)p->s, (int)p->r, GR_RMAX, (int)p->t1, (int)p->t2, (double)p->rho);
  gr_ws w;
  memset(&w, 0, sizeof w);
  int rc = vick_begin(call, &w.env);
  if (rc == VICK_OK) rc = gr_run(call, &w, rows, n, d, p, ids, dist, mean_degree);
  vick_buf_free(&w.env, &w.x);
  for (int b = 0; b < 2; ++b) {
    vick_buf_free(&w.env, &w.key[b]);
    vick_buf_free(&w.env, &w.cnt[b]);
  }
  vick_buf_free(&w.env, &w.ids);
  vick_buf_free(&w.env, &w.dist);
  return vick_end(call, &w.env, rc);
}
