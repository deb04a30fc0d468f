/* The list steps of the device peaks for one slab of a set too large for
 * one device (vic_kernels_peaks.h): the slab's lists are made again on
 * its device and consumed there, so that only per-point results and the
 * slab's first boundary edges reach the host.
 *
 * The lists carry ids in the whole set (vick_grid_rows.key_ids), so the
 * per-point inputs of the gathered points (densities, basin labels) are
 * scattered into arrays by id in the whole set on the device, and every
 * step reads them exactly as the in-core kernels of peaks.cu do: the
 * same parents, deltas, basin pointers, and the same first edge of each
 * pair of basins. */
#include "density_internal.cuh"
#include "staged_copy.cuh"
#include "vic_kernels_peaks.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include <stdlib.h>
#include <string.h>

#define SP_THREADS 256
#define SP_EDGE_SEEN 16 /* as peaks.cu's EDGE_SEEN: both must keep the same edges */

static __device__ __forceinline__ int sp_denser(const float *rho, int32_t j, int32_t i) {
  return rho[j] > rho[i] || (rho[j] == rho[i] && j < i);
}

/* v_all[key[l]] = v[l]: per-point values of the gathered points by id. */
__global__ void sp_scatter_kernel(const uint32_t *key, const int32_t *v, int64_t m, int32_t *v_all) {
  const int64_t l = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (l < m) v_all[key[l]] = v[l];
}

/* peaks.cu's list_kernel for the own rows (ids self[r]).  Without the
 * distances (kept lists: the host has them), col[r] receives the
 * parent's place in the row (-1: none) instead of delta[r]. */
__global__ void sp_links_kernel(const int32_t *ids, const float *dist, const float *rho, const uint32_t *self,
                                int64_t rows, int64_t n_all, int32_t k, int32_t *parent, float *delta, int32_t *col,
                                int32_t *up, int32_t *is_max) {
  const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const int64_t i = self[r];
  int32_t p = -2, g = -1, pc = -1;
  for (int32_t t = 0; t < k; ++t) {
    const int64_t j = ids[r * (int64_t)k + t];
    if (j < 0 || j >= n_all || j == i || !sp_denser(rho, (int32_t)j, (int32_t)i)) continue;
    if (p == -2) { p = (int32_t)j; pc = t; }
    if (g < 0 || sp_denser(rho, (int32_t)j, g)) g = (int32_t)j;
  }
  parent[r] = p;
  if (dist) delta[r] = pc >= 0 ? dist[r * (int64_t)k + pc] : 0.f;
  else col[r] = pc;
  up[r] = g >= 0 ? g : (int32_t)i;
  is_max[r] = p == -2;
}

/* peaks.cu's edges_kernel for the own rows: lab by id is the number of
 * the maximum of each point's basin, rank[r] the own row's place in the
 * density order of the whole set. */
__global__ void sp_edges_kernel(const int32_t *ids, const float *rho, const int32_t *lab, const uint32_t *self,
                                const int32_t *rank, int64_t rows, int64_t n_all, int32_t k, int count_only,
                                int64_t *count, const int64_t *off, uint64_t *key, uint64_t *pos) {
  const int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  if (rank[r] < 0) { /* answered elsewhere */
    if (count_only) count[r] = 0;
    return;
  }
  const int32_t i = (int32_t)self[r];
  const int32_t bi = lab[i];
  int32_t c = 0, ns = 0;
  int32_t seen[SP_EDGE_SEEN];
  for (int32_t t = 0; t < k; ++t) {
    const int64_t j = ids[r * (int64_t)k + t];
    if (j < 0 || j >= n_all || !sp_denser(rho, (int32_t)j, i)) continue;
    const int32_t bj = lab[j];
    if (bj == bi) continue;
    int dup = 0;
    for (int32_t q = 0; q < ns; ++q) dup |= seen[q] == bj;
    if (dup) continue;
    if (ns < SP_EDGE_SEEN) seen[ns++] = bj;
    if (!count_only) {
      const uint32_t lo = (uint32_t)min(bi, bj), hi = (uint32_t)max(bi, bj);
      const int64_t at = off[r] + c;
      key[at] = ((uint64_t)lo << 32) | hi;
      pos[at] = (uint64_t)rank[r] * (uint64_t)k + (uint64_t)t;
    }
    ++c;
  }
  if (count_only) count[r] = c;
}

