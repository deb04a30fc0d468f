/* Random projection trees (Dasgupta & Freund 2008, as used by PyNNDescent
 * to start NN-Descent and to seed its searches): each node splits its
 * points by the hyperplane that bisects two of them picked at random,
 * until a leaf holds at most leaf_size points.  Points sharing a leaf are
 * likely near each other, so joining leaves gives NN-Descent a far better
 * start than random lists, and the leaf a query falls into gives a graph
 * search entry points near it, even when the kNN graph is disconnected. */
#ifndef VIC_RP_FOREST_H
#define VIC_RP_FOREST_H

#include "internal.h"

/* An internal node of a routing tree.  The hyperplane bisects the two
 * pivots, so "nearer to near_left" decides the side with two distances and
 * no stored normal.  Children >= 0 are nodes; a child c < 0 is the leaf
 * whose points start at order[-c - 1].  Pivots are -1 where a degenerate
 * split was halved instead (route left). */
typedef struct {
  int32_t near_left, near_right;
  int32_t child[2];
} vic_rp_node;

typedef struct {
  int32_t *order;      /* n point ids, grouped leaf by leaf */
  int32_t *leaf_start; /* n_leaves + 1 ascending offsets into order */
  int32_t n_leaves;
  vic_rp_node *nodes;  /* routing nodes (NULL unless asked for); node 0 is the root */
  int32_t n_nodes;     /* 0 when the whole set is one leaf */
} vic_rp_tree;

/* Build n_trees trees over x (n < 2^31), tree t seeded by (seed, t) so the
 * forest does not depend on the thread count.  trees[] receives n_trees
 * entries; with_nodes keeps the routing nodes.  On failure everything is
 * freed and the status returned. */
vic_status vic__rp_forest_build(vic_ctx *c, const vic_data *x, int32_t n_trees, int32_t leaf_size, uint64_t seed,
                                int with_nodes, vic_rp_tree *trees);
void vic__rp_forest_free(vic_rp_tree *trees, int32_t n_trees);

/* The leaf a query q (d floats, prepared like x) falls into: its points
 * are order[*begin, *end).  Needs the routing nodes. */
void vic__rp_tree_route(const vic_rp_tree *t, const vic_data *x, const float *q, int32_t *begin, int32_t *end);

#endif
