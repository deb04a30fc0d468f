/* Exact k nearest neighbours by brute force on the CPU.
 *
 * Two paths.  For d >= GEMM_MIN_D without a periodic box, distances come
 * from BLAS matrix products in tiles (brute_gemm.c), which is an order of
 * magnitude faster in high dimensions.  Otherwise (small d, periodic boxes,
 * a build without BLAS) the direct path below computes every distance
 * itself: queries are processed in blocks so that a block of data rows
 * stays in cache while every query of the block scans it; each query keeps
 * a bounded heap.  Threads split the queries. */
#include "internal.h"
#include "brute_gemm.h"
#include "topk.h"

#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

enum { QUERY_BLOCK = 64, DATA_BLOCK = 1024 };
/* Below this dimension a product tile does little work per byte and the
 * direct loop is expected to be as fast; the value is a conservative
 * choice, not yet tuned by measurement. */
enum { GEMM_MIN_D = 16 };

typedef struct {
  const vic_data *x;
  const vic_data *q;       /* NULL: rows of x itself */
  const int64_t *rows;     /* optional subset of x's rows as queries */
  int64_t m;               /* number of queries */
  int32_t k;
  int self;                /* exclude the query's own id */
} brute_job;

static const float *query_row(const brute_job *j, int64_t i, int64_t *self_id) {
  if (j->q) { *self_id = -1; return vic__row(j->q, i); }
  int64_t id = j->rows ? j->rows[i] : i;
  *self_id = id;
  return vic__row(j->x, id);
}

static vic_status run_direct(vic_ctx *c, const brute_job *j, int64_t *ids, float *dist, const char *stage) {
  const vic_data *x = j->x;
  int64_t nblocks = (j->m + QUERY_BLOCK - 1) / QUERY_BLOCK;
  int64_t done = 0;
  int cancelled = 0;
#pragma omp parallel for schedule(dynamic, 1) num_threads(vic__threads(c))
  for (int64_t b = 0; b < nblocks; ++b) {
    if (vic__cancelled(c)) { cancelled = 1; continue; }
    int64_t q0 = b * QUERY_BLOCK, q1 = q0 + QUERY_BLOCK < j->m ? q0 + QUERY_BLOCK : j->m;
    vic_topk heaps[QUERY_BLOCK];
    int64_t self[QUERY_BLOCK];
    const float *qr[QUERY_BLOCK];
    for (int64_t i = q0; i < q1; ++i) {
      vic__topk_init(&heaps[i - q0], dist + i * j->k, ids + i * j->k, j->k);
      qr[i - q0] = query_row(j, i, &self[i - q0]);
    }
    for (int64_t x0 = 0; x0 < x->n; x0 += DATA_BLOCK) {
      int64_t x1 = x0 + DATA_BLOCK < x->n ? x0 + DATA_BLOCK : x->n;
      for (int64_t i = q0; i < q1; ++i) {
        vic_topk *h = &heaps[i - q0];
        for (int64_t p = x0; p < x1; ++p) {
          if (p == self[i - q0]) continue;
          float w = vic__work_dist(x, qr[i - q0], vic__row(x, p));
          if (w <= vic__topk_bound(h)) vic__topk_push(h, w, p);
        }
      }
    }
    for (int64_t i = q0; i < q1; ++i) {
      vic_topk *h = &heaps[i - q0];
      vic__topk_finish(h);
      for (int32_t t = 0; t < h->size; ++t) h->d[t] = vic__true_dist(x->metric, h->d[t]);
      vic__sort_pairs(h->d, h->id, h->size);
    }
#ifdef _OPENMP
#pragma omp atomic
#endif
    done++;
#ifdef _OPENMP
    if (omp_get_thread_num() == 0)
#endif
      if (vic__progress(c, stage, (double)done / (double)nblocks) != VIC_OK) cancelled = 1;
  }
  if (cancelled || vic__cancelled(c)) return vic__fail(c, VIC_E_CANCELLED, "cancelled during stage '%s'", stage);
  return VIC_OK;
}

static int use_gemm(const vic_data *x) {
  return vic__brute_gemm_available() && !x->box && x->d >= GEMM_MIN_D;
}

/* The tiled path, falling back to the direct one where the product form
 * does not apply (norms that overflow float). */
static vic_status run(vic_ctx *c, const brute_job *j, int64_t *ids, float *dist, const char *stage) {
  if (!use_gemm(j->x)) return run_direct(c, j, ids, dist, stage);
  vic_brute_queries q = {0};
  float *gathered = NULL;
  int64_t xs = j->x->stride ? j->x->stride : j->x->d;
  q.m = j->m;
  if (j->q) {
    q.rows = j->q->rows;
    q.stride = j->q->stride ? j->q->stride : j->q->d;
  } else if (j->rows) { /* a sample of x's rows: gathered so sgemm reads one matrix */
    gathered = vic__malloc(c, (size_t)j->m * (size_t)j->x->d * sizeof *gathered, "query rows");
    if (!gathered) return VIC_E_NOMEM;
    for (int64_t i = 0; i < j->m; ++i)
      memcpy(gathered + i * j->x->d, vic__row(j->x, j->rows[i]), (size_t)j->x->d * sizeof *gathered);
    q.rows = gathered;
    q.stride = j->x->d;
    q.self_ids = j->rows;
  } else {
    q.rows = j->x->rows;
    q.stride = xs;
    q.self_identity = 1;
  }
  vic_status s = vic__brute_gemm(c, j->x, &q, j->k, ids, dist, stage);
  free(gathered);
  if (s == VIC_E_UNSUPPORTED) {
    vic__log(c, VIC_LOG_DEBUG, "brute force: squared norms overflow float; computing distances directly");
    return run_direct(c, j, ids, dist, stage);
  }
  return s;
}

vic_status vic__cpu_brute_knn(vic_ctx *c, const vic_data *x, const vic_data *q, int32_t k, int64_t *ids,
                              float *dist) {
  brute_job j = {x, q, NULL, q ? q->n : x->n, k, q == NULL};
  return run(c, &j, ids, dist, "brute");
}

vic_status vic__cpu_brute_knn_rows(vic_ctx *c, const vic_data *x, const int64_t *rows, int64_t m, int32_t k,
                                   int64_t *ids, float *dist) {
  brute_job j = {x, NULL, rows, m, k, 1};
  return run(c, &j, ids, dist, "recall");
}
