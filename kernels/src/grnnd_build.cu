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
#include "graph_search.cuh"
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
  const uint32_t id = gr_id(key);
  int c = 0; /* the counter read along with the scan: one round trip for both */
  if (lane == 0) c = *(volatile int *)(P.cnt + t);
  bool found = false;
  for (int i = lane; i < R; i += 32) {
    unsigned long long s = slot[i];
    found |= s != VICK_KEY_NONE && gr_id(s) == id;
  }
  if (__any_sync(GR_FULL, found)) return;
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

/* v's own entries keys[0..nk) (plain: without their flags) appended to its
 * pool at once: one claim of nk slots and no search for repeats (copies
 * that other warps insert meanwhile are dropped by the next load, like
 * racing inserts); what does not fit goes one at a time by Alg. 6's
 * replacement rule. */
__device__ void gr_warp_append(gr_pools P, int R, int64_t v, const unsigned long long *keys, int nk, bool plain,
                               int lane) {
  int base = 0;
  if (lane == 0) base = atomicAdd(P.cnt + v, nk);
  base = __shfl_sync(GR_FULL, base, 0);
  for (int b = lane; b < nk && base + b < R; b += 32) P.key[v * R + base + b] = plain ? gr_plain(keys[b]) : keys[b];
  for (int b = max(0, R - base); b < nk; ++b) gr_warp_insert(P, R, v, plain ? gr_plain(keys[b]) : keys[b], lane);
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
    int64_t u = (int64_t)(vick_rand3(seed, 1, (uint64_t)v, (uint64_t)i) % (uint64_t)(n - 1));
    if (u >= v) ++u;
    float dist = gr_warp_l2(xv, x + u * d, d, lane);
    gr_warp_insert(P, R, v, vick_key(dist, (uint32_t)u) | GR_FLAG, lane);
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
    const uint64_t r0 = vick_rand3(seed, round, (uint64_t)v, 77);
    const int start = (int)(r0 % (uint64_t)c);
    for (int t = 0; t < c; ++t) {
      const int j = (start + t) % c;
      const unsigned long long kj = s[j];
      int i = (int)(vick_rand3(seed, round, (uint64_t)v, (uint64_t)t) % (uint64_t)(c - 1));
      if (i >= j) ++i;
      const unsigned long long ki = s[i];
      if (kj == VICK_KEY_NONE || ki == VICK_KEY_NONE) continue; /* warp-uniform */
      const uint32_t ni = gr_id(ki), nj = gr_id(kj);
      const float dij = gr_warp_l2(x + (int64_t)ni * d, x + (int64_t)nj * d, d, lane);
      const float dvi = vick_float_unorder((uint32_t)(ki >> 32)), dvj = vick_float_unorder((uint32_t)(kj >> 32));
      if (dij < fmaxf(dvi, dvj)) {
        const bool i_far = gr_plain(ki) > gr_plain(kj);
        const uint32_t far = i_far ? ni : nj, close = i_far ? nj : ni;
        gr_warp_insert(B, R, close, vick_key(dij, far) | GR_FLAG, lane);
        __syncwarp();
        if (lane == 0) s[i_far ? i : j] = VICK_KEY_NONE;
        __syncwarp();
      }
    }
  }
  for (int j = 0; j < c; ++j) {
    const unsigned long long kj = s[j];
    if (kj != VICK_KEY_NONE) gr_warp_insert(B, R, v, gr_plain(kj), lane);
  }
}

/* Sums of eight per-lane partials over the warp, by a butterfly that halves
 * the values held at each step (9 shuffles for 8 sums instead of 40):
 * lane 4b gets the sum of a[b] (lanes 4b+1..4b+3 too).  Each sum pairs the
 * lanes in the same tree as gr_warp_l2's butterfly, so a distance comes
 * out bit-identical to gr_warp_l2's and a pool never holds one id under
 * two distances. */
__device__ __forceinline__ float gr_sum8(float a[8], int lane) {
  const bool u16 = lane & 16, u8 = lane & 8, u4 = lane & 4;
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float send = u16 ? a[k] : a[k + 4], keep = u16 ? a[k + 4] : a[k];
    a[k] = keep + __shfl_xor_sync(GR_FULL, send, 16);
  }
