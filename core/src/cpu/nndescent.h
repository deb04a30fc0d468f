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

/* rho, delta and max_iterations in range, else VIC_E_ARGUMENT naming them. */
vic_status vic__nndescent_check_options(vic_ctx *c, const vic_build_options *o);

/* Nonzero when NN-Descent with list length K would cost more than exact
 * brute force on x: a round of local joins computes about n C^2 distances
 * (C = 2 rho K candidates per point), the whole exact search n^2 / 2, so
 * with C^2 > n one round alone costs more (a large k_build on few points). */
int vic__nndescent_costlier_than_exact(const vic_data *x, const vic_build_options *o, int32_t K);

/* Approximate K nearest other points of every row of x (prepared rows:
 * L2, or cosine on unit rows; n < 2^31).  ids/work: n*K, each row sorted
 * ascending by (working distance, id).  Deterministic for a given seed and
 * any thread count.  stats may be NULL.  Exact lists by brute force (with
 * a warning) where NN-Descent would cost more. */
vic_status vic__nndescent_graph(vic_ctx *c, const vic_data *x, const vic_build_options *o, int32_t K, int32_t *ids,
                                float *work, vic_nnd_stats *stats);

/* Before a CPU run (the method table's cpu_plan): the options checked, and
 * *m = VIC_METHOD_BRUTE, with a warning and the report's reason, where
 * NN-Descent would cost more than exact brute force. */
vic_status vic__nndescent_plan(vic_ctx *c, const vic_data *x, const vic_build_options *o, int32_t k, vic_report *rep,
                               vic_method *m);

/* vic_knn_build's entry: k lists with true distances. */
vic_status vic__cpu_nndescent_knn(vic_ctx *c, const vic_data *x, const vic_build_options *o, int32_t k, int64_t *ids,
                                  float *dist, vic_report *r);

#endif
