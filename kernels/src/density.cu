/* kNN and SPH densities from kNN lists on the device (vic_kernels_density.h).
 *
 * One thread per particle reads its row of the lists and evaluates the
 * core's formulas (core/src/nbody/density.c) in the same order and precision:
 * double accumulation over t = 0 .. k-2, the masses converted from float,
 * the spline evaluated in double as vic__m4_shape does.  The arithmetic
 * uses explicit round-to-nearest intrinsics so nvcc cannot contract it
 * into fused multiply-adds the CPU (x86-64 baseline) does not use; only
 * pow(rk, d) may differ from the host's libm in the last bit.
 *
 * Two entry points: vick_density takes host lists (only the columns the
 * outputs need are copied, in row chunks under the budget), and
 * vick_grid_knn_density builds the exact grid lists and evaluates the
 * densities while the lists are still on the device. */
#include "common.cuh"
#include "density_internal.cuh"
#include "grid_internal.cuh"
#include "staged_copy.cuh"
#include "vic_kernels_density.h"
#include "vic_kernels_exact.h"

#include <math.h>
#include <string.h>

#define DENS_THREADS 256

/* vic__m4_shape of density_math.h, bit for bit (no contraction). */
__device__ __forceinline__ double m4_shape(double q) {
  if (q < 0.5) {
    double q2 = __dmul_rn(__dmul_rn(6.0, q), q);
    double q3 = __dmul_rn(__dmul_rn(__dmul_rn(6.0, q), q), q);
    return __dadd_rn(__dsub_rn(1.0, q2), q3);
  }
  if (q < 1.0) {
    double t = __dsub_rn(1.0, q);
    return __dmul_rn(__dmul_rn(__dmul_rn(2.0, t), t), t);
  }
  return 0.0;
}

typedef struct {
  int32_t k;
  int64_t ld;        /* floats between rows of dist */
  int32_t kth;       /* column of rk within a row of dist (k-1, or 0 when only rk was copied) */
  int32_t d;
  double unit_mass, vd, sigma, h_of_rk;
} dens_args;

/* Rows [0, n) of a chunk whose first particle is row0 (or, for a slab,
 * whose particles are self[0 .. n)).  ids / dist are the chunk's rows
 * (ids may be NULL without masses; dist holds all k columns when sph is
 * wanted); mass covers all particles. */
template <typename IdT>
__global__ void __launch_bounds__(DENS_THREADS)
density_kernel(dens_args a, int64_t n, int64_t row0, const uint32_t *self, const IdT *ids, const float *dist,
               const float *mass, float *knn, float *sph, float *h) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int64_t k = a.k;
  const float *r = dist + i * a.ld;
  const IdT *id = ids ? ids + i * k : NULL;
  const double rk = (double)r[a.kth], rkd = pow(rk, (double)a.d);
  if (knn) {
    double m = 0;
    if (mass) for (int64_t t = 0; t < k - 1; ++t) m = __dadd_rn(m, (double)mass[id[t]]);
    else m = __dmul_rn((double)(k - 1), a.unit_mass);
    knn[i] = (float)__ddiv_rn(m, __dmul_rn(a.vd, rkd));
  }
  if (sph) {
    const int64_t me = self ? (int64_t)self[i] : row0 + i;
    double sum = __dmul_rn(mass ? (double)mass[me] : a.unit_mass, m4_shape(0.0));
    for (int64_t t = 0; t < k - 1; ++t) {
      double w = m4_shape(__ddiv_rn((double)r[t], rk));
      sum = __dadd_rn(sum, __dmul_rn(mass ? (double)mass[id[t]] : a.unit_mass, w));
    }
    sph[i] = (float)__ddiv_rn(__dmul_rn(sum, a.sigma), rkd);
  }
  if (h) h[i] = (float)__dmul_rn(a.h_of_rk, rk);
}

static dens_args make_args(const vick_density_params *p, int32_t k, int64_t ld, int32_t kth) {
  dens_args a;
  a.k = k;
  a.ld = ld;
  a.kth = kth;
  a.d = p->d;
  a.unit_mass = p->unit_mass;
  a.vd = p->vd;
  a.sigma = p->sigma;
  a.h_of_rk = p->h_of_rk;
  return a;
}

