/* The nearest denser point of each local maximum by exact search over
 * the sorted grid that the grid kNN left on the device (peaks_internal.cuh).
 *
 * The core's CPU answer (denser_tree.c) is a k-d tree whose nodes know the
 * largest density below them.  Here the grid's Morton order plays the
 * tree: a cell of any level is a contiguous range of sorted positions, and
 * a max-segment tree over the densities in that order gives the largest
 * density of any range, so a cell holding nothing denser than the query is
 * skipped whole.  A query starts at the level whose cells are about its
 * k-th neighbour distance (the nearest denser point of a noise maximum
 * lies just beyond its kNN ball), searches the 3^d cells around it
 * nearest child first, and moves one level up until the best point found
 * is nearer than anything outside the searched cube.  The few real peaks,
 * whose nearest denser point is far, end at coarse levels where the
 * density pruning leaves little to read; where a periodic cube would wrap
 * onto itself the search starts from the root cell (everything).
 *
 * Distances are the CPU's vic__l2sq of the original rows (|a - b| mod L
 * for periodic axes), ties go to the lower id: results equal the CPU's. */
#include "peaks_internal.cuh"

#include <math.h>

#define DENSER_THREADS 128
#define DENSER_LEAF 32
/* Nearest-first descent: each split pops one cell and pushes at most 8,
 * so a descent from the root over GRID_BITS levels holds at most
 * 1 + 7 * GRID_BITS cells. */
#define DENSER_STACK (1 + 7 * GRID_BITS + 3)

/* Largest value of tree leaves [a, b) (tree: 2N entries, leaves at N). */
__device__ __forceinline__ float range_max(const float *tree, int64_t N, int64_t a, int64_t b) {
  float best = -INFINITY;
  for (a += N, b += N; a < b; a >>= 1, b >>= 1) {
    if (a & 1) best = fmaxf(best, tree[a++]);
    if (b & 1) best = fmaxf(best, tree[--b]);
  }
  return best;
}

/* vic__l2sq of the CPU (internal.h) for rows of the original data. */
__device__ __forceinline__ float cpu_l2sq(const grid_geom &g, const float *a, const float *b) {
  return vick_l2sq_exact_box(a, b, g.d, g.box);
}

typedef struct {
  grid_geom g;
  int64_t n, N;
  const uint64_t *codes;
  const uint32_t *sid;
  const float *x;     /* original rows, by id */
  const float *rho;   /* by id */
  const float *tree;  /* max-segment tree over rho in sorted order */
} denser_grid;

typedef struct {
  const float *q;     /* the query's row */
  float u[3];         /* its grid position */
  float rho;
  uint32_t id;
  float best;         /* squared distance of the best denser point so far */
  uint32_t best_id;
} denser_query;

__device__ __forceinline__ int cell_useless(const denser_grid &G, const denser_query &Q, const int c[3], int level,
                                            int64_t a, int64_t b) {
  if (Q.best_id != 0xffffffffu && cell_dist2(G.g, Q.u, c, level) * (1.f - 1e-5f) > Q.best) return 1;
  return range_max(G.tree, G.N, a, b) < Q.rho; /* nothing denser inside */
}

/* Nearest-first descent of the cell [a, b) of a level, as the grid kNN's
 * visit_cell, pruning by distance and by density. */
