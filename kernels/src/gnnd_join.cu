/* Incremental growth by an asymmetric join (GGM, Sec. 5, restricted to the
 * pairs that involve a new row): the new rows' own graph comes from GNND,
 * then only the new rows are the centres of the join.  A new row u expands
 * the nearest NEW entries x of its list: the old graph's list of x when x
 * is old, the k nearest old rows x has found when x is new, are the
 * candidates c; u keeps the good ones and is offered to c's list in
 * return (the reverse update).  Old rows are touched only when a new row lands in their list,
 * so the cost follows the number of new rows, not the graph's size.
 *
 * The join starts each new row next to its seeds, its nearest of an
 * evenly spaced sample of the old rows, compared exactly.
 *
 * Lists: a new row's working list is JW entries in one warp-sized segment
 * with a NEW flag per entry; an old row's list is the caller's k entries.
 * Ids are over the union (old rows first), GNND_EMPTY / +inf pads; every
 * list is sorted by (distance, id) and changed only under its spin-lock. */
#include "gnnd_internal.h"
#include "prims/rng.cuh"
#include "prims/sort.cuh"
#include "prims/warp.cuh"
#include "staged_copy.cuh"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define FULL VICK_FULL_MASK
#define JW 32 /* a new row's working list: one warp, one lock */
#define JOIN_GROUP 8 /* lanes per candidate distance: four candidates per warp at once */
#define JOIN_SAMPLE 2048 /* evenly spaced old rows each new row is compared with for its seeds */

typedef struct {
  const float *rows;       /* n_old + n_new rows, old first */
  int64_t n_old, n_new;
  int32_t d, k, picks;
  int32_t *ol_ids;         /* n_old x k */
  float *ol_dist;
  int *ol_lock;
  int32_t *nl_ids;         /* n_new x JW */
  float *nl_dist;
  unsigned char *nl_flag;  /* 1 = NEW: not yet expanded */
  int *nl_lock;
  unsigned long long *counter; /* insertions into new rows' lists in this iteration */
  uint64_t seed;
} join_dev;

/* Insert (v, dv) into the sorted list of W <= 32 entries at base, under
 * lock; flags (may be NULL) mark the entry NEW.  Whole warp; returns 1
 * when inserted (not a repeat, not beyond the list). */
__device__ int join_insert(int32_t *ids, float *dist, unsigned char *flags, int *lock, int64_t base, int W, int v,
                           float dv, int lane) {
  volatile int32_t *vid = ids + base;
  volatile float *vd = dist + base;
  volatile unsigned char *vf = flags ? flags + base : NULL;
  float wd = 0.f;
  int wi = 0;
  if (lane == 0) { wd = vd[W - 1]; wi = vid[W - 1]; }
  wd = __shfl_sync(FULL, wd, 0);
  wi = __shfl_sync(FULL, wi, 0);
  if (!vick_before(dv, v, wd, wi)) return 0; /* re-checked under the lock */
  if (lane == 0) {
    while (atomicCAS(lock, 0, 1) != 0) __nanosleep(32);
  }
  __syncwarp();
  __threadfence();
  const bool in = lane < W;
  int my_id = in ? vid[lane] : GNND_EMPTY;
  float my_d = in ? vd[lane] : INFINITY;
  int my_f = (in && vf) ? vf[lane] : 0;
  bool dup = __any_sync(FULL, in && my_id == v);
  int pos = __popc(__ballot_sync(FULL, in && vick_before(my_d, my_id, dv, v)));
  int ok = !dup && pos < W;
  int up_id = __shfl_up_sync(FULL, my_id, 1);
  float up_d = __shfl_up_sync(FULL, my_d, 1);
  int up_f = __shfl_up_sync(FULL, my_f, 1);
  if (ok && in && lane >= pos) {
    vid[lane] = lane == pos ? v : up_id;
    vd[lane] = lane == pos ? dv : up_d;
    if (vf) vf[lane] = (unsigned char)(lane == pos ? 1 : up_f);
  }
  __threadfence();
  __syncwarp();
  if (lane == 0) atomicExch(lock, 0);
  return ok;
}

/* Old lists as given (-1 / any distance pads) into the join's form. */
__global__ void join_old_in_kernel(int32_t *ids, float *dist, int *lock, int64_t cells, int32_t k) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= cells) return;
  if (ids[i] < 0) { ids[i] = GNND_EMPTY; dist[i] = INFINITY; }
  if (i % k == 0) lock[i / k] = 0;
}