#pragma unroll
  for (int k = 0; k < 2; ++k) {
    const float send = u8 ? a[k] : a[k + 2], keep = u8 ? a[k + 2] : a[k];
    a[k] = keep + __shfl_xor_sync(GR_FULL, send, 8);
  }
  const float send = u4 ? a[0] : a[1], keep = u4 ? a[1] : a[0];
  float r = keep + __shfl_xor_sync(GR_FULL, send, 4);
  r += __shfl_xor_sync(GR_FULL, r, 2);
  return r + __shfl_xor_sync(GR_FULL, r, 1);
}

__device__ __forceinline__ int gr_gcd(int a, int b) {
  while (b) {
    const int t = a % b;
    a = b;
    b = t;
  }
  return a;
}

/* Test candidate kj against the entries of the kept list L[0..nl) that
 * need it (only_new: those flagged new), eight at a time: per chunk of 32
 * entries the warp ranks the ones to test (pos: rank -> lane) and sums
 * eight distances at once (the kept rows stay in L1).  A conflict (Eq. 2)
 * redirects the farther of the two, as a new entry, to the closer's write
 * pool: a kept entry that is farther leaves the list (set to
 * VICK_KEY_NONE, *removed set) and the candidate is tested on; a farther
 * candidate is dropped (returns true). */
__device__ bool gr_test_kept(const float *x, int d, int R, gr_pools B, unsigned long long kj, unsigned long long *L,
                             int nl, bool only_new, unsigned char *pos, bool *removed, int lane) {
  const uint32_t nj = gr_id(kj);
  const float dvj = vick_float_unorder((uint32_t)(kj >> 32));
  const float *xj = x + (int64_t)nj * d;
  const bool rows4 = gr_rows4(x, x, d);
  for (int cb = 0; cb < nl; cb += 32) {
    const unsigned long long mine = cb + lane < nl ? L[cb + lane] : VICK_KEY_NONE;
    const bool want = mine != VICK_KEY_NONE && (!only_new || (mine & GR_FLAG));
    const unsigned wm = __ballot_sync(GR_FULL, want);
    if (want) pos[__popc(wm & ((1u << lane) - 1))] = (unsigned char)lane;
    __syncwarp();
    const int cnt = __popc(wm);
    for (int g = 0; g < cnt; g += 8) {
      const int nb = min(8, cnt - g);
      uint32_t ia[8]; /* the members' rows (the candidate's own where there is no member) */
#pragma unroll
      for (int b = 0; b < 8; ++b) ia[b] = b < nb ? gr_id(L[cb + pos[g + b]]) : nj;
      float acc[8];
#pragma unroll
      for (int b = 0; b < 8; ++b) acc[b] = 0.f;
      if (rows4) {
        const float4 *x4 = (const float4 *)x;
        const int d4 = d >> 2;
        for (int k = lane; k < d4; k += 32) {
          const float4 xv = __ldg(x4 + (int64_t)nj * d4 + k);
#pragma unroll
          for (int b = 0; b < 8; ++b) acc[b] = gr_share4(xv, __ldg(x4 + (int64_t)ia[b] * d4 + k), acc[b]);
        }
      } else {
        for (int k = lane; k < d; k += 32) {
          const float xv = __ldg(xj + k);
#pragma unroll
          for (int b = 0; b < 8; ++b) {
            const float u = xv - __ldg(x + (int64_t)ia[b] * d + k);
            acc[b] = fmaf(u, u, acc[b]);
          }
        }
      }
      const float dist = gr_sum8(acc, lane);
      const int mb = lane >> 2;
      bool conflict = false;
      if ((lane & 3) == 0 && mb < nb) {
        const unsigned long long ka = L[cb + pos[g + mb]];
        conflict = dist < fmaxf(dvj, vick_float_unorder((uint32_t)(ka >> 32)));
      }
      unsigned mask = __ballot_sync(GR_FULL, conflict);
      __syncwarp();
      while (mask) { /* lane 4b holds member b: lane order is list order */
        const int l = __ffs(mask) - 1;
        mask &= mask - 1;
        const float dja = __shfl_sync(GR_FULL, dist, l);
        const int i = cb + pos[g + (l >> 2)];
        const unsigned long long ka = L[i];
        if (gr_plain(ka) > gr_plain(kj)) { /* the kept one is farther: it moves to the candidate's pool */
          gr_warp_insert(B, R, nj, vick_key(dja, gr_id(ka)) | GR_FLAG, lane);
          __syncwarp();
          if (lane == 0) L[i] = VICK_KEY_NONE;
          __syncwarp();
          *removed = true;
        } else {
          gr_warp_insert(B, R, gr_id(ka), vick_key(dja, nj) | GR_FLAG, lane);
          return true;
        }
      }
    }
    __syncwarp(); /* pos is rewritten by the next chunk */
  }
  return false;
}