__device__ void denser_visit(const denser_grid &G, denser_query &Q, const int c0[3], int level0, int64_t a0,
                             int64_t b0) {
  struct item { int c[3]; int level; int64_t a, b; };
  item st[DENSER_STACK];
  int top = 0;
  st[top++] = item{{c0[0], c0[1], c0[2]}, level0, a0, b0};
  while (top > 0) {
    item it = st[--top];
    if (cell_useless(G, Q, it.c, it.level, it.a, it.b)) continue;
    if (it.b - it.a <= DENSER_LEAF || it.level == 0 || top + 8 > DENSER_STACK) {
      for (int64_t t = it.a; t < it.b; ++t) {
        const uint32_t j = G.sid[t];
        const float rj = G.rho[j];
        if (!(rj > Q.rho || (rj == Q.rho && j < Q.id))) continue;
        const float dd = cpu_l2sq(G.g, Q.q, G.x + (int64_t)j * G.g.d);
        if (dd < Q.best || (dd == Q.best && j < Q.best_id)) { Q.best = dd; Q.best_id = j; }
      }
      continue;
    }
    const uint64_t pre = G.codes[it.a] >> (3 * it.level);
    const int sh = 3 * (it.level - 1);
    int64_t s = it.a;
    float cd[8];
    int order[8], nch = 0;
    int64_t cs[8], ce[8];
    for (int i = 0; i < 8; ++i) {
      int64_t e =
          i == 7 ? it.b : vick_lower_bound(G.codes, (int64_t)s, it.b, ((pre << 3) | (uint64_t)(i + 1)) << sh);
      cs[i] = s;
      ce[i] = e;
      if (e > s) {
        const int cc[3] = {2 * it.c[0] + (i & 1), 2 * it.c[1] + ((i >> 1) & 1), 2 * it.c[2] + ((i >> 2) & 1)};
        const float dist2 = cell_dist2(G.g, Q.u, cc, it.level - 1);
        int at = nch++;
        while (at > 0 && cd[at - 1] < dist2) { cd[at] = cd[at - 1]; order[at] = order[at - 1]; --at; }
        cd[at] = dist2;
        order[at] = i;
      }
      s = e;
    }
    for (int t = 0; t < nch; ++t) { /* farthest first: the nearest is popped first */
      const int i = order[t];
      st[top++] = item{{2 * it.c[0] + (i & 1), 2 * it.c[1] + ((i >> 1) & 1), 2 * it.c[2] + ((i >> 2) & 1)},
                       it.level - 1, cs[i], ce[i]};
    }
  }
}

/* Range of the cell with prefix pre at shift sh (empty: a == b). */
__device__ __forceinline__ void cell_range(const denser_grid &G, uint64_t pre, int sh, int64_t *a, int64_t *b) {
  *a = vick_lower_bound(G.codes, (int64_t)0, G.n, pre << sh);
  *b = (*a < G.n && (G.codes[*a] >> sh) == pre) ? vick_lower_bound(G.codes, *a, G.n, (pre + 1) << sh) : *a;
}

__global__ void __launch_bounds__(DENSER_THREADS)
denser_kernel(denser_grid G, const int32_t *queries, const float *rk, int64_t m, int32_t skip, int32_t *parent,
              float *delta) {
  const int64_t qi = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (qi >= m) return;
  const uint32_t id = (uint32_t)queries[qi];
  if ((int32_t)id == skip) { parent[qi] = -1; delta[qi] = 0.f; return; }
  const grid_geom &g = G.g;
  denser_query Q;
  Q.q = G.x + (int64_t)id * g.d;
  Q.rho = G.rho[id];
  Q.id = id;
  Q.best = INFINITY;
  Q.best_id = 0xffffffffu;
  uint32_t qc[3] = {0, 0, 0};
  Q.u[0] = Q.u[1] = Q.u[2] = 0.f;
  float reach = 0.f; /* the k-th distance in finest cells */
  for (int j = 0; j < g.d; ++j) {
    Q.u[j] = grid_pos(g, j, wrap_stored(Q.q[j], g.box[j]));
    qc[j] = grid_cell(g, j, Q.u[j]);
    reach = fmaxf(reach, rk[qi] * g.scale[j]);
  }
  int level = 0;
  while (level < GRID_BITS && (float)(1u << level) < reach) ++level;
  for (;; ++level) {
    int nc[3] = {1, 1, 1}, c[3] = {0, 0, 0}, wraps = level >= GRID_BITS;
    for (int j = 0; j < g.d; ++j) {
      c[j] = (int)(qc[j] >> level);
      nc[j] = g.box[j] > 0.f ? (int)(GRID_SIDE >> level) : (g.qmax[j] >> level) + 1;
      if (g.box[j] > 0.f && nc[j] < 3) wraps = 1;
    }
    if (wraps) { /* everything, from the root cell */
      const int root[3] = {0, 0, 0};
      denser_visit(G, Q, root, GRID_BITS, 0, G.n);
      break;
    }
    const int sh = 3 * level;
    const int ry = g.d > 1 ? 1 : 0, rz = g.d > 2 ? 1 : 0;
    for (int dz = -rz; dz <= rz; ++dz)
      for (int dy = -ry; dy <= ry; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          int cc[3] = {c[0] + dx, c[1] + dy, c[2] + dz}, skip_cell = 0;
          for (int j = 0; j < g.d; ++j) {
            if (g.box[j] > 0.f) cc[j] = ((cc[j] % nc[j]) + nc[j]) % nc[j];
            else if (cc[j] < 0 || cc[j] >= nc[j]) skip_cell = 1;
          }
          if (skip_cell) continue;
          int64_t a, b;
          cell_range(G, morton3((uint32_t)cc[0], (uint32_t)cc[1], (uint32_t)cc[2]), sh, &a, &b);
          if (b > a) denser_visit(G, Q, cc, level, a, b);
        }
    int covered = 1;
    for (int j = 0; j < g.d; ++j)
      if (g.box[j] > 0.f || c[j] - 1 > 0 || c[j] + 1 < nc[j] - 1) covered = 0;
    if (covered || level >= GRID_BITS) break;
    if (Q.best_id != 0xffffffffu) {
      /* distance from q to the nearest cell outside the cube, less slack */
      float gap = INFINITY;
      for (int j = 0; j < g.d; ++j) {
        const float cell = (float)(1u << level);
        const float below = (g.box[j] <= 0.f && c[j] - 1 <= 0) ? INFINITY : (Q.u[j] - (float)(c[j] - 1) * cell);
        const float above = (g.box[j] <= 0.f && c[j] + 1 >= nc[j] - 1) ? INFINITY : ((float)(c[j] + 2) * cell - Q.u[j]);
        gap = fminf(gap, fminf(below, above) / g.scale[j] - g.eps[j]);
      }
      if (gap > 0.f && Q.best < gap * gap * (1.f - 1e-5f)) break;
    }
  }
  parent[qi] = Q.best_id == 0xffffffffu ? -1 : (int32_t)Q.best_id;
  delta[qi] = Q.best_id == 0xffffffffu ? 0.f : __fsqrt_rn(Q.best);
}