static int params_ok(vick_call *call, int64_t n, int32_t k, const vick_density_params *p) {
  if (!p || p->d < 1 || !(p->vd > 0) || !(p->sigma > 0) || !(p->h_of_rk > 0) || !(p->unit_mass >= 0))
    return vick_fail(call, VICK_ARGUMENT, "density: bad parameters");
  if (n < 1 || k < 2) return vick_fail(call, VICK_ARGUMENT, "density: needs n >= 1 and k >= 2 (got n = %lld, k = %d)",
                                       (long long)n, (int)k);
  return VICK_OK;
}

/* -------------------------------------------------------- from host lists */
typedef struct {
  vick_env env;
  vick_buf mass, ids, dist, knn, sph, h;
  float *rk_host; /* packed k-th column when only it travels */
} dens_ws;

static void dens_ws_free(dens_ws *w) {
  vick_buf *all[] = {&w->mass, &w->ids, &w->dist, &w->knn, &w->sph, &w->h};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) vick_buf_free(&w->env, all[i]);
  free(w->rk_host);
  w->rk_host = NULL;
}

static int density_run(vick_call *call, dens_ws *w, int64_t n, int32_t k, const int64_t *ids, const float *dist,
                       const float *mass, const vick_density_params *p, float *knn, float *sph, float *h) {
  const int need_ids = mass && (knn || sph);
  const int need_all_dist = sph != NULL;
  const int64_t dcols = need_all_dist ? k : 1;
  if (mass) {
    VICK_TRY(vick_buf_alloc(call, &w->env, &w->mass, (size_t)n * sizeof(float), "particle masses"));
    VICK_TRY(vick_copy_to_device(call, &w->env, w->mass.p, mass, (size_t)n * sizeof(float)));
  }
  if (!need_all_dist) {
    /* only rk travels: pack the column on the host (n floats instead of n*k) */
    w->rk_host = (float *)malloc((size_t)n * sizeof(float));
    if (!w->rk_host) return vick_fail(call, VICK_NOMEM, "no host memory to pack the k-th distances");
    for (int64_t i = 0; i < n; ++i) w->rk_host[i] = dist[i * k + k - 1];
  }
  /* bytes per row on the device: lists, outputs */
  size_t per_row = (size_t)dcols * sizeof(float) + (need_ids ? (size_t)k * sizeof(int64_t) : 0) +
                   (size_t)((knn != NULL) + (sph != NULL) + (h != NULL)) * sizeof(float);
  size_t left = vick_budget_left(&w->env);
  int64_t chunk = (int64_t)(left / per_row);
  if (chunk > n) chunk = n;
  if (chunk < 1)
    return vick_fail(call, VICK_NOMEM, "density needs %.1f KiB of device memory per row; the budget has %.1f KiB left",
                     per_row / 1024.0, left / 1024.0);
  /* whole chunks of 4096 rows when that still leaves several, to keep copies large */
  if (chunk < n && chunk > 4096) chunk -= chunk % 4096;
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->dist, (size_t)chunk * dcols * sizeof(float), "neighbour distances"));
  if (need_ids) VICK_TRY(vick_buf_alloc(call, &w->env, &w->ids, (size_t)chunk * k * sizeof(int64_t), "neighbour ids"));
  if (knn) VICK_TRY(vick_buf_alloc(call, &w->env, &w->knn, (size_t)chunk * sizeof(float), "kNN densities"));
  if (sph) VICK_TRY(vick_buf_alloc(call, &w->env, &w->sph, (size_t)chunk * sizeof(float), "SPH densities"));
  if (h) VICK_TRY(vick_buf_alloc(call, &w->env, &w->h, (size_t)chunk * sizeof(float), "smoothing lengths"));
  const dens_args a = make_args(p, k, dcols, need_all_dist ? k - 1 : 0);
  for (int64_t r0 = 0; r0 < n; r0 += chunk) {
    const int64_t m = n - r0 < chunk ? n - r0 : chunk;
    if (need_all_dist)
      VICK_TRY(vick_copy_to_device(call, &w->env, w->dist.p, dist + r0 * k, (size_t)m * k * sizeof(float)));
    else
      VICK_TRY(vick_copy_to_device(call, &w->env, w->dist.p, w->rk_host + r0, (size_t)m * sizeof(float)));
    if (need_ids) VICK_TRY(vick_copy_to_device(call, &w->env, w->ids.p, ids + r0 * k, (size_t)m * k * sizeof(int64_t)));
    VICK_TRY(vick_timer_start(call, &w->env));
    density_kernel<int64_t><<<vick_blocks(m, DENS_THREADS), DENS_THREADS, 0, w->env.stream>>>(
        a, m, r0, (const uint32_t *)NULL, need_ids ? (const int64_t *)w->ids.p : NULL, (const float *)w->dist.p,
        mass ? (const float *)w->mass.p : NULL, (float *)w->knn.p, (float *)w->sph.p, (float *)w->h.p);
    VICK_LAUNCH(call, "density_kernel");
    VICK_TRY(vick_timer_stop(call, &w->env, &call->seconds_kernel, "density"));
    if (knn) VICK_TRY(vick_copy_to_host(call, &w->env, knn + r0, w->knn.p, (size_t)m * sizeof(float)));
    if (sph) VICK_TRY(vick_copy_to_host(call, &w->env, sph + r0, w->sph.p, (size_t)m * sizeof(float)));
    if (h) VICK_TRY(vick_copy_to_host(call, &w->env, h + r0, w->h.p, (size_t)m * sizeof(float)));
    VICK_TRY(vick_poll(call, "density", (double)(r0 + m) / (double)n));
  }
  return VICK_OK;
}

