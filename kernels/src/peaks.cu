/* Density peaks on the device (vic_kernels_peaks.h): the per-point steps
 * of the core's vic_peaks_find on lists that never leave the device.
 *
 * Point ids are int32 on the device (the grid takes fewer than 2^31
 * points); list positions and edge offsets are 64-bit (n * k may pass
 * 2^31).  Every step is one thread per point or per list entry, except
 * the sorts, scans and reductions, which are CUB's:
 *   the density order     radix sort of (~bits(rho), id): descending
 *                         density, ties to the lower id;
 *   maxima numbering      exclusive scan of the local-maximum flags;
 *   basins                pointer jumping on the densest denser neighbour;
 *   merge events          per point count, scan, write; radix sort by the
 *                         pair of basins, the first edge of each pair
 *                         (reduce by key, minimum visiting position);
 *                         radix sort by that position;
 *   climbing              pointer jumping with the candidates as fixed
 *                         points, then member counts by atomics. */
#include "density_internal.cuh"
#include "peaks_internal.cuh"
#include "staged_copy.cuh"
#include "vic_kernels_peaks.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PK_THREADS 256

struct vick_peaks_run {
  vick_env env;
  vick_density_dev dens;
  vick_grid_dev grid;
  int64_t n, m;
  int32_t k, d;
  int32_t top;
  double box[3];
  /* device, per point: parent (int32, -1 for top), delta, saliency, the
   * maximum's number or -1 (mid), climbing labels; per maximum: point ids */
  vick_buf parent, delta, saliency, mid, label, label2, maxima, flag, wide;
  vick_stage stage; /* pinned slots for the results */
  /* host copies handed to the core (vick_peaks_info) */
  int64_t *max_point, *max_parent;
  float *max_rho, *max_delta, *max_rk, *max_saliency, *event_rho;
  int32_t *event_a, *event_b;
  const float *host_rk; /* slab runs: the k-th distances (host, n) */
  vick_buf order; /* slab runs: the density order keys, kept for the events */
  const int32_t *host_parent; /* slab runs: the links, uploaded once the maxima's search is done */
  const float *host_delta;
};

/* Chunk c of the lists (they are on the device: one chunk, all rows):
 * rows [*row0, *row0 + *rows), *rows = 0 past the last. */
static int list_chunk(vick_call *call, vick_peaks_run *r, int64_t c, int want_dist, const int32_t **ids,
                      const float **dist, int64_t *row0, int64_t *rows) {
  (void)call;
  (void)want_dist;
  *row0 = 0;
  *rows = c == 0 ? r->n : 0;
  *ids = (const int32_t *)r->dens.ids.p;
  *dist = (const float *)r->dens.dist.p;
  return VICK_OK;
}

static __device__ __forceinline__ int denser(const float *rho, int32_t j, int32_t i) {
  return rho[j] > rho[i] || (rho[j] == rho[i] && j < i);
}

/* Per point, from its list: the nearest denser neighbour (parent, delta;
 * -2 marks a local maximum) and the densest denser neighbour (up; itself
 * for a maximum), the starting pointers of the basins. */
__global__ void list_kernel(const int32_t *ids, const float *dist, const float *rho, int64_t row0, int64_t rows,
                            int64_t n, int32_t k, int32_t *parent, float *delta, int32_t *up, int32_t *is_max) {
  const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const int64_t i = row0 + r; /* rows of a chunk of the lists */
  int32_t p = -2, g = -1;
  float dl = 0.f;
  for (int32_t t = 0; t < k; ++t) {
    const int64_t j = ids[r * (int64_t)k + t];
    if (j < 0 || j >= n || j == i || !denser(rho, (int32_t)j, (int32_t)i)) continue;
    if (p == -2) { p = (int32_t)j; dl = dist[r * (int64_t)k + t]; }
    if (g < 0 || denser(rho, (int32_t)j, g)) g = (int32_t)j;
  }
  parent[i] = p;
  delta[i] = dl;
  up[i] = g >= 0 ? g : (int32_t)i;
  is_max[i] = p == -2;
}

/* Keys whose ascending order is the density order. */
__global__ void order_key_kernel(const float *rho, int64_t n, uint64_t *key) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) key[i] = ((uint64_t)(~__float_as_uint(rho[i])) << 32) | (uint64_t)i;
}
__global__ void rank_kernel(const uint64_t *sorted, int64_t n, int32_t *rank) {
  const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (r < n) rank[(uint32_t)sorted[r]] = (int32_t)r;
}

/* mid[i] = number of the maximum i (from the exclusive scan) or -1. */
__global__ void number_maxima_kernel(const int32_t *is_max, const int32_t *scan, int64_t n, int32_t *mid,
                                     int32_t *maxima) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  mid[i] = is_max[i] ? scan[i] : -1;
  if (is_max[i]) maxima[scan[i]] = (int32_t)i;
}

/* One round of pointer jumping: out[i] = in[in[i]]; *changed set when any
 * pointer moved. */
__global__ void jump_kernel(const int32_t *in, int32_t *out, int64_t n, int *changed) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int32_t a = in[i], b = in[a];
  out[i] = b;
  if (a != b) *changed = 1;
}

/* Boundary edges: i -> j with j denser and another basin.  count_only:
 * per-point counts; else the edges at off[i]: key (lower, higher maximum
 * number), value the visiting position rank[i] * k + t. */
#define EDGE_SEEN 16 /* other basins a point remembers (its first edge to each is the one that counts) */
__global__ void edges_kernel(const int32_t *ids, const float *rho, const int32_t *basin, const int32_t *mid,
                             const int32_t *rank, int64_t row0, int64_t rows, int64_t n, int32_t k, int count_only,
                             int64_t *count, const int64_t *off, int64_t off_base, uint64_t *key, uint64_t *pos) {
  const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const int64_t i = row0 + r; /* rows of a chunk of the lists */
  const int32_t bi = mid[basin[i]];
  int32_t c = 0, ns = 0;
  int32_t seen[EDGE_SEEN];
  for (int32_t t = 0; t < k; ++t) {
    const int64_t j = ids[r * (int64_t)k + t];
    if (j < 0 || j >= n || !denser(rho, (int32_t)j, (int32_t)i)) continue;
    const int32_t bj = mid[basin[j]];
    if (bj == bi) continue;
    /* a later edge of this point to the same basin has a larger position:
     * it can never be the first of its pair (both passes decide alike) */
    int dup = 0;
    for (int32_t q = 0; q < ns; ++q) dup |= seen[q] == bj;
    if (dup) continue;
    if (ns < EDGE_SEEN) seen[ns++] = bj;
    if (!count_only) {
      const uint32_t lo = (uint32_t)min(bi, bj), hi = (uint32_t)max(bi, bj);
      const int64_t at = off[i] - off_base + c;
      key[at] = ((uint64_t)lo << 32) | hi;
      pos[at] = (uint64_t)rank[i] * (uint64_t)k + (uint64_t)t;
    }
    ++c;
  }
  if (count_only) count[i] = c;
}

struct min_u64 {
  __device__ __forceinline__ uint64_t operator()(uint64_t a, uint64_t b) const { return a < b ? a : b; }
};

/* Events in visiting order: the two maxima and the density at the point. */
__global__ void event_kernel(const uint64_t *pair, const uint64_t *pos, const uint64_t *order, const float *rho,
                             int64_t e, int32_t k, int32_t *a, int32_t *b, float *er) {
  const int64_t s = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= e) return;
  a[s] = (int32_t)(pair[s] >> 32);
  b[s] = (int32_t)(pair[s] & 0xffffffffu);
  er[s] = rho[(uint32_t)order[pos[s] / (uint64_t)k]];
}

/* rk[q] = column col of row maxima[q] of a table with ld columns (the
 * lists' distances, or a column of k-th distances). */
