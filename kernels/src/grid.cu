/* Exact all-points kNN for d <= 3 on a hierarchy of cell grids.
 *
 * Every point gets a 63-bit Morton code of its cell on a 2^21-per-dimension
 * grid; CUB's radix sort orders the points by it.  A cell of level l (2^l
 * finest cells per side) is then one contiguous range of the sorted array:
 * the codes sharing the prefix code >> 3l.  That gives every level of an
 * octree at the cost of one sort, and lets each query pick its own level:
 * the finest whose cell around the query holds enough points, so that
 * dense clusters (plummer3) and sparse backgrounds both scan a few hundred
 * points per query.
 *
 * One thread per query, queries in sorted order (neighbouring threads read
 * the same cells).  The query scans its own cell, then shells of cells at
 * Chebyshev distance r = 1, 2, ... and stops once its k-th distance is
 * below the distance to the nearest unscanned cell (made conservative for
 * rounding), or when everything has been scanned.  A query not settled
 * after GRID_SHELLS shells (or short of k points after the first) moves
 * one level up and starts again there (its own cell was small for its
 * neighbourhood, e.g. a close pair), so no query walks more than a few
 * shells of any level.  Periodic dimensions
 * wrap cell indices and use the minimum image; a shell that would wrap
 * onto itself falls back to a scan of all points (tiny sets only).
 * Distances are computed exactly as the CPU grid (cpu_grid.c) computes
 * them -- periodic coordinates wrapped into [0, L) in double, the minimum
 * image taken by subtracting L from one coordinate before the difference
 * (grid_internal.h) -- and lists are ordered by (distance, id), so results
 * equal the CPU grid's bit for bit.  (The brute force's |a - b| mod L
 * form loses up to an ulp of L, i.e. a relative 1e-4 on a close pair
 * across the boundary: the grids must not mix the two.)
 *
 * A range call (vick_grid_knn_range, several GPUs in one process) indexes
 * every point but answers only the rows [q0, q1): their sorted positions,
 * picked by a CUB select, keep the sorted order, so neighbouring threads
 * still share cells.  A row's list depends only on the sorted points, the
 * same on every device, so split ranges give one device's lists.
 *
 * Lists bound for the host are streamed (vick_grid_knn_stream,
 * vic_kernels_stream.h): the queries are launched chunk by chunk into a
 * ring of device buffers, each finished chunk copied piece by piece into
 * two pinned slots on a second stream and handed to the caller's writer
 * while the next chunk computes; ids leave the device in the width asked
 * for and distances, where asked, as true ones.  Chunks are ranges of the
 * sorted order (each list carries its row) or, by_rows, ranges of rows
 * whose sorted positions a CUB select picks (lists in row order).
 *
 * Lists that stay on the device (vick_grid_knn_dev, for the density and
 * peak pipelines) fill one buffer of int32 ids for the answered rows; a
 * slab's points can carry key ids, their ids in the whole set
 * (vick_grid_rows), so that their lists and ties equal the whole set's. */
#include "common.cuh"
#include "vic_kernels_exact.h"
#include "vic_kernels_stream.h"
#include "grid_internal.cuh"
#include "staged_copy.cuh"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <math.h>
#include <string.h>

#define GRID_THREADS 128



__global__ void split_kernel(const float *x, int64_t n, int d, float *soa) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (int j = 0; j < d; ++j) soa[j * n + i] = x[i * d + j];
}

__global__ void code_kernel(const float *x, int64_t n, grid_geom g, uint64_t *codes, uint32_t *ids) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint32_t q[3] = {0, 0, 0};
  for (int j = 0; j < g.d; ++j) q[j] = grid_cell(g, j, grid_pos(g, j, wrap_stored(x[i * g.d + j], g.box[j])));
  codes[i] = morton3(q[0], q[1], q[2]);
  ids[i] = (uint32_t)i;
}

/* Sorted points in the CPU grid's stored form: periodic axes wrapped. */
__global__ void gather_kernel(const float *x, int64_t n, grid_geom g, const uint32_t *ids, float4 *sp) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int d = g.d;
  const float *r = x + (int64_t)ids[i] * d;
  sp[i] = make_float4(wrap_stored(r[0], g.box[0]), d > 1 ? wrap_stored(r[1], g.box[1]) : 0.f,
                      d > 2 ? wrap_stored(r[2], g.box[2]) : 0.f, 0.f);
}


/* Grow [lo, hi) to the whole run of codes sharing the prefix pre at shift,
 * by galloping outwards (the run contains [lo, hi)). */
__device__ __forceinline__ void gallop_run(const uint64_t *codes, int64_t n, uint64_t pre, int shift, int64_t *lo,
                                           int64_t *hi) {
  int64_t good = *lo, step = 1, bad = good - 1;
  while (bad >= 0 && (codes[bad] >> shift) == pre) { good = bad; step <<= 1; bad = good - step; }
  if (bad < -1) bad = -1;
  while (good - bad > 1) {
    int64_t m = (good + bad) >> 1;
    if ((codes[m] >> shift) == pre) good = m; else bad = m;
  }
  *lo = good;
  good = *hi - 1;
  step = 1;
  bad = good + 1;
  while (bad < n && (codes[bad] >> shift) == pre) { good = bad; step <<= 1; bad = good + step; }
  if (bad > n) bad = n;
  while (bad - good > 1) {
    int64_t m = (good + bad) >> 1;
    if ((codes[m] >> shift) == pre) good = m; else bad = m;
  }
  *hi = good + 1;
}

/* Squared distance from query q to stored point p, as the CPU grid's
 * scan_range computes it (grid_internal.h min_image: the period comes
 * off one wrapped coordinate before the subtraction, exact by Sterbenz). */
__device__ __forceinline__ float grid_dist(const grid_geom &g, float4 q, float4 p) {
  float s = 0.f;
  const float qv[3] = {q.x, q.y, q.z}, pv[3] = {p.x, p.y, p.z};
#pragma unroll
  for (int j = 0; j < 3; ++j) {
    if (j >= g.d) break;
    float t = __fsub_rn(pv[j], qv[j]);
    if (g.box[j] > 0.f) {
      const float L = g.box[j], half = 0.5f * L;
      if (t > half) t = __fsub_rn(__fsub_rn(pv[j], L), qv[j]);
      else if (t < -half) t = __fsub_rn(pv[j], __fsub_rn(qv[j], L));
    }
    s = __fadd_rn(s, __fmul_rn(t, t));
  }
  return s;
}

/* Sorted list of the best k keys in local memory. */
template <int KMAX>
struct topk_list {
  unsigned long long key[KMAX];
  int k, size;
  __device__ __forceinline__ unsigned long long bound() const { return size < k ? VICK_KEY_NONE : key[k - 1]; }
  /* A key already in the list (the same point scanned again after the
   * query moved to a coarser level) is ignored: keys are unique per id. */
  __device__ __forceinline__ void push(unsigned long long kv) {
    if (kv >= bound()) return;
    const int last = size < k ? size : k - 1;
    int i = last;
    while (i > 0 && key[i - 1] > kv) --i;
    if (i > 0 && key[i - 1] == kv) return;
    for (int t = last; t > i; --t) key[t] = key[t - 1];
    key[i] = kv;
    if (size < k) ++size;
  }
};