extern "C" int vick_density(vick_call *call, int64_t n, int32_t k, const int64_t *ids, const float *dist,
                            const float *mass, const vick_density_params *p, float *knn_density, float *sph_density,
                            float *smoothing_length) {
  VICK_TRY(params_ok(call, n, k, p));
  if (!dist || (mass && !ids)) return vick_fail(call, VICK_ARGUMENT, "density: missing kNN lists");
  dens_ws w;
  memset(&w, 0, sizeof w);
  int rc = vick_begin(call, &w.env);
  if (rc == VICK_OK && (knn_density || sph_density || smoothing_length))
    rc = density_run(call, &w, n, k, ids, dist, mass, p, knn_density, sph_density, smoothing_length);
  dens_ws_free(&w);
  return vick_end(call, &w.env, rc);
}

/* ---------------------------------------------------- fused with the grid */
/* Working (squared) distances to true ones, as the core's CPU grid
 * finishes a row (cpu_grid.c finish_row): a correctly rounded sqrt, then
 * the (distance, id) order restored where sqrt rounds distinct squared
 * distances to one float (topk.h vic__sort_pairs).  One warp per row so
 * that the reads are coalesced; equal neighbouring distances are rare,
 * and only a row that has some is re-sorted, by lane 0 (an insertion
 * sort, linear on a nearly sorted row).  Padding (-1, +inf) stays last. */
__global__ void true_dist_kernel(int32_t *ids, float *dist, int64_t n, int32_t k) {
  const int64_t row = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const int lane = threadIdx.x & 31;
  if (row >= n) return; /* the whole warp: row is uniform in it */
  int32_t *id = ids + row * k;
  float *d = dist + row * k;
  float carry = -1.f; /* the last distance of the previous 32 */
  unsigned any = 0;
  for (int32_t t0 = 0; t0 < k; t0 += 32) {
    const int32_t t = t0 + lane;
    float v = 0.f;
    if (t < k) { const float w = d[t]; v = __fsqrt_rn(w > 0.f ? w : 0.f); d[t] = v; }
    float left = __shfl_up_sync(0xffffffffu, v, 1);
    if (lane == 0) left = carry;
    any |= __ballot_sync(0xffffffffu, t < k && t > 0 && left == v);
    carry = __shfl_sync(0xffffffffu, v, 31);
  }
  __syncwarp();
  if (!any || lane != 0) return;
  for (int32_t t = 1; t < k; ++t) {
    const float td = d[t];
    const int32_t ti = id[t];
    if (ti < 0) break;
    int32_t j = t;
    while (j > 0 && vick_before(td, ti, d[j - 1], id[j - 1])) { d[j] = d[j - 1]; id[j] = id[j - 1]; --j; }
    d[j] = td;
    id[j] = ti;
  }
}

/* The first row whose list cannot give a density (as the core's
 * first_bad_row): a missing neighbour or rk not positive and finite.
 * Ids index n_all points. */