/* Drop the VICK_KEY_NONE entries of L[0..nl), keeping the order; the new count. */
__device__ int gr_compact(unsigned long long *L, int nl, int lane) {
  int out = 0;
  for (int b0 = 0; b0 < nl; b0 += 32) {
    const unsigned long long ka = b0 + lane < nl ? L[b0 + lane] : VICK_KEY_NONE;
    const unsigned live = __ballot_sync(GR_FULL, ka != VICK_KEY_NONE);
    __syncwarp();
    if (ka != VICK_KEY_NONE) L[out + __popc(live & ((1u << lane) - 1))] = ka;
    out += __popc(live);
    __syncwarp();
  }
  return out;
}

/* One round of Alg. 4 with RNN-Descent's pairs (VICK_GRNND_PAIRS_KEPT):
 * v's candidates in a random order (a random rotation and a stride prime
 * to the pool size), each tested against the neighbours kept so far.
 * RNN-Descent's new/old flags: what v kept last round is old (its pairs
 * passed the rule then), what arrived since is new; an old candidate is
 * tested only against the new kept ones.  The kept set goes to v's write
 * pool as old. */
__global__ void __launch_bounds__(32 * GR_WARPS)
    gr_update_kept_kernel(const float *x, int64_t n, int d, int R, gr_pools A, gr_pools B, uint64_t seed,
                          uint64_t round) {
  __shared__ gr_smem sm;
  __shared__ unsigned long long kept_all[GR_WARPS][GR_RMAX];
  __shared__ unsigned char pos_all[GR_WARPS][32];
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int64_t v = (int64_t)blockIdx.x * GR_WARPS + w;
  if (v >= n) return;
  unsigned long long *s = sm.s[w], *kept = kept_all[w];
  const int c = gr_load(A, R, v, s, sm.tmp[w], lane);
  const uint64_t r0 = vick_rand3(seed, round, (uint64_t)v, 77);
  int j = c > 0 ? (int)(r0 % (uint64_t)c) : 0;
  int stride = c > 1 ? 1 + (int)((r0 >> 32) % (uint64_t)(c - 1)) : 1;
  while (c > 1 && gr_gcd(stride, c) != 1) stride = stride % (c - 1) + 1;
  int nk = 0;
  for (int t = 0; t < c; ++t, j = (j + stride) % c) {
    const unsigned long long kj = s[j];
    bool removed = false;
    const bool dropped = gr_test_kept(x, d, R, B, kj, kept, nk, !(kj & GR_FLAG), pos_all[w], &removed, lane);
    if (removed) nk = gr_compact(kept, nk, lane);
    if (!dropped) {
      if (lane == 0) kept[nk] = kj;
      ++nk;
    }
    __syncwarp();
  }
  gr_warp_append(B, R, v, kept, nk, true, lane);
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
  gr_warp_append(B, R, v, s, c, false, lane);
  const int nr = min(c, (int)ceilf(rho * (float)c));
  for (int j = 0; j < nr; ++j) {
    const unsigned long long kj = s[j];
    gr_warp_insert(B, R, gr_id(kj), (kj & 0xffffffff00000000ull) | (uint64_t)v | GR_FLAG, lane);
  }
}

/* Sorted, repeat-free pools as flat lists (-1 / +inf padded; dist may be NULL). */
__global__ void gr_final_kernel(int64_t n, int R, gr_pools A, int32_t *ids, float *dist,
                                unsigned long long *edges) {
  __shared__ gr_smem sm;
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int64_t v = (int64_t)blockIdx.x * GR_WARPS + w;
  if (v >= n) return;
  unsigned long long *s = sm.s[w];
  const int c = gr_load(A, R, v, s, sm.tmp[w], lane);
  if (lane == 0) atomicAdd(edges, (unsigned long long)c);
  for (int j = lane; j < R; j += 32) {
    const bool ok = j < c;
    ids[v * R + j] = ok ? (int32_t)gr_id(s[j]) : -1;
    if (dist) dist[v * R + j] = ok ? vick_float_unorder((uint32_t)(s[j] >> 32)) : __int_as_float(0x7f800000);
  }
}

void vick_grnnd_params_init(vick_grnnd_params *p) {
  p->s = 20;
  p->r = 96;
  p->t1 = 3;
  p->t2 = 4;
  p->rho = 0.6f;
  p->final_reverse = 1;
  p->pairs = VICK_GRNND_PAIRS_KEPT;
}