struct sp_min_u64 {
  __device__ __forceinline__ uint64_t operator()(uint64_t a, uint64_t b) const { return a < b ? a : b; }
};

#define SP_LAUNCH(name, n_, ...)                                                        \
  do {                                                                                  \
    if ((n_) > 0) {                                                                     \
      name<<<vick_blocks((n_), SP_THREADS), SP_THREADS, 0, w->env.stream>>>(__VA_ARGS__); \
      VICK_LAUNCH(call, #name);                                                         \
    }                                                                                   \
  } while (0)

typedef struct {
  vick_env env;
  vick_density_dev dev;
  vick_stage stage; /* pinned slots: every copy of the slab's arrays */
  vick_buf key, local, rho_all, lab_all, self, rank, out0, out1, out2, out3;
  vick_buf count, off, ek, ek2, ep, ep2, uk, up, nrun, tmp;
  const vick_by_id *held; /* the pass's values by id on the device, or NULL: rho_all / lab_all */
} sp_ws;

struct vick_by_id {
  int device;
  int64_t n;
  float *rho;
  int32_t *lab; /* NULL: densities only */
};

/* The densities and labels by id the steps read: held for the pass or made by the call. */
static const float *sp_rho(const sp_ws *w) { return w->held ? w->held->rho : (const float *)w->rho_all.p; }
static const int32_t *sp_lab(const sp_ws *w) { return w->held ? w->held->lab : (const int32_t *)w->lab_all.p; }

extern "C" size_t vick_by_id_bytes(const vick_by_id *v) { return v ? (size_t)v->n * (v->lab ? 8 : 4) : 0; }

extern "C" void vick_by_id_free(vick_by_id *v) {
  if (!v) return;
  int was = -1;
  if (cudaGetDevice(&was) != cudaSuccess) was = -1;
  if (cudaSetDevice(v->device) == cudaSuccess) {
    cudaFree(v->rho);
    cudaFree(v->lab);
  }
  if (was >= 0) cudaSetDevice(was);
  cudaGetLastError();
  free(v);
}

extern "C" int vick_by_id_make(vick_call *call, int64_t n_all, const float *rho, const int32_t *lab,
                               vick_by_id **out) {
  *out = NULL;
  if (!rho || n_all < 1 || n_all >= INT32_MAX)
    return vick_fail(call, VICK_ARGUMENT, "values by id: no densities, or %lld points", (long long)n_all);
  vick_by_id *v = (vick_by_id *)calloc(1, sizeof *v);
  if (!v) return vick_fail(call, VICK_NOMEM, "no host memory for values by id");
  v->device = call->device;
  v->n = n_all;
  vick_env env;
  vick_stage st;
  memset(&st, 0, sizeof st);
  vick_buf a = {NULL, 0}, b = {NULL, 0};
  const size_t bytes = (size_t)n_all * 4;
  int rc = vick_begin(call, &env);
  if (rc == VICK_OK) rc = vick_buf_alloc(call, &env, &a, bytes, "densities by id (held)");
  if (rc == VICK_OK && lab) rc = vick_buf_alloc(call, &env, &b, bytes, "basin labels by id (held)");
  if (rc == VICK_OK) rc = vick_stage_init(call, &st, 0);
  if (rc == VICK_OK) rc = vick_staged_to_device(call, &env, &st, a.p, rho, bytes);
  if (rc == VICK_OK && lab) rc = vick_staged_to_device(call, &env, &st, b.p, lab, bytes);
  vick_stage_free(&st);
  if (rc == VICK_OK) { /* the pass holds them now, not this call */
    v->rho = (float *)vick_buf_keep(&env, &a);
    v->lab = lab ? (int32_t *)vick_buf_keep(&env, &b) : NULL;
    *out = v;
  } else {
    vick_buf_free(&env, &a);
    vick_buf_free(&env, &b);
    free(v);
  }
  return vick_end(call, &env, rc);
}

static int held_ok(vick_call *call, const vick_by_id *held, int64_t n_all, int need_lab, const char *what) {
  if (held && (held->device != call->device || held->n != n_all || (need_lab && !held->lab)))
    return vick_fail(call, VICK_ARGUMENT, "%s: the values held are on device %d for %lld points (labels %s); the call "
                     "is on device %d for %lld", what, held->device, (long long)held->n, held->lab ? "too" : "not",
                     call->device, (long long)n_all);
  return VICK_OK;
}

static void sp_free(sp_ws *w) {
  vick_density_dev_free(&w->env, &w->dev);
  vick_buf *all[] = {&w->key, &w->local, &w->rho_all, &w->lab_all, &w->self, &w->rank, &w->out0, &w->out1,
                     &w->out2, &w->out3, &w->count, &w->off, &w->ek, &w->ek2, &w->ep, &w->ep2, &w->uk, &w->up,
                     &w->nrun, &w->tmp};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) vick_buf_free(&w->env, all[i]);
  vick_stage_free(&w->stage);
}

