/* Exact all-points kNN by brute force (FAISS's scheme, made exact).
 *
 * 1. Rows go to the device once, packed (stride d); for L2 a centred copy
 *    (mean by cuBLAS sgemv) keeps the norms small, which keeps the GEMM's
 *    rounding error small (distances do not change under translation).
 * 2. For a tile of query rows and a chunk of data columns, one cuBLASLt
 *    product on the tensor cores in 3xTF32 (split_tf32_kernel) gives
 *    approximate distances less the query's norm (dist_gemm.cuh); a block
 *    per query row keeps the best kp = k + margin (block_select.cuh).
 * 3. Re-rank: the kp candidates get the exact distance, computed exactly as
 *    the CPU computes it, and are sorted by (distance, id).  A row is
 *    certified when every point left out had an approximate distance that,
 *    minus the GEMM's error bound, is still above the exact k-th distance.
 * 4. Rows that are not certified (and every row of a periodic box, where a
 *    GEMM cannot apply the minimum image) are recomputed by a direct exact
 *    scan of all points with the same selection.
 * Sizes of the tiles come from the call's memory budget. */
#include "block_select.cuh"
#include "common.cuh"
#include "dist_gemm.cuh"
#include "vic_kernels_exact.h"

#include <cub/device/device_reduce.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <math.h>
#include <string.h>

/* --------------------------------------------------------------- kernels */
__global__ void fill_kernel(float *p, int64_t n, float v) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = v;
}

/* xc = x - mean (row-major n x d) */
__global__ void centre_kernel(const float *x, const float *mean, float *xc, int64_t n, int d) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n * d) xc[i] = x[i] - mean[i % d];
}

/* Split each value into TF32 parts (the low 13 mantissa bits cleared, so
 * the tensor cores take them exactly): v = hi + lo + O(2^-20 v).  Data
 * rows become [hi | lo | hi] and query rows [hi | hi | lo], so one TF32
 * GEMM over 3d gives q_hi.x_hi + q_hi.x_lo + q_lo.x_hi: fp32 accuracy at
 * tensor-core speed (the "3xTF32" scheme). */
__global__ void split_tf32_kernel(const float *x, int64_t n, int d, float *data3, float *query3) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n * d) return;
  int64_t r = i / d;
  int j = (int)(i % d);
  float v = x[i];
  float hi = __uint_as_float(__float_as_uint(v) & 0xffffe000u);
  float lo = __uint_as_float(__float_as_uint(v - hi) & 0xffffe000u);
  float *dr = data3 + r * 3 * d, *qr = query3 + r * 3 * d;
  dr[j] = hi; dr[d + j] = lo; dr[2 * d + j] = hi;
  qr[j] = hi; qr[d + j] = hi; qr[2 * d + j] = lo;
}

/* squared norms of the rows (the GEMM operand) */
__global__ void norms_kernel(const float *x, int64_t n, int d, float *out) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float *r = x + i * d;
  float s = 0.f;
  for (int j = 0; j < d; ++j) s = fmaf(r[j], r[j], s);
  out[i] = s;
}

/* Approximate distances of one round of a row: SELECT_LOADS 16-byte loads
 * (4 columns each) per thread, all issued before any is used; +inf marks a
 * column that is not offered (past the end, or the row's own point). */
#define SELECT_LOADS 8
__device__ __forceinline__ void gemm_select_round(float (&a)[4 * SELECT_LOADS], const float4 *drow, int ncols, int b4,
                                                  int selfcol, float qn) {
  const int n4 = (ncols + 3) >> 2;
  float4 dv[SELECT_LOADS];
#pragma unroll
  for (int u = 0; u < SELECT_LOADS; ++u) {
    const int j4 = b4 + u * SELECT_THREADS + (int)threadIdx.x;
    dv[u] = j4 < n4 ? __ldcs(drow + j4) : make_float4(0.f, 0.f, 0.f, 0.f); /* read once: keep it out of the caches */
  }
#pragma unroll
  for (int u = 0; u < SELECT_LOADS; ++u) {
    const int j = (b4 + u * SELECT_THREADS + (int)threadIdx.x) * 4;
    const float dd[4] = {dv[u].x, dv[u].y, dv[u].z, dv[u].w};
#pragma unroll
    for (int t = 0; t < 4; ++t) {
      const int jt = j + t;
      a[4 * u + t] = (jt >= ncols || jt == selfcol) ? INFINITY : qn + dd[t];
    }
  }
}

