/* The incremental add by graph search (vic_kernels_add.h).
 *
 * Steps, all on one device after one upload of the rows and the old ids:
 *  1. search graph over the old rows: each row's list, then the reverse
 *     edges (old rows that list it) up to the degree: the old lists are
 *     k wide, too narrow to search well alone, and the reverse edges
 *     reach the rows a list leaves out (the add's own join lost most of
 *     its recall without them);
 *  2. the large-batch graph search of every new row: its W nearest old
 *     rows (graph_search_large.cu), in chunks of new rows whose ids are
 *     kept in 32 bits (the search's 64-bit ids and distances held for one
 *     chunk only);
 *  3. each old row collects the new rows whose search found it (capped);
 *  4. new lists: one warp per row keeps the best k candidates in its
 *     lanes (lane t holds entry t): a new row tries the rows it found and
 *     the new rows that found its nearest found rows; an old row tries its
 *     own list, the new rows that found it and those that found its first
 *     list entries, and optionally its first entries' lists (the old
 *     lists' own local join, which lifts them above what they came with).
 * Distances are computed by the same routine from both sides, so that a
 * pair has one distance wherever it appears. */
#include "graph_search.cuh"
#include "staged_copy.cuh"
#include "vic_kernels_add.h"

#include <math.h>
#include <string.h>

#define KA_FULL 0xffffffffu
#define KA_WARPS 4 /* warps per block of the list kernels */

/* ------------------------------------------------------------- graph */
/* Row i of the search graph: its list's ids first, -1 after them; cnt[i]
 * the number written (where the reverse edges go on). */
__global__ void ka_forward(const int64_t *__restrict__ old_ids, int64_t n_old, int k, int D, int32_t *g, int *cnt) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n_old) return;
  int c = 0;
  for (int t = 0; t < k; ++t) {
    const int64_t id = old_ids[i * k + t];
    if (id >= 0) g[i * D + c++] = (int32_t)id;
  }
  for (int t = c; t < D; ++t) g[i * D + t] = -1;
  cnt[i] = c;
}

/* Edge v -> u of the old lists adds u -> v unless u lists v already;
 * rows that are listed by more rows than their free slots keep the first
 * that come. */
__global__ void ka_reverse(const int64_t *__restrict__ old_ids, int64_t n_old, int k, int D, int32_t *g, int *cnt) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n_old * k) return;
  const int64_t v = i / k, u = old_ids[i];
  if (u < 0) return;
  for (int s = 0; s < k; ++s)
    if (old_ids[u * k + s] == v) return;
  const int slot = atomicAdd(cnt + u, 1);
  if (slot < D) g[u * D + slot] = (int32_t)v;
}

/* A chunk's found ids in 32 bits (rows < 2^31 - 1; -1 stays -1). */
__global__ void ka_narrow(const int64_t *__restrict__ in, int64_t count, int32_t *out) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) out[i] = (int32_t)in[i];
}

/* Old row v collects the new rows whose search found it (the first
 * `reverse` that come). */
__global__ void ka_found(const int32_t *__restrict__ found, int64_t n_new, int W, int R, int *rc, int32_t *rl) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n_new * W) return;
  const int64_t v = found[i];
  if (v < 0) return;
  const int slot = atomicAdd(rc + v, 1);
  if (slot < R) rl[v * R + slot] = (int32_t)(i / W);
}

/* ------------------------------------------------------------- lists */
/* Squared distance of rows a and b by the eight lanes of a group (gl: the
 * lane in the group), summed over the group in a fixed order: every group
 * gets the same value for the same pair, whichever row is a.  Rows of a
 * multiple of four floats are read four at a time (the device rows start
 * 16-byte aligned), so that a lane has few loads in flight one after the
 * other. */