__global__ void kth_kernel(const int32_t *maxima, const float *dist, int64_t m, int32_t ld, int32_t col, float *rk) {
  const int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (q < m) rk[q] = dist[(int64_t)maxima[q] * ld + col];
}
__global__ void scatter_max_kernel(const int32_t *maxima, const int32_t *mp, const float *md, int64_t m,
                                   int32_t *parent, float *delta) {
  const int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (q < m) { parent[maxima[q]] = mp[q]; delta[maxima[q]] = md[q]; }
}

/* The densest point's largest squared distance to any point (the CPU's
 * vic__l2sq; non-negative floats order as their bits). */
__global__ void farthest_kernel(const float *x, int64_t n, int32_t d, int32_t top, float b0, float b1, float b2,
                                unsigned *best) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float box[3] = {b0, b1, b2};
  float s = 0.f;
  for (int32_t j = 0; j < d; ++j) {
    float t = vick_min_image(x[(int64_t)top * d + j], x[i * d + j], box[j]);
    s = __fadd_rn(s, __fmul_rn(t, t));
  }
  atomicMax(best, __float_as_uint(s));
}
__global__ void finish_top_kernel(const unsigned *best, int32_t top, int32_t *parent, float *delta) {
  parent[top] = -1;
  delta[top] = __fsqrt_rn(__uint_as_float(*best));
}
__global__ void saliency_kernel(const float *rho, const float *delta, int64_t n, float *sal) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) sal[i] = __fmul_rn(rho[i], delta[i]);
}

/* Per maximum: parent, density, delta, saliency for the core. */
__global__ void max_info_kernel(const int32_t *maxima, const int32_t *parent, const float *rho, const float *delta,
                                const float *sal, int64_t m, int32_t *mp, float *mr, float *md, float *ms) {
  const int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (q >= m) return;
  const int32_t i = maxima[q];
  mp[q] = parent[i];
  mr[q] = rho[i];
  md[q] = delta[i];
  ms[q] = sal[i];
}

/* Start of the climb: candidates point at themselves, others at their parent. */
__global__ void climb_init_kernel(const int32_t *parent, const int32_t *mid, const unsigned char *cand, int64_t n,
                                  int32_t *label) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int32_t q = mid[i];
  label[i] = (q >= 0 && cand[q]) || parent[i] < 0 ? (int32_t)i : parent[i];
}

/* Members per maximum; a warp whose points share a label adds once. */
__global__ void members_kernel(const int32_t *label, const int32_t *mid, int64_t n, unsigned long long *count) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned active = __ballot_sync(0xffffffffu, i < n);
  if (i >= n) return;
  const int32_t q = mid[label[i]];
  const unsigned same = __match_any_sync(active, q);
  if ((threadIdx.x & 31) == __ffs(same) - 1) atomicAdd(&count[q], (unsigned long long)__popc(same));
}

__global__ void peak_id_kernel(const int32_t *label, const int32_t *mid, const int64_t *rank, int64_t n, int64_t *out) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = rank[mid[label[i]]];
}

/* Centre sums: core points (density >= fraction * the peak's) add their
 * minimum-image offset from the peak point, as the CPU's peak_centres. */
__global__ void centre_kernel(const float *x, const float *rho, const int64_t *peak_id, const int64_t *peak_point,
                              int64_t n, int32_t d, float fraction, double b0, double b1, double b2,
                              unsigned long long *count, double *sum) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int64_t p = peak_id[i], pp = peak_point[p];
  if (rho[i] < __fmul_rn(fraction, rho[pp])) return;
  atomicAdd(&count[p], 1ull);
  const double box[3] = {b0, b1, b2};
  for (int32_t j = 0; j < d; ++j) {
    double t = __dsub_rn((double)x[i * d + j], (double)x[pp * d + j]);
    if (box[j] > 0) t = __dsub_rn(t, __dmul_rn(box[j], rint(__ddiv_rn(t, box[j]))));
    atomicAdd(&sum[p * d + j], t);
  }
}

/* ------------------------------------------------------------------ host */
#define PK_LAUNCH(name, n_, ...)                                                          \
  do {                                                                                    \
    if ((n_) > 0) {                                                                       \
      name<<<vick_blocks((n_), PK_THREADS), PK_THREADS, 0, r->env.stream>>>(__VA_ARGS__); \
      VICK_LAUNCH(call, #name);                                                           \
    }                                                                                     \
  } while (0)

/* Scratch of vick_peaks_begin, released at its end. */
typedef struct {
  vick_buf up, up2, is_max, scan, rank, keys, keys2, tmp, count, off, ekey, ekey2, epos, epos2, ukey, upos, nrun,
      rk, mp, md, mr, ms, best, changed, ea, eb, er, rkall, akey, apos;
} begin_ws;

static void begin_ws_free(vick_env *env, begin_ws *w) {
  vick_buf *all[] = {&w->up, &w->up2, &w->is_max, &w->scan, &w->rank, &w->keys, &w->keys2, &w->tmp, &w->count,
                     &w->off, &w->ekey, &w->ekey2, &w->epos, &w->epos2, &w->ukey, &w->upos, &w->nrun, &w->rk,
                     &w->mp, &w->md, &w->mr, &w->ms, &w->best, &w->changed, &w->ea, &w->eb, &w->er, &w->rkall,
                     &w->akey, &w->apos};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) vick_buf_free(env, all[i]);
}

static int ensure_tmp(vick_call *call, vick_env *env, vick_buf *tmp, size_t bytes) {
  if (tmp->p && tmp->bytes >= bytes) return VICK_OK;
  vick_buf_free(env, tmp);
  return vick_buf_alloc(call, env, tmp, bytes, "CUB workspace");
}

static int alloc(vick_call *call, vick_peaks_run *r, vick_buf *b, size_t bytes, const char *what) {
  return vick_buf_alloc(call, &r->env, b, bytes, what);
}

/* Pointer jumping until every pointer in *a is a fixed point (in place:
 * *a ends as the converged array, b is scratch of the same size). */
static int jump_to_roots(vick_call *call, vick_peaks_run *r, vick_buf *a, vick_buf *b, vick_buf *changed) {
  for (int round = 0; round < 64; ++round) {
    int flag = 0;
    VICK_CUDA(call, cudaMemsetAsync(changed->p, 0, sizeof(int), r->env.stream));
    PK_LAUNCH(jump_kernel, r->n, (const int32_t *)a->p, (int32_t *)b->p, r->n, (int *)changed->p);
    VICK_CUDA(call, cudaMemcpyAsync(&flag, changed->p, sizeof(int), cudaMemcpyDeviceToHost, r->env.stream));
    VICK_CUDA(call, cudaStreamSynchronize(r->env.stream));
    vick_buf t = *a;
    *a = *b;
    *b = t;
    if (!flag) return VICK_OK;
  }
  /* 64 rounds follow chains of 2^64 links: more means a cycle */
  return vick_fail(call, VICK_DEVICE, "peaks: parent pointers did not converge (a cycle)");
}

/* Sort the n pairs at (key, pos) by pair (ekey2 / epos2 as the other
 * halves) and keep the smallest position of each pair at akey / apos +
 * at; *kept: how many. */