/* One block per query row of the tile: approximate distances of data
 * columns [col0, col0+ncols) from the product's tile (which holds them less
 * the query's norm qn; qnorm NULL for the inner product), into the row's
 * list.  The pass reads the whole tile once, so it must run at memory
 * bandwidth: many loads in flight per thread, then one barrier per round
 * when, as almost always, few columns beat the row's threshold
 * (vick_select_push).  After a flush the rare threads whose keys did not
 * fit read their round again from the tile rather than holding it in
 * registers through the sort.  32-bit column indices within the chunk.
 * 3 blocks per SM (72 registers, no spills with nvcc 13 for sm_90): 96 KiB
 * of loads in flight per SM, enough to cover the memory latency. */
__global__ void __launch_bounds__(SELECT_THREADS, 3) gemm_select_kernel(const float *dots, int64_t ld, int64_t q0,
                                                                      int64_t col0, int ncols, const float *qnorm,
                                                                      unsigned long long *lists, int kp) {
  __shared__ vick_select_smem s;
  const int64_t row = blockIdx.x;
  const int64_t self = q0 + row;
  const int selfcol = (self >= col0 && self < col0 + ncols) ? (int)(self - col0) : -1;
  const float qn = qnorm ? qnorm[self] : 0.f;
  const float4 *drow = (const float4 *)(dots + row * ld);
  unsigned long long *list = lists + row * kp;
  vick_select_begin(s, list, kp);
  const int n4 = (ncols + 3) >> 2;
  for (int b4 = 0; b4 < n4; b4 += SELECT_THREADS * SELECT_LOADS) {
    float a[4 * SELECT_LOADS];
    gemm_select_round(a, drow, ncols, b4, selfcol, qn);
    const int64_t c = col0 + ((int64_t)b4 + threadIdx.x) * 4;
    auto key = [&](int i) -> unsigned long long {
      return a[i] == INFINITY ? VICK_KEY_NONE : vick_key(a[i], (uint32_t)(c + (i >> 2) * 4 * SELECT_THREADS + (i & 3)));
    };
    int failed = vick_select_push<4 * SELECT_LOADS>(s, s.thr, key);
    while (__syncthreads_or(failed)) {
      vick_select_flush(s, kp);
      if (failed) {
        gemm_select_round(a, drow, ncols, b4, selfcol, qn);
        failed = vick_select_push<4 * SELECT_LOADS>(s, s.thr, key);
      }
    }
  }
  vick_select_end(s, list, kp);
}

/* Exact working distance between rows a and b (CPU-identical). */
__device__ __forceinline__ float exact_dist(const float *a, const float *b, int d, int metric, const float *box) {
  if (metric == VICK_METRIC_IP) return vick_neg_dot_exact(a, b, d);
  return box ? vick_l2sq_exact_box(a, b, d, box) : vick_l2sq_exact(a, b, d);
}

/* Re-rank one row's kp candidates with exact distances; write the best k
 * and flag the row when the margin does not certify it. */
__global__ void __launch_bounds__(SELECT_THREADS) rerank_kernel(const float *x, int d, int metric, int64_t q0,
                                                                 const unsigned long long *lists, int kp, int k,
                                                                 const float *cnorm, float max_cnorm,
                                                                 int64_t *out_ids, float *out_dist, int *uncertified) {
  typedef cub::BlockRadixSort<unsigned long long, SELECT_THREADS, 2> Sort;
  __shared__ typename Sort::TempStorage tmp;
  __shared__ unsigned long long sorted[SELECT_THREADS * 2];
  const int64_t row = blockIdx.x, self = q0 + row;
  const unsigned long long *list = lists + row * kp;
  const float *q = x + self * d;
  unsigned long long items[2];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    int slot = threadIdx.x * 2 + i;
    items[i] = VICK_KEY_NONE;
    if (slot < kp && list[slot] != VICK_KEY_NONE) {
      uint32_t id = (uint32_t)(list[slot] & 0xffffffffu);
      items[i] = vick_key(exact_dist(q, x + (int64_t)id * d, d, metric, NULL), id);
    }
  }
  Sort(tmp).Sort(items);
