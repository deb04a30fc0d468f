/* The k-d tree behind vic__denser_tree_nearest: median splits on the
 * widest axis, leaves of a few points, and per node the bounding box and
 * the largest density inside.  A query descends nearer child first and
 * prunes a node when its box is farther than the best point found or
 * when nothing in it can be denser than the query point.  Real peaks are
 * few, but noise makes local maxima by the thousand; each of those finds
 * a denser point a little beyond its kNN ball, which this reaches in a
 * few leaves. */
#include "denser_tree.h"

#include <string.h>

enum { LEAF = 16, MAX_DEPTH = 128 };

typedef struct {
  int64_t lo, hi;        /* range of idx */
  int64_t left, right;   /* children, -1 for a leaf */
  float max_rho;
} node;

struct vic__denser_tree {
  vic_data x;
  const float *rho;
  int64_t *idx;
  node *nodes;
  float *bmin, *bmax;    /* n_nodes * d */
  int64_t n_nodes, cap;
};

static inline float coord(const vic__denser_tree *t, int64_t i, int32_t j) { return vic__row(&t->x, i)[j]; }

/* Rearranges idx[lo, hi) so that idx[mid] holds the element of rank mid
 * by coordinate j, smaller before and larger after.  Three-way
 * partitioning keeps runs of equal coordinates linear. */
static void select_median(const vic__denser_tree *t, int64_t *idx, int64_t lo, int64_t hi, int64_t mid, int32_t j) {
  while (hi - lo > 1) {
    float pivot = coord(t, idx[lo + (hi - lo) / 2], j);
    int64_t lt = lo, i = lo, gt = hi;
    while (i < gt) {
      float v = coord(t, idx[i], j);
      if (v < pivot) { int64_t s = idx[lt]; idx[lt++] = idx[i]; idx[i++] = s; }
      else if (v > pivot) { int64_t s = idx[--gt]; idx[gt] = idx[i]; idx[i] = s; }
      else i++;
    }
    if (mid < lt) hi = lt;
    else if (mid >= gt) lo = gt;
    else return;
  }
}

/* Subtrees of more points than this are built as OpenMP tasks. */
enum { TASK_POINTS = 1 << 15 };

static int64_t build(vic__denser_tree *t, int64_t lo, int64_t hi, int depth) {
  const int32_t d = t->x.d;
  int64_t me;
  /* tasks take node numbers in any order: the tree's shape, and so every
   * query's (exact) answer, does not depend on them */
#pragma omp atomic capture
  me = t->n_nodes++;
  node *nd = &t->nodes[me];
  float *mn = t->bmin + me * d, *mx = t->bmax + me * d;
  for (int32_t j = 0; j < d; ++j) { mn[j] = INFINITY; mx[j] = -INFINITY; }
  float best = -INFINITY;
  for (int64_t p = lo; p < hi; ++p) {
    const float *r = vic__row(&t->x, t->idx[p]);
    for (int32_t j = 0; j < d; ++j) { if (r[j] < mn[j]) mn[j] = r[j]; if (r[j] > mx[j]) mx[j] = r[j]; }
    if (t->rho[t->idx[p]] > best) best = t->rho[t->idx[p]];
  }
  nd->lo = lo; nd->hi = hi; nd->max_rho = best; nd->left = nd->right = -1;
  int32_t axis = 0;
  for (int32_t j = 1; j < d; ++j)
    if (mx[j] - mn[j] > mx[axis] - mn[axis]) axis = j;
  /* identical points cannot be split; a deep chain cannot happen with
   * median splits, the depth cap only guards the query's stack */
  if (hi - lo <= LEAF || !(mx[axis] > mn[axis]) || depth >= MAX_DEPTH - 2) return me;
  int64_t mid = lo + (hi - lo) / 2;
  select_median(t, t->idx, lo, hi, mid, axis);
  int64_t l, r;
  if (hi - lo > TASK_POINTS) {
#pragma omp task shared(l) firstprivate(t, lo, mid, depth)
    l = build(t, lo, mid, depth + 1);
    r = build(t, mid, hi, depth + 1);
#pragma omp taskwait
  } else {
    l = build(t, lo, mid, depth + 1);
    r = build(t, mid, hi, depth + 1);
  }
  t->nodes[me].left = l;
  t->nodes[me].right = r;
  return me;
}

