/* Validation and result checks fused into a graph search's copies
 * (gsearch_io.h). */
#include "gsearch_io.h"

#ifdef VIC_WITH_CUDA
#include "cuda_internal.h"

#include <string.h>

static int io_in(void *ctx, int thread, float *dst, int64_t row0, int64_t rows) {
  vic_gsearch_io *io = (vic_gsearch_io *)ctx;
  return vic__rows_check_part(&io->rows, thread, row0, row0 + rows, dst);
}

static void io_out(void *ctx, int thread, const int64_t *ids, const float *dist, int64_t row0, int64_t rows) {
  vic_gsearch_io *io = (vic_gsearch_io *)ctx;
  const int64_t b =
      vic__true_rows(io->metric, io->k, rows, ids, dist, io->ids + row0 * io->k, io->dist + row0 * io->k);
  if (b != INT64_MAX && row0 + b < io->bad[thread]) io->bad[thread] = row0 + b;
}

vic_status vic__gsearch_io_begin(vic_ctx *c, const vic_data *q, vic_metric metric, int32_t k, int64_t *ids,
                                 float *dist, int threads, vic_gsearch_io *io, vick_gsearch_hooks *h) {
  memset(io, 0, sizeof *io);
  memset(h, 0, sizeof *h);
  if (threads < 1) threads = 1;
  vic_status s = vic__rows_check_begin(c, q, threads, &io->rows);
  if (s != VIC_OK) return s;
  io->bad = vic__malloc(c, (size_t)threads * sizeof *io->bad, "result checks");
  if (!io->bad) {
    vic__rows_check_free(&io->rows);
    return VIC_E_NOMEM;
  }
  for (int t = 0; t < threads; ++t) io->bad[t] = INT64_MAX;
  io->q = q;
  io->metric = metric;
  io->k = k;
  io->ids = ids;
  io->dist = dist;
  io->threads = threads;
  h->in = io_in;
  h->out = io_out;
  h->ctx = io;
  return VIC_OK;
}

vic_status vic__gsearch_io_end(vic_ctx *c, vic_gsearch_io *io, int rc, const vick_call *call, const char *what_call,
                               const char *what_results) {
  int64_t bad = INT64_MAX;
  for (int t = 0; t < io->threads; ++t) bad = io->bad[t] < bad ? io->bad[t] : bad;
  free(io->bad);
  io->bad = NULL;
  /* a refused row: the pieces before it were clean, so it is the first */
  if (vic__rows_check_bad(&io->rows) != INT64_MAX) return vic__rows_check_end(c, &io->rows);
  if (rc != VICK_OK) {
    /* the pass may have stopped before the last row: the whole check
     * words what is wrong with the queries, if anything */
    vic__rows_check_free(&io->rows);
    vic_status v = vic_data_validate(c, io->q);
    if (v != VIC_OK) return v;
    return vic__kernel_status(c, rc, call, what_call);
  }
  vic_status s = vic__rows_check_end(c, &io->rows); /* every row went through the hooks: the range */
  if (s != VIC_OK) return s;
  return vic__distance_verdict(c, bad, io->k, io->ids, io->dist, what_results);
}
#else
typedef int vic__gsearch_io_needs_cuda; /* a translation unit may not be empty */
#endif