typedef struct {
  vick_env env;
  vick_buf x, key[2], cnt[2], ids, dist, edges;
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

/* Upload the rows on a side stream while the pools are cleared on the
 * main one (a pageable copy keeps the host busy, not the device). */
static int gr_upload(vick_call *call, gr_ws *w, const float *rows, int64_t n, int d, int R) {
  double th = vick_now();
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->x, (size_t)n * d * 4, "GRNND rows"));
  for (int b = 0; b < 2; ++b) {
    VICK_TRY(vick_buf_alloc(call, &w->env, &w->key[b], (size_t)n * R * 8, "GRNND pools"));
    VICK_TRY(vick_buf_alloc(call, &w->env, &w->cnt[b], (size_t)n * 4, "GRNND pool counts"));
  }
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->ids, (size_t)n * R * 4, "GRNND graph"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->edges, 8, "GRNND edge count"));
  vick_stage_add(call, "allocate", vick_now() - th);
  th = vick_now();
  VICK_TRY(gr_clear(call, w, 0, n, R));
  VICK_TRY(gr_clear(call, w, 1, n, R));
  VICK_TRY(gr_upload_beside(call, &w->env, w->x.p, rows, (size_t)n * d * 4));
  vick_stage_add(call, "upload", vick_now() - th);
  return VICK_OK;
}

/* The graph into w->ids (and w->dist when allocated) from w->x, the pools
 * cleared; the edge count in w->edges. */