#define GRID_LEAF 32  /* cells with more points are split into their 8 children */
#define GRID_STACK 48 /* pending cells of one descent; when full, cells are scanned whole */
#define GRID_SHELLS 2 /* shells around the query's cell before it moves one level up */


/* Every point of the cell is surely farther than the current k-th. */
template <int KMAX>
__device__ __forceinline__ int cell_pruned(const grid_geom &g, const topk_list<KMAX> &best, const float u[3],
                                           const int c[3], int level) {
  if (best.size < best.k) return 0;
  float kth = vick_float_unorder((uint32_t)(best.key[best.k - 1] >> 32));
  return cell_dist2(g, u, c, level) * (1.f - 1e-5f) > kth;
}


/* Scan the points of a non-empty cell [a, b) of a level; a large cell is
 * split into its children (contiguous sub-ranges in Morton order), and
 * cells farther than the current k-th distance are skipped, so a query
 * beside a dense cluster reads only the part of it that matters. */
template <int KMAX>
__device__ void visit_cell(const grid_geom &g, const uint64_t *codes, const uint32_t *sid, const uint32_t *kid,
                           const float4 *sp, float4 q, uint32_t self, const float u[3], const int c0[3], int level0,
                           int64_t a0, int64_t b0, topk_list<KMAX> &best) {
  struct item { int c[3]; int level; int64_t a, b; };
  item st[GRID_STACK];
  int top = 0;
  st[top++] = item{{c0[0], c0[1], c0[2]}, level0, a0, b0};
  while (top > 0) {
    item it = st[--top];
    if (cell_pruned(g, best, u, it.c, it.level)) continue;
    if (it.b - it.a <= GRID_LEAF || it.level == 0 || top + 8 > GRID_STACK) {
      for (int64_t t = it.a; t < it.b; ++t) {
        uint32_t id = sid[t];
        if (id != self) best.push(vick_key(grid_dist(g, q, sp[t]), kid ? kid[t] : id));
      }
      continue;
    }
    const uint64_t pre = codes[it.a] >> (3 * it.level);
    const int sh = 3 * (it.level - 1);
    int64_t s = it.a;
    /* the non-empty children, pushed farthest first so that the nearest is
     * scanned first: the k-th distance then shrinks early and prunes the
     * rest (a depth-first kd-tree search in nearest-first order) */
    float cd[8];
    int order[8], nch = 0;
    int64_t cs[8], ce[8];
    for (int i = 0; i < 8; ++i) {
      int64_t e =
          i == 7 ? it.b : vick_lower_bound(codes, (int64_t)s, it.b, ((pre << 3) | (uint64_t)(i + 1)) << sh);
      cs[i] = s;
      ce[i] = e;
      if (e > s) {
        const int cc[3] = {2 * it.c[0] + (i & 1), 2 * it.c[1] + ((i >> 1) & 1), 2 * it.c[2] + ((i >> 2) & 1)};
        const float dist2 = cell_dist2(g, u, cc, it.level - 1);
        int at = nch++;
        while (at > 0 && cd[at - 1] < dist2) { cd[at] = cd[at - 1]; order[at] = order[at - 1]; --at; }
        cd[at] = dist2;
        order[at] = i;
      }
      s = e;
    }
    for (int t = 0; t < nch; ++t) {
      const int i = order[t];
      item ch = {{2 * it.c[0] + (i & 1), 2 * it.c[1] + ((i >> 1) & 1), 2 * it.c[2] + ((i >> 2) & 1)},
                 it.level - 1, cs[i], ce[i]};
      st[top++] = ch;
    }
  }
}

/* Where a launch writes its lists.  rows == NULL: row self - q0 of
 * buffers holding the whole range (working distances, int32 ids: the
 * device-resident lists of vick_grid_knn_dev).  Otherwise the launch
 * answers queries [t0, t0 + count) of the range's sorted order into ring
 * rows base.., and rows[] says which row of the range each one is. */
template <typename IdT>
struct grid_out {
  IdT *ids;
  float *dist;
  uint32_t *rows;
  int64_t t0, count, base;
  uint32_t q0;
  int true_l2;
};

/* kid (NULL: the row itself): the id a point has in the keys and the
 * lists, by sorted position -- a slab's points carry their global ids, so
 * that ties fall as they do over all points.  IdT: the id width of the
 * lists (int32 for lists that stay on the device, either for streamed
 * ones, as the sink asks). */