static int reduce_pairs(vick_call *call, vick_peaks_run *r, begin_ws *w, uint64_t *key, uint64_t *pos, int64_t n,
                        int64_t at, int64_t *kept) {
  int mbits = 1;
  while (mbits < 32 && ((int64_t)1 << mbits) < r->m) ++mbits;
  cub::DoubleBuffer<uint64_t> pk(key, (uint64_t *)w->ekey2.p), pv(pos, (uint64_t *)w->epos2.p);
  size_t tb = 0;
  VICK_CUDA(call, cub::DeviceRadixSort::SortPairs(NULL, tb, pk, pv, n, 0, 32 + mbits, r->env.stream));
  VICK_TRY(ensure_tmp(call, &r->env, &w->tmp, tb));
  VICK_CUDA(call, cub::DeviceRadixSort::SortPairs(w->tmp.p, tb, pk, pv, n, 0, 32 + mbits, r->env.stream));
  tb = 0;
  uint64_t *ok = (uint64_t *)w->akey.p + at, *op = (uint64_t *)w->apos.p + at;
  VICK_CUDA(call, cub::DeviceReduce::ReduceByKey(NULL, tb, pk.Current(), ok, pv.Current(), op, (int64_t *)w->nrun.p,
                                                 min_u64(), n, r->env.stream));
  VICK_TRY(ensure_tmp(call, &r->env, &w->tmp, tb));
  VICK_CUDA(call, cub::DeviceReduce::ReduceByKey(w->tmp.p, tb, pk.Current(), ok, pv.Current(), op,
                                                 (int64_t *)w->nrun.p, min_u64(), n, r->env.stream));
  VICK_CUDA(call, cudaMemcpyAsync(kept, w->nrun.p, 8, cudaMemcpyDeviceToHost, r->env.stream));
  VICK_CUDA(call, cudaStreamSynchronize(r->env.stream));
  return VICK_OK;
}

/* The edge offset of row a (e for a = n): sampled at every step-th row,
 * read from the device otherwise. */
static int edge_offset(vick_call *call, vick_peaks_run *r, begin_ws *w, const int64_t *samp, int64_t step, int64_t e,
                       int64_t a, int64_t *out) {
  if (a >= r->n) { *out = e; return VICK_OK; }
  if (a % step == 0) { *out = samp[a / step]; return VICK_OK; }
  VICK_CUDA(call, cudaMemcpyAsync(out, (const int64_t *)w->off.p + a, 8, cudaMemcpyDeviceToHost, r->env.stream));
  VICK_CUDA(call, cudaStreamSynchronize(r->env.stream));
  return VICK_OK;
}

/* The first edge (smallest position) of each pair of basins, from the e
 * boundary edges at w->off: written and reduced a chunk of rows at a time
 * (chunks of at most `cap` edges, as the budget allows), the chunks'
 * firsts gathered at akey / apos and reduced again.  *u: the pairs. */
static int first_edges(vick_call *call, vick_peaks_run *r, begin_ws *w, int64_t e, int64_t *u) {
  const int64_t n = r->n;
  const int32_t k = r->k;
  const float *rho = (const float *)r->dens.knn.p;
  /* offsets at every step-th row, to cut chunks on the host */
  const int64_t step = n / 65536 + 1, ns = (n + step - 1) / step;
  int64_t *samp = (int64_t *)malloc((size_t)(ns + 1) * 8);
  if (!samp) return vick_fail(call, VICK_NOMEM, "no host memory for edge offsets");
  cudaError_t ce = cudaMemcpy2DAsync(samp, 8, w->off.p, (size_t)step * 8, 8, (size_t)ns, cudaMemcpyDeviceToHost,
                                     r->env.stream);
  if (ce == cudaSuccess) ce = cudaStreamSynchronize(r->env.stream);
  if (ce != cudaSuccess) { free(samp); return vick_cuda_fail(call, ce, "edge offsets", __FILE__, __LINE__); }
  samp[ns] = e;
  /* 8 bytes per key and position, twice for the sort, once more for the firsts */
  const size_t room = vick_budget_left(&r->env) / 10 * 8;
  int64_t cap = (int64_t)(room / 48);
  if (cap > e) cap = e;
  if (cap < step * (int64_t)k) cap = step * (int64_t)k;
  int rc = VICK_OK;
  const char *what = "boundary edges";
  if ((rc = alloc(call, r, &w->ekey, (size_t)cap * 8, what)) != VICK_OK ||
      (rc = alloc(call, r, &w->ekey2, (size_t)cap * 8, what)) != VICK_OK ||
      (rc = alloc(call, r, &w->epos, (size_t)cap * 8, what)) != VICK_OK ||
      (rc = alloc(call, r, &w->epos2, (size_t)cap * 8, what)) != VICK_OK ||
      (rc = alloc(call, r, &w->akey, (size_t)cap * 8, "first edges")) != VICK_OK ||
      (rc = alloc(call, r, &w->apos, (size_t)cap * 8, "first edges")) != VICK_OK ||
      (rc = alloc(call, r, &w->nrun, 8, "event count")) != VICK_OK) {
    free(samp);
    return rc;
  }
  int64_t acc = 0, chunks = 0;
  for (int64_t c = 0; rc == VICK_OK; ++c) {
    const int32_t *ci;
    const float *cd;
    int64_t row0, rows;
    if ((rc = list_chunk(call, r, c, 0, &ci, &cd, &row0, &rows)) != VICK_OK || rows == 0) break;
    const int64_t end = row0 + rows;
    for (int64_t a = row0; a < end && rc == VICK_OK;) {
      /* rows [a, b): whole steps while the edges fit (a row has at most
       * k, a step at most cap) */
      int64_t lo, b = a, hi = 0;
      if ((rc = edge_offset(call, r, w, samp, step, e, a, &lo)) != VICK_OK) break;
      for (int64_t nb = (a / step + 1) * step;; nb += step) {
        const int64_t cand = nb < end ? nb : end;
        int64_t h;
        if ((rc = edge_offset(call, r, w, samp, step, e, cand, &h)) != VICK_OK) break;
        if (h - lo > cap && b > a) break;
        b = cand;
        hi = h;
        if (cand == end) break;
      }
      if (rc != VICK_OK) break;
      const int64_t m = hi - lo;
      if (m > 0) {
        if (acc + m > cap) { /* the firsts gathered so far, reduced again */
          VICK_CUDA(call, cudaMemcpyAsync(w->ekey.p, w->akey.p, (size_t)acc * 8, cudaMemcpyDeviceToDevice,
                                          r->env.stream));
          VICK_CUDA(call, cudaMemcpyAsync(w->epos.p, w->apos.p, (size_t)acc * 8, cudaMemcpyDeviceToDevice,
                                          r->env.stream));
          VICK_TRY(reduce_pairs(call, r, w, (uint64_t *)w->ekey.p, (uint64_t *)w->epos.p, acc, 0, &acc));
          if (acc + m > cap) {
            rc = vick_fail(call, VICK_NOMEM, "peaks: the boundary pairs exceed the %lld edges the budget holds",
                           (long long)cap);
            break;
          }
        }
        PK_LAUNCH(edges_kernel, b - a, ci + (a - row0) * (int64_t)k, rho, (const int32_t *)w->up.p,
                  (const int32_t *)r->mid.p, (const int32_t *)w->rank.p, a, b - a, n, k, 0, (int64_t *)NULL,
                  (const int64_t *)w->off.p, lo, (uint64_t *)w->ekey.p, (uint64_t *)w->epos.p);
        int64_t kept = 0;
        VICK_TRY(reduce_pairs(call, r, w, (uint64_t *)w->ekey.p, (uint64_t *)w->epos.p, m, acc, &kept));
        acc += kept;
        ++chunks;
      }
      a = b;
    }
  }
  free(samp);
  VICK_TRY(rc);
  if (chunks > 1 && acc > 0) { /* pairs met in several chunks: the smallest of their firsts */
    VICK_CUDA(call, cudaMemcpyAsync(w->ekey.p, w->akey.p, (size_t)acc * 8, cudaMemcpyDeviceToDevice, r->env.stream));
    VICK_CUDA(call, cudaMemcpyAsync(w->epos.p, w->apos.p, (size_t)acc * 8, cudaMemcpyDeviceToDevice, r->env.stream));
    VICK_TRY(reduce_pairs(call, r, w, (uint64_t *)w->ekey.p, (uint64_t *)w->epos.p, acc, 0, &acc));
  }
  *u = acc;
  return VICK_OK;
}

