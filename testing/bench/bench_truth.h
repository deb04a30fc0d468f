/* Exact neighbour lists for recall: computed once with the core's exact
 * method and cached as .ivecs, so that every run and every peer is scored
 * against the same lists. */
#ifndef VIC_BENCH_TRUTH_H
#define VIC_BENCH_TRUTH_H

#include "vic_io.h"
#include "vicinity.h"

/* Loads path when it holds n rows of at least k ids, else computes exact
 * lists (grid for d <= 3 with L2, brute force otherwise) and saves them
 * there.  Returns 0, or -1 with a message in err. */
int bench_truth(vic_ctx *c, const vic_data *x, int32_t k, const char *path, vio_imatrix *truth, char *err,
                size_t errsize);

/* Recall@k of lists against the truth over all points: an approximate
 * neighbour counts when the exact list has its id or when it lies no
 * farther than the exact k-th neighbour (ties are interchangeable). */
double bench_recall(const vic_data *x, const vic_knn *nn, const vio_imatrix *truth);

#endif