template <int KMAX, typename IdT>
__global__ void __launch_bounds__(GRID_THREADS) grid_query_kernel(const uint64_t *codes, const uint32_t *sid,
                                                                   const uint32_t *kid, const float4 *sp, int64_t n,
                                                                   grid_geom g, int k, int target,
                                                                   const uint32_t *qpos, grid_out<IdT> out) {
  const int64_t local = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (local >= out.count) return;
  const int64_t t0 = out.t0 + local;
  const int64_t p = qpos ? (int64_t)qpos[t0] : t0;
  const float4 q = sp[p];
  const uint32_t self = sid[p];
  const float qv[3] = {q.x, q.y, q.z};
  float u[3] = {0, 0, 0};
  uint32_t qc[3] = {0, 0, 0};
  for (int j = 0; j < g.d; ++j) { u[j] = grid_pos(g, j, qv[j]); qc[j] = grid_cell(g, j, u[j]); }

  /* the finest level whose cell around q holds at least `target` points */
  int level = 0;
  int64_t lo = p, hi = p + 1;
  gallop_run(codes, n, codes[p], 0, &lo, &hi);
  while (hi - lo < target && level < GRID_BITS) {
    ++level;
    gallop_run(codes, n, codes[p] >> (3 * level), 3 * level, &lo, &hi);
  }

  topk_list<KMAX> best;
  best.k = k;
  best.size = 0;
  int full_scan = 0, done = 0;
  while (!done && !full_scan) {
    const int sh = 3 * level;
    /* cells per side at this level and whether the cube may still grow */
    int nc[3] = {1, 1, 1}, c[3] = {0, 0, 0};
    for (int j = 0; j < g.d; ++j) {
      c[j] = (int)(qc[j] >> level);
      nc[j] = g.box[j] > 0.f ? (int)(GRID_SIDE >> level) : (g.qmax[j] >> level) + 1;
    }
    for (int r = 0;; ++r) {
      /* a periodic cube that wraps onto itself would visit cells twice */
      for (int j = 0; j < g.d; ++j)
        if (g.box[j] > 0.f && 2 * r + 1 > nc[j]) full_scan = 1;
      if (full_scan) break;
      const int rx = r, ry = g.d > 1 ? r : 0, rz = g.d > 2 ? r : 0;
      for (int dz = -rz; dz <= rz; ++dz)
        for (int dy = -ry; dy <= ry; ++dy)
          for (int dx = -rx; dx <= rx; ++dx) {
            int m = max(abs(dx), max(abs(dy), abs(dz)));
            if (m != r) continue; /* inner cells were scanned before */
            int cc[3] = {c[0] + dx, c[1] + dy, c[2] + dz};
            int skip = 0;
            for (int j = 0; j < g.d; ++j) {
              if (g.box[j] > 0.f) cc[j] = ((cc[j] % nc[j]) + nc[j]) % nc[j];
              else if (cc[j] < 0 || cc[j] >= nc[j]) skip = 1;
            }
            if (skip) continue;
            if (cell_pruned(g, best, u, cc, level)) continue;
            uint64_t pre = morton3((uint32_t)cc[0], (uint32_t)cc[1], (uint32_t)cc[2]);
            int64_t a, b;
            if (r == 0) { a = lo; b = hi; }
            else {
              a = vick_lower_bound(codes, (int64_t)0, n, pre << sh);
              b = (a < n && (codes[a] >> sh) == pre) ? vick_lower_bound(codes, (int64_t)0, n, (pre + 1) << sh) : a;
            }
            if (b > a) visit_cell(g, codes, sid, kid, sp, q, self, u, cc, level, a, b, best);
          }
      /* everything scanned? */
      int covered = 1;
      for (int j = 0; j < g.d; ++j)
        if (g.box[j] > 0.f || c[j] - r > 0 || c[j] + r < nc[j] - 1) covered = 0;
      if (covered) { done = 1; break; }
      if (best.size == k) {
        /* distance from q to the nearest cell outside the cube, less slack */
        float G = INFINITY;
        for (int j = 0; j < g.d; ++j) {
          float cell = (float)(1u << level);
          float below = (g.box[j] <= 0.f && c[j] - r <= 0) ? INFINITY : (u[j] - (float)(c[j] - r) * cell);
          float above = (g.box[j] <= 0.f && c[j] + r >= nc[j] - 1) ? INFINITY : ((float)(c[j] + r + 1) * cell - u[j]);
          float gj = fminf(below, above) / g.scale[j] - g.eps[j];
          G = fminf(G, gj);
        }
        float kth = vick_float_unorder((uint32_t)(best.key[k - 1] >> 32));
        if (G > 0.f && kth < G * G * (1.f - 1e-5f)) { done = 1; break; }
      }
      /* Not settled within GRID_SHELLS shells, or fewer than k points in
       * the 3^d cells around it: the level was too fine for this query
       * (its own cell met the target through a close pair or a small
       * clump while its k nearest lie many cells away).  Growing the
       * cube further costs O(r^d) loop steps and O(r^(d-1)) binary searches
       * per shell, O(R^(d+1)) in all, which for a few 2-d queries with
       * R ~ 850 dwarfs the rest of the search.  So the query
       * moves one level up and starts again from its own, twice larger
       * cell.  Points scanned again are dropped by push(), and the stop
       * test only ever relies on the cube of the current level, which is
       * then scanned (or pruned) whole. */
      if ((r >= GRID_SHELLS || (best.size < k && r >= 1)) && level < GRID_BITS) {
        ++level;
        gallop_run(codes, n, codes[p] >> (3 * level), 3 * level, &lo, &hi);
        break;
      }
    }
  }
  if (full_scan) {
    best.size = 0;
    for (int64_t t = 0; t < n; ++t) {
      uint32_t id = sid[t];
      if (id != self) best.push(vick_key(grid_dist(g, q, sp[t]), kid ? kid[t] : id));
    }
  }
  if (out.true_l2) {
    /* sqrt can round distinct squared distances to one float: such runs
     * go by id, as the core's vic__true_lists orders them (nearly sorted
     * already, so the insertion sort is about one pass) */
    for (int t = 0; t < best.size; ++t) {
      const float d2 = vick_float_unorder((uint32_t)(best.key[t] >> 32));
      const unsigned long long kv = vick_key(__fsqrt_rn(fmaxf(d2, 0.f)), (uint32_t)(best.key[t] & 0xffffffffu));
      int i = t;
      while (i > 0 && best.key[i - 1] > kv) { best.key[i] = best.key[i - 1]; --i; }
      best.key[i] = kv;
    }
  }
  const int64_t row = out.rows ? out.base + local : (int64_t)(self - out.q0);
  if (out.rows) out.rows[row] = self - out.q0;
  IdT *oi = out.ids + row * k;
  float *od = out.dist + row * k;
  for (int t = 0; t < k; ++t) {
    if (t < best.size) {
      oi[t] = (IdT)(best.key[t] & 0xffffffffu);
      od[t] = vick_float_unorder((uint32_t)(best.key[t] >> 32));
    } else {
      oi[t] = (IdT)-1;
      od[t] = INFINITY;
    }
  }
}

/* ------------------------------------------------------------------ host */
/* Events of the streamed output (grid_stream): per ring slot the
 * kernel's start and end and the end of its last copy, per pinned slot
 * the copy's start and end. */
typedef struct {
  cudaEvent_t *k_start, *k_end, *done;
  cudaEvent_t c_start[2], c_end[2];
  int64_t ring;
} grid_events;

typedef struct {
  vick_env env;
  vick_buf x, soa, mm, codes, codes2, ids, ids2, sp, tmp, qpos, nsel, out_ids, out_dist, out_rows, kid;
  cudaStream_t copy;   /* device-to-host copies of the streamed output */
  vick_stage out;      /* the two host slots of the streamed output (a kept pair where one is free) */
  grid_events ev;
} grid_ws;

/* The rows whose lists a call returns: [q0, q1) of the n points. */
typedef struct {
  int64_t q0, q1;
} grid_range;

/* Is sorted position p one of the range's rows? */
struct grid_in_range {
  const uint32_t *sid;
  uint32_t q0, m;
  __device__ __forceinline__ bool operator()(uint32_t p) const { return sid[p] - q0 < m; }
};

static void grid_ws_free(grid_ws *w) {
  /* a failure may leave copies and kernels in flight on either stream */
  if (w->env.stream) cudaStreamSynchronize(w->env.stream);
  if (w->copy) {
    cudaStreamSynchronize(w->copy);
    cudaStreamDestroy(w->copy);
    w->copy = NULL;
  }
  vick_stage_free(&w->out);
  for (int i = 0; i < 2; ++i) {
    if (w->ev.c_start[i]) cudaEventDestroy(w->ev.c_start[i]);
    if (w->ev.c_end[i]) cudaEventDestroy(w->ev.c_end[i]);
    w->ev.c_start[i] = w->ev.c_end[i] = NULL;
  }
  cudaEvent_t *per_slot[] = {w->ev.k_start, w->ev.k_end, w->ev.done};
  for (int a = 0; a < 3; ++a) {
    for (int64_t i = 0; per_slot[a] && i < w->ev.ring; ++i)
      if (per_slot[a][i]) cudaEventDestroy(per_slot[a][i]);
    free(per_slot[a]);
  }
  w->ev.k_start = w->ev.k_end = w->ev.done = NULL;
  w->ev.ring = 0;
  cudaGetLastError();
  vick_buf *all[] = {&w->x, &w->soa, &w->mm, &w->codes, &w->codes2, &w->ids, &w->ids2, &w->sp, &w->tmp,
                     &w->qpos, &w->nsel, &w->out_ids, &w->out_dist, &w->out_rows, &w->kid};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) vick_buf_free(&w->env, all[i]);
}

