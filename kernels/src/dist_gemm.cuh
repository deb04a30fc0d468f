/* The distance tile of brute force as one cuBLASLt matrix product:
 *
 *   D (cols x rows, column-major, leading dimension ld)
 *     = alpha * A^T B + bias (broadcast along D's columns)
 *
 * with A the packed TF32-split data rows of a column chunk and B those of
 * a query tile (both k3 floats per row), 3xTF32 on the tensor cores.  The
 * bias epilogue adds the data rows' squared norms while the tile is still
 * in registers, so the selection pass reads only the tile (for L2 alpha =
 * -2 and D + |q|^2 is the squared distance, for the inner product alpha =
 * -1, no bias, and D is the working distance).  The epilogue's fp32 add
 * rounds as the selection's own add did, so the GEMM error bound of the
 * re-rank is unchanged.  Layouts and the algorithm are kept for the last
 * few tile shapes; for a large tile the algorithm is the fastest of the
 * heuristic's few best, each timed once after a warm-up run. */
#ifndef VICK_DIST_GEMM_CUH
#define VICK_DIST_GEMM_CUH

#include "common.cuh"

#include <cublasLt.h>

/* What a tile shape needs: the brute-force loop alternates between a few
 * (full chunk, last chunk, last tile), so several are kept. */
typedef struct {
  cublasLtMatrixLayout_t a, b, d;
  cublasLtMatmulAlgo_t algo;
  int64_t cols, rows, ld; /* cols == 0: unused */
} vick_dist_gemm_shape;

#define VICK_DIST_GEMM_SHAPES 4

typedef struct {
  cublasLtHandle_t lt;
  cublasLtMatmulDesc_t op;
  vick_dist_gemm_shape shapes[VICK_DIST_GEMM_SHAPES];
  int cur;  /* the shape of the last call */
  int next; /* where a new shape goes (round robin) */
  int k3, bias;
  void *ws;
  size_t ws_bytes;
} vick_dist_gemm;

/* bias: whether calls pass a bias vector; ws: device workspace the
 * algorithms may use (NULL, 0 for none). */
int vick_dist_gemm_init(vick_call *call, vick_dist_gemm *g, int k3, int bias, void *ws, size_t ws_bytes);
/* Choose the algorithm for this shape when it is new (a large tile times
 * the heuristic's few best on these operands, writing d); a no-op for the
 * shape of the last call.  Same arguments as run. */
int vick_dist_gemm_prepare(vick_call *call, vick_dist_gemm *g, cudaStream_t stream, const float *data3, int64_t cols,
                           const float *query3, int64_t rows, float alpha, const float *bias, float *d, int64_t ld);
/* d = alpha * data3(cols rows)^T query3(rows rows) (+ bias[0..cols)), on
 * stream; prepares first when the shape is new. */
int vick_dist_gemm_run(vick_call *call, vick_dist_gemm *g, cudaStream_t stream, const float *data3, int64_t cols,
                       const float *query3, int64_t rows, float alpha, const float *bias, float *d, int64_t ld);
void vick_dist_gemm_free(vick_dist_gemm *g);

#endif
