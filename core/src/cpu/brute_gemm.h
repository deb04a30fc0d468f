/* Exact brute force through BLAS matrix products, for higher dimensions.
 * cpu_brute.c decides when to use it; this file owns only the arithmetic. */
#ifndef VIC_BRUTE_GEMM_H
#define VIC_BRUTE_GEMM_H

#include "internal.h"

/* 1 when the library was built with a CBLAS (sgemm) to call. */
int vic__brute_gemm_available(void);

/* The queries of a brute-force search: m rows at rows + i*stride, and the
 * id of x that each query must not find (its own row), if any. */
typedef struct {
  const float *rows;
  int64_t stride;
  int64_t m;
  const int64_t *self_ids; /* self_ids[i] is excluded for query i; NULL: see self_identity */
  int self_identity;       /* 1: query i is x's row i and excludes it; 0: nothing excluded */
} vic_brute_queries;

/* k nearest rows of x (L2, cosine on unit rows, or inner product; no box)
 * for every query.  Candidates are chosen on ||x||^2 - 2 q.x computed by
 * sgemm in tiles; their distances are then recomputed directly, so near-zero
 * distances keep full precision, and the lists are ascending by
 * (distance, id) with true distances, padded with -1 / +inf.
 * Returns VIC_E_UNSUPPORTED without a message when a squared norm of x
 * overflows float (|values| near 1e19): the product form cannot rank such
 * rows, and the caller should compute distances directly. */
vic_status vic__brute_gemm(vic_ctx *c, const vic_data *x, const vic_brute_queries *q, int32_t k, int64_t *ids,
                           float *dist, const char *stage);

#endif