/* Bounds of the open dimensions (CUB min/max) and the quantisation. */
static int grid_geometry(vick_call *call, grid_ws *w, const vick_points *p, grid_geom *g) {
  const int64_t n = p->n;
  const int d = p->d;
  memset(g, 0, sizeof *g);
  g->d = d;
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->soa, (size_t)n * d * sizeof(float), "coordinate columns"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->mm, 6 * sizeof(float), "bounds"));
  split_kernel<<<vick_blocks(n, 256), 256, 0, w->env.stream>>>((const float *)w->x.p, n, d, (float *)w->soa.p);
  VICK_LAUNCH(call, "split_kernel");
  size_t need = 0;
  const float *col = (const float *)w->soa.p;
  float *mm = (float *)w->mm.p;
  VICK_CUDA(call, cub::DeviceReduce::Min(NULL, need, col, mm, n, w->env.stream));
  size_t need2 = 0;
  VICK_CUDA(call, cub::DeviceReduce::Max(NULL, need2, col, mm, n, w->env.stream));
  if (need2 > need) need = need2;
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->tmp, need, "reduction workspace"));
  for (int j = 0; j < d; ++j) {
    size_t b = need;
    VICK_CUDA(call, cub::DeviceReduce::Min(w->tmp.p, b, col + j * n, mm + 2 * j, n, w->env.stream));
    b = need;
    VICK_CUDA(call, cub::DeviceReduce::Max(w->tmp.p, b, col + j * n, mm + 2 * j + 1, n, w->env.stream));
  }
  float h[6];
  VICK_CUDA(call, cudaMemcpyAsync(h, mm, 2 * d * sizeof(float), cudaMemcpyDeviceToHost, w->env.stream));
  VICK_CUDA(call, cudaStreamSynchronize(w->env.stream));
  vick_buf_free(&w->env, &w->tmp);
  vick_buf_free(&w->env, &w->soa);
  vick_buf_free(&w->env, &w->mm);

  /* cubic cells over the open dimensions: one scale for all of them */
  double ext = 0;
  for (int j = 0; j < d; ++j)
    if (!(p->box && p->box[j] > 0) && (double)h[2 * j + 1] - h[2 * j] > ext) ext = (double)h[2 * j + 1] - h[2 * j];
  for (int j = 0; j < d; ++j) {
    double lo, len;
    if (p->box && p->box[j] > 0) {
      g->box[j] = (float)p->box[j];
      lo = 0;
      len = p->box[j];
      g->qmax[j] = GRID_SIDE - 1;
    } else {
      lo = h[2 * j];
      len = ext > 0 ? ext : 1.0;
      double span = ((double)h[2 * j + 1] - lo) / len * GRID_SIDE;
      g->qmax[j] = span >= GRID_SIDE - 1 ? (int)GRID_SIDE - 1 : (int)span + 1;
    }
    g->lo[j] = (float)lo;
    g->scale[j] = (float)(GRID_SIDE / len);
    /* positions carry float rounding of (v - lo) * scale (a few finest
     * cells near 2^21) and of the coordinates themselves */
    double mag = fabs(lo) + len;
    g->eps[j] = (float)(4.0 * len / GRID_SIDE + 8.0 * mag * ldexp(1.0, -23));
  }
  return VICK_OK;
}

/* One launch of the query kernel on stream st for the queries of o. */
template <typename IdT>
static int launch_query(vick_call *call, grid_ws *w, cudaStream_t st, const grid_geom &g, int64_t n, int k,
                        int target, const uint32_t *qpos, const grid_out<IdT> &o) {
  const unsigned blocks = vick_blocks(o.count, GRID_THREADS);
  const uint64_t *codes = (const uint64_t *)w->codes.p;
  const uint32_t *sid = (const uint32_t *)w->ids.p;
  const uint32_t *kid = (const uint32_t *)w->kid.p;
  const float4 *sp = (const float4 *)w->sp.p;
  if (k <= 16)
    grid_query_kernel<16, IdT><<<blocks, GRID_THREADS, 0, st>>>(codes, sid, kid, sp, n, g, k, target, qpos, o);
  else if (k <= 32)
    grid_query_kernel<32, IdT><<<blocks, GRID_THREADS, 0, st>>>(codes, sid, kid, sp, n, g, k, target, qpos, o);
  else if (k <= 64)
    grid_query_kernel<64, IdT><<<blocks, GRID_THREADS, 0, st>>>(codes, sid, kid, sp, n, g, k, target, qpos, o);
  else if (k <= 128)
    grid_query_kernel<128, IdT><<<blocks, GRID_THREADS, 0, st>>>(codes, sid, kid, sp, n, g, k, target, qpos, o);
  else
    grid_query_kernel<VICK_EXACT_MAX_K, IdT><<<blocks, GRID_THREADS, 0, st>>>(codes, sid, kid, sp, n, g, k, target,
                                                                              qpos, o);
  VICK_LAUNCH(call, "grid_query_kernel");
  return VICK_OK;
}

/* Key ids by sorted position: kid[t] = key_ids[sid[t]]. */
__global__ void key_id_kernel(const uint32_t *sid, const uint32_t *key_ids, int64_t n, uint32_t *kid) {
  int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n) kid[t] = key_ids[sid[t]];
}

/* about k/4 points in the query's own cell: the 27 cells around it then
 * usually hold the k nearest (see the file comment) */
static int grid_target(int k) { return k / 4 > 2 ? k / 4 : 2; }

/* Sorted positions of the range's rows, in sorted order (none for all rows). */
static int grid_select(vick_call *call, grid_ws *w, int64_t n, grid_range r) {
  const int64_t m = r.q1 - r.q0;
  if (r.q0 == 0 && r.q1 == n) return VICK_OK;
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->qpos, (size_t)m * 4, "positions of the answered rows"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->nsel, sizeof(int64_t), "selected count"));
  grid_in_range pred = {(const uint32_t *)w->ids.p, (uint32_t)r.q0, (uint32_t)m};
  thrust::counting_iterator<uint32_t> all(0);
  size_t tb = 0;
  VICK_CUDA(call, cub::DeviceSelect::If(NULL, tb, all, (uint32_t *)w->qpos.p, (int64_t *)w->nsel.p, n, pred,
                                        w->env.stream));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->tmp, tb, "select workspace"));
  VICK_CUDA(call, cub::DeviceSelect::If(w->tmp.p, tb, all, (uint32_t *)w->qpos.p, (int64_t *)w->nsel.p, n, pred,
                                        w->env.stream));
  int64_t got = 0;
  VICK_CUDA(call, cudaMemcpyAsync(&got, w->nsel.p, sizeof got, cudaMemcpyDeviceToHost, w->env.stream));
  VICK_CUDA(call, cudaStreamSynchronize(w->env.stream));
  vick_buf_free(&w->env, &w->tmp);
  if (got != m)
    return vick_fail(call, VICK_DEVICE, "grid: %lld of the %lld rows of [%lld, %lld) found in the sorted order",
                     (long long)got, (long long)m, (long long)r.q0, (long long)r.q1);
  return VICK_OK;
}