__device__ __forceinline__ float ka_group_dist(const float *__restrict__ a, const float *__restrict__ b, int d,
                                               int gl) {
  float s = 0.f;
  if ((d & 3) == 0) {
    const float4 *a4 = (const float4 *)a, *b4 = (const float4 *)b;
#pragma unroll 4
    for (int j = gl; j < (d >> 2); j += 8) {
      const float4 u = __ldg(a4 + j), v = __ldg(b4 + j);
      const float t0 = u.x - v.x, t1 = u.y - v.y, t2 = u.z - v.z, t3 = u.w - v.w;
      s = fmaf(t0, t0, fmaf(t1, t1, fmaf(t2, t2, fmaf(t3, t3, s))));
    }
  } else {
#pragma unroll 4
    for (int j = gl; j < d; j += 8) {
      const float t = __ldg(a + j) - __ldg(b + j);
      s = fmaf(t, t, s);
    }
  }
  s += __shfl_xor_sync(KA_FULL, s, 4, 8);
  s += __shfl_xor_sync(KA_FULL, s, 2, 8);
  s += __shfl_xor_sync(KA_FULL, s, 1, 8);
  return s;
}

/* The warp's list (lane t: entry t < k, ascending by (distance, id), -1 /
 * +inf when empty) takes candidate c at distance x unless it holds c
 * already or k better entries. */
__device__ __forceinline__ void ka_insert(float &md, int &mi, int k, int lane, int c, float x) {
  if (__ballot_sync(KA_FULL, lane < k && mi == c)) return;
  const bool before = lane < k && (md < x || (md == x && mi < c));
  const int pos = __popc(__ballot_sync(KA_FULL, before));
  if (pos >= k) return;
  const float ud = __shfl_up_sync(KA_FULL, md, 1);
  const int ui = __shfl_up_sync(KA_FULL, mi, 1);
  if (lane == pos) {
    md = x;
    mi = c;
  } else if (lane > pos && lane < k) {
    md = ud;
    mi = ui;
  }
}

/* Up to 32 candidates (one id per lane, -1: none; any order) tried against
 * row q: compacted through the warp's scratch, then four at a time, one
 * group of eight lanes per distance. */
__device__ __forceinline__ void ka_batch(const float *__restrict__ x, int d, const float *__restrict__ q, int id,
                                         int lane, int32_t *scratch, float &md, int &mi, int k) {
  const unsigned has = __ballot_sync(KA_FULL, id >= 0);
  const int count = __popc(has);
  if (count == 0) return;
  if (id >= 0) scratch[__popc(has & ((1u << lane) - 1u))] = id;
  __syncwarp();
  const int mine = lane < count ? scratch[lane] : -1;
  __syncwarp();
  const int grp = lane >> 3, gl = lane & 7;
  for (int r = 0; r < count; r += 4) {
    const int cid = __shfl_sync(KA_FULL, mine, (r + grp) & 31);
    const bool ok = r + grp < count;
    const float dist = ka_group_dist(q, x + (size_t)(ok ? cid : 0) * d, d, gl);
    for (int g = 0; g < 4 && r + g < count; ++g) {
      const int c = __shfl_sync(KA_FULL, cid, 8 * g);
      const float dc = __shfl_sync(KA_FULL, dist, 8 * g);
      ka_insert(md, mi, k, lane, c, dc);
    }
  }
}

/* The new rows that found old row v, as global ids, one per lane (-1: none). */
__device__ __forceinline__ int ka_founders(const int *__restrict__ rc, const int32_t *__restrict__ rl, int64_t v, int R,
                                           int64_t n_old, int lane, int32_t skip) {
  const int c = min(__ldg(rc + v), R);
  if (lane >= c) return -1;
  const int32_t u = __ldg(rl + v * R + lane);
  return u == skip ? -1 : (int)(n_old + u);
}

/* One warp per new row u: the rows it found, then the new rows that found
 * its first J found rows. */
