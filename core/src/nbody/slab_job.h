/* The slab runs' shared state (density_slabs.c: the density pass and the
 * pass driver; slab_known.c: the passes whose k-th distances are known;
 * slab_leftovers.c: the rows the slabs' first regions cannot prove).
 * CUDA builds only; private to those three files. */
#ifndef VIC_SLAB_JOB_H
#define VIC_SLAB_JOB_H

#include "internal.h"
#include "slab_plan.h"
#include "vic_kernels_density.h"

enum { PASS_LINKS = 1, PASS_EDGES = 2 };

/* A device's first edges of its slabs, appended slab by slab. */
typedef struct {
  uint64_t *pair, *pos;
  int64_t count, cap;
} edge_list;

/* Rows a device answered outside their slab's first region (the halo
 * was too narrow for them: a few, in the sparse outskirts), with their
 * lists, kept on the host by the density pass so that the later passes
 * do not make these costly regions again. */
typedef struct {
  int64_t *row;
  int32_t *ids;
  float *dist;
  int64_t count, cap;
} row_cache;

typedef struct {
  int64_t *row;
  int64_t count, cap;
} row_list;

typedef struct {
  vic_ctx *c;
  const vic_data *x;
  int32_t k;
  const float *mass;
  vick_density_params p;
  size_t budget;
  float *knn, *sph, *h, *rk, *dist;
  int32_t *ids;
  const vic_slab_plan *plan;
  const int64_t *start, *order; /* slab s owns order[start[s] .. start[s+1]) */
  double h0;
  int first, count;
  int threads; /* host threads per device */
  /* per device */
  vick_call *call;
  int *rc;
  vic_status *status;
  int64_t *bad_row, *retried;
  char (*msg)[512];
  /* the passes after the densities (vic__slabs_links / _edges): known
   * k-th distances rk, densities, labels and ranks by id */
  int pass; /* 0: densities; PASS_LINKS, PASS_EDGES */
  const float *rho;
  const int32_t *lab, *rank;
  int64_t n_max;
  int32_t *parent, *up, *is_max;
  float *delta;
  edge_list *edges; /* per device */
  row_cache *cache; /* per device, or NULL: no cache */
  unsigned char *cached; /* n: the row is in a cache */
  row_list *left; /* per device, with a cache: rows the slabs' first regions could not prove */
  double *t_gather, *t_device; /* per device: seconds of host gathers and of device calls in this pass */
} slab_job;

/* Rows still to answer: rows[off .. off + count) of the slab, in region. */
typedef struct {
  int64_t off, count;
  vic_region reg;
} slab_task;

#define SLAB_TASKS 64 /* rounds per slab; a retry's region holds its rows' balls, so two or three are the rule */

/* Own rows (rows, in that order) then every other point of slabs
 * s_lo..s_hi inside r, packed, with their ids (host arrays to free). */
int vic__slab_gather(const slab_job *j, const vic_region *r, const int64_t *rows, int64_t n_rows, int64_t s_lo,
                     int64_t s_hi, const unsigned char *is_row, float **pts, uint32_t **gid, int64_t *n_out);
/* Slabs whose own range meets the region along the axis. */
void vic__slab_span(const slab_job *j, const vic_region *r, int64_t *s_lo, int64_t *s_hi);
/* A host failure into the call's message; returns code. */
int vic__slab_fail(vick_call *call, int code, const char *what);
void vic__slab_add_stage(vick_call *call, const char *name, double seconds);
int vic__slab_row_add(row_list *l, int64_t i);
int vic__slab_cache_add(row_cache *rc, int32_t k, int64_t row, const int32_t *ids, const float *dist);
/* The density pass over rows_in[0, n_own) from region reg0 (density_slabs.c). */
int vic__slab_rows(slab_job *j, int dev, const int64_t *rows_in, int64_t n_own, const vic_region *reg0, double mid,
                   unsigned char *is_row, int from_slab);
/* A later pass over slab s on the device of slot dev (slab_known.c). */
int vic__slab_known(slab_job *j, int dev, int64_t s, unsigned char *is_row);
/* The density pass's leftover rows of every slab (slab_leftovers.c). */
int vic__slab_leftovers(slab_job *j);

#endif