/* Upload, sort and (for a sub-range) select the answered rows.  out_need:
 * device bytes the output will need at least, checked with the rest up
 * front.  keep_x: the rows stay on the device (for vick_grid_dev).
 * key_ids (host, n, or NULL): the ids the points carry in the lists
 * (vick_grid_rows). */
static int grid_prepare(vick_call *call, grid_ws *w, const vick_points *p, grid_range r, size_t out_need,
                        grid_geom *geom, int keep_x, int select, const uint32_t *key_ids) {
  const int64_t n = p->n;
  const int64_t m = r.q1 - r.q0;
  const int d = p->d;
  const size_t row_bytes = (size_t)d * sizeof(float);
  /* Everything the call holds at its peak, checked up front. */
  size_t need = (size_t)n * (row_bytes + 2 * 8 + 2 * 4 + 16 + (key_ids ? 4 : 0)) + (size_t)m * 4 + out_need;
  if (need > vick_budget_left(&w->env))
    return vick_fail(call, VICK_NOMEM, "the grid needs %.1f MiB of device memory for %lld points; the budget has %.1f MiB",
                     need / 1048576.0, (long long)n, vick_budget_left(&w->env) / 1048576.0);
  const double t_up = vick_now();
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->x, (size_t)n * row_bytes, "the points"));
  if (p->stride == d && (size_t)n * row_bytes >= VICK_STAGE_DEFAULT_BYTES) {
    /* large packed rows through pinned slots, many host threads filling
     * them: a pageable copy of them runs at the driver's staging speed */
    vick_stage st;
    int rc = vick_stage_init(call, &st, 0);
    if (rc == VICK_OK) rc = vick_staged_to_device(call, &w->env, &st, w->x.p, p->rows, (size_t)n * row_bytes);
    vick_stage_free(&st);
    VICK_TRY(rc);
  } else {
    VICK_TRY(vick_timer_start(call, &w->env));
    VICK_CUDA(call, cudaMemcpy2DAsync(w->x.p, row_bytes, p->rows, (size_t)p->stride * sizeof(float), row_bytes,
                                      (size_t)n, cudaMemcpyHostToDevice, w->env.stream));
    VICK_TRY(vick_timer_stop(call, &w->env, &call->seconds_transfer, NULL));
  }

  /* host wall seconds of the upload (the steps after it: "grid sort") */
  vick_stage_add(call, "grid points up", vick_now() - t_up);
  VICK_TRY(vick_timer_start(call, &w->env));
  grid_geom g;
  VICK_TRY(grid_geometry(call, w, p, &g));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->codes, (size_t)n * 8, "cell codes"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->codes2, (size_t)n * 8, "sorted cell codes"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->ids, (size_t)n * 4, "point order"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->ids2, (size_t)n * 4, "sorted point order"));
  code_kernel<<<vick_blocks(n, 256), 256, 0, w->env.stream>>>((const float *)w->x.p, n, g, (uint64_t *)w->codes.p,
                                                                (uint32_t *)w->ids.p);
  VICK_LAUNCH(call, "code_kernel");
  cub::DoubleBuffer<uint64_t> kb((uint64_t *)w->codes.p, (uint64_t *)w->codes2.p);
  cub::DoubleBuffer<uint32_t> vb((uint32_t *)w->ids.p, (uint32_t *)w->ids2.p);
  size_t tb = 0;
  VICK_CUDA(call, cub::DeviceRadixSort::SortPairs(NULL, tb, kb, vb, n, 0, 3 * GRID_BITS, w->env.stream));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->tmp, tb, "sort workspace"));
  VICK_CUDA(call, cub::DeviceRadixSort::SortPairs(w->tmp.p, tb, kb, vb, n, 0, 3 * GRID_BITS, w->env.stream));
  vick_buf_free(&w->env, &w->tmp);
  /* keep the sorted halves under the names the query kernel uses */
  if (kb.Current() != (uint64_t *)w->codes.p) { vick_buf t = w->codes; w->codes = w->codes2; w->codes2 = t; }
  if (vb.Current() != (uint32_t *)w->ids.p) { vick_buf t = w->ids; w->ids = w->ids2; w->ids2 = t; }
  vick_buf_free(&w->env, &w->codes2);
  vick_buf_free(&w->env, &w->ids2);
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->sp, (size_t)n * sizeof(float4), "sorted points"));
  gather_kernel<<<vick_blocks(n, 256), 256, 0, w->env.stream>>>((const float *)w->x.p, n, g, (const uint32_t *)w->ids.p,
                                                                  (float4 *)w->sp.p);
  VICK_LAUNCH(call, "gather_kernel");
  if (!keep_x) vick_buf_free(&w->env, &w->x);
  if (key_ids) {
    vick_buf tmp = {NULL, 0};
    VICK_TRY(vick_buf_alloc(call, &w->env, &w->kid, (size_t)n * 4, "list ids by sorted position"));
    VICK_TRY(vick_buf_alloc(call, &w->env, &tmp, (size_t)n * 4, "list ids"));
    /* ids of a large region through the pinned slots (a pageable copy of
     * hundreds of MiB runs at the driver's staging speed) */
    int rc = VICK_OK;
    if ((size_t)n * 4 >= ((size_t)64 << 20)) {
      vick_stage st;
      rc = vick_stage_init(call, &st, 0);
      if (rc == VICK_OK) rc = vick_staged_to_device(call, &w->env, &st, tmp.p, key_ids, (size_t)n * 4);
      vick_stage_free(&st);
    } else {
      rc = vick_copy_to_device(call, &w->env, tmp.p, key_ids, (size_t)n * 4);
    }
    if (rc == VICK_OK) {
      key_id_kernel<<<vick_blocks(n, 256), 256, 0, w->env.stream>>>((const uint32_t *)w->ids.p,
                                                                      (const uint32_t *)tmp.p, n,
                                                                      (uint32_t *)w->kid.p);
      cudaError_t e = cudaGetLastError();
      if (e == cudaSuccess) e = cudaStreamSynchronize(w->env.stream);
      if (e != cudaSuccess) rc = vick_cuda_fail(call, e, "key_id_kernel", __FILE__, __LINE__);
    }
    vick_buf_free(&w->env, &tmp);
    VICK_TRY(rc);
  }
  if (select) VICK_TRY(grid_select(call, w, n, r));
  VICK_TRY(vick_timer_stop(call, &w->env, &call->seconds_kernel, "grid sort"));
  *geom = g;
  return vick_poll(call, "grid", 0.2);
}

/* The lists of every answered row into device buffers (working distances,
 * int32 ids, row self - q0): vick_grid_knn_dev. */
