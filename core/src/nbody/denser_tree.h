/* Nearest denser point by exact search: a k-d tree over all points whose
 * nodes know the largest density below them, so that a query skips
 * whole regions that hold nothing denser.  peaks.c needs it for the few
 * points with no denser point in their kNN list (the local maxima). */
#ifndef VIC_DENSER_TREE_H
#define VIC_DENSER_TREE_H

#include "internal.h"

typedef struct vic__denser_tree vic__denser_tree;

/* "j is denser than i": rho[j] > rho[i], or equal densities and j < i.
 * A strict total order, so parent pointers can never form a cycle and
 * exactly one point (the densest) has no parent. */
static inline int vic__denser(const float *rho, int64_t j, int64_t i) {
  return rho[j] > rho[i] || (rho[j] == rho[i] && j < i);
}

/* x must be validated (L2, any d, optional periodic box); x and rho must
 * outlive the tree. */
vic_status vic__denser_tree_build(vic_ctx *c, const vic_data *x, const float *rho, vic__denser_tree **out);
/* The nearest point denser than point i (ties of distance to the lower
 * id) and its distance; -1 when i is the densest.  Thread-safe. */
int64_t vic__denser_tree_nearest(const vic__denser_tree *t, int64_t i, float *dist);
void vic__denser_tree_free(vic__denser_tree *t);

#endif
