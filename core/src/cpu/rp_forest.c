/* Random projection forest: see rp_forest.h.  Trees are independent, so
 * threads build whole trees; within a tree the points are partitioned in
 * place (like quicksort) and leaves come out as contiguous ranges. */
#include "rp_forest.h"
#include "l2_kernel.h"

#include <string.h>

/* Split order[lo,hi) by the bisecting hyperplane of two random members a, b:
 * the points nearer to b come first.  Returns the split position and the
 * pivots; a degenerate split (all on one side, e.g. duplicates) falls back
 * to halving, with pivots -1, so that the recursion always ends. */
static int32_t split_node(const vic_data *x, int32_t *order, int32_t lo, int32_t hi, vic_rng *g, float *normal,
                          float *margin, vic_rp_node *node) {
  const int32_t d = x->d, m = hi - lo;
  int32_t a = order[lo + (int32_t)vic__rng_below(g, (uint64_t)m)];
  int32_t b = order[lo + (int32_t)vic__rng_below(g, (uint64_t)(m - 1))];
  if (b == a) b = order[hi - 1];
  const float *pa = vic__row(x, a), *pb = vic__row(x, b);
  /* margin = (x - (a+b)/2).(a - b) = (|x-b|^2 - |x-a|^2) / 2: negative
   * means nearer to b */
  float offset = 0.f;
  for (int32_t j = 0; j < d; ++j) {
    normal[j] = pa[j] - pb[j];
    offset -= normal[j] * 0.5f * (pa[j] + pb[j]);
  }
  for (int32_t t = lo; t < hi; ++t) margin[t - lo] = vic__dot_fast(normal, vic__row(x, order[t]), d) + offset;
  /* partition: negative margins first; exact zeros go to a random side */
  int32_t i = lo, j = hi - 1;
  while (i <= j) {
    float mi = margin[i - lo];
    int left = mi < 0.f || (mi == 0.f && (vic__rng_next(g) & 1));
    if (left) { ++i; continue; }
    int32_t to = order[i]; order[i] = order[j]; order[j] = to;
    float tm = margin[i - lo]; margin[i - lo] = margin[j - lo]; margin[j - lo] = tm;
    --j;
  }
  node->near_left = b;
  node->near_right = a;
  if (i == lo || i == hi) {
    i = lo + m / 2;
    node->near_left = node->near_right = -1;
  }
  return i;
}

