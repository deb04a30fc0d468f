/* Query mode of vicinity_bench: vic_index_build over the data, then
 * vic_index_search with a query file; QPS and recall@k against exact lists
 * of the queries (cached as .ivecs). */
#ifndef VIC_BENCH_QUERY_H
#define VIC_BENCH_QUERY_H

#include "vicinity.h"

#include "vic_io.h"

#define BENCH_MAX_BATCHES 8
#define BENCH_MAX_TAUS 8

typedef struct {
  const char *name, *machine;
  const char *query_path, *truth_path; /* truth_path may be NULL: no recall */
  int threads, repeats, warmup, device;
  vic_search_options search;
  /* public-path mode (bench_batches.c): batch sizes (0-terminated) and taus */
  int64_t batches[BENCH_MAX_BATCHES + 1];
  float taus[BENCH_MAX_TAUS];
  int ntaus;
} bench_query_args;

/* Prints one JSON line per timed search; returns 0, or 1 after printing
 * the error to stderr. */
int bench_query(vic_ctx *c, const vic_data *x, const vic_build_options *o, const bench_query_args *a);

/* Found neighbours of queries q0 .. q0 + nn->n - 1 (nn's rows) counted as
 * recall@k counts them: a listed id, or one no farther than the exact k-th
 * (L2; other metrics count ids alone). */
int64_t bench_query_hits(const vic_data *x, const vic_data *q, int64_t q0, const vic_knn *nn, const vio_imatrix *t);

/* Public-path mode: for every tau and batch size, calls of vic_index_search
 * on consecutive slices of the queries after a warm-up; one JSON line per
 * (tau, batch) with wall and kernel time per call and per query side by
 * side, recall@k over the timed calls' queries, and the first call after
 * the build (the largest batch, first tau) against the later ones. */
int bench_batches(vic_ctx *c, const vic_data *x, const vic_data *q, const vic_index *ix, double build_s,
                  const vio_imatrix *truth, const bench_query_args *a);

#endif