#pragma unroll
  for (int i = 0; i < 2; ++i) sorted[threadIdx.x * 2 + i] = items[i];
  __syncthreads();
  for (int t = threadIdx.x; t < k; t += SELECT_THREADS) {
    unsigned long long key = sorted[t];
    out_ids[row * k + t] = key == VICK_KEY_NONE ? -1 : (int64_t)(key & 0xffffffffu);
    out_dist[row * k + t] = key == VICK_KEY_NONE ? INFINITY : vick_float_unorder((uint32_t)(key >> 32));
  }
  if (threadIdx.x == 0) {
    /* The list was not full: every other point is a candidate, certified. */
    unsigned long long last = list[kp - 1];
    int ok = 1;
    if (last != VICK_KEY_NONE) {
      float A = vick_float_unorder((uint32_t)(last >> 32));        /* worst approximate distance kept */
      float Dk = vick_float_unorder((uint32_t)(sorted[k - 1] >> 32)); /* exact k-th distance */
      /* GEMM error: 3xTF32 drops terms of 2^-20 relative (three per
       * product), fp32 sums of 3d terms (2^-22 each, allowing truncating
       * accumulators), norms in fp32; then the exact distances' rounding. */
      float qn = cnorm[self], qm = sqrtf(qn) * sqrtf(max_cnorm);
      float rel = 3.f * ldexpf(1.f, -20) + 3 * d * ldexpf(1.f, -22);
      float E = metric == VICK_METRIC_IP ? rel * qm : 2.f * rel * qm + d * ldexpf(1.f, -21) * (qn + max_cnorm);
      E += d * ldexpf(1.f, -21) * (fabsf(A) + fabsf(Dk)) + 1e-30f;
      ok = (A - E) > Dk;
    }
    uncertified[row] = !ok;
  }
}

/* Direct exact search for selected rows: one block per row, every data
 * point's exact distance, the same selection.  rows[i] are tile-local
 * (rows == NULL: all rows of the tile). */
__global__ void __launch_bounds__(SELECT_THREADS) direct_kernel(const float *x, int64_t n, int d, int metric,
                                                                 const float *box, int64_t q0, const int *rows,
                                                                 unsigned long long *lists, int kp, int k,
                                                                 int64_t *out_ids, float *out_dist) {
  __shared__ vick_select_smem s;
  const int64_t row = rows ? rows[blockIdx.x] : blockIdx.x, self = q0 + row;
  const float *q = x + self * d;
  unsigned long long *list = lists + row * kp;
  for (int i = threadIdx.x; i < kp; i += SELECT_THREADS) list[i] = VICK_KEY_NONE;
  __syncthreads();
  vick_select_begin(s, list, kp);
  vick_select_scan(s, kp, n, [&](int64_t j) -> unsigned long long {
    if (j == self) return VICK_KEY_NONE;
    return vick_key(exact_dist(q, x + j * d, d, metric, box), (uint32_t)j);
  });
  vick_select_end(s, NULL, kp);
  for (int t = threadIdx.x; t < k; t += SELECT_THREADS) {
    unsigned long long key = s.keys[t];
    out_ids[row * k + t] = key == VICK_KEY_NONE ? -1 : (int64_t)(key & 0xffffffffu);
    out_dist[row * k + t] = key == VICK_KEY_NONE ? INFINITY : vick_float_unorder((uint32_t)(key >> 32));
  }
}

/* ------------------------------------------------------------------ host */
typedef struct {
  vick_env env;
  cublasHandle_t blas;
  vick_dist_gemm gemm;
  vick_buf x, xc, ones, mean, cnorm, dots, lists, out_ids, out_dist, flags, sel, nsel, cub_tmp, maxn, box, data3, query3,
      gemm_ws;
} brute_ws;

static void brute_ws_free(brute_ws *w) {
  vick_buf *all[] = {&w->x, &w->xc, &w->ones, &w->mean, &w->cnorm, &w->dots, &w->lists, &w->out_ids,
                     &w->out_dist, &w->flags, &w->sel, &w->nsel, &w->cub_tmp, &w->maxn, &w->box, &w->data3,
                     &w->query3, &w->gemm_ws};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i) vick_buf_free(&w->env, all[i]);
  vick_dist_gemm_free(&w->gemm);
  if (w->blas) cublasDestroy(w->blas);
  w->blas = NULL;
}