static int grid_query_device(vick_call *call, grid_ws *w, const grid_geom &g, int64_t n, int k, grid_range r) {
  const int64_t m = r.q1 - r.q0;
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->out_ids, (size_t)m * k * 4, "result ids"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->out_dist, (size_t)m * k * 4, "result distances"));
  grid_out<int32_t> o = {(int32_t *)w->out_ids.p, (float *)w->out_dist.p, NULL, 0, m, 0, (uint32_t)r.q0, 0};
  VICK_TRY(vick_timer_start(call, &w->env));
  VICK_TRY(launch_query(call, w, w->env.stream, g, n, k, grid_target(k), (const uint32_t *)w->qpos.p, o));
  VICK_TRY(vick_timer_stop(call, &w->env, &call->seconds_kernel, "grid search"));
  return vick_poll(call, "grid", 0.9);
}

/* Bytes of one streamed row on the device and in a pinned slot. */
static int64_t stream_row_bytes(int k, int id_bytes) { return (int64_t)k * (id_bytes + 4) + 4; }

/* Launch chunk c of the plan into its ring slot, after the copies of the
 * chunk that used the slot before (recorded on the copy stream).  By rows
 * (sink->by_rows): the chunk is rows [q0 + a, q0 + b) of the range, their
 * sorted positions picked first (a CUB select keeps the sorted order, so a
 * warp's queries stay neighbours), and their lists land in row order.
 * Otherwise the chunk is sorted positions [a, b) of the range and each
 * list carries its row. */
template <typename IdT>
static int stream_launch(vick_call *call, grid_ws *w, const grid_geom &g, int64_t n, int k, grid_range r,
                         const vick_stream_plan *pl, const vick_sink *sink, int64_t c) {
  const int64_t slot = c % pl->ring_chunks;
  int64_t a, b;
  vick_stream_chunk(pl, c, &a, &b);
  if (c >= pl->ring_chunks) VICK_CUDA(call, cudaStreamWaitEvent(w->env.stream, w->ev.done[slot], 0));
  IdT *ids = (IdT *)w->out_ids.p + slot * pl->chunk_rows * k;
  float *dist = (float *)w->out_dist.p + slot * pl->chunk_rows * k;
  VICK_CUDA(call, cudaEventRecord(w->ev.k_start[slot], w->env.stream));
  if (sink->by_rows) {
    grid_in_range pred = {(const uint32_t *)w->ids.p, (uint32_t)(r.q0 + a), (uint32_t)(b - a)};
    thrust::counting_iterator<uint32_t> all(0);
    size_t tb = w->tmp.bytes;
    VICK_CUDA(call, cub::DeviceSelect::If(w->tmp.p, tb, all, (uint32_t *)w->qpos.p, (int64_t *)w->nsel.p, n, pred,
                                          w->env.stream));
    grid_out<IdT> o = {ids, dist, NULL, 0, b - a, 0, (uint32_t)(r.q0 + a), sink->true_l2};
    VICK_TRY(launch_query(call, w, w->env.stream, g, n, k, grid_target(k), (const uint32_t *)w->qpos.p, o));
  } else {
    grid_out<IdT> o = {(IdT *)w->out_ids.p, (float *)w->out_dist.p, (uint32_t *)w->out_rows.p, a, b - a,
                       slot * pl->chunk_rows, (uint32_t)r.q0, sink->true_l2};
    VICK_TRY(launch_query(call, w, w->env.stream, g, n, k, grid_target(k), (const uint32_t *)w->qpos.p, o));
  }
  VICK_CUDA(call, cudaEventRecord(w->ev.k_end[slot], w->env.stream));
  return VICK_OK;
}

/* Piece j of chunk c into pinned slot s, on the copy stream once the
 * chunk's kernel is done.  Slot layout: ids, distances, rows. */
static int stream_copy(vick_call *call, grid_ws *w, int k, int id_bytes, int by_rows, const vick_stream_plan *pl,
                       int64_t c, int64_t j, int s) {
  const int64_t slot = c % pl->ring_chunks;
  int64_t a, b;
  vick_stream_chunk(pl, c, &a, &b);
  const int64_t r0 = slot * pl->chunk_rows + j * pl->piece_rows;
  const int64_t len = (a + (j + 1) * pl->piece_rows < b ? pl->piece_rows : b - a - j * pl->piece_rows);
  char *h = (char *)w->out.slot[s];
  const size_t ib = (size_t)k * id_bytes, db = (size_t)k * 4;
  VICK_CUDA(call, cudaStreamWaitEvent(w->copy, w->ev.k_end[slot], 0));
  VICK_CUDA(call, cudaEventRecord(w->ev.c_start[s], w->copy));
  VICK_CUDA(call, cudaMemcpyAsync(h, (const char *)w->out_ids.p + (size_t)r0 * ib, (size_t)len * ib,
                                  cudaMemcpyDeviceToHost, w->copy));
  VICK_CUDA(call, cudaMemcpyAsync(h + (size_t)pl->piece_rows * ib, (const char *)w->out_dist.p + (size_t)r0 * db,
                                  (size_t)len * db, cudaMemcpyDeviceToHost, w->copy));
  if (!by_rows)
    VICK_CUDA(call, cudaMemcpyAsync(h + (size_t)pl->piece_rows * (ib + db), (const uint32_t *)w->out_rows.p + r0,
                                    (size_t)len * 4, cudaMemcpyDeviceToHost, w->copy));
  VICK_CUDA(call, cudaEventRecord(w->ev.c_end[s], w->copy));
  if (j + 1 == vick_stream_pieces(pl, c)) VICK_CUDA(call, cudaEventRecord(w->ev.done[slot], w->copy));
  return VICK_OK;
}

/* The streamed output: kernel launches chunk by chunk on the call's
 * stream (one chunk ahead of the copies), device-to-pinned copies piece
 * by piece on a second stream, and sink->write emptying one pinned slot
 * while the other fills.  Kernel seconds are the launches' own (with the
 * selects of by_rows), transfer seconds the copies' own (they overlap each
 * other and the host writes; the stage "grid lists out" is the wall time
 * of the whole pipeline). */