__global__ void ka_new_lists(const float *__restrict__ x, int64_t n_old, int64_t n_new, int d,
                             const int32_t *__restrict__ found, int W, int J, const int *__restrict__ rc,
                             const int32_t *__restrict__ rl, int R, int k, int32_t *oid, float *odist) {
  __shared__ int32_t scratch[KA_WARPS][32];
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int64_t u = (int64_t)blockIdx.x * KA_WARPS + w;
  if (u >= n_new) return;
  const float *q = x + (size_t)(n_old + u) * d;
  float md = INFINITY;
  int mi = -1;
  for (int t0 = 0; t0 < W; t0 += 32) {
    const int64_t v = t0 + lane < W ? found[u * W + t0 + lane] : -1;
    ka_batch(x, d, q, (int)v, lane, scratch[w], md, mi, k);
  }
  for (int t = 0; t < J && t < W; ++t) {
    const int64_t v = found[u * W + t];
    if (v < 0) break;
    ka_batch(x, d, q, ka_founders(rc, rl, v, R, n_old, lane, (int32_t)u), lane, scratch[w], md, mi, k);
  }
  if (lane < k) {
    oid[(n_old + u) * k + lane] = mi;
    odist[(n_old + u) * k + lane] = md;
  }
}

/* One warp per old row v: its own list, the new rows that found it, those
 * that found its first J list entries, then the lists of its first F
 * entries (one local-join step among the old rows). */
__global__ void ka_old_lists(const float *__restrict__ x, int64_t n_old, int d, const int64_t *__restrict__ old_ids,
                             int J, int F, const int *__restrict__ rc, const int32_t *__restrict__ rl, int R, int k,
                             int32_t *oid, float *odist) {
  __shared__ int32_t scratch[KA_WARPS][32];
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int64_t v = (int64_t)blockIdx.x * KA_WARPS + w;
  if (v >= n_old) return;
  const float *q = x + (size_t)v * d;
  float md = INFINITY;
  int mi = -1;
  ka_batch(x, d, q, lane < k ? (int)old_ids[v * k + lane] : -1, lane, scratch[w], md, mi, k);
  ka_batch(x, d, q, ka_founders(rc, rl, v, R, n_old, lane, -1), lane, scratch[w], md, mi, k);
  for (int t = 0; t < J && t < k; ++t) {
    const int64_t o = old_ids[v * k + t];
    if (o < 0) break;
    ka_batch(x, d, q, ka_founders(rc, rl, o, R, n_old, lane, -1), lane, scratch[w], md, mi, k);
  }
  for (int t = 0; t < F && t < k; ++t) {
    const int64_t o = old_ids[v * k + t];
    if (o < 0) break;
    const int64_t e = lane < k ? old_ids[o * k + lane] : -1;
    ka_batch(x, d, q, e == v ? -1 : (int)e, lane, scratch[w], md, mi, k);
  }
  if (lane < k) {
    oid[v * k + lane] = mi;
    odist[v * k + lane] = md;
  }
}

/* ------------------------------------------------------------- host */
typedef struct {
  vick_env env;
  vick_stage stage;
  vick_buf x, ids, g, cnt, found, fdist, found32, rc, rl, oid, odist;
  vick_gsearch *gs;
} ka_call;

static void ka_stage(vick_call *call, const char *name, double *t) {
  const double now = vick_now();
  vick_stage_add(call, name, now - *t);
  *t = now;
}

static int ka_sync(vick_call *call, vick_env *env, const char *what) {
  const cudaError_t e = cudaStreamSynchronize(env->stream);
  return e == cudaSuccess ? VICK_OK : vick_cuda_fail(call, e, what, __FILE__, __LINE__);
}