__global__ void bad_row_kernel(const int32_t *ids, const float *dist, int64_t n, int32_t k, int64_t n_all,
                               unsigned long long *first) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float rk = dist[i * k + k - 1];
  int ok = rk > 0.f && isfinite(rk);
  for (int32_t t = 0; t < k && ok; ++t) ok = ids[i * k + t] >= 0 && ids[i * k + t] < n_all;
  if (!ok) atomicMin(first, (unsigned long long)i);
}

/* density_internal.cuh: lists, grid and densities left on the device. */
int vick_grid_density_dev(vick_call *call, vick_env *env, const vick_points *x, int32_t k, const vick_grid_rows *rows,
                          int64_t n_all, const float *mass, const vick_density_params *p, int want_knn, int want_sph,
                          int want_h, vick_density_dev *out, vick_grid_dev *keep, int64_t *bad_row) {
  const int64_t n = rows ? rows->q1 - rows->q0 : x->n;
  if (!rows) n_all = x->n;
  VICK_TRY(vick_grid_knn_dev(call, env, x, k, rows, &out->ids, &out->dist, keep));
  VICK_TRY(vick_timer_start(call, env));
  true_dist_kernel<<<vick_blocks(n * 32, 256), 256, 0, env->stream>>>((int32_t *)out->ids.p, (float *)out->dist.p, n,
                                                                      k);
  VICK_LAUNCH(call, "true_dist_kernel");
  vick_buf bad = {NULL, 0};
  VICK_TRY(vick_buf_alloc(call, env, &bad, sizeof(unsigned long long), "row check"));
  unsigned long long first = 0;
  int rc = VICK_OK;
  cudaError_t e = cudaMemsetAsync(bad.p, 0xff, sizeof(unsigned long long), env->stream);
  if (e != cudaSuccess) rc = vick_cuda_fail(call, e, "cudaMemsetAsync(row check)", __FILE__, __LINE__);
  if (rc == VICK_OK) {
    bad_row_kernel<<<vick_blocks(n, 256), 256, 0, env->stream>>>((const int32_t *)out->ids.p,
                                                                  (const float *)out->dist.p, n, k, n_all,
                                                                  (unsigned long long *)bad.p);
    e = cudaGetLastError();
    if (e != cudaSuccess) rc = vick_cuda_fail(call, e, "launch of bad_row_kernel", __FILE__, __LINE__);
  }
  if (rc == VICK_OK) rc = vick_timer_stop(call, env, &call->seconds_kernel, "density");
  if (rc == VICK_OK) rc = vick_copy_to_host(call, env, &first, bad.p, sizeof first);
  vick_buf_free(env, &bad);
  VICK_TRY(rc);
  *bad_row = first == ~0ull ? -1 : (int64_t)first;
  if (mass) {
    VICK_TRY(vick_buf_alloc(call, env, &out->mass, (size_t)n_all * sizeof(float), "particle masses"));
    VICK_TRY(vick_copy_to_device(call, env, out->mass.p, mass, (size_t)n_all * sizeof(float)));
  }
  /* a slab's own rows: their ids in the whole set, for their own masses */
  if (rows && rows->key_ids && mass) {
    VICK_TRY(vick_buf_alloc(call, env, &out->self, (size_t)n * 4, "slab row ids"));
    VICK_TRY(vick_copy_to_device(call, env, out->self.p, rows->key_ids + rows->q0, (size_t)n * 4));
  }
  if (want_knn) VICK_TRY(vick_buf_alloc(call, env, &out->knn, (size_t)n * sizeof(float), "kNN densities"));
  if (want_sph) VICK_TRY(vick_buf_alloc(call, env, &out->sph, (size_t)n * sizeof(float), "SPH densities"));
  if (want_h) VICK_TRY(vick_buf_alloc(call, env, &out->h, (size_t)n * sizeof(float), "smoothing lengths"));
  if (*bad_row < 0 && (want_knn || want_sph || want_h)) {
    const dens_args a = make_args(p, k, k, k - 1);
    VICK_TRY(vick_timer_start(call, env));
    density_kernel<int32_t><<<vick_blocks(n, DENS_THREADS), DENS_THREADS, 0, env->stream>>>(
        a, n, rows ? rows->q0 : 0, (const uint32_t *)out->self.p, (const int32_t *)out->ids.p,
        (const float *)out->dist.p, mass ? (const float *)out->mass.p : NULL,
        (float *)out->knn.p, (float *)out->sph.p, (float *)out->h.p);
    VICK_LAUNCH(call, "density_kernel");
    VICK_TRY(vick_timer_stop(call, env, &call->seconds_kernel, "density"));
  }
  return VICK_OK;
}