template <typename IdT>
static int grid_stream(vick_call *call, grid_ws *w, const grid_geom &g, int64_t n, int k, grid_range r,
                       const vick_sink *sink) {
  const double t_setup = vick_now();
  const int64_t m = r.q1 - r.q0;
  const int ib = sink->id_bytes;
  const int by_rows = sink->by_rows != 0;
  const int64_t rb = stream_row_bytes(k, ib);
  const size_t piece = sink->piece_bytes ? sink->piece_bytes : VICK_STREAM_PIECE_BYTES;
  if (by_rows) { /* one chunk's sorted positions and the select's workspace */
    grid_in_range pred = {(const uint32_t *)w->ids.p, 0u, 1u};
    thrust::counting_iterator<uint32_t> all(0);
    size_t tb = 0;
    VICK_CUDA(call, cub::DeviceSelect::If(NULL, tb, all, (uint32_t *)NULL, (int64_t *)NULL, n, pred, w->env.stream));
    VICK_TRY(vick_buf_alloc(call, &w->env, &w->tmp, tb, "select workspace"));
    VICK_TRY(vick_buf_alloc(call, &w->env, &w->nsel, sizeof(int64_t), "selected count"));
  }
  vick_stream_plan pl;
  size_t left = vick_budget_left(&w->env);
  /* by rows, each ring row also needs its position in the (one) chunk's selection */
  if (vick_stream_plan_make(m, rb + 4 * by_rows, left, piece, sink->chunk_rows, &pl) != 0)
    return vick_fail(call, VICK_NOMEM, "grid: no device memory left for two rows of output (%.1f MiB left)",
                     left / 1048576.0);
  const int64_t ring_rows = pl.ring_chunks * pl.chunk_rows < m ? pl.ring_chunks * pl.chunk_rows : m;
  if (by_rows) VICK_TRY(vick_buf_alloc(call, &w->env, &w->qpos, (size_t)pl.chunk_rows * 4, "positions of a chunk"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->out_ids, (size_t)ring_rows * k * ib, "result ids"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->out_dist, (size_t)ring_rows * k * 4, "result distances"));
  if (!by_rows) VICK_TRY(vick_buf_alloc(call, &w->env, &w->out_rows, (size_t)ring_rows * 4, "result rows"));
  /* slots of the default size can be a kept pair (no pinned allocation) */
  const size_t slot_bytes = (size_t)pl.piece_rows * rb;
  VICK_TRY(vick_stage_init(call, &w->out, slot_bytes <= VICK_STAGE_DEFAULT_BYTES ? 0 : slot_bytes));
  for (int s = 0; s < 2; ++s) {
    VICK_CUDA(call, cudaEventCreate(&w->ev.c_start[s]));
    VICK_CUDA(call, cudaEventCreate(&w->ev.c_end[s]));
  }
  VICK_CUDA(call, cudaStreamCreateWithFlags(&w->copy, cudaStreamNonBlocking));
  w->ev.ring = pl.ring_chunks;
  w->ev.k_start = (cudaEvent_t *)calloc((size_t)pl.ring_chunks, sizeof(cudaEvent_t));
  w->ev.k_end = (cudaEvent_t *)calloc((size_t)pl.ring_chunks, sizeof(cudaEvent_t));
  w->ev.done = (cudaEvent_t *)calloc((size_t)pl.ring_chunks, sizeof(cudaEvent_t));
  if (!w->ev.k_start || !w->ev.k_end || !w->ev.done)
    return vick_fail(call, VICK_NOMEM, "grid: no host memory for %lld events", (long long)pl.ring_chunks);
  for (int64_t i = 0; i < pl.ring_chunks; ++i) {
    VICK_CUDA(call, cudaEventCreate(&w->ev.k_start[i]));
    VICK_CUDA(call, cudaEventCreate(&w->ev.k_end[i]));
    VICK_CUDA(call, cudaEventCreateWithFlags(&w->ev.done[i], cudaEventDisableTiming));
  }
  /* the rows and sorted points are ready before either stream reads them */
  VICK_CUDA(call, cudaStreamSynchronize(w->env.stream));

  const double t_wall = vick_now();
  vick_stage_add(call, "grid stream setup", t_wall - t_setup);
  double t_write = 0;
  int64_t launched = 0;
  const int64_t first = pl.chunks < 2 ? pl.chunks : 2;
  for (; launched < first; ++launched) VICK_TRY(stream_launch<IdT>(call, w, g, n, k, r, &pl, sink, launched));
  VICK_TRY(stream_copy(call, w, k, ib, by_rows, &pl, 0, 0, 0));
  int64_t c = 0, j = 0; /* the piece being written */
  for (int64_t q = 0;; ++q) {
    /* the next piece, enqueued before this one is written */
    int64_t cn = c, jn = j + 1;
    if (jn == vick_stream_pieces(&pl, cn)) { ++cn; jn = 0; }
    const int more = cn < pl.chunks;
    if (more) {
      /* one chunk ahead, never into the ring slot of the chunk being
       * written (its kernel's events are read below) */
      for (; launched < pl.chunks && launched <= cn + 1 && launched < c + pl.ring_chunks; ++launched)
        VICK_TRY(stream_launch<IdT>(call, w, g, n, k, r, &pl, sink, launched));
      VICK_TRY(stream_copy(call, w, k, ib, by_rows, &pl, cn, jn, (int)((q + 1) & 1)));
    }
    const int s = (int)(q & 1);
    VICK_CUDA(call, cudaEventSynchronize(w->ev.c_end[s]));
    float ms = 0.f;
    VICK_CUDA(call, cudaEventElapsedTime(&ms, w->ev.c_start[s], w->ev.c_end[s]));
    call->seconds_transfer += 1e-3 * ms;
    if (j == 0) { /* the chunk's kernel is done: its own time */
      const int64_t slot = c % pl.ring_chunks;
      VICK_CUDA(call, cudaEventElapsedTime(&ms, w->ev.k_start[slot], w->ev.k_end[slot]));
      call->seconds_kernel += 1e-3 * ms;
      vick_stage_add(call, "grid search", 1e-3 * ms);
    }
    int64_t a, b;
    vick_stream_chunk(&pl, c, &a, &b);
    const int64_t len = a + (j + 1) * pl.piece_rows < b ? pl.piece_rows : b - a - j * pl.piece_rows;
    const char *h = (const char *)w->out.slot[s];
    const double tw = vick_now();
    const uint32_t *rows = by_rows ? NULL : (const uint32_t *)(h + (size_t)pl.piece_rows * (rb - 4));
    const int stop = sink->write(sink->user, by_rows ? a + j * pl.piece_rows : 0, rows, len, k, h,
                                 (const float *)(h + (size_t)pl.piece_rows * k * ib));
    t_write += vick_now() - tw;
    if (stop) return vick_fail(call, VICK_CANCELLED, "cancelled while the grid's lists were written");
    if (!more) break;
    c = cn;
    j = jn;
    if (j == 0) VICK_TRY(vick_poll(call, "grid", 0.2 + 0.8 * (double)c / (double)pl.chunks));
  }
  VICK_CUDA(call, cudaStreamSynchronize(w->copy));
  vick_stage_add(call, "grid lists out", vick_now() - t_wall);
  vick_stage_add(call, "grid host write", t_write);
  return vick_poll(call, "grid", 1.0);
}

static int grid_args(vick_call *call, const vick_points *p, int32_t k) {
  if (!p || !p->rows || p->n < 1 || p->d < 1 || p->stride < p->d)
    return vick_fail(call, VICK_ARGUMENT, "grid: empty or inconsistent point set");
  if (p->d > 3) return vick_fail(call, VICK_ARGUMENT, "the grid needs d <= 3 (got d = %d)", (int)p->d);
  if (p->metric != VICK_METRIC_L2) return vick_fail(call, VICK_ARGUMENT, "the grid supports the L2 metric only");
  if (k < 1 || k > VICK_EXACT_MAX_K)
    return vick_fail(call, VICK_ARGUMENT, "the grid supports 1 <= k <= %d (got %d)", VICK_EXACT_MAX_K, (int)k);
  if (p->n >= ((int64_t)1 << 31)) return vick_fail(call, VICK_ARGUMENT, "the grid takes fewer than 2^31 points");
  return VICK_OK;
}

