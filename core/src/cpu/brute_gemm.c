/* Exact brute force by tiled matrix products (see brute_gemm.h).
 *
 * For a tile of queries Q and a tile of data rows X, sgemm gives S = Q X^T
 * and the working distance of every pair follows as ||x||^2 - 2 q.x (L2,
 * and cosine on unit rows; ||q||^2 is the same for a whole row and does not
 * change its order) or -q.x (inner product).  Each query keeps a bounded
 * heap of candidates across the data tiles.  The product form cancels
 * badly when two points are close (two large norms minus twice a large
 * product), so the heap keeps a few more candidates than k; their
 * distances are recomputed directly and the best k of those are returned.
 *
 * Threads: sgemm is called from this thread and is parallelised by the BLAS
 * itself (OpenBLAS uses its own thread pool; changing its thread count would
 * be process-wide state, which the library does not touch).  The selection
 * between two products runs on this thread alone: OpenMP workers started
 * for it would spin-wait through the next product and take cores from the
 * BLAS threads, which on busy cores slows the whole build.  It is a few percent of the work; only the final recomputation of the all-points
 * case, after its last product, is spread over OpenMP threads. */
#include "brute_gemm.h"
#include "topk.h"

#include <string.h>

#ifndef VIC_HAVE_BLAS

int vic__brute_gemm_available(void) { return 0; }

vic_status vic__brute_gemm(vic_ctx *c, const vic_data *x, const vic_brute_queries *q, int32_t k, int64_t *ids,
                           float *dist, const char *stage) {
  (void)x; (void)q; (void)k; (void)ids; (void)dist; (void)stage;
  return vic__fail(c, VIC_E_UNSUPPORTED, "this build of the core has no BLAS for tiled brute force");
}

#else
#include <cblas.h>

/* A query tile times a data tile of floats is the product buffer (8 MiB):
 * large enough for sgemm to run near its peak on every thread, small
 * enough to stay in a shared last-level cache while it is scanned. */
enum { QUERY_TILE = 512, DATA_TILE = 4096 };
/* Square tiles of the all-points case (a product and its transpose, 4 MiB each). */
enum { SYMMETRIC_TILE = 1024 };

int vic__brute_gemm_available(void) { return 1; }

/* Candidates kept per query: k plus a margin for near-ties that the product
 * form may misorder (duplicates, points at nearly equal distance). */
static int32_t candidates(int32_t k, int64_t n) {
  int64_t kk = (int64_t)k + k / 4 + 4;
  return (int32_t)(kk < n ? kk : n);
}

static inline int64_t self_of(const vic_brute_queries *q, int64_t i) {
  return q->self_ids ? q->self_ids[i] : q->self_identity ? i : -1;
}

/* Squared norms of x's rows; 0 when one overflows (the product form would
 * then give inf - inf, so the caller must use the direct search). */
static int row_norms(const vic_data *x, float *out, int threads) {
  int ok = 1;
#pragma omp parallel for schedule(static) num_threads(threads) reduction(&& : ok)
  for (int64_t p = 0; p < x->n; ++p) {
    const float *r = vic__row(x, p);
    out[p] = vic__dot(r, r, x->d);
    ok = ok && isfinite(out[p]);
  }
  return ok;
}

/* Scan one row of the product tile into the query's heap. */
static void select_row(float *srow, int64_t nx, int64_t x0, const float *xn, int ip, int64_t self, vic_topk *h) {
  if (ip) {
    for (int64_t p = 0; p < nx; ++p) srow[p] = -srow[p];
  } else {
    const float *nr = xn + x0;
    for (int64_t p = 0; p < nx; ++p) srow[p] = nr[p] - 2.f * srow[p];
  }
  float bound = vic__topk_bound(h);
  for (int64_t p = 0; p < nx; ++p) {
    if (srow[p] > bound || x0 + p == self) continue;
    vic__topk_push(h, srow[p], x0 + p);
    bound = vic__topk_bound(h);
  }
}

/* Direct distances of the candidates, the best k of them in (distance, id)
 * order into the output row. */
static void finish_row(const vic_data *x, const float *qrow, vic_topk *h, int32_t k, int64_t *ids, float *dist) {
  for (int32_t t = 0; t < h->size; ++t)
    h->d[t] = vic__true_dist(x->metric, vic__work_dist(x, qrow, vic__row(x, h->id[t])));
  vic__sort_pairs(h->d, h->id, h->size);
  int32_t keep = h->size < k ? h->size : k;
  memcpy(ids, h->id, (size_t)keep * sizeof *ids);
  memcpy(dist, h->d, (size_t)keep * sizeof *dist);
  for (int32_t t = keep; t < k; ++t) { ids[t] = -1; dist[t] = INFINITY; }
}