/* The slab's lists (true distances, as vick_slab_density makes them) and
 * the per-point values v (x->n, by row of x) by id at *all. */
static int sp_lists(vick_call *call, sp_ws *w, const vick_points *x, int32_t k, int64_t n_own,
                    const uint32_t *key_ids, int64_t n_all, const void *v, vick_buf *all) {
  vick_grid_rows rows = {0, n_own, key_ids};
  int64_t bad = -1;
  VICK_TRY(vick_grid_density_dev(call, &w->env, x, k, &rows, n_all, NULL, NULL, 0, 0, 0, &w->dev, NULL, &bad));
  /* the densities came from these lists: a bad row was reported then */
  if (bad >= 0) return vick_fail(call, VICK_DEVICE, "slab peaks: own row %lld has no full list", (long long)bad);
  const int64_t m = x->n;
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->key, (size_t)m * 4, "slab point ids"));
  VICK_TRY(vick_stage_init(call, &w->stage, 0));
  VICK_TRY(vick_staged_to_device(call, &w->env, &w->stage, w->key.p, key_ids, (size_t)m * 4));
  if (w->held) return vick_timer_start(call, &w->env); /* the values by id are on the device */
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->local, (size_t)m * 4, "slab point values"));
  VICK_TRY(vick_buf_alloc(call, &w->env, all, (size_t)n_all * 4, "per-point values by id"));
  VICK_TRY(vick_staged_to_device(call, &w->env, &w->stage, w->local.p, v, (size_t)m * 4));
  VICK_TRY(vick_timer_start(call, &w->env));
  SP_LAUNCH(sp_scatter_kernel, m, (const uint32_t *)w->key.p, (const int32_t *)w->local.p, m, (int32_t *)all->p);
  return VICK_OK;
}

/* The links of own rows self (n_own, ids in the set) from their lists
 * ids / dist with the densities by id in w->rho_all (the timer runs);
 * without dist, the parents' places in the rows (col) instead of delta. */
static int links_finish(vick_call *call, sp_ws *w, const int32_t *ids, const float *dist, const uint32_t *self,
                        int32_t k, int64_t n_own, int64_t n_all, int32_t *parent, float *delta, int32_t *col,
                        int32_t *up, int32_t *is_max) {
  const size_t b = (size_t)n_own * 4;
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->out0, b, "slab parents"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->out1, b, dist ? "slab deltas" : "slab parent places"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->out2, b, "slab basin pointers"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->out3, b, "slab maxima flags"));
  SP_LAUNCH(sp_links_kernel, n_own, ids, dist, sp_rho(w), self, n_own, n_all, k, (int32_t *)w->out0.p,
            dist ? (float *)w->out1.p : (float *)NULL, dist ? (int32_t *)NULL : (int32_t *)w->out1.p,
            (int32_t *)w->out2.p, (int32_t *)w->out3.p);
  VICK_TRY(vick_timer_stop(call, &w->env, &call->seconds_kernel, "slab peaks"));
  VICK_TRY(vick_staged_to_host(call, &w->env, &w->stage, parent, w->out0.p, b));
  VICK_TRY(vick_staged_to_host(call, &w->env, &w->stage, dist ? (void *)delta : (void *)col, w->out1.p, b));
  VICK_TRY(vick_staged_to_host(call, &w->env, &w->stage, up, w->out2.p, b));
  VICK_TRY(vick_staged_to_host(call, &w->env, &w->stage, is_max, w->out3.p, b));
  return vick_poll(call, "peaks", 0.5);
}