vic_status vic__denser_tree_build(vic_ctx *c, const vic_data *x, const float *rho, vic__denser_tree **out) {
  *out = NULL;
  vic__denser_tree *t = vic__calloc(c, 1, sizeof *t, "denser-point tree");
  if (!t) return VIC_E_NOMEM;
  t->x = *x;
  t->rho = rho;
  /* leaves hold more than LEAF/2 points, so at most 2n/LEAF + 1 leaves */
  t->cap = 4 * (x->n / LEAF + 1) + 4;
  t->idx = vic__malloc(c, (size_t)x->n * sizeof *t->idx, "denser-point tree order");
  t->nodes = t->idx ? vic__malloc(c, (size_t)t->cap * sizeof *t->nodes, "denser-point tree nodes") : NULL;
  t->bmin = t->nodes ? vic__malloc(c, (size_t)t->cap * (size_t)x->d * sizeof(float), "denser-point tree boxes") : NULL;
  t->bmax = t->bmin ? vic__malloc(c, (size_t)t->cap * (size_t)x->d * sizeof(float), "denser-point tree boxes") : NULL;
  if (!t->bmax) { vic__denser_tree_free(t); return VIC_E_NOMEM; }
  for (int64_t i = 0; i < x->n; ++i) t->idx[i] = i;
#pragma omp parallel num_threads(vic__threads(c))
#pragma omp single
  build(t, 0, x->n, 0);
  *out = t;
  return VIC_OK;
}

/* Distance from q to the interval [lo, hi] along one axis; along a
 * periodic axis of length L, to the nearest of the interval's images. */
static inline double axis_gap(double q, double lo, double hi, double L) {
  if (L <= 0) return q < lo ? lo - q : (q > hi ? q - hi : 0.0);
  double w = hi - lo;
  if (w >= L) return 0.0;
  double u = fmod(q - lo, L);
  if (u < 0) u += L;
  if (u <= w) return 0.0;
  double a = u - w, b = L - u;
  return a < b ? a : b;
}

static float box_gap2(const vic__denser_tree *t, int64_t nd, const float *q) {
  const int32_t d = t->x.d;
  const float *mn = t->bmin + nd * d, *mx = t->bmax + nd * d;
  double s = 0;
  for (int32_t j = 0; j < d; ++j) {
    double g = axis_gap(q[j], mn[j], mx[j], t->x.box ? t->x.box[j] : 0.0);
    s += g * g;
  }
  /* rounded down a hair so float distances at the boundary are not pruned */
  return (float)(s * (1.0 - 1e-6));
}

int64_t vic__denser_tree_nearest(const vic__denser_tree *t, int64_t i, float *dist) {
  const float *q = vic__row(&t->x, i);
  const float rho_i = t->rho[i];
  int64_t stack[MAX_DEPTH * 2];
  float stack_gap[MAX_DEPTH * 2];
  int top = 0;
  float best = INFINITY;
  int64_t best_id = -1;
  stack[top] = 0;
  stack_gap[top++] = 0.f;
  while (top > 0) {
    --top;
    int64_t nd = stack[top];
    if (stack_gap[top] > best) continue;
    const node *n = &t->nodes[nd];
    if (n->max_rho < rho_i) continue; /* nothing denser below */
    if (n->left < 0) {
      for (int64_t p = n->lo; p < n->hi; ++p) {
        int64_t j = t->idx[p];
        if (!vic__denser(t->rho, j, i)) continue;
        float dd = vic__l2sq(q, vic__row(&t->x, j), t->x.d, t->x.box);
        if (dd < best || (dd == best && j < best_id)) { best = dd; best_id = j; }
      }
      continue;
    }
    float gl = box_gap2(t, n->left, q), gr = box_gap2(t, n->right, q);
    /* push the farther child first so the nearer one is searched first */
    if (gl <= gr) {
      stack[top] = n->right; stack_gap[top++] = gr;
      stack[top] = n->left; stack_gap[top++] = gl;
    } else {
      stack[top] = n->left; stack_gap[top++] = gl;
      stack[top] = n->right; stack_gap[top++] = gr;
    }
  }
  *dist = best_id >= 0 ? sqrtf(best) : 0.f;
  return best_id;
}

void vic__denser_tree_free(vic__denser_tree *t) {
  if (!t) return;
  free(t->idx);
  free(t->nodes);
  free(t->bmin);
  free(t->bmax);
  free(t);
}