typedef struct {
  int64_t n;
  int d, k, kp, metric;
  int direct_only;   /* periodic box: no GEMM */
  int64_t tile_rows, chunk_cols;
  size_t cub_bytes, gemm_ws_bytes;
} brute_plan;

static int margin_for(int k) {
  int m = k / 4 > 16 ? k / 4 : 16;
  return k + m > SELECT_MAX_KP ? SELECT_MAX_KP - k : m;
}

/* Upload the rows packed, centre them (L2) and compute the norms. */
static int brute_prepare(vick_call *call, brute_ws *w, const vick_points *p, const brute_plan *pl, float *max_cnorm) {
  const int64_t n = pl->n;
  const int d = pl->d;
  const size_t row_bytes = (size_t)d * sizeof(float);
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->x, (size_t)n * row_bytes, "the data rows"));
  VICK_TRY(vick_timer_start(call, &w->env));
  VICK_CUDA(call, cudaMemcpy2DAsync(w->x.p, row_bytes, p->rows, (size_t)p->stride * sizeof(float), row_bytes, (size_t)n,
                                    cudaMemcpyHostToDevice, w->env.stream));
  VICK_TRY(vick_timer_stop(call, &w->env, &call->seconds_transfer, NULL));
  if (p->box) {
    float boxf[4096];
    if (d > 4096) return vick_fail(call, VICK_ARGUMENT, "periodic boxes are supported up to d = 4096");
    for (int j = 0; j < d; ++j) boxf[j] = (float)p->box[j];
    VICK_TRY(vick_buf_alloc(call, &w->env, &w->box, row_bytes, "the box lengths"));
    VICK_TRY(vick_copy_to_device(call, &w->env, w->box.p, boxf, row_bytes));
  }
  if (pl->direct_only) return VICK_OK;

  VICK_TRY(vick_timer_start(call, &w->env));
  VICK_CUBLAS(call, cublasCreate(&w->blas));
  VICK_CUBLAS(call, cublasSetStream(w->blas, w->env.stream));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->cnorm, (size_t)n * sizeof(float), "row norms"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->maxn, sizeof(float), "max norm"));
  const float *gemm_rows = (const float *)w->x.p;
  if (pl->metric == VICK_METRIC_L2) {
    VICK_TRY(vick_buf_alloc(call, &w->env, &w->xc, (size_t)n * row_bytes, "the centred rows"));
    VICK_TRY(vick_buf_alloc(call, &w->env, &w->ones, (size_t)n * sizeof(float), "a ones vector"));
    VICK_TRY(vick_buf_alloc(call, &w->env, &w->mean, row_bytes, "the mean row"));
    fill_kernel<<<vick_blocks(n, 256), 256, 0, w->env.stream>>>((float *)w->ones.p, n, 1.f);
    VICK_LAUNCH(call, "fill_kernel");
    const float alpha = 1.f / (float)n, beta = 0.f;
    /* column-major d x n = the row-major rows: mean = X^T 1 / n */
    VICK_CUBLAS(call, cublasSgemv(w->blas, CUBLAS_OP_N, d, (int)n, &alpha, (const float *)w->x.p, d,
                                  (const float *)w->ones.p, 1, &beta, (float *)w->mean.p, 1));
    centre_kernel<<<vick_blocks(n * d, 256), 256, 0, w->env.stream>>>((const float *)w->x.p, (const float *)w->mean.p,
                                                                         (float *)w->xc.p, n, d);
    VICK_LAUNCH(call, "centre_kernel");
    vick_buf_free(&w->env, &w->ones);
    gemm_rows = (const float *)w->xc.p;
  }
  norms_kernel<<<vick_blocks(n, 256), 256, 0, w->env.stream>>>(gemm_rows, n, d, (float *)w->cnorm.p);
  VICK_LAUNCH(call, "norms_kernel");
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->data3, (size_t)n * 3 * row_bytes, "TF32-split data rows"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->query3, (size_t)n * 3 * row_bytes, "TF32-split query rows"));
  split_tf32_kernel<<<vick_blocks(n * d, 256), 256, 0, w->env.stream>>>(gemm_rows, n, d, (float *)w->data3.p,
                                                                         (float *)w->query3.p);
  VICK_LAUNCH(call, "split_tf32_kernel");
  vick_buf_free(&w->env, &w->xc);
  size_t tmp_bytes = 0;
  VICK_CUDA(call, cub::DeviceReduce::Max(NULL, tmp_bytes, (const float *)w->cnorm.p, (float *)w->maxn.p, n,
                                         w->env.stream));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->cub_tmp, tmp_bytes, "reduction workspace"));
  VICK_CUDA(call, cub::DeviceReduce::Max(w->cub_tmp.p, tmp_bytes, (const float *)w->cnorm.p, (float *)w->maxn.p, n,
                                         w->env.stream));
  vick_buf_free(&w->env, &w->cub_tmp);
  VICK_CUDA(call, cudaMemcpyAsync(max_cnorm, w->maxn.p, sizeof(float), cudaMemcpyDeviceToHost, w->env.stream));
  VICK_TRY(vick_timer_stop(call, &w->env, &call->seconds_kernel, "prepare"));
  return VICK_OK;
}