#define SEED_TILE 256 /* sample rows per shared-memory tile (one per thread) */
#define SEED_DIMS 32  /* dimensions per tile */
#define NSEED 8       /* seeds per new row */

/* Sample row s of S evenly spaced old rows. */
__device__ __forceinline__ int64_t seed_sample(const join_dev &j, int s, int S) { return (int64_t)s * j.n_old / S; }

/* Seeds: each new row's nearest NSEED of S evenly spaced old rows (exact
 * distances, one warp per new row, the sample in shared-memory tiles), so
 * the join starts next to each row instead of at random old rows. */
__global__ void __launch_bounds__(256) join_seed_kernel(join_dev j, int S, int32_t *seeds) {
  __shared__ float tile[SEED_DIMS][SEED_TILE];
  __shared__ float urow[8][SEED_DIMS];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t w = (int64_t)blockIdx.x * 8 + warp;
  const bool active = w < j.n_new; /* no early return: the block shares the tiles */
  const float *ru = j.rows + (j.n_old + (active ? w : 0)) * j.d;
  float best_d = INFINITY;
  int best_id = GNND_EMPTY;
  for (int s0 = 0; s0 < S; s0 += SEED_TILE) {
    float acc[SEED_TILE / 32];
#pragma unroll
    for (int i = 0; i < SEED_TILE / 32; ++i) acc[i] = 0.f;
    const int s_mine = s0 + (int)threadIdx.x;
    const float *rs = j.rows + seed_sample(j, s_mine < S ? s_mine : 0, S) * j.d;
    for (int c0 = 0; c0 < j.d; c0 += SEED_DIMS) {
      __syncthreads();
      for (int t = 0; t < SEED_DIMS; ++t) tile[t][threadIdx.x] = (s_mine < S && c0 + t < j.d) ? rs[c0 + t] : 0.f;
      urow[warp][lane] = c0 + lane < j.d ? ru[c0 + lane] : 0.f;
      __syncthreads();
      for (int t = 0; t < SEED_DIMS; ++t) {
        const float uv = urow[warp][t];
#pragma unroll
        for (int i = 0; i < SEED_TILE / 32; ++i) {
          float q = uv - tile[t][lane + 32 * i];
          acc[i] = fmaf(q, q, acc[i]);
        }
      }
    }
#pragma unroll
    for (int i = 0; i < SEED_TILE / 32; ++i) {
      const int s = s0 + lane + 32 * i;
      if (s < S) {
        const int id = (int)seed_sample(j, s, S);
        if (vick_before(acc[i], id, best_d, best_id)) { best_d = acc[i]; best_id = id; }
      }
    }
  }
  vick_warp_sort(best_d, best_id);
  if (active && lane < NSEED) seeds[w * NSEED + lane] = best_id;
}

/* A new row's first list: the nearest JW/2 of its own graph (g, gk wide,
 * ids local to the new rows), its NSEED seeds and random old rows, all
 * NEW. */
__global__ void join_init_kernel(join_dev j, const int32_t *g_ids, const float *g_dist, int32_t gk,
                                 const int32_t *seeds) {
  int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  int lane = threadIdx.x & 31;
  if (w >= j.n_new) return;
  const int keep = JW / 2;
  const int64_t ug = j.n_old + w;
  int id = GNND_EMPTY, f = 0;
  float dd = INFINITY;
  if (lane < keep && lane < gk) {
    int v = g_ids[w * gk + lane];
    if (v >= 0 && v < j.n_new && v != w) { id = (int)(j.n_old + v); dd = g_dist[w * gk + lane]; f = 1; }
  }
  const bool want = lane >= keep;
  int cand = GNND_EMPTY;
  if (want && lane < keep + NSEED) cand = seeds[w * NSEED + lane - keep];
  else if (want) cand = (int)(vick_rand3(j.seed, (uint64_t)w, (uint64_t)lane, 0x6a6f696eull) % (uint64_t)j.n_old);
  /* one lane per distinct old row (kept entries are new rows: never equal) */
  unsigned same = __match_any_sync(FULL, want ? cand : -1 - lane);
  if (want && cand != GNND_EMPTY && __ffs(same) - 1 == lane) { id = cand; f = 1; }
  unsigned todo = __ballot_sync(FULL, want && id != GNND_EMPTY);
  const float *ru = j.rows + ug * j.d;
  while (todo) {
    int src = __ffs(todo) - 1;
    todo &= todo - 1;
    int v = __shfl_sync(FULL, id, src);
    float x = vick_warp_l2(ru, j.rows + (int64_t)v * j.d, j.d, lane);
    if (lane == src) dd = x;
  }
  vick_warp_sort(dd, id, f);
  j.nl_ids[w * JW + lane] = id;
  j.nl_dist[w * JW + lane] = dd;
  j.nl_flag[w * JW + lane] = (unsigned char)f;
  if (lane == 0) j.nl_lock[w] = 0;
}