static int cmp_i32(const void *a, const void *b) {
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

/* Stack frames: range [lo,hi), the parent node and which child it is. */
enum { FRAME = 4, MAX_FRAMES = 40 };

static void build_tree(const vic_data *x, int32_t leaf_size, vic_rng g, vic_rp_tree *t, float *normal, float *margin,
                       int32_t *stack) {
  const int32_t n = (int32_t)x->n;
  for (int32_t i = 0; i < n; ++i) t->order[i] = i;
  /* depth-first over ranges.  The larger half is pushed first and the
   * smaller one split next, so the stack never holds more than log2(n) + 1
   * ranges even when splits are lopsided; leaves therefore come out of
   * order and their starts are sorted at the end. */
  int32_t top = 0;
  stack[0] = 0; stack[1] = n; stack[2] = -1; stack[3] = 0;
  top = FRAME;
  t->n_leaves = 0;
  t->n_nodes = 0;
  while (top > 0) {
    top -= FRAME;
    int32_t lo = stack[top], hi = stack[top + 1], parent = stack[top + 2], side = stack[top + 3];
    if (hi - lo <= leaf_size) {
      t->leaf_start[t->n_leaves++] = lo;
      if (t->nodes && parent >= 0) t->nodes[parent].child[side] = -lo - 1;
      continue;
    }
    vic_rp_node node;
    int32_t mid = split_node(x, t->order, lo, hi, &g, normal, margin, &node);
    int32_t id = -1;
    if (t->nodes) {
      id = t->n_nodes++;
      t->nodes[id] = node;
      if (parent >= 0) t->nodes[parent].child[side] = id;
    }
    int left_smaller = mid - lo < hi - mid;
    int32_t f[2][4] = {{lo, mid, id, 0}, {mid, hi, id, 1}};
    memcpy(stack + top, f[left_smaller ? 1 : 0], sizeof f[0]);
    memcpy(stack + top + FRAME, f[left_smaller ? 0 : 1], sizeof f[0]);
    top += 2 * FRAME;
  }
  qsort(t->leaf_start, (size_t)t->n_leaves, sizeof(int32_t), cmp_i32);
  t->leaf_start[t->n_leaves] = n;
}

vic_status vic__rp_forest_build(vic_ctx *c, const vic_data *x, int32_t n_trees, int32_t leaf_size, uint64_t seed,
                                int with_nodes, vic_rp_tree *trees) {
  const int32_t n = (int32_t)x->n;
  if (leaf_size < 2) leaf_size = 2;
  memset(trees, 0, (size_t)n_trees * sizeof *trees);
  for (int32_t t = 0; t < n_trees; ++t) {
    vic_rp_tree *tr = &trees[t];
    tr->order = vic__malloc(c, (size_t)n * sizeof(int32_t), "projection tree");
    tr->leaf_start = tr->order ? vic__malloc(c, ((size_t)n + 1) * sizeof(int32_t), "projection tree leaves") : NULL;
    /* a binary tree with at most n leaves has fewer than n internal nodes */
    if (tr->leaf_start && with_nodes) tr->nodes = vic__malloc(c, (size_t)n * sizeof(vic_rp_node), "projection tree nodes");
    if (!tr->leaf_start || (with_nodes && !tr->nodes)) { vic__rp_forest_free(trees, n_trees); return VIC_E_NOMEM; }
  }
  atomic_int failed = 0;
#pragma omp parallel num_threads(vic__threads(c))
  {
    float *normal = malloc((size_t)x->d * sizeof(float));
    float *margin = malloc((size_t)n * sizeof(float));
    int32_t *stack = malloc((size_t)FRAME * MAX_FRAMES * sizeof(int32_t));
    if (!normal || !margin || !stack) atomic_store(&failed, 1);
#pragma omp for schedule(dynamic, 1)
    for (int32_t t = 0; t < n_trees; ++t) {
      if (atomic_load(&failed) || vic__cancelled(c)) continue;
      build_tree(x, leaf_size, vic__rng(seed, 0x7255ull + (uint64_t)t), &trees[t], normal, margin, stack);
    }
    free(normal);
    free(margin);
    free(stack);
  }
  if (atomic_load(&failed)) { vic__rp_forest_free(trees, n_trees); return vic__fail(c, VIC_E_NOMEM, "out of memory for projection trees"); }
  if (vic__cancelled(c)) { vic__rp_forest_free(trees, n_trees); return vic__fail(c, VIC_E_CANCELLED, "cancelled while building projection trees"); }
  return VIC_OK;
}

void vic__rp_forest_free(vic_rp_tree *trees, int32_t n_trees) {
  if (!trees) return;
  for (int32_t t = 0; t < n_trees; ++t) {
    free(trees[t].order);
    free(trees[t].leaf_start);
    free(trees[t].nodes);
    memset(&trees[t], 0, sizeof trees[t]);
  }
}

void vic__rp_tree_route(const vic_rp_tree *t, const vic_data *x, const float *q, int32_t *begin, int32_t *end) {
  int32_t lo = 0;
  if (t->n_nodes > 0) {
    int32_t node = 0;
    for (;;) {
      const vic_rp_node *nd = &t->nodes[node];
      int side = 0;
      if (nd->near_left >= 0)
        side = vic__approx_dist(x, q, vic__row(x, nd->near_right)) < vic__approx_dist(x, q, vic__row(x, nd->near_left));
      int32_t ch = nd->child[side];
      if (ch < 0) { lo = -ch - 1; break; }
      node = ch;
    }
  }
  /* the leaf's end is the next start */
  int32_t a = 0, b = t->n_leaves; /* find the first start > lo */
  while (a < b) {
    int32_t m = (a + b) / 2;
    if (t->leaf_start[m] <= lo) a = m + 1; else b = m;
  }
  *begin = lo;
  *end = t->leaf_start[a];
}