static int links_run(vick_call *call, sp_ws *w, const vick_points *x, int32_t k, int64_t n_own,
                     const uint32_t *key_ids, int64_t n_all, const float *rho, int32_t *parent, float *delta,
                     int32_t *up, int32_t *is_max) {
  VICK_TRY(sp_lists(call, w, x, k, n_own, key_ids, n_all, rho, &w->rho_all));
  return links_finish(call, w, (const int32_t *)w->dev.ids.p, (const float *)w->dev.dist.p,
                      (const uint32_t *)w->key.p, k, n_own, n_all, parent, delta, NULL, up, is_max);
}

/* Values by id over the whole set (host, n_all) into *all. */
static int sp_by_id(vick_call *call, sp_ws *w, int64_t n_all, const void *v, vick_buf *all, const char *what) {
  VICK_TRY(vick_buf_alloc(call, &w->env, all, (size_t)n_all * 4, what));
  if (!w->stage.slot[0]) VICK_TRY(vick_stage_init(call, &w->stage, 0));
  return vick_staged_to_device(call, &w->env, &w->stage, all->p, v, (size_t)n_all * 4);
}

static int kept_ok(vick_call *call, const vick_slab_lists *l, int64_t n_all, const char *what) {
  if (!l || l->rows < 1 || l->k < 2 || n_all < l->rows || n_all >= INT32_MAX)
    return vick_fail(call, VICK_ARGUMENT, "%s: no kept lists, or %lld rows in a set of %lld", what,
                     l ? (long long)l->rows : 0LL, (long long)n_all);
  if (l->device != call->device || !l->ids)
    return vick_fail(call, VICK_ARGUMENT, "%s: the lists are %s device %d, the call on %d", what,
                     l->ids ? "on" : "parked on the host, from", l->device, call->device);
  return VICK_OK;
}

extern "C" int vick_slab_links_kept(vick_call *call, const vick_slab_lists *l, int64_t n_all, const float *rho,
                                    const vick_by_id *held, int32_t *parent, int32_t *col, int32_t *up,
                                    int32_t *is_max) {
  if ((!rho && !held) || !parent || !col || !up || !is_max)
    return vick_fail(call, VICK_ARGUMENT, "slab links (kept lists): missing arguments");
  VICK_TRY(kept_ok(call, l, n_all, "slab links (kept lists)"));
  VICK_TRY(held_ok(call, held, n_all, 0, "slab links (kept lists)"));
  sp_ws w;
  memset(&w, 0, sizeof w);
  w.held = held;
  int rc = vick_begin(call, &w.env);
  if (rc == VICK_OK && held) rc = vick_stage_init(call, &w.stage, 0);
  if (rc == VICK_OK && !held) rc = sp_by_id(call, &w, n_all, rho, &w.rho_all, "densities by id");
  if (rc == VICK_OK) rc = vick_timer_start(call, &w.env);
  if (rc == VICK_OK)
    rc = links_finish(call, &w, (const int32_t *)l->ids, NULL, (const uint32_t *)l->self, l->k, l->rows, n_all,
                      parent, NULL, col, up, is_max);
  sp_free(&w);
  return vick_end(call, &w.env, rc);
}

extern "C" int vick_slab_links(vick_call *call, const vick_points *x, int32_t k, int64_t n_own,
                               const uint32_t *key_ids, int64_t n_all, const float *rho, const vick_by_id *held,
                               int32_t *parent, float *delta, int32_t *up, int32_t *is_max) {
  if (!x || !key_ids || (!rho && !held) || !parent || !delta || !up || !is_max)
    return vick_fail(call, VICK_ARGUMENT, "slab links: missing arguments");
  if (k < 2 || n_own < 1 || n_own > x->n || x->n <= k || n_all < x->n || n_all >= INT32_MAX)
    return vick_fail(call, VICK_ARGUMENT, "slab links: %lld own rows of %lld points in a set of %lld, k = %d",
                     (long long)n_own, (long long)x->n, (long long)n_all, (int)k);
  VICK_TRY(held_ok(call, held, n_all, 0, "slab links"));
  sp_ws w;
  memset(&w, 0, sizeof w);
  w.held = held;
  int rc = vick_begin(call, &w.env);
  if (rc == VICK_OK) rc = links_run(call, &w, x, k, n_own, key_ids, n_all, rho, parent, delta, up, is_max);
  sp_free(&w);
  return vick_end(call, &w.env, rc);
}