/* Tile sizes from what the budget has left after the rows. */
static int brute_plan_tiles(vick_call *call, brute_ws *w, brute_plan *pl) {
  const int64_t n = pl->n;
  int64_t rows = n < 4096 ? n : 4096;
  /* per tile row: kp keys, k ids + dists, flags and selection indices */
  size_t per_row = (size_t)pl->kp * 8 + (size_t)pl->k * 12 + 16;
  size_t cub_bytes = 0;
  int *dummy = NULL;
  thrust::counting_iterator<int> it(0);
  VICK_CUDA(call, cub::DeviceSelect::Flagged(NULL, cub_bytes, it, (const int *)dummy, dummy, dummy, (int)rows,
                                             w->env.stream));
  pl->cub_bytes = cub_bytes;
  size_t left = vick_budget_left(&w->env);
  /* the product's workspace: up to 4 MiB, less under a small budget
   * (cuBLAS's own handle keeps its workspace outside the budget) */
  pl->gemm_ws_bytes = pl->direct_only ? 0 : (left / 16 < ((size_t)4 << 20) ? left / 16 / 256 * 256 : (size_t)4 << 20);
  size_t fixed = cub_bytes + pl->gemm_ws_bytes + 4096;
  /* room for at least min(n, 2048) columns of distances per tile row */
  const size_t min_cols = pl->direct_only ? 0 : (size_t)(n < 2048 ? n : 2048);
  while (rows > 32 && rows * (per_row + 4 * min_cols) + fixed > left) rows /= 2;
  if ((size_t)rows * per_row + fixed > left)
    return vick_fail(call, VICK_NOMEM, "brute force needs %.1f MiB of device memory for its smallest tile; %.1f MiB left",
                     (rows * per_row + fixed) / 1048576.0, left / 1048576.0);
  pl->tile_rows = rows;
  if (pl->direct_only) { pl->chunk_cols = n; return VICK_OK; }
  /* the GEMM output: rows x cols floats, up to 2 GiB */
  size_t dots_left = left - (size_t)rows * per_row - fixed;
  size_t cap = (size_t)2 << 30;
  if (dots_left > cap) dots_left = cap;
  int64_t cols = (int64_t)(dots_left / ((size_t)rows * sizeof(float)));
  cols = cols / 256 * 256;
  if (cols > n) cols = (n + 3) / 4 * 4; /* the distance tile's leading dimension: a multiple of 4 */
  if (cols < 256 && cols < n)
    return vick_fail(call, VICK_NOMEM, "brute force needs at least %.1f MiB for distance tiles; %.1f MiB left",
                     (double)rows * 256 * 4 / 1048576.0, dots_left / 1048576.0);
  pl->chunk_cols = cols;
  return VICK_OK;
}