/* One join iteration, one warp per new row (see the file comment). */
__global__ void __launch_bounds__(256) join_kernel(join_dev j) {
  int64_t w = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  int lane = threadIdx.x & 31;
  if (w >= j.n_new) return;
  const int64_t base = w * JW;
  const int ug = (int)(j.n_old + w);
  const float *ru = j.rows + (int64_t)ug * j.d;
  volatile int32_t *vid = j.nl_ids + base;
  volatile float *vd = j.nl_dist + base;
  volatile unsigned char *vf = j.nl_flag + base;
  /* the nearest `picks` NEW entries, turned OLD under the lock */
  if (lane == 0) {
    while (atomicCAS(j.nl_lock + w, 0, 1) != 0) __nanosleep(32);
  }
  __syncwarp();
  __threadfence();
  int pick_id = vid[lane];
  bool flagged = vf[lane] && pick_id != GNND_EMPTY;
  unsigned fm = __ballot_sync(FULL, flagged);
  bool pick = flagged && __popc(fm & ((1u << lane) - 1u)) < j.picks;
  if (pick) vf[lane] = 0;
  __threadfence();
  __syncwarp();
  if (lane == 0) atomicExch(j.nl_lock + w, 0);
  unsigned pm = __ballot_sync(FULL, pick);
  int inserted = 0;
  const int g = lane / JOIN_GROUP, sub = lane % JOIN_GROUP;
  while (pm) {
    int src = __ffs(pm) - 1;
    pm &= pm - 1;
    int x = __shfl_sync(FULL, pick_id, src);
    int c = GNND_EMPTY;
    if (x < j.n_old) {
      if (lane < j.k) c = ((volatile int32_t *)j.ol_ids)[(int64_t)x * j.k + lane];
    } else {
      /* a new neighbour passes on the old rows it has found (GNND already
       * joined the new rows among themselves) */
      int e = ((volatile int32_t *)j.nl_ids)[(x - j.n_old) * JW + lane];
      bool is_old = e != GNND_EMPTY && e >= 0 && e < j.n_old;
      unsigned om = __ballot_sync(FULL, is_old);
      if (is_old && __popc(om & ((1u << lane) - 1u)) < j.k) c = e;
    }
    /* drop what u's list holds already (read now: it changes) */
    int own = vid[lane];
    float own_d = vd[lane];
    float worst_d = __shfl_sync(FULL, own_d, JW - 1);
    int worst_id = __shfl_sync(FULL, own, JW - 1);
    bool ok = c != GNND_EMPTY && c >= 0 && c != ug;
    for (int t = 0; t < 32; ++t) {
      int o = __shfl_sync(FULL, own, t);
      ok = ok && c != o;
    }
    /* distances, JOIN_GROUP lanes per candidate; lane of c keeps d(u, c) */
    float my_dd = INFINITY;
    unsigned rem = __ballot_sync(FULL, ok);
    while (rem) {
      int s[4];
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        s[q] = rem ? __ffs(rem) - 1 : -1;
        if (rem) rem &= rem - 1;
      }
      int mine = g == 0 ? s[0] : g == 1 ? s[1] : g == 2 ? s[2] : s[3];
      int cid = __shfl_sync(FULL, c, mine < 0 ? 0 : mine);
      float part = 0.f;
      if (mine >= 0) {
        const float *rc = j.rows + (int64_t)cid * j.d;
        for (int t = sub; t < j.d; t += JOIN_GROUP) {
          float q = ru[t] - rc[t];
          part = fmaf(q, q, part);
        }
      }
#pragma unroll
      for (int off = JOIN_GROUP / 2; off > 0; off >>= 1) part += __shfl_xor_sync(FULL, part, off);
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        float val = __shfl_sync(FULL, part, q * JOIN_GROUP);
        if (lane == s[q]) my_dd = val;
      }
    }
    /* into u's own list */
    unsigned im = __ballot_sync(FULL, ok && vick_before(my_dd, c, worst_d, worst_id));
    while (im) {
      int s = __ffs(im) - 1;
      im &= im - 1;
      int v = __shfl_sync(FULL, c, s);
      float dv = __shfl_sync(FULL, my_dd, s);
      inserted += join_insert(j.nl_ids, j.nl_dist, j.nl_flag, j.nl_lock + w, base, JW, v, dv, lane);
    }
    /* u offered to c's list (the reverse update) */
    float rw = INFINITY;
    int rwi = GNND_EMPTY;
    if (ok) {
      if (c < j.n_old) {
        rw = ((volatile float *)j.ol_dist)[(int64_t)c * j.k + j.k - 1];
        rwi = ((volatile int32_t *)j.ol_ids)[(int64_t)c * j.k + j.k - 1];
      } else {
        rw = ((volatile float *)j.nl_dist)[(c - j.n_old) * JW + JW - 1];
        rwi = ((volatile int32_t *)j.nl_ids)[(c - j.n_old) * JW + JW - 1];
      }
    }
    unsigned rm = __ballot_sync(FULL, ok && vick_before(my_dd, ug, rw, rwi));
    while (rm) {
      int s = __ffs(rm) - 1;
      rm &= rm - 1;
      int v = __shfl_sync(FULL, c, s);
      float dv = __shfl_sync(FULL, my_dd, s);
      if (v < j.n_old)
        join_insert(j.ol_ids, j.ol_dist, NULL, j.ol_lock + v, (int64_t)v * j.k, j.k, ug, dv, lane);
      else
        inserted += join_insert(j.nl_ids, j.nl_dist, j.nl_flag, j.nl_lock + (v - j.n_old), (v - j.n_old) * JW, JW,
                                ug, dv, lane);
    }
  }
  if (lane == 0 && inserted) atomicAdd(j.counter, (unsigned long long)inserted);
}