static int sp_ensure_tmp(vick_call *call, sp_ws *w, size_t bytes) {
  if (w->tmp.p && w->tmp.bytes >= bytes) return VICK_OK;
  vick_buf_free(&w->env, &w->tmp);
  return vick_buf_alloc(call, &w->env, &w->tmp, bytes, "CUB workspace");
}

/* The first edges of own rows self (n_own) from their lists ids with
 * densities and labels by id in w->rho_all / w->lab_all and the ranks in
 * w->rank (the timer runs); free_lists: the run's own lists may go once
 * the edges are written. */
static int edges_finish(vick_call *call, sp_ws *w, const int32_t *ids, const uint32_t *self, int32_t k,
                        int64_t n_own, int64_t n_all, int64_t n_max, int free_lists, uint64_t **pair, uint64_t **pos,
                        int64_t *count) {
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->count, (size_t)n_own * 8, "boundary edges per row"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->off, (size_t)n_own * 8, "boundary edge offsets"));
  const float *rho_all = sp_rho(w);
  const int32_t *lab_all = sp_lab(w);
  SP_LAUNCH(sp_edges_kernel, n_own, ids, rho_all, lab_all, self, (const int32_t *)w->rank.p, n_own, n_all, k, 1,
            (int64_t *)w->count.p, (const int64_t *)NULL, (uint64_t *)NULL, (uint64_t *)NULL);
  size_t tb = 0;
  VICK_CUDA(call, cub::DeviceScan::ExclusiveSum(NULL, tb, (const int64_t *)w->count.p, (int64_t *)w->off.p, n_own,
                                                w->env.stream));
  VICK_TRY(sp_ensure_tmp(call, w, tb));
  VICK_CUDA(call, cub::DeviceScan::ExclusiveSum(w->tmp.p, tb, (const int64_t *)w->count.p, (int64_t *)w->off.p,
                                                n_own, w->env.stream));
  int64_t last[2] = {0, 0};
  VICK_CUDA(call, cudaMemcpyAsync(&last[0], (const int64_t *)w->off.p + n_own - 1, 8, cudaMemcpyDeviceToHost,
                                  w->env.stream));
  VICK_CUDA(call, cudaMemcpyAsync(&last[1], (const int64_t *)w->count.p + n_own - 1, 8, cudaMemcpyDeviceToHost,
                                  w->env.stream));
  VICK_CUDA(call, cudaStreamSynchronize(w->env.stream));
  const int64_t e = last[0] + last[1];
  vick_buf_free(&w->env, &w->count);
  int64_t u = 0;
  if (e > 0) {
    /* the lists are done once the edges are written */
    const size_t eb = (size_t)e * 8;
    VICK_TRY(vick_buf_alloc(call, &w->env, &w->ek, eb, "boundary edges"));
    VICK_TRY(vick_buf_alloc(call, &w->env, &w->ep, eb, "boundary edges"));
    SP_LAUNCH(sp_edges_kernel, n_own, ids, rho_all, lab_all, self, (const int32_t *)w->rank.p, n_own, n_all, k, 0,
              (int64_t *)NULL, (const int64_t *)w->off.p, (uint64_t *)w->ek.p, (uint64_t *)w->ep.p);
    if (free_lists) vick_density_dev_free(&w->env, &w->dev);
    vick_buf_free(&w->env, &w->rho_all);
    vick_buf_free(&w->env, &w->lab_all);
    vick_buf_free(&w->env, &w->off);
    VICK_TRY(vick_buf_alloc(call, &w->env, &w->ek2, eb, "boundary edges"));
    VICK_TRY(vick_buf_alloc(call, &w->env, &w->ep2, eb, "boundary edges"));
    VICK_TRY(vick_buf_alloc(call, &w->env, &w->uk, eb, "first edges"));
    VICK_TRY(vick_buf_alloc(call, &w->env, &w->up, eb, "first edges"));
    VICK_TRY(vick_buf_alloc(call, &w->env, &w->nrun, 8, "first edge count"));
    int mbits = 1;
    while (mbits < 32 && ((int64_t)1 << mbits) < n_max) ++mbits;
    cub::DoubleBuffer<uint64_t> pk((uint64_t *)w->ek.p, (uint64_t *)w->ek2.p),
        pv((uint64_t *)w->ep.p, (uint64_t *)w->ep2.p);
    tb = 0;
    VICK_CUDA(call, cub::DeviceRadixSort::SortPairs(NULL, tb, pk, pv, e, 0, 32 + mbits, w->env.stream));
    VICK_TRY(sp_ensure_tmp(call, w, tb));
    VICK_CUDA(call, cub::DeviceRadixSort::SortPairs(w->tmp.p, tb, pk, pv, e, 0, 32 + mbits, w->env.stream));
    tb = 0;
    VICK_CUDA(call, cub::DeviceReduce::ReduceByKey(NULL, tb, pk.Current(), (uint64_t *)w->uk.p, pv.Current(),
                                                   (uint64_t *)w->up.p, (int64_t *)w->nrun.p, sp_min_u64(), e,
                                                   w->env.stream));
    VICK_TRY(sp_ensure_tmp(call, w, tb));
    VICK_CUDA(call, cub::DeviceReduce::ReduceByKey(w->tmp.p, tb, pk.Current(), (uint64_t *)w->uk.p, pv.Current(),
                                                   (uint64_t *)w->up.p, (int64_t *)w->nrun.p, sp_min_u64(), e,
                                                   w->env.stream));
    VICK_CUDA(call, cudaMemcpyAsync(&u, w->nrun.p, 8, cudaMemcpyDeviceToHost, w->env.stream));
    VICK_CUDA(call, cudaStreamSynchronize(w->env.stream));
  }
  VICK_TRY(vick_timer_stop(call, &w->env, &call->seconds_kernel, "slab peaks"));
  *pair = (uint64_t *)malloc((size_t)u * 8 + 8);
  *pos = (uint64_t *)malloc((size_t)u * 8 + 8);
  if (!*pair || !*pos) return vick_fail(call, VICK_NOMEM, "no host memory for a slab's first edges");
  if (u > 0) {
    VICK_TRY(vick_staged_to_host(call, &w->env, &w->stage, *pair, w->uk.p, (size_t)u * 8));
    VICK_TRY(vick_staged_to_host(call, &w->env, &w->stage, *pos, w->up.p, (size_t)u * 8));
  }
  *count = u;
  return vick_poll(call, "peaks", 0.6);
}