void vick_density_dev_free(vick_env *env, vick_density_dev *d) {
  vick_buf *all[] = {&d->ids, &d->dist, &d->mass, &d->knn, &d->sph, &d->h, &d->self};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) vick_buf_free(env, all[i]);
}

typedef struct {
  vick_env env;
  vick_density_dev dev;
  vick_stage stage;
} fused_ws;

static int fused_run(vick_call *call, fused_ws *w, const vick_points *x, int32_t k, const float *mass,
                     const vick_density_params *p, float *knn, float *sph, float *h, int64_t *ids, float *dist,
                     int64_t *bad_row) {
  const int64_t n = x->n;
  vick_density_dev *d = &w->dev;
  VICK_TRY(vick_grid_density_dev(call, &w->env, x, k, NULL, n, mass, p, knn != NULL, sph != NULL, h != NULL, d, NULL,
                                 bad_row));
  VICK_TRY(vick_stage_init(call, &w->stage, 0));
  vick_stage *st = &w->stage;
  if (*bad_row < 0) {
    if (knn) VICK_TRY(vick_staged_to_host(call, &w->env, st, knn, d->knn.p, (size_t)n * sizeof(float)));
    if (sph) VICK_TRY(vick_staged_to_host(call, &w->env, st, sph, d->sph.p, (size_t)n * sizeof(float)));
    if (h) VICK_TRY(vick_staged_to_host(call, &w->env, st, h, d->h.p, (size_t)n * sizeof(float)));
  }
  VICK_TRY(vick_poll(call, "density", 0.95));
  const int64_t total = n * (int64_t)k;
  if (ids) VICK_TRY(vick_staged_to_host_wide(call, &w->env, st, ids, (const int32_t *)d->ids.p, total));
  if (dist) VICK_TRY(vick_staged_to_host(call, &w->env, st, dist, d->dist.p, (size_t)total * sizeof(float)));
  return vick_poll(call, "density", 1.0);
}

extern "C" int vick_grid_knn_density(vick_call *call, const vick_points *x, int32_t k, const float *mass,
                                     const vick_density_params *p, float *knn_density, float *sph_density,
                                     float *smoothing_length, int64_t *ids, float *dist, int64_t *bad_row) {
  if (!x || !bad_row) return vick_fail(call, VICK_ARGUMENT, "density: no points or no bad-row output");
  *bad_row = -1;
  VICK_TRY(params_ok(call, x->n, k, p));
  if (x->n <= k)
    return vick_fail(call, VICK_ARGUMENT, "density: k = %d needs more than k points (got %lld)", (int)k,
                     (long long)x->n);
  fused_ws w;
  memset(&w, 0, sizeof w);
  int rc = vick_begin(call, &w.env);
  if (rc == VICK_OK)
    rc = fused_run(call, &w, x, k, mass, p, knn_density, sph_density, smoothing_length, ids, dist, bad_row);
  vick_density_dev_free(&w.env, &w.dev);
  vick_stage_free(&w.stage);
  return vick_end(call, &w.env, rc);
}

/* ---------------------------------------------------------------- slabs */
__global__ void column_kernel(const float *dist, int64_t n, int32_t k, float *rk) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) rk[i] = dist[i * k + k - 1];
}

typedef struct {
  vick_env env;
  vick_density_dev dev;
  vick_stage stage;
  vick_buf rk;
} slab_ws;

extern "C" size_t vick_slab_lists_bytes(int64_t n_own, int32_t k) { return (size_t)n_own * ((size_t)k * 4 + 4); }

/* The device buffers of l freed (on its device; the caller's current
 * device restored). */
static void lists_device_free(vick_slab_lists *l) {
  int was = -1;
  if (cudaGetDevice(&was) != cudaSuccess) was = -1;
  if (cudaSetDevice(l->device) == cudaSuccess) {
    cudaFree(l->ids);
    cudaFree(l->self);
  }
  if (was >= 0) cudaSetDevice(was);
  cudaGetLastError();
  l->ids = l->self = NULL;
}

extern "C" void vick_slab_lists_free(vick_slab_lists *l) {
  if (!l) return;
  lists_device_free(l);
  free(l->host_ids);
  free(l->host_self);
  free(l);
}