/* Results in the caller's form: old lists in place, the new rows' first k
 * into out; GNND_EMPTY becomes -1. */
__global__ void join_out_kernel(join_dev j, int32_t *new_ids, float *new_dist) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int64_t old_cells = j.n_old * j.k, new_cells = j.n_new * j.k;
  if (i < old_cells) {
    if (j.ol_ids[i] == GNND_EMPTY) { j.ol_ids[i] = -1; j.ol_dist[i] = INFINITY; }
  } else if (i < old_cells + new_cells) {
    int64_t e = i - old_cells, u = e / j.k, t = e % j.k;
    int v = j.nl_ids[u * JW + t];
    new_ids[e] = v == GNND_EMPTY ? -1 : v;
    new_dist[e] = v == GNND_EMPTY ? INFINITY : j.nl_dist[u * JW + t];
  }
}

static unsigned blocks_of(int64_t threads, int per) { return (unsigned)((threads + per - 1) / per); }

typedef struct {
  vick_env env;
  vick_stage stage;
  vick_buf rows, ol_ids, ol_dist, ol_lock, nl_ids, nl_dist, nl_flag, nl_lock, counter, g_ids, g_dist, seeds;
  gnnd_dev gn;
} join_ws;

static void join_ws_free(join_ws *w) {
  vick_buf *b[] = {&w->rows, &w->ol_ids, &w->ol_dist, &w->ol_lock, &w->nl_ids, &w->nl_dist,
                   &w->nl_flag, &w->nl_lock, &w->counter, &w->g_ids, &w->g_dist, &w->seeds};
  for (size_t i = 0; i < sizeof b / sizeof b[0]; ++i) vick_buf_free(&w->env, b[i]);
  gnnd__free(&w->gn);
  vick_stage_free(&w->stage);
}