static int edges_run(vick_call *call, sp_ws *w, const vick_points *x, int32_t k, int64_t n_own,
                     const uint32_t *key_ids, int64_t n_all, const float *rho, const int32_t *lab,
                     const int32_t *rank, int64_t n_max, uint64_t **pair, uint64_t **pos, int64_t *count) {
  VICK_TRY(sp_lists(call, w, x, k, n_own, key_ids, n_all, rho, &w->rho_all));
  /* the labels by id too, where not held (sp_lists left the timer running) */
  VICK_TRY(vick_timer_stop(call, &w->env, &call->seconds_kernel, "slab peaks"));
  if (!w->held) {
    VICK_TRY(vick_buf_alloc(call, &w->env, &w->lab_all, (size_t)n_all * 4, "basin labels by id"));
    VICK_TRY(vick_staged_to_device(call, &w->env, &w->stage, w->local.p, lab, (size_t)x->n * 4));
  }
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->rank, (size_t)n_own * 4, "density ranks of the own rows"));
  VICK_TRY(vick_staged_to_device(call, &w->env, &w->stage, w->rank.p, rank, (size_t)n_own * 4));
  VICK_TRY(vick_timer_start(call, &w->env));
  if (!w->held)
    SP_LAUNCH(sp_scatter_kernel, x->n, (const uint32_t *)w->key.p, (const int32_t *)w->local.p, x->n,
              (int32_t *)w->lab_all.p);
  return edges_finish(call, w, (const int32_t *)w->dev.ids.p, (const uint32_t *)w->key.p, k, n_own, n_all, n_max, 1,
                      pair, pos, count);
}