extern "C" int vick_slab_lists_parked(const vick_slab_lists *l) { return l && l->host_ids; }

/* Both arrays of l between host and device through the call's pinned slots. */
static int lists_copy(vick_call *call, vick_slab_lists *l, int to_host) {
  const size_t bi = (size_t)l->rows * (size_t)l->k * 4, bs = (size_t)l->rows * 4;
  vick_env env;
  vick_stage st;
  memset(&st, 0, sizeof st);
  vick_buf ids = {NULL, 0}, self = {NULL, 0};
  int rc = vick_begin(call, &env);
  if (rc == VICK_OK) rc = vick_stage_init(call, &st, 0);
  if (rc == VICK_OK && to_host) {
    rc = vick_staged_to_host(call, &env, &st, l->host_ids, l->ids, bi);
    if (rc == VICK_OK) rc = vick_staged_to_host(call, &env, &st, l->host_self, l->self, bs);
  } else if (rc == VICK_OK) {
    rc = vick_buf_alloc(call, &env, &ids, bi, "parked slab lists");
    if (rc == VICK_OK) rc = vick_buf_alloc(call, &env, &self, bs, "parked slab row ids");
    if (rc == VICK_OK) rc = vick_staged_to_device(call, &env, &st, ids.p, l->host_ids, bi);
    if (rc == VICK_OK) rc = vick_staged_to_device(call, &env, &st, self.p, l->host_self, bs);
    if (rc == VICK_OK) { /* the lists hold them now, not this call */
      l->ids = vick_buf_keep(&env, &ids);
      l->self = vick_buf_keep(&env, &self);
    }
    vick_buf_free(&env, &ids);
    vick_buf_free(&env, &self);
  }
  vick_stage_free(&st);
  return vick_end(call, &env, rc);
}

extern "C" int vick_slab_lists_park(vick_call *call, vick_slab_lists *l) {
  if (!l || l->host_ids || l->device != call->device)
    return vick_fail(call, VICK_ARGUMENT, "slab lists to park: none, parked already, or on another device");
  l->host_ids = malloc((size_t)l->rows * (size_t)l->k * 4);
  l->host_self = l->host_ids ? malloc((size_t)l->rows * 4) : NULL;
  int rc = l->host_self ? lists_copy(call, l, 1) : vick_fail(call, VICK_NOMEM, "no host memory to park slab lists");
  if (rc != VICK_OK) { /* still on the device */
    free(l->host_ids);
    free(l->host_self);
    l->host_ids = l->host_self = NULL;
    return rc;
  }
  lists_device_free(l);
  return VICK_OK;
}

extern "C" int vick_slab_lists_unpark(vick_call *call, vick_slab_lists *l) {
  if (!l || !l->host_ids || l->device != call->device)
    return vick_fail(call, VICK_ARGUMENT, "slab lists to take back: none, not parked, or on another device");
  VICK_TRY(lists_copy(call, l, 0));
  free(l->host_ids);
  free(l->host_self);
  l->host_ids = l->host_self = NULL;
  return VICK_OK;
}

/* The own rows' list ids handed from the run's buffers to *keep, with
 * the rows' ids (the run no longer counts them); the distances stay the
 * run's (the caller has them on the host). */
static int slab_keep(vick_call *call, slab_ws *w, int64_t n_own, int32_t k, const uint32_t *key_ids,
                     vick_slab_lists **keep) {
  vick_density_dev *d = &w->dev;
  vick_buf self;
  VICK_TRY(vick_buf_alloc(call, &w->env, &self, (size_t)n_own * 4, "kept slab row ids"));
  vick_slab_lists *l = (vick_slab_lists *)calloc(1, sizeof *l);
  if (!l) { vick_buf_free(&w->env, &self); return vick_fail(call, VICK_NOMEM, "no host memory for kept slab lists"); }
  l->device = call->device;
  l->rows = n_own;
  l->k = k;
  l->self = vick_buf_keep(&w->env, &self);
  *keep = l; /* the caller releases it on any failure from here */
  VICK_TRY(vick_staged_to_device(call, &w->env, &w->stage, l->self, key_ids, (size_t)n_own * 4));
  l->ids = vick_buf_keep(&w->env, &d->ids);
  return VICK_OK;
}