/* Transpose a rows x cols tile into out (cols x rows), in cache blocks. */
static void transpose(const float *in, int64_t rows, int64_t cols, float *out) {
  enum { B = 32 };
  for (int64_t c0 = 0; c0 < cols; c0 += B)
    for (int64_t r0 = 0; r0 < rows; r0 += B)
      for (int64_t cc = c0; cc < c0 + B && cc < cols; ++cc)
        for (int64_t r = r0; r < r0 + B && r < rows; ++r) out[cc * rows + r] = in[r * cols + cc];
}

/* All points of x against x: d(i, j) = d(j, i), so only tiles (I, J) with
 * J >= I are multiplied and each product tile serves the rows of I (by
 * rows) and the rows of J (by columns, through a transposed copy): half the
 * arithmetic of the general path.  Every row keeps its heap until the end. */
static vic_status gemm_symmetric(vic_ctx *c, const vic_data *xg, const vic_data *x, const float *xn, int32_t k,
                                 int32_t kk, int64_t *ids, float *dist, const char *stage) {
  int threads = vic__threads(c);
  int64_t n = x->n, bt = n < SYMMETRIC_TILE ? n : SYMMETRIC_TILE;
  int64_t xs = xg->stride ? xg->stride : xg->d;
  int ip = x->metric == VIC_INNER_PRODUCT;
  vic_status s = VIC_E_NOMEM;
  float *prod = vic__malloc(c, (size_t)bt * (size_t)bt * sizeof *prod, "distance tile");
  float *tr = prod ? vic__malloc(c, (size_t)bt * (size_t)bt * sizeof *tr, "transposed tile") : NULL;
  float *cd = tr ? vic__malloc(c, (size_t)n * (size_t)kk * sizeof *cd, "candidate distances") : NULL;
  int64_t *ci = cd ? vic__malloc(c, (size_t)n * (size_t)kk * sizeof *ci, "candidate ids") : NULL;
  vic_topk *heaps = ci ? vic__malloc(c, (size_t)n * sizeof *heaps, "candidate heaps") : NULL;
  if (!heaps) goto done;
  for (int64_t i = 0; i < n; ++i) vic__topk_init(&heaps[i], cd + i * kk, ci + i * kk, kk);
  int64_t nblocks = (n + bt - 1) / bt, pairs = nblocks * (nblocks + 1) / 2, done_pairs = 0;
  for (int64_t i0 = 0; i0 < n; i0 += bt) {
    int64_t ni = i0 + bt < n ? bt : n - i0;
    for (int64_t j0 = i0; j0 < n; j0 += bt) {
      int64_t nj = j0 + bt < n ? bt : n - j0;
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)ni, (int)nj, x->d, 1.f, xg->rows + i0 * xs, (int)xs,
                  xg->rows + j0 * xs, (int)xs, 0.f, prod, (int)nj);
      int off = j0 != i0;
      if (off) transpose(prod, ni, nj, tr);
      int64_t rows = ni + (off ? nj : 0);
      for (int64_t r = 0; r < rows; ++r) {
        if (r < ni) select_row(prod + r * nj, nj, j0, xn, ip, i0 + r, &heaps[i0 + r]);
        else select_row(tr + (r - ni) * ni, ni, i0, xn, ip, j0 + r - ni, &heaps[j0 + r - ni]);
      }
      done_pairs++;
      if ((s = vic__progress(c, stage, 0.99 * (double)done_pairs / (double)pairs)) != VIC_OK) goto done;
    }
  }
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t i = 0; i < n; ++i) finish_row(x, vic__row(x, i), &heaps[i], k, ids + i * k, dist + i * k);
  s = vic__progress(c, stage, 1.0);
done:
  free(prod);
  free(tr);
  free(cd);
  free(ci);
  free(heaps);
  return s;
}

static vic_status gemm_views(vic_ctx *c, const vic_data *xg, const vic_brute_queries *qg, const vic_data *x,
                             const vic_brute_queries *q, int32_t k, int64_t *ids, float *dist, const char *stage);

/* L2 products are taken on rows moved by the data's mean: distances do not
 * change, but the norms shrink to the data's spread, so ||x||^2 - 2 q.x no
 * longer cancels away the differences of data far from the origin (a
 * cloud of unit size at 1000 loses every digit otherwise).  The final
 * distances are still recomputed on the caller's rows. */
static float *centred_copy(vic_ctx *c, const float *rows, int64_t stride, int64_t m, int32_t d, const double *mean) {
  float *out = vic__malloc(c, (size_t)m * (size_t)d * sizeof *out, "centred rows");
  if (!out) return NULL;
  for (int64_t i = 0; i < m; ++i)
    for (int32_t j = 0; j < d; ++j) out[i * d + j] = (float)((double)rows[i * stride + j] - mean[j]);
  return out;
}