static int join_run(vick_call *call, join_ws *w, const float *rows_old, int64_t n_old, const float *rows_new,
                    int64_t n_new, int32_t d, const vick_gnnd_params *p, int32_t picks, int32_t k,
                    const int32_t *old_ids, const float *old_dist, const vick_gnnd_graph *g_new, int32_t *out_ids,
                    float *out_dist) {
  const int64_t n = n_old + n_new;
  cudaStream_t st = w->env.stream;
  vick_env *env = &w->env;
  double t = gnnd__now();
  VICK_TRY(vick_stage_init(call, &w->stage, (size_t)32 << 20));
  VICK_TRY(vick_buf_alloc(call, env, &w->rows, (size_t)n * d * 4, "rows"));
  VICK_TRY(vick_buf_alloc(call, env, &w->ol_ids, (size_t)n_old * k * 4, "old lists"));
  VICK_TRY(vick_buf_alloc(call, env, &w->ol_dist, (size_t)n_old * k * 4, "old lists"));
  VICK_TRY(vick_buf_alloc(call, env, &w->ol_lock, (size_t)n_old * 4, "old list locks"));
  VICK_TRY(vick_buf_alloc(call, env, &w->nl_ids, (size_t)n_new * JW * 4, "new lists"));
  VICK_TRY(vick_buf_alloc(call, env, &w->nl_dist, (size_t)n_new * JW * 4, "new lists"));
  VICK_TRY(vick_buf_alloc(call, env, &w->nl_flag, (size_t)n_new * JW, "new lists"));
  VICK_TRY(vick_buf_alloc(call, env, &w->nl_lock, (size_t)n_new * 4, "new list locks"));
  VICK_TRY(vick_buf_alloc(call, env, &w->counter, sizeof(unsigned long long), "counter"));
  float *d_rows = (float *)w->rows.p;
  VICK_TRY(vick_staged_to_device(call, env, &w->stage, d_rows, rows_old, (size_t)n_old * d * 4));
  VICK_TRY(vick_staged_to_device(call, env, &w->stage, d_rows + (size_t)n_old * d, rows_new, (size_t)n_new * d * 4));
  VICK_TRY(vick_staged_to_device(call, env, &w->stage, w->ol_ids.p, old_ids, (size_t)n_old * k * 4));
  VICK_TRY(vick_staged_to_device(call, env, &w->stage, w->ol_dist.p, old_dist, (size_t)n_old * k * 4));
  join_old_in_kernel<<<blocks_of(n_old * k, 256), 256, 0, st>>>((int32_t *)w->ol_ids.p, (float *)w->ol_dist.p,
                                                                (int *)w->ol_lock.p, n_old * k, k);
  VICK_LAUNCH(call, "ggm join: old lists");
  gnnd__stage(call, "upload", gnnd__now() - t);

  /* the new rows' own graph: given, or GNND here */
  t = gnnd__now();
  int32_t gk = g_new ? g_new->k : JW;
  const size_t g_cells = (size_t)n_new * (size_t)(gk > k ? gk : k); /* also holds the new rows' results */
  VICK_TRY(vick_buf_alloc(call, env, &w->g_ids, g_cells * 4, "new rows' graph"));
  VICK_TRY(vick_buf_alloc(call, env, &w->g_dist, g_cells * 4, "new rows' graph"));
  if (g_new) {
    VICK_TRY(vick_staged_to_device(call, env, &w->stage, w->g_ids.p, g_new->ids, (size_t)n_new * gk * 4));
    VICK_TRY(vick_staged_to_device(call, env, &w->stage, w->g_dist.p, g_new->dist, (size_t)n_new * gk * 4));
  } else {
    /* lists as wide as the join keeps (the join refines them further) */
    vick_gnnd_params q = *p;
    q.k_build = JW;
    gnnd__setup(&w->gn, d, &q, call->seed);
    VICK_TRY(gnnd__alloc(call, &w->gn, n_new, 0));
    VICK_CUDA(call, cudaDeviceSynchronize()); /* the lock clear ran on the legacy stream */
    VICK_TRY(gnnd__build_run(call, &w->gn, d_rows + (size_t)n_old * d, n_new, &q, gk, (int32_t *)w->g_ids.p,
                             (float *)w->g_dist.p, st));
    VICK_CUDA(call, cudaStreamSynchronize(st));
    gnnd__free(&w->gn); /* its memory is not needed by the join */
    gnnd__stage(call, "gnnd build new", gnnd__now() - t);
  }
  call->seconds_kernel += gnnd__now() - t;

  /* the join */
  t = gnnd__now();
  join_dev j;
  j.rows = d_rows;
  j.n_old = n_old;
  j.n_new = n_new;
  j.d = d;
  j.k = k;
  j.picks = picks;
  j.ol_ids = (int32_t *)w->ol_ids.p;
  j.ol_dist = (float *)w->ol_dist.p;
  j.ol_lock = (int *)w->ol_lock.p;
  j.nl_ids = (int32_t *)w->nl_ids.p;
  j.nl_dist = (float *)w->nl_dist.p;
  j.nl_flag = (unsigned char *)w->nl_flag.p;
  j.nl_lock = (int *)w->nl_lock.p;
  j.counter = (unsigned long long *)w->counter.p;
  j.seed = call->seed ^ 0x4a4f494eull;
  {
    const int S = n_old < JOIN_SAMPLE ? (int)n_old : JOIN_SAMPLE;
    VICK_TRY(vick_buf_alloc(call, env, &w->seeds, (size_t)n_new * NSEED * 4, "seeds"));
    join_seed_kernel<<<blocks_of(n_new, 8), 256, 0, st>>>(j, S, (int32_t *)w->seeds.p);
    VICK_LAUNCH(call, "ggm join: seeds");
  }
  join_init_kernel<<<blocks_of(n_new * 32, 256), 256, 0, st>>>(j, (const int32_t *)w->g_ids.p,
                                                               (const float *)w->g_dist.p, gk,
                                                               (const int32_t *)w->seeds.p);
  VICK_LAUNCH(call, "ggm join: first lists");
  const int cap = p->merge_iterations > 0 ? p->merge_iterations : p->iterations;
  const double stop_below = (double)p->converge * (double)n_new * JW;
  for (int it = 0; it < cap; ++it) {
    unsigned long long inserted = 0;
    VICK_CUDA(call, cudaMemsetAsync(j.counter, 0, sizeof inserted, st));
    join_kernel<<<blocks_of(n_new * 32, 256), 256, 0, st>>>(j);
    VICK_LAUNCH(call, "ggm join");
    VICK_CUDA(call, cudaMemcpyAsync(&inserted, j.counter, sizeof inserted, cudaMemcpyDeviceToHost, st));
    VICK_CUDA(call, cudaStreamSynchronize(st));
    VICK_TRY(vick_poll(call, "ggm add", (double)(it + 1) / cap));
    if ((double)inserted < stop_below) break;
  }
  /* the new rows' k into the (now free) graph buffer, old lists in place */
  join_out_kernel<<<blocks_of(n * k, 256), 256, 0, st>>>(j, (int32_t *)w->g_ids.p, (float *)w->g_dist.p);
  VICK_LAUNCH(call, "ggm join: results");
  VICK_CUDA(call, cudaStreamSynchronize(st));
  call->seconds_kernel += gnnd__now() - t;
  gnnd__stage(call, "ggm join", gnnd__now() - t);

  t = gnnd__now();
  VICK_TRY(vick_staged_to_host(call, env, &w->stage, out_ids, j.ol_ids, (size_t)n_old * k * 4));
  VICK_TRY(vick_staged_to_host(call, env, &w->stage, out_dist, j.ol_dist, (size_t)n_old * k * 4));
  VICK_TRY(vick_staged_to_host(call, env, &w->stage, out_ids + (size_t)n_old * k, w->g_ids.p, (size_t)n_new * k * 4));
  VICK_TRY(vick_staged_to_host(call, env, &w->stage, out_dist + (size_t)n_old * k, w->g_dist.p, (size_t)n_new * k * 4));
  gnnd__stage(call, "download", gnnd__now() - t);
  return VICK_OK;
}