static int slab_run(vick_call *call, slab_ws *w, const vick_points *x, int32_t k, int64_t n_own,
                    const uint32_t *key_ids, int64_t n_all, const float *mass, const vick_density_params *p,
                    float *knn, float *sph, float *h, float *rk, int32_t *ids, float *dist, const int64_t *row_of,
                    int64_t *bad_row, vick_slab_lists **keep, float *keep_dist) {
  vick_density_dev *d = &w->dev;
  vick_grid_rows rows = {0, n_own, key_ids};
  VICK_TRY(vick_grid_density_dev(call, &w->env, x, k, &rows, n_all, mass, p, knn != NULL, sph != NULL, h != NULL, d,
                                 NULL, bad_row));
  VICK_TRY(vick_stage_init(call, &w->stage, 0));
  vick_stage *st = &w->stage;
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->rk, (size_t)n_own * 4, "k-th distances"));
  column_kernel<<<vick_blocks(n_own, 256), 256, 0, w->env.stream>>>((const float *)d->dist.p, n_own, k,
                                                                      (float *)w->rk.p);
  VICK_LAUNCH(call, "column_kernel");
  VICK_TRY(vick_staged_to_host(call, &w->env, st, rk, w->rk.p, (size_t)n_own * 4));
  if (*bad_row < 0) {
    if (knn) VICK_TRY(vick_staged_to_host(call, &w->env, st, knn, d->knn.p, (size_t)n_own * 4));
    if (sph) VICK_TRY(vick_staged_to_host(call, &w->env, st, sph, d->sph.p, (size_t)n_own * 4));
    if (h) VICK_TRY(vick_staged_to_host(call, &w->env, st, h, d->h.p, (size_t)n_own * 4));
  }
  const size_t total = (size_t)n_own * k;
  if (row_of) {
    if (ids) VICK_TRY(vick_staged_to_host_rows(call, &w->env, st, ids, d->ids.p, n_own, (size_t)k * 4, row_of));
    if (dist) VICK_TRY(vick_staged_to_host_rows(call, &w->env, st, dist, d->dist.p, n_own, (size_t)k * 4, row_of));
  } else {
    if (ids) VICK_TRY(vick_staged_to_host(call, &w->env, st, ids, d->ids.p, total * 4));
    if (dist) VICK_TRY(vick_staged_to_host(call, &w->env, st, dist, d->dist.p, total * 4));
  }
  if (keep && *bad_row < 0) {
    if (keep_dist) VICK_TRY(vick_staged_to_host(call, &w->env, st, keep_dist, d->dist.p, total * 4));
    VICK_TRY(slab_keep(call, w, n_own, k, key_ids, keep));
  }
  return vick_poll(call, "density", 1.0);
}

extern "C" int vick_slab_density(vick_call *call, const vick_points *x, int32_t k, int64_t n_own,
                                 const uint32_t *key_ids, int64_t n_all, const float *mass,
                                 const vick_density_params *p, float *knn_density, float *sph_density,
                                 float *smoothing_length, float *rk, int32_t *ids, float *dist, const int64_t *row_of,
                                 int64_t *bad_row, vick_slab_lists **keep, float *keep_dist) {
  if (keep) *keep = NULL;
  if (!x || !bad_row || !key_ids || !rk) return vick_fail(call, VICK_ARGUMENT, "slab density: missing arguments");
  *bad_row = -1;
  VICK_TRY(params_ok(call, x->n, k, p));
  if (n_own < 1 || n_own > x->n || n_all < x->n || n_all >= INT32_MAX)
    return vick_fail(call, VICK_ARGUMENT, "slab density: %lld own rows of %lld points in a set of %lld",
                     (long long)n_own, (long long)x->n, (long long)n_all);
  slab_ws w;
  memset(&w, 0, sizeof w);
  int rc = vick_begin(call, &w.env);
  if (rc == VICK_OK)
    rc = slab_run(call, &w, x, k, n_own, key_ids, n_all, mass, p, knn_density, sph_density, smoothing_length, rk, ids,
                  dist, row_of, bad_row, keep, keep_dist);
  if (rc != VICK_OK && keep && *keep) {
    vick_slab_lists_free(*keep);
    *keep = NULL;
  }
  vick_density_dev_free(&w.env, &w.dev);
  vick_buf_free(&w.env, &w.rk);
  vick_stage_free(&w.stage);
  return vick_end(call, &w.env, rc);
}