static int ka_run(vick_call *call, ka_call *c, const float *rows_old, int64_t n_old, const float *rows_new,
                  int64_t n_new, int32_t d, const int64_t *old_ids, int32_t k, const vick_add_params *p,
                  int64_t *out_ids, float *out_dist) {
  vick_env *env = &c->env;
  const cudaStream_t st = env->stream;
  const int64_t n = n_old + n_new;
  const int D = p->degree, W = p->width, R = p->reverse;
  const int64_t chunk = p->chunk > 0 ? p->chunk : 262144, per = chunk < n_new ? chunk : n_new;
  double t = vick_now();
  /* everything the call holds, asked for first: a budget too small fails before any copy */
  VICK_TRY(vick_buf_alloc(call, env, &c->x, (size_t)n * d * 4, "add: rows"));
  VICK_TRY(vick_buf_alloc(call, env, &c->ids, (size_t)n_old * k * 8, "add: old lists"));
  VICK_TRY(vick_buf_alloc(call, env, &c->g, (size_t)n_old * D * 4, "add: search graph"));
  VICK_TRY(vick_buf_alloc(call, env, &c->cnt, (size_t)n_old * 4, "add: search graph counts"));
  VICK_TRY(vick_buf_alloc(call, env, &c->found, (size_t)per * W * 8, "add: found rows (a chunk)"));
  VICK_TRY(vick_buf_alloc(call, env, &c->fdist, (size_t)per * W * 4, "add: found distances (a chunk)"));
  VICK_TRY(vick_buf_alloc(call, env, &c->found32, (size_t)n_new * W * 4, "add: found rows"));
  VICK_TRY(vick_buf_alloc(call, env, &c->rc, (size_t)n_old * 4, "add: reverse counts"));
  VICK_TRY(vick_buf_alloc(call, env, &c->rl, (size_t)n_old * R * 4, "add: reverse lists"));
  VICK_TRY(vick_buf_alloc(call, env, &c->oid, (size_t)n * k * 4, "add: result ids"));
  VICK_TRY(vick_buf_alloc(call, env, &c->odist, (size_t)n * k * 4, "add: result distances"));
  float *x = (float *)c->x.p;
  const int64_t *ids = (const int64_t *)c->ids.p;
  int32_t *g = (int32_t *)c->g.p;
  VICK_TRY(vick_stage_init(call, &c->stage, 0));
  VICK_TRY(vick_staged_to_device(call, env, &c->stage, c->ids.p, old_ids, (size_t)n_old * k * 8));
  VICK_TRY(vick_staged_to_device(call, env, &c->stage, x, rows_old, (size_t)n_old * d * 4));
  VICK_TRY(vick_staged_to_device(call, env, &c->stage, x + (size_t)n_old * d, rows_new, (size_t)n_new * d * 4));
  ka_stage(call, "upload", &t);
  const double tk0 = t;

  ka_forward<<<vick_blocks(n_old, 256), 256, 0, st>>>(ids, n_old, k, D, g, (int *)c->cnt.p);
  VICK_LAUNCH(call, "ka_forward");
  ka_reverse<<<vick_blocks(n_old * k, 256), 256, 0, st>>>(ids, n_old, k, D, g, (int *)c->cnt.p);
  VICK_LAUNCH(call, "ka_reverse");
  VICK_CUDA(call, cudaMemsetAsync(c->rc.p, 0, (size_t)n_old * 4, st));
  VICK_TRY(ka_sync(call, env, "add: search graph"));
  VICK_TRY(gs_create_borrowed(call, env, x, n_old, d, g, D, NULL, p->pivots, &c->gs));
  ka_stage(call, "search graph", &t);

  vick_gsearch_params sp;
  vick_gsearch_params_init(&sp);
  sp.procedure = VICK_GSEARCH_LARGE;
  sp.list = p->list;
  sp.delta = p->delta;
  sp.pivots = p->pivots;
  int32_t *found32 = (int32_t *)c->found32.p;
  for (int64_t a = 0; a < n_new; a += per) {
    const int64_t rows = n_new - a < per ? n_new - a : per;
    VICK_TRY(gs_query_device(call, env, c->gs, x + (size_t)(n_old + a) * d, rows, W, &sp, rows,
                             (int64_t *)c->found.p, (float *)c->fdist.p));
    ka_narrow<<<vick_blocks(rows * W, 256), 256, 0, st>>>((const int64_t *)c->found.p, rows * W, found32 + a * W);
    VICK_LAUNCH(call, "ka_narrow");
  }
  VICK_TRY(ka_sync(call, env, "add: search"));
  VICK_TRY(vick_poll(call, "add: search", 0.6));
  ka_stage(call, "search", &t);

  ka_found<<<vick_blocks(n_new * W, 256), 256, 0, st>>>(found32, n_new, W, R, (int *)c->rc.p, (int32_t *)c->rl.p);
  VICK_LAUNCH(call, "ka_found");
  ka_new_lists<<<vick_blocks(n_new, KA_WARPS), 32 * KA_WARPS, 0, st>>>(
      x, n_old, n_new, d, found32, W, p->join, (const int *)c->rc.p, (const int32_t *)c->rl.p, R, k,
      (int32_t *)c->oid.p, (float *)c->odist.p);
  VICK_LAUNCH(call, "ka_new_lists");
  ka_old_lists<<<vick_blocks(n_old, KA_WARPS), 32 * KA_WARPS, 0, st>>>(
      x, n_old, d, ids, p->join, p->refine, (const int *)c->rc.p, (const int32_t *)c->rl.p, R, k, (int32_t *)c->oid.p,
      (float *)c->odist.p);
  VICK_LAUNCH(call, "ka_old_lists");
  VICK_TRY(ka_sync(call, env, "add: lists"));
  ka_stage(call, "lists", &t);
  call->seconds_kernel += t - tk0;

  VICK_TRY(vick_staged_to_host_wide(call, env, &c->stage, out_ids, (const int32_t *)c->oid.p, n * k));
  VICK_TRY(vick_staged_to_host(call, env, &c->stage, out_dist, c->odist.p, (size_t)n * k * 4));
  ka_stage(call, "download", &t);
  return VICK_OK;
}

