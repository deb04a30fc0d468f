/* The kd-tree fallback of the exact low-dimensional search.
 *
 * A uniform grid cannot serve data whose density spans many orders of
 * magnitude (n-body snapshots with dense cores and a sparse background):
 * cells sized for the background hold thousands of core points, cells
 * sized for the core leave the background in a sea of empty cells.  When
 * the grid's refinement gives up (cpu_grid.c), the same stored points are
 * reordered into an implicit, balanced kd-tree instead: node i covers a
 * range of points, split at its middle along the widest axis of its
 * points' bounding box, with children 2i+1 and 2i+2.  Every node keeps
 * the exact box of its points, so a search prunes a node when the box's
 * (minimum-image) distance exceeds the current k-th distance. */
#include "grid_internal.h"

#include <string.h>

/* Points per leaf: a leaf is scanned like a grid cell. */
enum { LEAF = 8, MAX_DEPTH = 64 };

static inline int is_leaf(int64_t lo, int64_t hi) { return hi - lo <= LEAF; }

static inline void swap_points(vic_grid *g, int64_t i, int64_t j) {
  float *p = g->pts;
  for (int a = 0; a < 3; ++a) { float t = p[3 * i + a]; p[3 * i + a] = p[3 * j + a]; p[3 * j + a] = t; }
  if (g->ids32) {
    uint32_t t = g->ids32[i]; g->ids32[i] = g->ids32[j]; g->ids32[j] = t;
  } else {
    int64_t t = g->ids[i]; g->ids[i] = g->ids[j]; g->ids[j] = t;
  }
}

/* Partial sort of [lo, hi) along axis ax so that no point before kth is
 * above it and none after it is below (Hoare partitions, median of three).
 * Exactness of the split only affects speed: the boxes are computed from
 * the points each node ends up with. */
static void select_kth(vic_grid *g, int64_t lo, int64_t hi, int64_t kth, int ax) {
  const float *p = g->pts;
  while (hi - lo > 2) {
    float a = p[3 * lo + ax], b = p[3 * (lo + (hi - lo) / 2) + ax], c = p[3 * (hi - 1) + ax];
    float piv = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
    int64_t i = lo, j = hi - 1;
    while (i <= j) {
      while (p[3 * i + ax] < piv) i++;
      while (p[3 * j + ax] > piv) j--;
      if (i <= j) { swap_points(g, i, j); i++; j--; }
    }
    if (kth <= j) hi = j + 1;
    else if (kth >= i) lo = i;
    else return;
  }
  if (hi - lo == 2 && p[3 * lo + ax] > p[3 * (lo + 1) + ax]) swap_points(g, lo, lo + 1);
}

static void build_node(vic_grid *g, int64_t node, int64_t lo, int64_t hi) {
  float mn[3] = {INFINITY, INFINITY, INFINITY}, mx[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int64_t i = lo; i < hi; ++i)
    for (int a = 0; a < 3; ++a) {
      float v = g->pts[3 * i + a];
      if (v < mn[a]) mn[a] = v;
      if (v > mx[a]) mx[a] = v;
    }
  float *box = g->box + 6 * node;
  memcpy(box, mn, sizeof mn);
  memcpy(box + 3, mx, sizeof mx);
  if (is_leaf(lo, hi)) return;
  int ax = 0;
  for (int a = 1; a < 3; ++a)
    if (mx[a] - mn[a] > mx[ax] - mn[ax]) ax = a;
  int64_t mid = lo + (hi - lo) / 2;
  select_kth(g, lo, hi, mid, ax);
  /* the two halves are independent: large ones become OpenMP tasks */
#pragma omp task if (hi - lo > 65536)
  build_node(g, 2 * node + 1, lo, mid);
#pragma omp task if (hi - lo > 65536)
  build_node(g, 2 * node + 2, mid, hi);
#pragma omp taskwait
}

vic_status vic__grid_tree_build(vic_ctx *c, vic_grid *g) {
  int depth = 0;
  while ((g->n + ((int64_t)1 << depth) - 1) >> depth > LEAF) depth++;
  if (depth + 2 > MAX_DEPTH) return vic__fail(c, VIC_E_ARGUMENT, "too many points for the kd-tree (%lld)", (long long)g->n);
  g->nodes = ((int64_t)1 << (depth + 1)) - 1;
  g->box = vic__malloc(c, (size_t)g->nodes * 6 * sizeof *g->box, "kd-tree boxes");
  if (!g->box) return VIC_E_NOMEM;
#pragma omp parallel num_threads(vic__threads(c))
#pragma omp single
  build_node(g, 0, 0, g->n);
  g->tree = 1;
  return VIC_OK;
}

static inline float interval_gap(float q, float lo, float hi) { return lo > q ? lo - q : q > hi ? q - hi : 0.f; }

/* Squared distance from q to a node's box (nearest image on periodic axes),
 * less the rounding margin, so that pruning is never too eager. */
static inline float box_gap2(const vic_grid *g, int64_t node, const float q[3]) {
  const float *b = g->box + 6 * node;
  float s = 0.f;
  for (int a = 0; a < 3; ++a) {
    float gap = interval_gap(q[a], b[a], b[a + 3]);
    float L = g->period[a];
    if (L < INFINITY && gap > 0.f) {
      float down = interval_gap(q[a], b[a] - L, b[a + 3] - L), up = interval_gap(q[a], b[a] + L, b[a + 3] + L);
      if (down < gap) gap = down;
      if (up < gap) gap = up;
    }
    gap -= g->slack[a];
    if (gap > 0.f) s += gap * gap;
  }
  return s;
}

void vic__grid_tree_search(const vic_grid *g, const float q[3], int64_t self_pos, klist *h, int periodic) {
  struct { int64_t node, lo, hi; float lb; } st[2 * MAX_DEPTH];
  int sp = 0;
  st[sp].node = 0; st[sp].lo = 0; st[sp].hi = g->n; st[sp].lb = box_gap2(g, 0, q); sp++;
  while (sp > 0) {
    --sp;
    int64_t node = st[sp].node, lo = st[sp].lo, hi = st[sp].hi;
    /* ">" keeps equal-distance candidates: ties go to the lower id */
    if (st[sp].lb > klist_bound(h)) continue;
    if (is_leaf(lo, hi)) { scan_range(g, lo, hi, q, self_pos, h, periodic); continue; }
    int64_t mid = lo + (hi - lo) / 2, l = 2 * node + 1, r = 2 * node + 2;
    float gl = box_gap2(g, l, q), gr = box_gap2(g, r, q);
    /* the nearer child is popped first, so the bound tightens early */
    if (gl <= gr) {
      st[sp].node = r; st[sp].lo = mid; st[sp].hi = hi; st[sp].lb = gr; sp++;
      st[sp].node = l; st[sp].lo = lo; st[sp].hi = mid; st[sp].lb = gl; sp++;
    } else {
      st[sp].node = l; st[sp].lo = lo; st[sp].hi = mid; st[sp].lb = gl; sp++;
      st[sp].node = r; st[sp].lo = mid; st[sp].hi = hi; st[sp].lb = gr; sp++;
    }
  }
}
