/* Private to the exact low-dimensional search (cpu_grid.c, cpu_grid_tree.c):
 * the layout of vic_grid and the scan of stored points that both the cell
 * grid and its kd-tree fallback use. */
#ifndef VIC_GRID_INTERNAL_H
#define VIC_GRID_INTERNAL_H

#include "grid.h"
#include "topk.h" /* vic__worse, vic__sort_pairs: the shared tie rules */

struct vic_grid {
  int64_t n;
  int32_t d;
  int32_t nc[3];           /* cells per axis (1 on unused axes) */
  int64_t ncells;
  float lo[3];             /* lower corner of cell (0,0,0) */
  float h[3], inv_h[3];    /* cell edge per axis and its inverse */
  float period[3];         /* periodic length, +inf on open axes */
  float slack[3];          /* rounding margin taken off every gap so bounds stay conservative */
  int any_periodic;
  float *pts;              /* n x 3 coordinates in cell order (periodic axes wrapped into [0, L)) */
  int64_t *ids;            /* original row of each stored point, or NULL when ids32 holds them */
  uint32_t *ids32;         /* the same in 4 bytes, where every row number fits (n <= vic__grid_ids32_rows) */
  int64_t *start;          /* ncells + 1 offsets into pts (NULL with a tree) */
  int tree;                /* 1: pts are in kd-tree order and box holds the node boxes */
  int64_t nodes;           /* nodes of the implicit tree (node i has children 2i+1, 2i+2) */
  float *box;              /* 6 floats per node: lower corner, upper corner */
};

/* The original row of stored point i. */
static inline int64_t grid_id(const vic_grid *g, int64_t i) { return g->ids32 ? (int64_t)g->ids32[i] : g->ids[i]; }

/* The most points whose rows the grid stores in 32 bits (2^32; tests lower
 * it to run the 64-bit layout on small sets). */
extern int64_t vic__grid_ids32_rows;

/* The minimum-image difference of two wrapped coordinates (t = a - b).
 * The period is taken off the coordinate that is at least L/2 before the
 * subtraction, which is then exact (Sterbenz), so near neighbours across
 * the boundary keep full relative precision instead of rounding at L. */
static inline float min_image(float t, float a, float b, float L) {
  float half = 0.5f * L; /* +inf on open axes: no change */
  if (t > half) return (a - L) - b;
  if (t < -half) return a - (b - L);
  return t;
}

/* The k best candidates of one query, kept sorted by (distance, id) with
 * the rules of topk.h.  A sorted array rather than the heap of topk.h:
 * for the small k of low-dimensional graphs an insertion is a short
 * memmove, and the list needs no sorting at the end (faster than the heap
 * for uniform 3-d points at k = 16). */
typedef struct {
  float *d;
  int64_t *id;
  int32_t k, size;
} klist;

static inline float klist_bound(const klist *h) { return h->size < h->k ? INFINITY : h->d[h->k - 1]; }

static inline void klist_push(klist *h, float d, int64_t id) {
  int32_t pos;
  if (h->size < h->k) pos = h->size++;
  else if (vic__worse(d, id, h->d[h->k - 1], h->id[h->k - 1])) return;
  else pos = h->k - 1;
  while (pos > 0 && vic__worse(h->d[pos - 1], h->id[pos - 1], d, id)) {
    h->d[pos] = h->d[pos - 1];
    h->id[pos] = h->id[pos - 1];
    --pos;
  }
  h->d[pos] = d;
  h->id[pos] = id;
}

/* Offer the stored points [a, b) to the list (one cell, or a run of
 * neighbouring cells of a row, which are contiguous in memory). */
static inline void scan_range(const vic_grid *g, int64_t a, int64_t b, const float q[3], int64_t self_pos, klist *h,
                              int periodic) {
  const float *p = g->pts;
  float bound = klist_bound(h);
  for (int64_t i = a; i < b; ++i) {
    float dx = p[3 * i] - q[0], dy = p[3 * i + 1] - q[1], dz = p[3 * i + 2] - q[2];
    if (periodic) {
      dx = min_image(dx, p[3 * i], q[0], g->period[0]);
      dy = min_image(dy, p[3 * i + 1], q[1], g->period[1]);
      dz = min_image(dz, p[3 * i + 2], q[2], g->period[2]);
    }
    float d2 = dx * dx + dy * dy + dz * dz;
    if (d2 <= bound && i != self_pos) {
      klist_push(h, d2, grid_id(g, i));
      bound = klist_bound(h);
    }
  }
}


/* The kd-tree fallback for data too clustered for a uniform grid: reorders
 * g->pts/g->ids and fills g->box (cpu_grid_tree.c). */
vic_status vic__grid_tree_build(vic_ctx *c, vic_grid *g);
/* The k nearest stored points of q (stored-coordinate form) into h. */
void vic__grid_tree_search(const vic_grid *g, const float q[3], int64_t self_pos, klist *h, int periodic);

#endif