int vick_knn_add_search(vick_call *call, const float *rows_old, int64_t n_old, const float *rows_new, int64_t n_new,
                        int32_t d, const int64_t *old_ids, int32_t k, const vick_add_params *p, int64_t *out_ids,
                        float *out_dist) {
  if (!call) return VICK_ARGUMENT;
  call->seconds_transfer = call->seconds_kernel = call->seconds_total = 0;
  call->n_stages = 0;
  call->message[0] = '\0';
  if (!rows_old || !rows_new || !old_ids || !out_ids || !out_dist || !p || n_old < 2 || n_new < 1 || d < 1 ||
      n_old + n_new >= ((int64_t)1 << 31) - 1)
    return vick_fail(call, VICK_ARGUMENT, "add: needs rows, old lists, outputs, n_old >= 2, n_new >= 1 and fewer "
                     "than 2^31 - 1 rows");
  if (k < 1 || k > 32 || p->width < k || p->width > 128 || p->degree <= k || p->degree > 128 ||
      p->list < p->width || p->list > 256 || !(p->delta >= 0.f) || p->reverse < 1 || p->reverse > 32 ||
      p->join < 0 || p->join > p->width || p->refine < 0 || p->refine > k || p->pivots < 0 ||
      p->pivots > GS_PIVOTS_MAX || p->chunk < 0)
    return vick_fail(call, VICK_ARGUMENT, "add: k = %d (1..32), width %d (k..128), degree %d (k+1..128), list %d "
                     "(width..256), reverse %d (1..32), join %d (0..width), refine %d (0..k), pivots %d (0..%d)", (int)k,
                     (int)p->width, (int)p->degree, (int)p->list, (int)p->reverse, (int)p->join, (int)p->refine,
                     (int)p->pivots, GS_PIVOTS_MAX);
  const double t0 = vick_now();
  ka_call c;
  memset(&c, 0, sizeof c);
  int rc = vick_begin(call, &c.env);
  if (rc == VICK_OK)
    rc = ka_run(call, &c, rows_old, n_old, rows_new, n_new, d, old_ids, k, p, out_ids, out_dist);
  if (c.gs) vick_gsearch_free(c.gs);
  vick_stage_free(&c.stage);
  vick_buf *bufs[] = {&c.x, &c.ids, &c.g, &c.cnt, &c.found, &c.fdist, &c.found32, &c.rc, &c.rl, &c.oid, &c.odist};
  for (size_t i = 0; i < sizeof bufs / sizeof *bufs; ++i) vick_buf_free(&c.env, bufs[i]);
  rc = vick_end(call, &c.env, rc);
  call->seconds_total = vick_now() - t0;
  return rc;
}