static int gr_graph(vick_call *call, gr_ws *w, int64_t n, int d, const vick_grnnd_params *p) {
  const int R = p->r;
  const float *x = (const float *)w->x.p;
  const unsigned blocks = vick_blocks(n, GR_WARPS);
  double kt = 0;
  VICK_TRY(vick_timer_start(call, &w->env));
  gr_init_kernel<<<blocks, 32 * GR_WARPS, 0, w->env.stream>>>(x, n, d, p->s, R, gr_pool(w, 0), call->seed);
  VICK_LAUNCH(call, "gr_init_kernel");
  VICK_TRY(vick_timer_stop(call, &w->env, &kt, "init"));
  int a = 0;
  uint64_t round = 0;
  for (int t1 = 0; t1 < p->t1; ++t1) {
    VICK_TRY(vick_timer_start(call, &w->env));
    for (int t2 = 0; t2 < p->t2; ++t2) {
      if (p->pairs == VICK_GRNND_PAIRS_KEPT)
        gr_update_kept_kernel<<<blocks, 32 * GR_WARPS, 0, w->env.stream>>>(x, n, d, R, gr_pool(w, a),
                                                                          gr_pool(w, 1 - a), call->seed, ++round);
      else
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
  VICK_TRY(vick_timer_start(call, &w->env));
  VICK_CUDA(call, cudaMemsetAsync(w->edges.p, 0, 8, w->env.stream));
  gr_final_kernel<<<blocks, 32 * GR_WARPS, 0, w->env.stream>>>(n, R, gr_pool(w, a), (int32_t *)w->ids.p,
                                                               (float *)w->dist.p, (unsigned long long *)w->edges.p);
  VICK_LAUNCH(call, "gr_final_kernel");
  VICK_TRY(vick_timer_stop(call, &w->env, &kt, "final"));
  call->seconds_kernel += kt;
  return VICK_OK;
}

static int gr_run(vick_call *call, gr_ws *w, const float *rows, int64_t n, int d, const vick_grnnd_params *p,
                  int32_t *ids, float *dist, double *mean_degree) {
  const int R = p->r;
  if (dist) VICK_TRY(vick_buf_alloc(call, &w->env, &w->dist, (size_t)n * R * 4, "GRNND distances"));
  VICK_TRY(gr_upload(call, w, rows, n, d, R));
  VICK_TRY(gr_graph(call, w, n, d, p));
  double th = vick_now();
  VICK_TRY(vick_copy_to_host(call, &w->env, ids, w->ids.p, (size_t)n * R * 4));
  if (dist) VICK_TRY(vick_copy_to_host(call, &w->env, dist, w->dist.p, (size_t)n * R * 4));
  VICK_TRY(gr_mean_degree(call, &w->env, w->edges.p, n, mean_degree));
  vick_stage_add(call, "download", vick_now() - th);
  return VICK_OK;
}

static int gr_check(vick_call *call, const float *rows, int64_t n, int32_t d, const vick_grnnd_params *p) {
  if (!rows || !p || n < 2 || d < 1)
    return vick_fail(call, VICK_ARGUMENT, "GRNND: needs rows, n >= 2, d >= 1 and an output graph");
  if (n >= ((int64_t)1 << 31) - 1) return vick_fail(call, VICK_ARGUMENT, "GRNND: n = %lld >= 2^31 - 1", (long long)n);
  if (p->r < 8 || p->r > GR_RMAX || p->s < 1 || p->s > p->r || p->t1 < 1 || p->t2 < 1 || !(p->rho > 0.f) ||
      p->rho > 1.f || (p->pairs != VICK_GRNND_PAIRS_KEPT && p->pairs != VICK_GRNND_PAIRS_RANDOM))
    return vick_fail(call, VICK_ARGUMENT,
                     "GRNND: parameters out of range (S = %d in 1..R, R = %d in 8..%d, T1 = %d, T2 = %d >= 1, "
                     "rho = %g in (0, 1], pairs %d)",
                     (int)p->s, (int)p->r, GR_RMAX, (int)p->t1, (int)p->t2, (double)p->rho, (int)p->pairs);
  return VICK_OK;
}

static void gr_free(gr_ws *w) {
  vick_buf_free(&w->env, &w->x);
  for (int b = 0; b < 2; ++b) {
    vick_buf_free(&w->env, &w->key[b]);
    vick_buf_free(&w->env, &w->cnt[b]);
  }
  vick_buf_free(&w->env, &w->ids);
  vick_buf_free(&w->env, &w->dist);
  vick_buf_free(&w->env, &w->edges);
}

int vick_grnnd_build(vick_call *call, const float *rows, int64_t n, int32_t d, const vick_grnnd_params *p,
                     int32_t *ids, float *dist, double *mean_degree) {
  if (!call) return VICK_ARGUMENT;
  if (!ids) return vick_fail(call, VICK_ARGUMENT, "GRNND: needs rows, n >= 2, d >= 1 and an output graph");
  VICK_TRY(gr_check(call, rows, n, d, p));
  gr_ws w;
  memset(&w, 0, sizeof w);
  int rc = vick_begin(call, &w.env);
  if (rc == VICK_OK) rc = gr_run(call, &w, rows, n, d, p, ids, dist, mean_degree);
  const double tf = vick_now();
  gr_free(&w);
  if (rc == VICK_OK) vick_stage_add(call, "release", vick_now() - tf);
  return vick_end(call, &w.env, rc);
}

int vick_grnnd_index(vick_call *call, const float *rows, int64_t n, int32_t d, const vick_grnnd_params *p,
                     int32_t max_entries, vick_gsearch **out, double *mean_degree) {
  if (!call) return VICK_ARGUMENT;
  if (!out) return vick_fail(call, VICK_ARGUMENT, "GRNND: no place for the search graph");
  *out = NULL;
  VICK_TRY(gr_check(call, rows, n, d, p));
  if (max_entries < 0 || max_entries > GS_PIVOTS_MAX)
    return vick_fail(call, VICK_ARGUMENT, "GRNND: %d entry points asked, 0..%d allowed", (int)max_entries,
                     GS_PIVOTS_MAX);
  gr_ws w;
  memset(&w, 0, sizeof w);
  int rc = vick_begin(call, &w.env);
  if (rc == VICK_OK) rc = gr_upload(call, &w, rows, n, d, p->r);
  if (rc == VICK_OK) rc = gr_graph(call, &w, n, d, p);
  if (rc == VICK_OK) rc = gr_mean_degree(call, &w.env, w.edges.p, n, mean_degree);
  /* the pools go before the search graph's own buffers are made */
  for (int b = 0; b < 2; ++b) {
    vick_buf_free(&w.env, &w.key[b]);
    vick_buf_free(&w.env, &w.cnt[b]);
  }
  if (rc == VICK_OK) {
    const double ta = vick_now();
    rc = gs_adopt(call, &w.env, n, d, (float *)w.x.p, (int32_t *)w.ids.p, p->r, NULL, max_entries, out);
    w.x.p = NULL; /* the search graph owns (or has freed) them now */
    w.ids.p = NULL;
    if (rc == VICK_OK) vick_stage_add(call, "search graph", vick_now() - ta);
  }
  gr_free(&w);
  return vick_end(call, &w.env, rc);
}