/* tree[N + t] = rho[sid[t]] (t < n), -1 beyond: no density is below 0. */
__global__ void tree_leaves_kernel(const uint32_t *sid, const float *rho, int64_t n, int64_t N, float *tree) {
  int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t < N) tree[N + t] = t < n ? rho[sid[t]] : -1.f;
}
__global__ void tree_level_kernel(float *tree, int64_t lo, int64_t count) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) tree[lo + i] = fmaxf(tree[2 * (lo + i)], tree[2 * (lo + i) + 1]);
}

int vick_denser_search(vick_call *call, vick_env *env, const vick_grid_dev *gd, const float *rho,
                       const int32_t *queries, const float *rk, int64_t m, int32_t skip, int32_t *parent,
                       float *delta) {
  const int64_t n = gd->n;
  int64_t N = 1;
  while (N < n) N <<= 1;
  vick_buf tree = {NULL, 0};
  VICK_TRY(vick_buf_alloc(call, env, &tree, (size_t)(2 * N) * sizeof(float), "density range tree"));
  int rc = VICK_OK;
  cudaError_t e = cudaSuccess;
  float *t = (float *)tree.p;
  tree_leaves_kernel<<<vick_blocks(N, 256), 256, 0, env->stream>>>((const uint32_t *)gd->sid.p, rho, n, N, t);
  e = cudaGetLastError();
  for (int64_t lo = N / 2; e == cudaSuccess && lo >= 1; lo /= 2) {
    tree_level_kernel<<<vick_blocks(lo, 256), 256, 0, env->stream>>>(t, lo, lo);
    e = cudaGetLastError();
  }
  if (e == cudaSuccess && m > 0) {
    denser_grid G;
    G.g = gd->g;
    G.n = n;
    G.N = N;
    G.codes = (const uint64_t *)gd->codes.p;
    G.sid = (const uint32_t *)gd->sid.p;
    G.x = (const float *)gd->x.p;
    G.rho = rho;
    G.tree = t;
    denser_kernel<<<vick_blocks(m, DENSER_THREADS), DENSER_THREADS, 0, env->stream>>>(G, queries, rk, m, skip, parent,
                                                                                      delta);
    e = cudaGetLastError();
  }
  if (e != cudaSuccess) rc = vick_cuda_fail(call, e, "launch of the denser-point search", __FILE__, __LINE__);
  /* the tree is released only after the search has read it */
  if (rc == VICK_OK) {
    e = cudaStreamSynchronize(env->stream);
    if (e != cudaSuccess) rc = vick_cuda_fail(call, e, "denser-point search", __FILE__, __LINE__);
  }
  vick_buf_free(env, &tree);
  return rc;
}