extern "C" int vick_slab_edges(vick_call *call, const vick_points *x, int32_t k, int64_t n_own,
                               const uint32_t *key_ids, int64_t n_all, const float *rho, const int32_t *lab,
                               const vick_by_id *held, const int32_t *rank, int64_t n_max, uint64_t **pair,
                               uint64_t **pos, int64_t *count) {
  if (!x || !key_ids || ((!rho || !lab) && !held) || !rank || !pair || !pos || !count)
    return vick_fail(call, VICK_ARGUMENT, "slab edges: missing arguments");
  *pair = *pos = NULL;
  *count = 0;
  if (k < 2 || n_own < 1 || n_own > x->n || x->n <= k || n_all < x->n || n_all >= INT32_MAX || n_max < 1)
    return vick_fail(call, VICK_ARGUMENT, "slab edges: %lld own rows of %lld points in a set of %lld, k = %d",
                     (long long)n_own, (long long)x->n, (long long)n_all, (int)k);
  VICK_TRY(held_ok(call, held, n_all, 1, "slab edges"));
  sp_ws w;
  memset(&w, 0, sizeof w);
  w.held = held;
  int rc = vick_begin(call, &w.env);
  if (rc == VICK_OK) rc = edges_run(call, &w, x, k, n_own, key_ids, n_all, rho, lab, rank, n_max, pair, pos, count);
  sp_free(&w);
  if (rc != VICK_OK) {
    free(*pair);
    free(*pos);
    *pair = *pos = NULL;
    *count = 0;
  }
  return vick_end(call, &w.env, rc);
}

extern "C" int vick_slab_edges_kept(vick_call *call, const vick_slab_lists *l, int64_t n_all, const float *rho,
                                    const int32_t *lab, const vick_by_id *held, const int32_t *rank, int64_t n_max,
                                    uint64_t **pair, uint64_t **pos, int64_t *count) {
  if (((!rho || !lab) && !held) || !rank || !pair || !pos || !count)
    return vick_fail(call, VICK_ARGUMENT, "slab edges (kept lists): missing arguments");
  *pair = *pos = NULL;
  *count = 0;
  VICK_TRY(kept_ok(call, l, n_all, "slab edges (kept lists)"));
  if (n_max < 1) return vick_fail(call, VICK_ARGUMENT, "slab edges (kept lists): no maxima");
  VICK_TRY(held_ok(call, held, n_all, 1, "slab edges (kept lists)"));
  sp_ws w;
  memset(&w, 0, sizeof w);
  w.held = held;
  int rc = vick_begin(call, &w.env);
  if (rc == VICK_OK && held) rc = vick_stage_init(call, &w.stage, 0);
  if (rc == VICK_OK && !held) rc = sp_by_id(call, &w, n_all, rho, &w.rho_all, "densities by id");
  if (rc == VICK_OK && !held) rc = sp_by_id(call, &w, n_all, lab, &w.lab_all, "basin labels by id");
  if (rc == VICK_OK) rc = vick_buf_alloc(call, &w.env, &w.rank, (size_t)l->rows * 4, "density ranks of the own rows");
  if (rc == VICK_OK) rc = vick_staged_to_device(call, &w.env, &w.stage, w.rank.p, rank, (size_t)l->rows * 4);
  if (rc == VICK_OK) rc = vick_timer_start(call, &w.env);
  if (rc == VICK_OK)
    rc = edges_finish(call, &w, (const int32_t *)l->ids, (const uint32_t *)l->self, l->k, l->rows, n_all, n_max, 0,
                      pair, pos, count);
  sp_free(&w);
  if (rc != VICK_OK) {
    free(*pair);
    free(*pos);
    *pair = *pos = NULL;
    *count = 0;
  }
  return vick_end(call, &w.env, rc);
}