/* The density order (w->keys), ranks (w->rank), maxima numbered (r->mid,
 * r->maxima, r->m, r->top) and basins (w->up: each point's maximum). */
static int order_and_basins(vick_call *call, vick_peaks_run *r, begin_ws *w) {
  const int64_t n = r->n;
  const float *rho = (const float *)r->dens.knn.p;
  size_t tb = 0;
  /* density order and ranks */
  VICK_TRY(alloc(call, r, &w->keys, (size_t)n * 8, "density order keys"));
  VICK_TRY(alloc(call, r, &w->keys2, (size_t)n * 8, "density order keys"));
  PK_LAUNCH(order_key_kernel, n, rho, n, (uint64_t *)w->keys.p);
  cub::DoubleBuffer<uint64_t> kb((uint64_t *)w->keys.p, (uint64_t *)w->keys2.p);
  VICK_CUDA(call, cub::DeviceRadixSort::SortKeys(NULL, tb, kb, n, 0, 64, r->env.stream));
  VICK_TRY(ensure_tmp(call, &r->env, &w->tmp, tb));
  VICK_CUDA(call, cub::DeviceRadixSort::SortKeys(w->tmp.p, tb, kb, n, 0, 64, r->env.stream));
  if (kb.Current() != (uint64_t *)w->keys.p) { vick_buf t = w->keys; w->keys = w->keys2; w->keys2 = t; }
  vick_buf_free(&r->env, &w->keys2); /* only the sorted order stays */
  const uint64_t *order = (const uint64_t *)w->keys.p;
  VICK_TRY(alloc(call, r, &w->rank, (size_t)n * 4, "density ranks"));
  PK_LAUNCH(rank_kernel, n, order, n, (int32_t *)w->rank.p);
  uint64_t first = 0;
  VICK_CUDA(call, cudaMemcpyAsync(&first, order, 8, cudaMemcpyDeviceToHost, r->env.stream));

  /* maxima numbered in id order */
  VICK_TRY(alloc(call, r, &w->scan, (size_t)n * 4, "maxima numbers"));
  tb = 0;
  VICK_CUDA(call, cub::DeviceScan::ExclusiveSum(NULL, tb, (const int32_t *)w->is_max.p, (int32_t *)w->scan.p, n,
                                                r->env.stream));
  VICK_TRY(ensure_tmp(call, &r->env, &w->tmp, tb));
  VICK_CUDA(call, cub::DeviceScan::ExclusiveSum(w->tmp.p, tb, (const int32_t *)w->is_max.p, (int32_t *)w->scan.p, n,
                                                r->env.stream));
  int32_t last[2] = {0, 0};
  VICK_CUDA(call, cudaMemcpyAsync(&last[0], (const int32_t *)w->scan.p + n - 1, 4, cudaMemcpyDeviceToHost, r->env.stream));
  VICK_CUDA(call, cudaMemcpyAsync(&last[1], (const int32_t *)w->is_max.p + n - 1, 4, cudaMemcpyDeviceToHost,
                                  r->env.stream));
  VICK_CUDA(call, cudaStreamSynchronize(r->env.stream));
  r->top = (int32_t)(uint32_t)first;
  r->m = (int64_t)last[0] + last[1];
  VICK_TRY(alloc(call, r, &r->mid, (size_t)n * 4, "maximum of each point"));
  VICK_TRY(alloc(call, r, &r->maxima, (size_t)r->m * 4, "local maxima"));
  PK_LAUNCH(number_maxima_kernel, n, (const int32_t *)w->is_max.p, (const int32_t *)w->scan.p, n,
            (int32_t *)r->mid.p, (int32_t *)r->maxima.p);
  vick_buf_free(&r->env, &w->scan);

  /* basins: follow the densest denser neighbour to a maximum */
  VICK_TRY(alloc(call, r, &w->up2, (size_t)n * 4, "basin pointers"));
  VICK_TRY(alloc(call, r, &w->changed, sizeof(int), "convergence flag"));
  VICK_TRY(jump_to_roots(call, r, &w->up, &w->up2, &w->changed));
  vick_buf_free(&r->env, &w->up2);
  return VICK_OK;
}

/* The first edges (pair of maxima, visiting position) at akey / apos
 * (u of them) into events in visiting order at ea / eb / er. */
static int events_in_order(vick_call *call, vick_peaks_run *r, begin_ws *w, const uint64_t *order, int64_t u) {
  const int64_t n = r->n;
  const int32_t k = r->k;
  const float *rho = (const float *)r->dens.knn.p;
  if (u <= 0) return VICK_OK;
  cub::DoubleBuffer<uint64_t> sk((uint64_t *)w->apos.p, (uint64_t *)w->epos.p),
      sv((uint64_t *)w->akey.p, (uint64_t *)w->ekey.p);
  int pbits = 1;
  while (pbits < 64 && ((uint64_t)1 << pbits) < (uint64_t)n * (uint64_t)k) ++pbits;
  size_t tb = 0;
  VICK_CUDA(call, cub::DeviceRadixSort::SortPairs(NULL, tb, sk, sv, u, 0, pbits, r->env.stream));
  VICK_TRY(ensure_tmp(call, &r->env, &w->tmp, tb));
  VICK_CUDA(call, cub::DeviceRadixSort::SortPairs(w->tmp.p, tb, sk, sv, u, 0, pbits, r->env.stream));
  VICK_TRY(alloc(call, r, &w->ea, (size_t)u * 4, "events"));
  VICK_TRY(alloc(call, r, &w->eb, (size_t)u * 4, "events"));
  VICK_TRY(alloc(call, r, &w->er, (size_t)u * 4, "events"));
  PK_LAUNCH(event_kernel, u, (const uint64_t *)sv.Current(), (const uint64_t *)sk.Current(), order, rho, u, k,
            (int32_t *)w->ea.p, (int32_t *)w->eb.p, (float *)w->er.p);
  return VICK_OK;
}

/* The density order, maxima, basins and the merge events. */
static int merge_events(vick_call *call, vick_peaks_run *r, begin_ws *w, vick_peaks_info *info) {
  const int64_t n = r->n;
  const int32_t k = r->k;
  const float *rho = (const float *)r->dens.knn.p;
  size_t tb = 0;
  VICK_TRY(order_and_basins(call, r, w));
  const uint64_t *order = (const uint64_t *)w->keys.p;

  /* boundary edges, counted then written at scanned offsets */
  VICK_TRY(alloc(call, r, &w->count, (size_t)n * 8, "boundary edges per point"));
  VICK_TRY(alloc(call, r, &w->off, (size_t)n * 8, "boundary edge offsets"));
  for (int64_t c = 0;; ++c) {
    const int32_t *ci;
    const float *cd;
    int64_t row0, rows;
    VICK_TRY(list_chunk(call, r, c, 0, &ci, &cd, &row0, &rows));
    if (rows == 0) break;
    PK_LAUNCH(edges_kernel, rows, ci, rho, (const int32_t *)w->up.p, (const int32_t *)r->mid.p,
              (const int32_t *)w->rank.p, row0, rows, n, k, 1, (int64_t *)w->count.p, (const int64_t *)NULL,
              (int64_t)0, (uint64_t *)NULL, (uint64_t *)NULL);
  }
  tb = 0;
  VICK_CUDA(call, cub::DeviceScan::ExclusiveSum(NULL, tb, (const int64_t *)w->count.p, (int64_t *)w->off.p, n,
                                                r->env.stream));
  VICK_TRY(ensure_tmp(call, &r->env, &w->tmp, tb));
  VICK_CUDA(call, cub::DeviceScan::ExclusiveSum(w->tmp.p, tb, (const int64_t *)w->count.p, (int64_t *)w->off.p, n,
                                                r->env.stream));
  int64_t elast[2] = {0, 0};
  VICK_CUDA(call, cudaMemcpyAsync(&elast[0], (const int64_t *)w->off.p + n - 1, 8, cudaMemcpyDeviceToHost,
                                  r->env.stream));
  VICK_CUDA(call, cudaMemcpyAsync(&elast[1], (const int64_t *)w->count.p + n - 1, 8, cudaMemcpyDeviceToHost,
                                  r->env.stream));
  VICK_CUDA(call, cudaStreamSynchronize(r->env.stream));
  const int64_t e = elast[0] + elast[1];
  info->boundary_edges = e;
  vick_buf_free(&r->env, &w->count);
  int64_t u = 0;
  if (e > 0) VICK_TRY(first_edges(call, r, w, e, &u));
  VICK_TRY(events_in_order(call, r, w, order, u));
  info->n_events = u;
  return VICK_OK;
}