int vick_gnnd_join(vick_call *call, const float *rows_old, int64_t n_old, const float *rows_new, int64_t n_new,
                   int32_t d, const vick_gnnd_params *p, int32_t picks, int32_t k, const int32_t *old_ids,
                   const float *old_dist, const vick_gnnd_graph *g_new, int32_t *out_ids, float *out_dist) {
  if (!p || picks < 1 || picks > JW || !rows_old || !rows_new || !old_ids || !old_dist || !out_ids || !out_dist || n_old < 1 || n_new < 1 ||
      d < 1 || k < 1 || k > JW || (!g_new && n_new < 2) || n_old + n_new > 0x7ffffffeLL ||
      (g_new && (g_new->n != n_new || g_new->k < 1 || !g_new->ids || !g_new->dist)))
    return vick_fail(call, VICK_ARGUMENT, "ggm join: bad arguments (k and picks must be in 1..%d, a new rows' graph or >= 2 new "
                     "rows)", JW);
  if (!g_new) {
    int rc = gnnd__check_params(call, n_new, d, p, JW);
    if (rc) return rc;
  }
  join_ws w;
  memset(&w, 0, sizeof w);
  int rc = vick_begin(call, &w.env);
  if (rc == VICK_OK)
    rc = join_run(call, &w, rows_old, n_old, rows_new, n_new, d, p, picks, k, old_ids, old_dist, g_new, out_ids,
                  out_dist);
  if (w.env.stream) cudaStreamSynchronize(w.env.stream);
  join_ws_free(&w);
  return vick_end(call, &w.env, rc);
}
