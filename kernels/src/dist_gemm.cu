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

static void drop_layouts(vick_dist_gemm *g) {
  if (g->a) cublasLtMatrixLayoutDestroy(g->a);
  if (g->b) cublasLtMatrixLayoutDestroy(g->b);
  if (g->d) cublasLtMatrixLayoutDestroy(g->d);
  g->a = g->b = g->d = NULL;
  g->cols = g->rows = g->ld = 0;
}

/* Layouts and the heuristic's best algorithm for a new tile shape. */
static int reshape(vick_call *call, vick_dist_gemm *g, int64_t cols, int64_t rows, int64_t ld) {
  drop_layouts(g);
  /* stored column-major: A is k3 x cols (transposed by the op), B k3 x rows */
  VICK_CUBLAS(call, cublasLtMatrixLayoutCreate(&g->a, CUDA_R_32F, (uint64_t)g->k3, (uint64_t)cols, g->k3));
  VICK_CUBLAS(call, cublasLtMatrixLayoutCreate(&g->b, CUDA_R_32F, (uint64_t)g->k3, (uint64_t)rows, g->k3));
  VICK_CUBLAS(call, cublasLtMatrixLayoutCreate(&g->d, CUDA_R_32F, (uint64_t)cols, (uint64_t)rows, ld));
  cublasLtMatmulPreference_t pref = NULL;
  VICK_CUBLAS(call, cublasLtMatmulPreferenceCreate(&pref));
  const uint64_t ws = g->ws_bytes;
  cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  cublasLtMatmulHeuristicResult_t res;
  int found = 0;
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmulAlgoGetHeuristic(g->lt, g->op, g->a, g->b, g->d, g->d, pref, 1, &res, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  VICK_CUBLAS(call, st);
  if (found < 1 || res.state != CUBLAS_STATUS_SUCCESS)
    return vick_fail(call, VICK_DEVICE, "cuBLASLt has no TF32 product%s for a %lld x %lld x %d distance tile",
                     g->bias ? " with a bias epilogue" : "", (long long)cols, (long long)rows, g->k3);
  g->algo = res.algo;
  g->cols = cols;
  g->rows = rows;
  g->ld = ld;
  return VICK_OK;
}

int vick_dist_gemm_run(vick_call *call, vick_dist_gemm *g, cudaStream_t stream, const float *data3, int64_t cols,
                       const float *query3, int64_t rows, float alpha, const float *bias, float *d, int64_t ld) {
  if (cols != g->cols || rows != g->rows || ld != g->ld) VICK_TRY(reshape(call, g, cols, rows, ld));
  if (g->bias)
    VICK_CUBLAS(call, cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
  const float beta = 0.f;
  VICK_CUBLAS(call, cublasLtMatmul(g->lt, g->op, &alpha, data3, g->a, query3, g->b, &beta, d, g->d, d, g->d, &g->algo,
                                   g->ws, g->ws_bytes, stream));
  return VICK_OK;
}

void vick_dist_gemm_free(vick_dist_gemm *g) {
  drop_layouts(g);
  if (g->op) cublasLtMatmulDescDestroy(g->op);
  if (g->lt) cublasLtDestroy(g->lt);
  g->op = NULL;
  g->lt = NULL;
}
