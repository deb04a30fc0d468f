/* The exact grid kNN for other kernel files that keep working on its
 * lists (density.cu) or on the grid itself (denser.cu), so that neither
 * the lists nor the grid need cross to the host and back. */
#ifndef VICK_GRID_INTERNAL_CUH
#define VICK_GRID_INTERNAL_CUH

#include "common.cuh"

#define GRID_BITS 21
#define GRID_SIDE (1u << GRID_BITS)

typedef struct {
  int d;
  float lo[3];        /* origin of the quantisation per dimension */
  float scale[3];     /* finest cells per unit length */
  float box[3];       /* periodic length, 0 = open */
  int qmax[3];        /* largest finest-cell index in use per dimension */
  float eps[3];       /* slack of the stopping radius (rounding of coordinates) */
} grid_geom;

/* Spread the low 21 bits of v to every third bit. */
__device__ __forceinline__ uint64_t spread3(uint32_t v) {
  uint64_t x = v & 0x1fffffull;
  x = (x | x << 32) & 0x1f00000000ffffull;
  x = (x | x << 16) & 0x1f0000ff0000ffull;
  x = (x | x << 8) & 0x100f00f00f00f00full;
  x = (x | x << 4) & 0x10c30c30c30c30c3ull;
  x = (x | x << 2) & 0x1249249249249249ull;
  return x;
}
__device__ __forceinline__ uint64_t morton3(uint32_t a, uint32_t b, uint32_t c) {
  return spread3(a) | spread3(b) << 1 | spread3(c) << 2;
}

/* A periodic coordinate wrapped into [0, L) as the CPU grid stores it
 * (cpu_grid.c wrap_coord: in double, without contraction). */
__device__ __forceinline__ float wrap_stored(float v, float L) {
  if (!(L > 0.f)) return v;
  double w = __dsub_rn((double)v, __dmul_rn((double)L, floor(__ddiv_rn((double)v, (double)L))));
  float f = __double2float_rn(w);
  return f >= L || f < 0.f ? 0.f : f;
}

/* Finest-grid position of coordinate v in dimension j (fractional). */
__device__ __forceinline__ float grid_pos(const grid_geom &g, int j, float v) {
  if (g.box[j] > 0.f) {
    float L = g.box[j];
    v = v - floorf(v / L) * L; /* wrap into [0, L) */
    if (v >= L || v < 0.f) v = 0.f;
  }
  return (v - g.lo[j]) * g.scale[j];
}
__device__ __forceinline__ uint32_t grid_cell(const grid_geom &g, int j, float u) {
  if (!(u > 0.f)) return 0;
  uint32_t q = u >= (float)GRID_SIDE ? GRID_SIDE - 1 : (uint32_t)u;
  return q > (uint32_t)g.qmax[j] ? (uint32_t)g.qmax[j] : q;
}

/* Distance (real units, made conservative by eps) from the query at grid
 * position u to cell c of a level; the minimum image in periodic dims. */
__device__ __forceinline__ float cell_dist2(const grid_geom &g, const float u[3], const int c[3], int level) {
  float s = 0.f;
  for (int j = 0; j < g.d; ++j) {
    float lo = (float)((int64_t)c[j] << level), hi = (float)(((int64_t)c[j] + 1) << level);
    float gap = fmaxf(0.f, fmaxf(lo - u[j], u[j] - hi));
    if (g.box[j] > 0.f) {
      const float P = (float)GRID_SIDE;
      gap = fminf(gap, fmaxf(0.f, fmaxf(lo + P - u[j], u[j] - hi - P)));
      gap = fminf(gap, fmaxf(0.f, fmaxf(lo - P - u[j], u[j] - hi + P)));
    }
    float r = fmaxf(0.f, gap / g.scale[j] - g.eps[j]);
    s += r * r;
  }
  return s;
}

/* The sorted grid a call of vick_grid_knn_dev can leave behind: the
 * Morton codes in ascending order, the point id at each sorted position,
 * the points in the CPU grid's stored form (periodic axes wrapped) in
 * that order, and the original rows (n x d, by id). */
typedef struct {
  grid_geom g;
  int64_t n;
  vick_buf codes, sid, sp, x;
  vick_buf kid; /* with vick_grid_rows.key_ids: the list id of each sorted position */
} vick_grid_dev;

/* Which rows a device run answers and which ids the lists carry: a slab
 * of a larger set is its own points (rows [q0, q1)) and a halo around
 * them, each point carrying its id in the whole set (key_ids, host, n
 * entries, < 2^31), so that lists, and ties in them, equal the whole
 * set's.  NULL: every row, ids = rows. */
typedef struct {
  int64_t q0, q1;
  const uint32_t *key_ids;
} vick_grid_rows;

/* As vick_grid_knn, but the lists stay in device buffers allocated under
 * env's budget and stream: ids ((q1-q0)*k int32) and dist ((q1-q0)*k
 * float, squared Euclidean working distances, +inf / id -1 where
 * missing).  With keep != NULL the sorted grid stays too (freed by
 * vick_grid_dev_free).  The caller frees the lists with
 * vick_buf_free(env, ...). */
int vick_grid_knn_dev(vick_call *call, vick_env *env, const vick_points *p, int32_t k, const vick_grid_rows *rows,
                      vick_buf *ids, vick_buf *dist, vick_grid_dev *keep);
/* The sorted grid of all points alone (no lists), kept in *keep. */
int vick_grid_sort_dev(vick_call *call, vick_env *env, const vick_points *p, vick_grid_dev *keep);
void vick_grid_dev_free(vick_env *env, vick_grid_dev *gd);

#endif