/* The events to the host (after the timed kernels: copies time themselves). */
static int events_to_host(vick_call *call, vick_peaks_run *r, begin_ws *w, vick_peaks_info *info) {
  const int64_t u = info->n_events;
  r->event_a = (int32_t *)malloc((size_t)u * 4 + 4);
  r->event_b = (int32_t *)malloc((size_t)u * 4 + 4);
  r->event_rho = (float *)malloc((size_t)u * 4 + 4);
  if (!r->event_a || !r->event_b || !r->event_rho) return vick_fail(call, VICK_NOMEM, "no host memory for the events");
  if (u > 0) { /* by the hundred million at 10^9 points: through the pinned slots */
    VICK_TRY(vick_staged_to_host(call, &r->env, &r->stage, r->event_a, w->ea.p, (size_t)u * 4));
    VICK_TRY(vick_staged_to_host(call, &r->env, &r->stage, r->event_b, w->eb.p, (size_t)u * 4));
    VICK_TRY(vick_staged_to_host(call, &r->env, &r->stage, r->event_rho, w->er.p, (size_t)u * 4));
  }
  info->event_a = r->event_a;
  info->event_b = r->event_b;
  info->event_rho = r->event_rho;
  return VICK_OK;
}

/* Nearest denser point of each maximum, the top's delta, saliency and the
 * per-maximum table for the core. */
static int maxima_parents(vick_call *call, vick_peaks_run *r, begin_ws *w, vick_peaks_info *info) {
  const int64_t n = r->n, m = r->m;
  const float *rho = (const float *)r->dens.knn.p;
  VICK_TRY(alloc(call, r, &w->rk, (size_t)m * 4 + 4, "k-th distances of maxima"));
  VICK_TRY(alloc(call, r, &w->mp, (size_t)m * 4 + 4, "parents of maxima"));
  VICK_TRY(alloc(call, r, &w->md, (size_t)m * 4 + 4, "deltas of maxima"));
  VICK_TRY(alloc(call, r, &w->mr, (size_t)m * 4 + 4, "densities of maxima"));
  VICK_TRY(alloc(call, r, &w->ms, (size_t)m * 4 + 4, "saliency of maxima"));
  if (r->host_rk) {
    /* slab runs: the maxima's ids are on the host, so only their k-th
     * distances cross, not all n */
    float *rkm = (float *)malloc((size_t)m * 4 + 4);
    if (!rkm) return vick_fail(call, VICK_NOMEM, "no host memory for the maxima's k-th distances");
#pragma omp parallel for schedule(static) if (m > 65536)
    for (int64_t q = 0; q < m; ++q) rkm[q] = r->host_rk[r->max_point[q]];
    const int rc = vick_copy_to_device(call, &r->env, w->rk.p, rkm, (size_t)m * 4);
    free(rkm);
    VICK_TRY(rc);
  } else {
    PK_LAUNCH(kth_kernel, m, (const int32_t *)r->maxima.p, (const float *)r->dens.dist.p, m, r->k, r->k - 1,
              (float *)w->rk.p);
  }
  VICK_TRY(vick_timer_start(call, &r->env));
  VICK_TRY(vick_denser_search(call, &r->env, &r->grid, rho, (const int32_t *)r->maxima.p, (const float *)w->rk.p, m,
                              r->top, (int32_t *)w->mp.p, (float *)w->md.p));
  VICK_TRY(vick_timer_stop(call, &r->env, &call->seconds_kernel, "peaks search"));
  if (r->host_parent) {
    /* of the grid only the rows stay (the top's distances, the centres):
     * room for the links */
    vick_buf_free(&r->env, &r->grid.codes);
    vick_buf_free(&r->env, &r->grid.sid);
    vick_buf_free(&r->env, &r->grid.sp);
    VICK_TRY(alloc(call, r, &r->parent, (size_t)n * 4, "parents"));
    VICK_TRY(alloc(call, r, &r->delta, (size_t)n * 4, "deltas"));
    VICK_TRY(vick_staged_to_device(call, &r->env, &r->stage, r->parent.p, r->host_parent, (size_t)n * 4));
    VICK_TRY(vick_staged_to_device(call, &r->env, &r->stage, r->delta.p, r->host_delta, (size_t)n * 4));
  }
  VICK_TRY(vick_timer_start(call, &r->env));
  PK_LAUNCH(scatter_max_kernel, m, (const int32_t *)r->maxima.p, (const int32_t *)w->mp.p, (const float *)w->md.p, m,
            (int32_t *)r->parent.p, (float *)r->delta.p);
  VICK_TRY(alloc(call, r, &w->best, sizeof(unsigned), "largest distance"));
  VICK_CUDA(call, cudaMemsetAsync(w->best.p, 0, sizeof(unsigned), r->env.stream));
  PK_LAUNCH(farthest_kernel, n, (const float *)r->grid.x.p, n, r->d, r->top, (float)r->box[0], (float)r->box[1],
            (float)r->box[2], (unsigned *)w->best.p);
  finish_top_kernel<<<1, 1, 0, r->env.stream>>>((const unsigned *)w->best.p, r->top, (int32_t *)r->parent.p,
                                                (float *)r->delta.p);
  VICK_LAUNCH(call, "finish_top_kernel");
  VICK_TRY(alloc(call, r, &r->saliency, (size_t)n * 4, "saliency"));
  PK_LAUNCH(saliency_kernel, n, rho, (const float *)r->delta.p, n, (float *)r->saliency.p);
  PK_LAUNCH(max_info_kernel, m, (const int32_t *)r->maxima.p, (const int32_t *)r->parent.p, rho,
            (const float *)r->delta.p, (const float *)r->saliency.p, m, (int32_t *)w->mp.p, (float *)w->mr.p,
            (float *)w->md.p, (float *)w->ms.p);
  VICK_TRY(vick_timer_stop(call, &r->env, &call->seconds_kernel, "peaks"));
  const size_t mb = (size_t)m * 4 + 4;
  const int have_points = r->max_point != NULL; /* slab runs: copied with the events */
  if (!have_points) r->max_point = (int64_t *)malloc((size_t)m * 8 + 8);
  r->max_parent = (int64_t *)malloc((size_t)m * 8 + 8);
  r->max_rho = (float *)malloc(mb);
  r->max_delta = (float *)malloc(mb);
  r->max_rk = (float *)malloc(mb);
  r->max_saliency = (float *)malloc(mb);
  if (!r->max_point || !r->max_parent || !r->max_rho || !r->max_delta || !r->max_rk || !r->max_saliency)
    return vick_fail(call, VICK_NOMEM, "no host memory for the maxima");
  vick_stage *st = &r->stage;
  if (!have_points)
    VICK_TRY(vick_staged_to_host_wide(call, &r->env, st, r->max_point, (const int32_t *)r->maxima.p, m));
  VICK_TRY(vick_staged_to_host_wide(call, &r->env, st, r->max_parent, (const int32_t *)w->mp.p, m));
  VICK_TRY(vick_copy_to_host(call, &r->env, r->max_rho, w->mr.p, (size_t)m * 4));
  VICK_TRY(vick_copy_to_host(call, &r->env, r->max_delta, w->md.p, (size_t)m * 4));
  VICK_TRY(vick_copy_to_host(call, &r->env, r->max_rk, w->rk.p, (size_t)m * 4));
  VICK_TRY(vick_copy_to_host(call, &r->env, r->max_saliency, w->ms.p, (size_t)m * 4));
  info->m = m;
  info->top = r->top;
  info->max_point = r->max_point;
  info->max_parent = r->max_parent;
  info->max_rho = r->max_rho;
  info->max_delta = r->max_delta;
  info->max_rk = r->max_rk;
  info->max_saliency = r->max_saliency;
  return VICK_OK;
}