/* grid_internal.cuh: the lists left in device buffers of the caller's
 * environment (working distances), for fused pipelines (density.cu). */
int vick_grid_knn_dev(vick_call *call, vick_env *env, const vick_points *p, int32_t k, const vick_grid_rows *rows,
                      vick_buf *ids, vick_buf *dist, vick_grid_dev *keep) {
  VICK_TRY(grid_args(call, p, k));
  grid_range all = {0, p->n};
  if (rows) {
    if (rows->q0 < 0 || rows->q1 <= rows->q0 || rows->q1 > p->n)
      return vick_fail(call, VICK_ARGUMENT, "grid: rows [%lld, %lld) are not a range of the %lld points",
                       (long long)rows->q0, (long long)rows->q1, (long long)p->n);
    all.q0 = rows->q0;
    all.q1 = rows->q1;
  }
  grid_ws w;
  memset(&w, 0, sizeof w);
  w.env = *env;
  grid_geom g;
  const size_t out_need = (size_t)(all.q1 - all.q0) * k * 8; /* int32 ids and distances */
  int rc = grid_prepare(call, &w, p, all, out_need, &g, keep != NULL, 1, rows ? rows->key_ids : NULL);
  if (rc == VICK_OK) rc = grid_query_device(call, &w, g, p->n, k, all);
  if (rc == VICK_OK) {
    *ids = w.out_ids;
    *dist = w.out_dist;
    memset(&w.out_ids, 0, sizeof w.out_ids);
    memset(&w.out_dist, 0, sizeof w.out_dist);
    if (keep) {
      keep->g = g;
      keep->n = p->n;
      keep->codes = w.codes;
      keep->sid = w.ids;
      keep->sp = w.sp;
      keep->x = w.x;
      keep->kid = w.kid;
      memset(&w.kid, 0, sizeof w.kid);
      memset(&w.codes, 0, sizeof w.codes);
      memset(&w.ids, 0, sizeof w.ids);
      memset(&w.sp, 0, sizeof w.sp);
      memset(&w.x, 0, sizeof w.x);
    }
  }
  grid_ws_free(&w);
  *env = w.env; /* the budget's bookkeeping now counts the lists */
  return rc;
}

int vick_grid_sort_dev(vick_call *call, vick_env *env, const vick_points *p, vick_grid_dev *keep) {
  VICK_TRY(grid_args(call, p, 1));
  grid_ws w;
  memset(&w, 0, sizeof w);
  w.env = *env;
  grid_range all = {0, p->n};
  int rc = grid_prepare(call, &w, p, all, 0, &keep->g, 1, 1, NULL);
  if (rc == VICK_OK) {
    keep->n = p->n;
    keep->codes = w.codes;
    keep->sid = w.ids;
    keep->sp = w.sp;
    keep->x = w.x;
    memset(&w.codes, 0, sizeof w.codes);
    memset(&w.ids, 0, sizeof w.ids);
    memset(&w.sp, 0, sizeof w.sp);
    memset(&w.x, 0, sizeof w.x);
  }
  grid_ws_free(&w);
  *env = w.env;
  return rc;
}

extern "C" int vick_grid_knn_stream(vick_call *call, const vick_points *p, int32_t k, int64_t q0, int64_t q1,
                                    const vick_sink *sink) {
  if (!sink || !sink->write || (sink->id_bytes != 4 && sink->id_bytes != 8))
    return vick_fail(call, VICK_ARGUMENT, "grid: no output sink, or ids of neither 4 nor 8 bytes");
  VICK_TRY(grid_args(call, p, k));
  if (q0 < 0 || q1 <= q0 || q1 > p->n)
    return vick_fail(call, VICK_ARGUMENT, "grid: rows [%lld, %lld) are not a range of the %lld points",
                     (long long)q0, (long long)q1, (long long)p->n);
  grid_ws w;
  memset(&w, 0, sizeof w);
  grid_range r = {q0, q1};
  const int64_t m = q1 - q0;
  /* at least a ring of two small chunks, checked with the rest up front */
  const int64_t min_rows = m < 2 * 4096 ? m : 2 * 4096;
  const size_t out_need = (size_t)min_rows * (size_t)stream_row_bytes(k, sink->id_bytes);
  const double t0 = vick_now();
  int rc = vick_begin(call, &w.env);
  grid_geom g;
  /* by rows, each chunk selects its own positions; else the range's once */
  if (rc == VICK_OK) rc = grid_prepare(call, &w, p, r, out_need, &g, 0, !sink->by_rows, NULL);
  /* host wall seconds of the steps around the kernels, beside their own */
  if (rc == VICK_OK) vick_stage_add(call, "grid upload and sort", vick_now() - t0);
  if (rc == VICK_OK)
    rc = sink->id_bytes == 4 ? grid_stream<int32_t>(call, &w, g, p->n, k, r, sink)
                             : grid_stream<int64_t>(call, &w, g, p->n, k, r, sink);
  const double t_free = vick_now();
  grid_ws_free(&w);
  if (rc == VICK_OK) vick_stage_add(call, "grid release", vick_now() - t_free);
  return vick_end(call, &w.env, rc);
}

/* vick_grid_knn_range's sink: pieces into contiguous int64/float lists. */
typedef struct {
  int64_t *ids;
  float *dist;
} plain_lists;

static int plain_write(void *user, int64_t first, const uint32_t *rows, int64_t m, int32_t k, const void *ids,
                       const float *dist) {
  plain_lists *o = (plain_lists *)user;
  const int64_t *pi = (const int64_t *)ids;
  for (int64_t r = 0; r < m; ++r) {
    const int64_t row = first + (rows ? (int64_t)rows[r] : r);
    memcpy(o->ids + row * k, pi + r * k, (size_t)k * 8);
    memcpy(o->dist + row * k, dist + r * k, (size_t)k * 4);
  }
  return 0;
}

extern "C" int vick_grid_knn_range(vick_call *call, const vick_points *p, int32_t k, int64_t q0, int64_t q1,
                                   int64_t *ids, float *dist) {
  if (!ids || !dist) return vick_fail(call, VICK_ARGUMENT, "grid: no output lists");
  plain_lists o = {ids, dist};
  vick_sink sink;
  memset(&sink, 0, sizeof sink);
  sink.id_bytes = 8;
  sink.write = plain_write;
  sink.user = &o;
  return vick_grid_knn_stream(call, p, k, q0, q1, &sink);
}

extern "C" int vick_grid_knn(vick_call *call, const vick_points *p, int32_t k, int64_t *ids, float *dist) {
  return vick_grid_knn_range(call, p, k, 0, p ? p->n : 0, ids, dist);
}

void vick_grid_dev_free(vick_env *env, vick_grid_dev *gd) {
  vick_buf_free(env, &gd->codes);
  vick_buf_free(env, &gd->sid);
  vick_buf_free(env, &gd->sp);
  vick_buf_free(env, &gd->x);
  vick_buf_free(env, &gd->kid);
}