static int brute_tiles(vick_call *call, brute_ws *w, const brute_plan *pl, float max_cnorm, int64_t *ids, float *dist) {
  const int64_t n = pl->n, R = pl->tile_rows, C = pl->chunk_cols;
  const int d = pl->d, k = pl->k, kp = pl->kp;
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->lists, (size_t)R * kp * 8, "candidate lists"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->out_ids, (size_t)R * k * 8, "result ids"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->out_dist, (size_t)R * k * 4, "result distances"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->flags, (size_t)R * 4, "certification flags"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->sel, (size_t)R * 4, "rows to recompute"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->nsel, 4, "row count"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->cub_tmp, pl->cub_bytes, "selection workspace"));
  if (!pl->direct_only) {
    VICK_TRY(vick_buf_alloc(call, &w->env, &w->dots, (size_t)R * C * sizeof(float), "distance tiles"));
    if (pl->gemm_ws_bytes)
      VICK_TRY(vick_buf_alloc(call, &w->env, &w->gemm_ws, pl->gemm_ws_bytes, "matrix product workspace"));
    VICK_TRY(vick_dist_gemm_init(call, &w->gemm, 3 * pl->d, pl->metric == VICK_METRIC_L2, w->gemm_ws.p, w->gemm_ws.bytes));
  }
  const float *x = (const float *)w->x.p;
  const float *data3 = (const float *)w->data3.p, *query3 = (const float *)w->query3.p;
  const int d3 = 3 * d;
  const int l2 = pl->metric == VICK_METRIC_L2;
  const float *cnorm = (const float *)w->cnorm.p;
  const float *box = (const float *)w->box.p;
  int64_t recomputed = 0;
  cudaEvent_t ev[3] = {NULL, NULL, NULL}; /* gemm / select split of the first tile */

  for (int64_t q0 = 0; q0 < n; q0 += R) {
    VICK_TRY(vick_poll(call, "brute", (double)q0 / (double)n));
    const int64_t rows = q0 + R <= n ? R : n - q0;
    int nsel = (int)rows;
    VICK_TRY(vick_timer_start(call, &w->env));
    if (!pl->direct_only) {
      VICK_CUDA(call, cudaMemsetAsync(w->lists.p, 0xff, (size_t)rows * kp * 8, w->env.stream));
      for (int64_t c0 = 0; c0 < n; c0 += C) {
        const int64_t cols = c0 + C <= n ? C : n - c0;
        const int64_t ld = (cols + 3) / 4 * 4; /* <= C: C is a multiple of 4 */
        const int split = q0 == 0 && c0 == 0;
        const float alpha = l2 ? -2.f : -1.f;
        const float *bias = l2 ? cnorm + c0 : NULL;
        /* a new tile shape may time candidate algorithms: not part of the chunk timed below */
        VICK_TRY(vick_dist_gemm_prepare(call, &w->gemm, w->env.stream, data3 + c0 * d3, cols, query3 + q0 * d3, rows,
                                        alpha, bias, (float *)w->dots.p, ld));
        if (split) {
          for (int e = 0; e < 3; ++e) VICK_CUDA(call, cudaEventCreate(&ev[e]));
          VICK_CUDA(call, cudaEventRecord(ev[0], w->env.stream));
        }
        /* tile (row-major rows x cols) = column-major cols x rows:
         * L2 |x|^2 - 2 x.q, inner product -x.q */
        VICK_TRY(vick_dist_gemm_run(call, &w->gemm, w->env.stream, data3 + c0 * d3, cols, query3 + q0 * d3, rows,
                                    alpha, bias, (float *)w->dots.p, ld));
        if (split) VICK_CUDA(call, cudaEventRecord(ev[1], w->env.stream));
        gemm_select_kernel<<<(unsigned)rows, SELECT_THREADS, 0, w->env.stream>>>(
            (const float *)w->dots.p, ld, q0, c0, (int)cols, l2 ? cnorm : NULL, (unsigned long long *)w->lists.p, kp);
        VICK_LAUNCH(call, "gemm_select_kernel");
        if (split) {
          /* one chunk of the first tile, timed apart: where the time goes */
          float ms_g = 0.f, ms_s = 0.f;
          VICK_CUDA(call, cudaEventRecord(ev[2], w->env.stream));
          VICK_CUDA(call, cudaEventSynchronize(ev[2]));
          VICK_CUDA(call, cudaEventElapsedTime(&ms_g, ev[0], ev[1]));
          VICK_CUDA(call, cudaEventElapsedTime(&ms_s, ev[1], ev[2]));
          for (int e = 0; e < 3; ++e) cudaEventDestroy(ev[e]);
          vick_stage_add(call, "gemm (one chunk)", 1e-3 * ms_g);
          vick_stage_add(call, "select (one chunk)", 1e-3 * ms_s);
        }
      }
      rerank_kernel<<<(unsigned)rows, SELECT_THREADS, 0, w->env.stream>>>(
          x, d, pl->metric, q0, (const unsigned long long *)w->lists.p, kp, k, (const float *)w->cnorm.p, max_cnorm,
          (int64_t *)w->out_ids.p, (float *)w->out_dist.p, (int *)w->flags.p);
      VICK_LAUNCH(call, "rerank_kernel");
    }
    VICK_TRY(vick_timer_stop(call, &w->env, &call->seconds_kernel, pl->direct_only ? NULL : "gemm+select"));

    /* rows to recompute directly: all of them, or the uncertified ones */
    VICK_TRY(vick_timer_start(call, &w->env));
    if (!pl->direct_only) {
      thrust::counting_iterator<int> it(0);
      size_t tb = pl->cub_bytes;
      VICK_CUDA(call, cub::DeviceSelect::Flagged(w->cub_tmp.p, tb, it, (const int *)w->flags.p, (int *)w->sel.p,
                                                 (int *)w->nsel.p, (int)rows, w->env.stream));
      VICK_CUDA(call, cudaMemcpyAsync(&nsel, w->nsel.p, sizeof(int), cudaMemcpyDeviceToHost, w->env.stream));
      VICK_CUDA(call, cudaStreamSynchronize(w->env.stream));
    }
    if (nsel > 0) {
      direct_kernel<<<(unsigned)nsel, SELECT_THREADS, 0, w->env.stream>>>(
          x, n, d, pl->metric, box, q0, pl->direct_only ? NULL : (const int *)w->sel.p, (unsigned long long *)w->lists.p, kp, k,
          (int64_t *)w->out_ids.p, (float *)w->out_dist.p);
      VICK_LAUNCH(call, "direct_kernel");
      recomputed += nsel;
    }
    VICK_TRY(vick_timer_stop(call, &w->env, &call->seconds_kernel, "direct"));
    VICK_TRY(vick_copy_to_host(call, &w->env, ids + q0 * k, w->out_ids.p, (size_t)rows * k * 8));
    VICK_TRY(vick_copy_to_host(call, &w->env, dist + q0 * k, w->out_dist.p, (size_t)rows * k * 4));
  }
  VICK_TRY(vick_poll(call, "brute", 1.0));
  /* a count, not seconds: how many rows the certification sent to the direct scan */
  if (!pl->direct_only) vick_stage_add(call, "recomputed rows (count)", (double)recomputed);
  return VICK_OK;
}