static vic_status centre_views(vic_ctx *c, const vic_data *x, const vic_brute_queries *q, vic_data *xg,
                               vic_brute_queries *qg, float **xc, float **qc) {
  *xg = *x;
  *qg = *q;
  *xc = *qc = NULL;
  if (x->metric != VIC_L2) return VIC_OK; /* unit rows (cosine) and inner products are not translation invariant */
  int32_t d = x->d;
  int64_t xs = x->stride ? x->stride : d;
  double *mean = vic__calloc(c, (size_t)d, sizeof *mean, "data mean");
  if (!mean) return VIC_E_NOMEM;
  for (int64_t i = 0; i < x->n; ++i)
    for (int32_t j = 0; j < d; ++j) mean[j] += x->rows[i * xs + j];
  for (int32_t j = 0; j < d; ++j) mean[j] /= (double)x->n;
  *xc = centred_copy(c, x->rows, xs, x->n, d, mean);
  int same = q->rows == x->rows && q->stride == xs && q->m == x->n;
  if (*xc && !same) *qc = centred_copy(c, q->rows, q->stride, q->m, d, mean);
  free(mean);
  if (!*xc || (!same && !*qc)) return VIC_E_NOMEM;
  xg->rows = *xc;
  xg->stride = d;
  qg->rows = same ? *xc : *qc;
  qg->stride = d;
  return VIC_OK;
}

vic_status vic__brute_gemm(vic_ctx *c, const vic_data *x, const vic_brute_queries *q, int32_t k, int64_t *ids,
                           float *dist, const char *stage) {
  if (x->box) return vic__fail(c, VIC_E_UNSUPPORTED, "tiled brute force has no periodic boxes");
  vic_data xg;
  vic_brute_queries qg;
  float *xc, *qc;
  vic_status s = centre_views(c, x, q, &xg, &qg, &xc, &qc);
  if (s == VIC_OK) s = gemm_views(c, &xg, &qg, x, q, k, ids, dist, stage);
  free(xc);
  free(qc);
  return s;
}

/* Products and norms on (xg, qg); candidates finished on (x, q). */
static vic_status gemm_views(vic_ctx *c, const vic_data *xg, const vic_brute_queries *qg, const vic_data *x,
                             const vic_brute_queries *q, int32_t k, int64_t *ids, float *dist, const char *stage) {
  int threads = vic__threads(c);
  int64_t n = x->n, m = q->m;
  int32_t d = x->d, kk = candidates(k, n);
  int64_t xgs = xg->stride ? xg->stride : d;
  int ip = x->metric == VIC_INNER_PRODUCT;
  int64_t qt = m < QUERY_TILE ? m : QUERY_TILE, xt = n < DATA_TILE ? n : DATA_TILE;

  vic_status s = VIC_E_NOMEM;
  float *xn = vic__malloc(c, (size_t)n * sizeof *xn, "row norms");
  float *prod = NULL, *cd = NULL;
  int64_t *ci = NULL;
  vic_topk *heaps = NULL;
  if (!xn) goto done;
  if (!row_norms(xg, xn, threads)) {
    s = VIC_E_UNSUPPORTED; /* no failure: the caller computes distances directly */
    goto done;
  }
  if (q->self_identity && !q->self_ids && q->rows == x->rows && q->m == n) {
    s = gemm_symmetric(c, xg, x, xn, k, kk, ids, dist, stage);
    goto done;
  }
  prod = vic__malloc(c, (size_t)qt * (size_t)xt * sizeof *prod, "distance tile");
  cd = prod ? vic__malloc(c, (size_t)qt * (size_t)kk * sizeof *cd, "candidate distances") : NULL;
  ci = cd ? vic__malloc(c, (size_t)qt * (size_t)kk * sizeof *ci, "candidate ids") : NULL;
  heaps = ci ? vic__malloc(c, (size_t)qt * sizeof *heaps, "candidate heaps") : NULL;
  if (!heaps) goto done;

  for (int64_t q0 = 0; q0 < m; q0 += qt) {
    int64_t mq = q0 + qt < m ? qt : m - q0;
    const float *qrows = q->rows + q0 * q->stride, *qgrows = qg->rows + q0 * qg->stride;
    for (int64_t i = 0; i < mq; ++i) vic__topk_init(&heaps[i], cd + i * kk, ci + i * kk, kk);
    for (int64_t x0 = 0; x0 < n; x0 += xt) {
      int64_t nx = x0 + xt < n ? xt : n - x0;
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)mq, (int)nx, d, 1.f, qgrows, (int)qg->stride,
                  xg->rows + x0 * xgs, (int)xgs, 0.f, prod, (int)nx);
      for (int64_t i = 0; i < mq; ++i) select_row(prod + i * nx, nx, x0, xn, ip, self_of(q, q0 + i), &heaps[i]);
      if (vic__cancelled(c)) break;
    }
    for (int64_t i = 0; i < mq; ++i) /* serial: another product follows (see the top) */
      finish_row(x, qrows + i * q->stride, &heaps[i], k, ids + (q0 + i) * k, dist + (q0 + i) * k);
    if ((s = vic__progress(c, stage, (double)(q0 + mq) / (double)m)) != VIC_OK) goto done;
  }
  s = VIC_OK;
done:
  free(xn);
  free(prod);
  free(cd);
  free(ci);
  free(heaps);
  return s;
}

#endif
