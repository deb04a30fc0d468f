/* CPU NN-Descent (Dong, Charikar & Li 2011), shared by vic_knn_build and the
 * graph search index. */
#ifndef VIC_NNDESCENT_H
#define VIC_NNDESCENT_H

#include "internal.h"

/* What a build did, for reports and tests. */
typedef struct {
  int32_t iterations;     /* local-join rounds run */
  int64_t distances;      /* distance evaluations, initialisation included */
  int64_t last_updates;   /* list changes in the last round */
  double seconds_init;    /* projection trees and their leaf joins */
  double seconds_descent; /* the NN-Descent rounds */
} vic_nnd_stats;

/* The list length NN-Descent works with for a requested k: the option
 * k_build, or max(k, 20) when it is 0, never below k, clamped to n - 1. */
int32_t vic__nndescent_k_build(const vic_data *x, const vic_build_options *o, int32_t k);

/* Approximate K nearest other points of every row of x (prepared rows:
 * L2, or cosine on unit rows; n < 2^31).  ids/work: n*K, each row sorted
 * ascending by (working distance, id).  Deterministic for a given seed and
 * any thread count.  stats may be NULL. */
vic_status vic__nndescent_graph(vic_ctx *c, const vic_data *x, const vic_build_options *o, int32_t K, int32_t *ids,
                                float *work, vic_nnd_stats *stats);

/* vic_knn_build's entry: k lists with true distances. */
vic_status vic__cpu_nndescent_knn(vic_ctx *c, const vic_data *x, const vic_build_options *o, int32_t k, int64_t *ids,
                                  float *dist, vic_report *r);

#endif
