/* Query mode of vicinity_bench: vic_index_build over the data, then
 * vic_index_search with a query file; QPS and recall@k against exact lists
 * of the queries (cached as .ivecs). */
#ifndef VIC_BENCH_QUERY_H
#define VIC_BENCH_QUERY_H

#include "vicinity.h"

typedef struct {
  const char *name, *machine;
  const char *query_path, *truth_path; /* truth_path may be NULL: no recall */
  int threads, repeats, warmup, device;
  vic_search_options search;
} bench_query_args;

/* Prints one JSON line per timed search; returns 0, or 1 after printing
 * the error to stderr. */
int bench_query(vic_ctx *c, const vic_data *x, const vic_build_options *o, const bench_query_args *a);

#endif