static int peaks_from_lists(vick_call *call, vick_peaks_run *r, begin_ws *w, vick_peaks_info *info);

static int begin_run(vick_call *call, vick_peaks_run *r, begin_ws *w, const vick_points *x, int32_t k,
                     const float *mass, const vick_density_params *p, float *knn, float *sph, float *h, int64_t *ids,
                     float *dist, vick_peaks_info *info) {
  const int64_t n = x->n;
  VICK_TRY(vick_grid_density_dev(call, &r->env, x, k, NULL, n, mass, p, 1, sph != NULL, h != NULL, &r->dens, &r->grid,
                                 &info->bad_row));
  if (info->bad_row >= 0) return VICK_OK;
  VICK_TRY(vick_stage_init(call, &r->stage, 0));
  vick_stage *st = &r->stage;
  VICK_TRY(vick_staged_to_host(call, &r->env, st, knn, r->dens.knn.p, (size_t)n * 4));
  if (sph) VICK_TRY(vick_staged_to_host(call, &r->env, st, sph, r->dens.sph.p, (size_t)n * 4));
  if (h) VICK_TRY(vick_staged_to_host(call, &r->env, st, h, r->dens.h.p, (size_t)n * 4));
  if (ids) VICK_TRY(vick_staged_to_host_wide(call, &r->env, st, ids, (const int32_t *)r->dens.ids.p, n * (int64_t)k));
  if (dist) VICK_TRY(vick_staged_to_host(call, &r->env, st, dist, r->dens.dist.p, (size_t)n * k * 4));
  /* the masses and the other outputs are not needed any more */
  vick_buf_free(&r->env, &r->dens.mass);
  vick_buf_free(&r->env, &r->dens.sph);
  vick_buf_free(&r->env, &r->dens.h);
  vick_buf_free(&r->env, &r->dens.self);
  VICK_TRY(vick_poll(call, "peaks", 0.3));
  return peaks_from_lists(call, r, w, info);
}

/* Everything after the densities, with the lists where list_chunk finds
 * them and the densities in r->dens.knn. */
static int peaks_from_lists(vick_call *call, vick_peaks_run *r, begin_ws *w, vick_peaks_info *info) {
  const int64_t n = r->n;
  const int32_t k = r->k;
  VICK_TRY(vick_timer_start(call, &r->env));
  VICK_TRY(alloc(call, r, &r->parent, (size_t)n * 4, "parents"));
  VICK_TRY(alloc(call, r, &r->delta, (size_t)n * 4, "deltas"));
  VICK_TRY(alloc(call, r, &w->up, (size_t)n * 4, "basin pointers"));
  VICK_TRY(alloc(call, r, &w->is_max, (size_t)n * 4, "local maxima flags"));
  for (int64_t c = 0;; ++c) {
    const int32_t *ci;
    const float *cd;
    int64_t row0, rows;
    VICK_TRY(list_chunk(call, r, c, 1, &ci, &cd, &row0, &rows));
    if (rows == 0) break;
    PK_LAUNCH(list_kernel, rows, ci, cd, (const float *)r->dens.knn.p, row0, rows, n, k, (int32_t *)r->parent.p,
              (float *)r->delta.p, (int32_t *)w->up.p, (int32_t *)w->is_max.p);
  }
  VICK_TRY(merge_events(call, r, w, info));
  VICK_TRY(vick_timer_stop(call, &r->env, &call->seconds_kernel, "peaks"));
  VICK_TRY(events_to_host(call, r, w, info));
  VICK_TRY(vick_poll(call, "peaks", 0.5));
  /* the events are out; only the parents' search needs more scratch */
  vick_buf *done[] = {&w->up, &w->rank, &w->keys, &w->keys2, &w->tmp, &w->ekey, &w->ekey2, &w->epos, &w->epos2,
                      &w->ea, &w->eb, &w->er, &w->is_max, &w->akey, &w->apos, &w->count, &w->off};
  for (size_t i = 0; i < sizeof done / sizeof done[0]; ++i) vick_buf_free(&r->env, done[i]);
  VICK_TRY(maxima_parents(call, r, w, info));
  return vick_poll(call, "peaks", 0.7);
}

extern "C" int vick_peaks_begin(vick_call *call, const vick_points *x, int32_t k, const float *mass,
                                const vick_density_params *p, float *knn_density, float *sph_density,
                                float *smoothing_length, int64_t *ids, float *dist, vick_peaks_run **run,
                                vick_peaks_info *info) {
  if (!run || !info || !knn_density) return vick_fail(call, VICK_ARGUMENT, "peaks: missing outputs");
  *run = NULL;
  memset(info, 0, sizeof *info);
  info->bad_row = -1;
  if (!x || x->d < 1 || x->d > 3 || x->metric != VICK_METRIC_L2)
    return vick_fail(call, VICK_ARGUMENT, "peaks on the device need 1 to 3 dimensions and the L2 metric");
  if (k < 2 || x->n <= k)
    return vick_fail(call, VICK_ARGUMENT, "peaks: need 2 <= k < n (got k = %d, n = %lld)", (int)k, (long long)x->n);
  /* point ids are int32 on the device */
  if (x->n >= INT32_MAX)
    return vick_fail(call, VICK_ARGUMENT, "peaks on the device take fewer than 2^31 - 1 points (n = %lld)",
                     (long long)x->n);
  vick_peaks_run *r = (vick_peaks_run *)calloc(1, sizeof *r);
  if (!r) return vick_fail(call, VICK_NOMEM, "no host memory for the peaks run");
  r->n = x->n;
  r->k = k;
  r->d = x->d;
  for (int j = 0; j < x->d; ++j) r->box[j] = x->box && x->box[j] > 0 ? x->box[j] : 0.0;
  r->top = -1;
  int rc = vick_begin(call, &r->env);
  begin_ws w;
  memset(&w, 0, sizeof w);
  if (rc == VICK_OK) rc = begin_run(call, r, &w, x, k, mass, p, knn_density, sph_density, smoothing_length, ids, dist, info);
  begin_ws_free(&r->env, &w);
  info->n = r->n;
  if (rc != VICK_OK) return vick_peaks_end(call, r, rc);
  *run = r;
  return VICK_OK;
}

/* lab[i] = number of the maximum of i's basin (up: its maximum's id). */
__global__ void label_kernel(const int32_t *up, const int32_t *mid, int64_t n, int32_t *lab) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) lab[i] = mid[up[i]];
}

/* Slab runs, first half: the links of every point from the host, the
 * density order, maxima and basins on the device. */