extern "C" int vick_brute_knn(vick_call *call, const vick_points *p, int32_t k, int64_t *ids, float *dist) {
  if (!p || !p->rows || p->n < 1 || p->d < 1 || p->stride < p->d || !ids || !dist)
    return vick_fail(call, VICK_ARGUMENT, "brute force: empty or inconsistent point set");
  if (k < 1 || k > VICK_EXACT_MAX_K)
    return vick_fail(call, VICK_ARGUMENT, "brute force supports 1 <= k <= %d (got %d)", VICK_EXACT_MAX_K, (int)k);
  if (p->n >= ((int64_t)1 << 31)) return vick_fail(call, VICK_ARGUMENT, "brute force takes fewer than 2^31 points");
  if (p->metric != VICK_METRIC_L2 && p->metric != VICK_METRIC_IP)
    return vick_fail(call, VICK_ARGUMENT, "brute force: unknown metric %d", p->metric);
  brute_plan pl;
  memset(&pl, 0, sizeof pl);
  pl.n = p->n;
  pl.d = p->d;
  pl.k = k;
  pl.kp = k + margin_for(k);
  pl.metric = p->metric;
  pl.direct_only = p->box != NULL;
  brute_ws w;
  memset(&w, 0, sizeof w);
  int rc = vick_begin(call, &w.env);
  float max_cnorm = 0.f;
  if (rc == VICK_OK) rc = brute_prepare(call, &w, p, &pl, &max_cnorm);
  if (rc == VICK_OK) rc = brute_plan_tiles(call, &w, &pl);
  if (rc == VICK_OK) rc = brute_tiles(call, &w, &pl, max_cnorm, ids, dist);
  brute_ws_free(&w);
  return vick_end(call, &w.env, rc);
}
