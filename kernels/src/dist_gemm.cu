/* The distance tile of brute force as one cuBLASLt matrix product (see
 * dist_gemm.cuh). */
#include "dist_gemm.cuh"

#include <string.h>

int vick_dist_gemm_init(vick_call *call, vick_dist_gemm *g, int k3, int bias, void *ws, size_t ws_bytes) {
  memset(g, 0, sizeof *g);
  g->k3 = k3;
  g->bias = bias;
  g->ws = ws;
  g->ws_bytes = ws_bytes;
  VICK_CUBLAS(call, cublasLtCreate(&g->lt));
  VICK_CUBLAS(call, cublasLtMatmulDescCreate(&g->op, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F));
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  VICK_CUBLAS(call, cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
  VICK_CUBLAS(call, cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
  const cublasLtEpilogue_t ep = bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  VICK_CUBLAS(call, cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof ep));
  return VICK_OK;
}

static void drop_shape(vick_dist_gemm_shape *h) {
  if (h->a) cublasLtMatrixLayoutDestroy(h->a);
  if (h->b) cublasLtMatrixLayoutDestroy(h->b);
  if (h->d) cublasLtMatrixLayoutDestroy(h->d);
  memset(h, 0, sizeof *h);
}

/* The heuristic's candidates for the current shape, best first. */
#define DIST_GEMM_CANDIDATES 6
static int candidates(vick_call *call, const vick_dist_gemm *g, const vick_dist_gemm_shape *h,
                      cublasLtMatmulHeuristicResult_t *res, int *found) {
  cublasLtMatmulPreference_t pref = NULL;
  VICK_CUBLAS(call, cublasLtMatmulPreferenceCreate(&pref));
  const uint64_t ws = g->ws_bytes;
  cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  *found = 0;
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmulAlgoGetHeuristic(g->lt, g->op, h->a, h->b, h->d, h->d, pref, DIST_GEMM_CANDIDATES, res, found);
  cublasLtMatmulPreferenceDestroy(pref);
  VICK_CUBLAS(call, st);
  return VICK_OK;
}

/* Time each candidate on the real operands (the call that follows
 * overwrites d anyway) and keep the fastest: the heuristic's first choice
 * is not always the fastest for tall, thin-K products like this one, and a
 * large tile repeats hundreds of times.  A candidate that fails to run is
 * skipped; *best stays the heuristic's first when none runs. */
static int fastest(vick_call *call, vick_dist_gemm *g, const vick_dist_gemm_shape *h, cudaStream_t stream,
                   const cublasLtMatmulHeuristicResult_t *res,
                   int found, const float *data3, const float *query3, float alpha, const float *bias, float *d,
                   int *best) {
  cudaEvent_t e0 = NULL, e1 = NULL;
  const float beta = 0.f;
  float best_ms = -1.f;
  *best = 0;
  if (g->bias)
    VICK_CUBLAS(call, cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
  VICK_CUDA(call, cudaEventCreate(&e0));
  cudaError_t ce = cudaEventCreate(&e1);
  if (ce != cudaSuccess) { cudaEventDestroy(e0); return vick_cuda_fail(call, ce, "cudaEventCreate", __FILE__, __LINE__); }
  int rc = VICK_OK;
  for (int i = 0; i < found; ++i) {
    /* once untimed: the first launch of a kernel loads its module */
    cublasStatus_t st = cublasLtMatmul(g->lt, g->op, &alpha, data3, h->a, query3, h->b, &beta, d, h->d, d, h->d,
                                       &res[i].algo, g->ws, g->ws_bytes, stream);
    if (st != CUBLAS_STATUS_SUCCESS) {
      cudaGetLastError(); /* a launch error the failed candidate may have left */
      continue;
    }
    float ms = 0.f;
    ce = cudaEventRecord(e0, stream);
    if (ce == cudaSuccess)
      st = cublasLtMatmul(g->lt, g->op, &alpha, data3, h->a, query3, h->b, &beta, d, h->d, d, h->d, &res[i].algo, g->ws,
                          g->ws_bytes, stream);
    if (ce == cudaSuccess) ce = cudaEventRecord(e1, stream);
    if (ce == cudaSuccess) ce = cudaEventSynchronize(e1);
    if (ce == cudaSuccess) ce = cudaEventElapsedTime(&ms, e0, e1);
    if (ce != cudaSuccess) {
      rc = vick_cuda_fail(call, ce, "timing a matrix product", __FILE__, __LINE__);
      break;
    }
    if (st == CUBLAS_STATUS_SUCCESS && (best_ms < 0.f || ms < best_ms)) {
      best_ms = ms;
      *best = i;
    }
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return rc;
}

/* Layouts and the fastest candidate algorithm for a new tile shape, in
 * slot h. */
static int add_shape(vick_call *call, vick_dist_gemm *g, vick_dist_gemm_shape *h, cudaStream_t stream,
                     const float *data3, int64_t cols, const float *query3, int64_t rows, float alpha,
                     const float *bias, float *d, int64_t ld) {
  drop_shape(h);
  /* stored column-major: A is k3 x cols (transposed by the op), B k3 x rows */
  VICK_CUBLAS(call, cublasLtMatrixLayoutCreate(&h->a, CUDA_R_32F, (uint64_t)g->k3, (uint64_t)cols, g->k3));
  VICK_CUBLAS(call, cublasLtMatrixLayoutCreate(&h->b, CUDA_R_32F, (uint64_t)g->k3, (uint64_t)rows, g->k3));
  VICK_CUBLAS(call, cublasLtMatrixLayoutCreate(&h->d, CUDA_R_32F, (uint64_t)cols, (uint64_t)rows, ld));
  cublasLtMatmulHeuristicResult_t res[DIST_GEMM_CANDIDATES];
  int found = 0, best = 0;
  VICK_TRY(candidates(call, g, h, res, &found));
  if (found < 1)
    return vick_fail(call, VICK_DEVICE, "cuBLASLt has no TF32 product%s for a %lld x %lld x %d distance tile",
                     g->bias ? " with a bias epilogue" : "", (long long)cols, (long long)rows, g->k3);
  /* only where the tile is large enough to be worth timing: 2^33 flops */
  if (found > 1 && (double)cols * (double)rows * (double)g->k3 >= 8589934592.0)
    VICK_TRY(fastest(call, g, h, stream, res, found, data3, query3, alpha, bias, d, &best));
  h->algo = res[best].algo;
  h->cols = cols;
  h->rows = rows;
  h->ld = ld;
  return VICK_OK;
}

int vick_dist_gemm_prepare(vick_call *call, vick_dist_gemm *g, cudaStream_t stream, const float *data3, int64_t cols,
                           const float *query3, int64_t rows, float alpha, const float *bias, float *d, int64_t ld) {
  for (int i = 0; i < VICK_DIST_GEMM_SHAPES; ++i) {
    const vick_dist_gemm_shape *h = &g->shapes[i];
    if (h->cols == cols && h->rows == rows && h->ld == ld) {
      g->cur = i;
      return VICK_OK;
    }
  }
  const int slot = g->next;
  g->next = (g->next + 1) % VICK_DIST_GEMM_SHAPES;
  VICK_TRY(add_shape(call, g, &g->shapes[slot], stream, data3, cols, query3, rows, alpha, bias, d, ld));
  g->cur = slot;
  return VICK_OK;
}

int vick_dist_gemm_run(vick_call *call, vick_dist_gemm *g, cudaStream_t stream, const float *data3, int64_t cols,
                       const float *query3, int64_t rows, float alpha, const float *bias, float *d, int64_t ld) {
  VICK_TRY(vick_dist_gemm_prepare(call, g, stream, data3, cols, query3, rows, alpha, bias, d, ld));
  const vick_dist_gemm_shape *h = &g->shapes[g->cur];
  if (g->bias)
    VICK_CUBLAS(call, cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
  const float beta = 0.f;
  VICK_CUBLAS(call, cublasLtMatmul(g->lt, g->op, &alpha, data3, h->a, query3, h->b, &beta, d, h->d, d, h->d, &h->algo,
                                   g->ws, g->ws_bytes, stream));
  return VICK_OK;
}

void vick_dist_gemm_free(vick_dist_gemm *g) {
  for (int i = 0; i < VICK_DIST_GEMM_SHAPES; ++i) drop_shape(&g->shapes[i]);
  if (g->op) cublasLtMatmulDescDestroy(g->op);
  if (g->lt) cublasLtDestroy(g->lt);
  g->op = NULL;
  g->lt = NULL;
}