static int links_run(vick_call *call, vick_peaks_run *r, begin_ws *w, const float *knn, const int32_t *up,
                     const int32_t *is_max, int32_t *lab, int32_t *rank) {
  const int64_t n = r->n;
  const size_t b = (size_t)n * 4;
  VICK_TRY(vick_stage_init(call, &r->stage, 0));
  vick_stage *st = &r->stage;
  VICK_TRY(alloc(call, r, &r->dens.knn, b, "kNN densities"));
  VICK_TRY(alloc(call, r, &w->up, b, "basin pointers"));
  VICK_TRY(alloc(call, r, &w->is_max, b, "local maxima flags"));
  VICK_TRY(vick_staged_to_device(call, &r->env, st, r->dens.knn.p, knn, b));
  VICK_TRY(vick_staged_to_device(call, &r->env, st, w->up.p, up, b));
  VICK_TRY(vick_staged_to_device(call, &r->env, st, w->is_max.p, is_max, b));
  VICK_TRY(vick_timer_start(call, &r->env));
  VICK_TRY(order_and_basins(call, r, w));
  vick_buf_free(&r->env, &w->is_max);
  VICK_TRY(alloc(call, r, &w->scan, b, "basin labels"));
  PK_LAUNCH(label_kernel, n, (const int32_t *)w->up.p, (const int32_t *)r->mid.p, n, (int32_t *)w->scan.p);
  VICK_TRY(vick_timer_stop(call, &r->env, &call->seconds_kernel, "peaks"));
  VICK_TRY(vick_staged_to_host(call, &r->env, st, lab, w->scan.p, b));
  VICK_TRY(vick_staged_to_host(call, &r->env, st, rank, w->rank.p, b));
  r->order = w->keys; /* for the events */
  memset(&w->keys, 0, sizeof w->keys);
  return vick_poll(call, "peaks", 0.4);
}

extern "C" int vick_peaks_begin_links(vick_call *call, int64_t n, int32_t k, const float *knn_density,
                                      const int32_t *up, const int32_t *is_max, int32_t *lab, int32_t *rank,
                                      int64_t *n_max, vick_peaks_run **run) {
  if (!run || !knn_density || !up || !is_max || !lab || !rank || !n_max)
    return vick_fail(call, VICK_ARGUMENT, "peaks: missing links or outputs");
  *run = NULL;
  if (k < 2 || n <= k || n >= INT32_MAX)
    return vick_fail(call, VICK_ARGUMENT, "peaks: need 2 <= k < n < 2^31 - 1 (got k = %d, n = %lld)", (int)k,
                     (long long)n);
  vick_peaks_run *r = (vick_peaks_run *)calloc(1, sizeof *r);
  if (!r) return vick_fail(call, VICK_NOMEM, "no host memory for the peaks run");
  r->n = n;
  r->k = k;
  r->top = -1;
  int rc = vick_begin(call, &r->env);
  begin_ws w;
  memset(&w, 0, sizeof w);
  if (rc == VICK_OK) rc = links_run(call, r, &w, knn_density, up, is_max, lab, rank);
  begin_ws_free(&r->env, &w);
  if (rc != VICK_OK) return vick_peaks_end(call, r, rc);
  *n_max = r->m;
  *run = r;
  return VICK_OK;
}

/* Slab runs, second half: the slabs' first edges into events, and the
 * maxima's ids, to the host. */
static int edges_run(vick_call *call, vick_peaks_run *r, begin_ws *w, const uint64_t *pair, const uint64_t *pos,
                     int64_t e, vick_peaks_info *info) {
  int64_t u = 0;
  if (e > 0) {
    const size_t eb = (size_t)e * 8;
    const char *what = "first edges of the slabs";
    VICK_TRY(alloc(call, r, &w->ekey, eb, what));
    VICK_TRY(alloc(call, r, &w->epos, eb, what));
    VICK_TRY(alloc(call, r, &w->ekey2, eb, what));
    VICK_TRY(alloc(call, r, &w->epos2, eb, what));
    VICK_TRY(alloc(call, r, &w->akey, eb, what));
    VICK_TRY(alloc(call, r, &w->apos, eb, what));
    VICK_TRY(alloc(call, r, &w->nrun, 8, "event count"));
    VICK_TRY(vick_staged_to_device(call, &r->env, &r->stage, w->ekey.p, pair, eb));
    VICK_TRY(vick_staged_to_device(call, &r->env, &r->stage, w->epos.p, pos, eb));
    VICK_TRY(vick_timer_start(call, &r->env));
    /* a pair met in several slabs keeps the smallest of their firsts */
    VICK_TRY(reduce_pairs(call, r, w, (uint64_t *)w->ekey.p, (uint64_t *)w->epos.p, e, 0, &u));
    VICK_TRY(events_in_order(call, r, w, (const uint64_t *)r->order.p, u));
    VICK_TRY(vick_timer_stop(call, &r->env, &call->seconds_kernel, "peaks"));
  }
  info->boundary_edges = e;
  info->n_events = u;
  VICK_TRY(events_to_host(call, r, w, info));
  vick_buf *done[] = {&w->tmp, &w->ekey, &w->ekey2, &w->epos, &w->epos2, &w->ea, &w->eb, &w->er, &w->akey, &w->apos,
                      &w->nrun, &r->order};
  for (size_t i = 0; i < sizeof done / sizeof done[0]; ++i) vick_buf_free(&r->env, done[i]);
  const int64_t m = r->m;
  r->max_point = (int64_t *)malloc((size_t)m * 8 + 8);
  if (!r->max_point) return vick_fail(call, VICK_NOMEM, "no host memory for the maxima");
  VICK_TRY(vick_staged_to_host_wide(call, &r->env, &r->stage, r->max_point, (const int32_t *)r->maxima.p, m));
  info->m = m;
  info->max_point = r->max_point;
  return vick_poll(call, "peaks", 0.6);
}

extern "C" int vick_peaks_add_edges(vick_call *call, vick_peaks_run *r, const uint64_t *pair, const uint64_t *pos,
                                    int64_t count, vick_peaks_info *info) {
  if (!r || !info || (count > 0 && (!pair || !pos)))
    return vick_fail(call, VICK_ARGUMENT, "peaks: edges without a run");
  memset(info, 0, sizeof *info);
  info->bad_row = -1;
  info->n = r->n;
  begin_ws w;
  memset(&w, 0, sizeof w);
  int rc = vick_budget_again(call, &r->env); /* the slabs' kept lists are gone */
  if (rc == VICK_OK) rc = edges_run(call, r, &w, pair, pos, count, info);
  begin_ws_free(&r->env, &w);
  return rc;
}

/* Slab runs, last step: the maxima's parents over the grid of all points. */
extern "C" int vick_peaks_maxima(vick_call *call, vick_peaks_run *r, const vick_points *x, const float *rk,
                                 const int32_t *parent, const float *delta, vick_peaks_info *info) {
  if (!r || !x || !rk || !parent || !delta || !info || !r->max_point)
    return vick_fail(call, VICK_ARGUMENT, "peaks: maxima without a run after its edges, points or k-th distances");
  if (x->n != r->n || x->d < 1 || x->d > 3 || x->metric != VICK_METRIC_L2)
    return vick_fail(call, VICK_ARGUMENT, "peaks: the points do not match the run (%lld of %lld, d = %d)",
                     (long long)x->n, (long long)r->n, (int)x->d);
  r->d = x->d;
  for (int j = 0; j < x->d; ++j) r->box[j] = x->box && x->box[j] > 0 ? x->box[j] : 0.0;
  r->host_rk = rk;
  r->host_parent = parent;
  r->host_delta = delta;
  begin_ws w;
  memset(&w, 0, sizeof w);
  int rc = vick_grid_sort_dev(call, &r->env, x, &r->grid);
  if (rc == VICK_OK) rc = maxima_parents(call, r, &w, info);
  begin_ws_free(&r->env, &w);
  return rc == VICK_OK ? vick_poll(call, "peaks", 0.7) : rc;
}

