/* Random projection trees (Dasgupta & Freund 2008, as used by PyNNDescent
 * to start NN-Descent): each node splits its points by the hyperplane that
 * bisects two of them picked at random, until a leaf holds at most
 * leaf_size points.  Points sharing a leaf are likely near each other, so
 * joining leaves gives NN-Descent a far better start than random lists. */
#ifndef VIC_RP_FOREST_H
#define VIC_RP_FOREST_H

#include "internal.h"

typedef struct {
  int32_t *order;      /* n point ids, grouped leaf by leaf */
  int32_t *leaf_start; /* n_leaves + 1 offsets into order */
  int32_t n_leaves;
} vic_rp_tree;

/* Build n_trees trees over x (n < 2^31), tree t seeded by (seed, t) so the
 * forest does not depend on the thread count.  trees[] receives n_trees
 * entries; on failure everything is freed and the status returned. */
vic_status vic__rp_forest_build(vic_ctx *c, const vic_data *x, int32_t n_trees, int32_t leaf_size, uint64_t seed,
                                vic_rp_tree *trees);
void vic__rp_forest_free(vic_rp_tree *trees, int32_t n_trees);

#endif