extern "C" int vick_peaks_climb(vick_call *call, vick_peaks_run *r, const unsigned char *is_candidate,
                                int64_t *members) {
  if (!r || !is_candidate || !members) return vick_fail(call, VICK_ARGUMENT, "peaks: climb without a run");
  const int64_t n = r->n, m = r->m;
  vick_buf cand = {NULL, 0}, count = {NULL, 0}, changed = {NULL, 0};
  unsigned long long *host = (unsigned long long *)malloc((size_t)m * 8 + 8);
  int rc = host ? VICK_OK : vick_fail(call, VICK_NOMEM, "no host memory for member counts");
  if (rc == VICK_OK && !r->label.p) rc = alloc(call, r, &r->label, (size_t)n * 4, "climb labels");
  if (rc == VICK_OK && !r->label2.p) rc = alloc(call, r, &r->label2, (size_t)n * 4, "climb labels");
  if (rc == VICK_OK) rc = alloc(call, r, &cand, (size_t)m + 1, "candidate flags");
  if (rc == VICK_OK) rc = alloc(call, r, &count, (size_t)m * 8 + 8, "member counts");
  if (rc == VICK_OK) rc = alloc(call, r, &changed, sizeof(int), "convergence flag");
  if (rc == VICK_OK) rc = vick_copy_to_device(call, &r->env, cand.p, is_candidate, (size_t)m);
  if (rc == VICK_OK) rc = vick_timer_start(call, &r->env);
  if (rc == VICK_OK) {
    climb_init_kernel<<<vick_blocks(n, PK_THREADS), PK_THREADS, 0, r->env.stream>>>(
        (const int32_t *)r->parent.p, (const int32_t *)r->mid.p, (const unsigned char *)cand.p, n,
        (int32_t *)r->label.p);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) rc = vick_cuda_fail(call, e, "launch of climb_init_kernel", __FILE__, __LINE__);
  }
  if (rc == VICK_OK) rc = jump_to_roots(call, r, &r->label, &r->label2, &changed);
  if (rc == VICK_OK) {
    cudaError_t e = cudaMemsetAsync(count.p, 0, (size_t)m * 8, r->env.stream);
    if (e == cudaSuccess) {
      members_kernel<<<vick_blocks(n, PK_THREADS), PK_THREADS, 0, r->env.stream>>>(
          (const int32_t *)r->label.p, (const int32_t *)r->mid.p, n, (unsigned long long *)count.p);
      e = cudaGetLastError();
    }
    if (e != cudaSuccess) rc = vick_cuda_fail(call, e, "member counts", __FILE__, __LINE__);
  }
  if (rc == VICK_OK) rc = vick_timer_stop(call, &r->env, &call->seconds_kernel, "peaks");
  if (rc == VICK_OK) rc = vick_copy_to_host(call, &r->env, host, count.p, (size_t)m * 8);
  if (rc == VICK_OK)
    for (int64_t q = 0; q < m; ++q) members[q] = (int64_t)host[q];
  free(host);
  vick_buf_free(&r->env, &cand);
  vick_buf_free(&r->env, &count);
  vick_buf_free(&r->env, &changed);
  return rc;
}

static int finish_run(vick_call *call, vick_peaks_run *r, vick_buf *rank, vick_buf *pp, vick_buf *ccount,
                      vick_buf *csum, const int64_t *rank_h, const int64_t *peak_point, int64_t np,
                      float core_fraction, int64_t *parent, float *delta, float *saliency, int64_t *peak_id,
                      int64_t *core_count, double *core_offset) {
  const int64_t n = r->n, m = r->m;
  const int32_t d = r->d;
  if (!r->label.p) return vick_fail(call, VICK_ARGUMENT, "peaks: finish before any climb");
  VICK_TRY(alloc(call, r, rank, (size_t)m * 8 + 8, "peak ranks"));
  VICK_TRY(alloc(call, r, pp, (size_t)np * 8 + 8, "peak points"));
  VICK_TRY(alloc(call, r, ccount, (size_t)np * 8 + 8, "peak core counts"));
  VICK_TRY(alloc(call, r, csum, (size_t)np * d * 8 + 8, "peak core sums"));
  VICK_TRY(alloc(call, r, &r->wide, (size_t)n * 8, "peak ids"));
  VICK_TRY(vick_copy_to_device(call, &r->env, rank->p, rank_h, (size_t)m * 8));
  VICK_TRY(vick_copy_to_device(call, &r->env, pp->p, peak_point, (size_t)np * 8));
  VICK_CUDA(call, cudaMemsetAsync(ccount->p, 0, (size_t)np * 8 + 8, r->env.stream));
  VICK_CUDA(call, cudaMemsetAsync(csum->p, 0, (size_t)np * d * 8 + 8, r->env.stream));
  VICK_TRY(vick_timer_start(call, &r->env));
  PK_LAUNCH(peak_id_kernel, n, (const int32_t *)r->label.p, (const int32_t *)r->mid.p, (const int64_t *)rank->p, n,
            (int64_t *)r->wide.p);
  PK_LAUNCH(centre_kernel, n, (const float *)r->grid.x.p, (const float *)r->dens.knn.p, (const int64_t *)r->wide.p,
            (const int64_t *)pp->p, n, d, core_fraction, r->box[0], r->box[1], r->box[2],
            (unsigned long long *)ccount->p, (double *)csum->p);
  VICK_TRY(vick_timer_stop(call, &r->env, &call->seconds_kernel, "peaks"));
  vick_stage *st = &r->stage;
  VICK_TRY(vick_staged_to_host(call, &r->env, st, peak_id, r->wide.p, (size_t)n * 8));
  VICK_TRY(vick_copy_to_host(call, &r->env, core_count, ccount->p, (size_t)np * 8));
  VICK_TRY(vick_copy_to_host(call, &r->env, core_offset, csum->p, (size_t)np * d * 8));
  if (parent) VICK_TRY(vick_staged_to_host_wide(call, &r->env, st, parent, (const int32_t *)r->parent.p, n));
  if (delta) VICK_TRY(vick_staged_to_host(call, &r->env, st, delta, r->delta.p, (size_t)n * 4));
  if (saliency) VICK_TRY(vick_staged_to_host(call, &r->env, st, saliency, r->saliency.p, (size_t)n * 4));
  return vick_poll(call, "peaks", 1.0);
}

extern "C" int vick_peaks_finish(vick_call *call, vick_peaks_run *r, const int64_t *rank, const int64_t *peak_point,
                                 int64_t n_peaks, float core_fraction, int64_t *parent, float *delta, float *saliency,
                                 int64_t *peak_id, int64_t *core_count, double *core_offset) {
  if (!r || !rank || !peak_point || n_peaks < 1 || !peak_id || !core_count || !core_offset)
    return vick_fail(call, VICK_ARGUMENT, "peaks: finish with missing arguments");
  vick_buf rb = {NULL, 0}, pp = {NULL, 0}, cc = {NULL, 0}, cs = {NULL, 0};
  int rc = finish_run(call, r, &rb, &pp, &cc, &cs, rank, peak_point, n_peaks, core_fraction, parent, delta, saliency,
                      peak_id, core_count, core_offset);
  vick_buf_free(&r->env, &rb);
  vick_buf_free(&r->env, &pp);
  vick_buf_free(&r->env, &cc);
  vick_buf_free(&r->env, &cs);
  return rc;
}

extern "C" int vick_peaks_end(vick_call *call, vick_peaks_run *r, int rc) {
  if (!r) return rc;
  vick_density_dev_free(&r->env, &r->dens);
  vick_grid_dev_free(&r->env, &r->grid);
  vick_buf *all[] = {&r->parent, &r->delta, &r->saliency, &r->mid, &r->label, &r->label2, &r->maxima, &r->flag,
                     &r->wide, &r->order};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) vick_buf_free(&r->env, all[i]);
  free(r->max_point);
  free(r->max_parent);
  free(r->max_rho);
  free(r->max_delta);
  free(r->max_rk);
  free(r->max_saliency);
  free(r->event_a);
  free(r->event_b);
  free(r->event_rho);
  vick_stage_free(&r->stage);
  rc = vick_end(call, &r->env, rc);
  free(r);
  return rc;
}
