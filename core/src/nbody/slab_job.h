/* The slab runs' shared state (density_slabs.c: the pass driver;
 * slab_region_rows.c: the task loop and the density pass; slab_known.c:
 * the passes whose k-th distances are known; slab_leftovers.c: the rows
 * the slabs' first regions cannot prove).  CUDA builds only; private to
 * those files. */
#ifndef VIC_SLAB_JOB_H
#define VIC_SLAB_JOB_H

#include "internal.h"
#include "slab_plan.h"
#include "vic_kernels_density.h"
#include "vic_kernels_peaks.h"

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

/* A slab's first region as the density pass gathered it (own rows
 * first), kept on the host for the later passes where their lists are
 * made again. */
typedef struct {
  float *pts;
  uint32_t *gid;
  int64_t m;
} slab_gathered;

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
  const float *xs; /* the rows in that order (vic__slab_sorted_rows), or NULL: gathers read x by id */
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
  double *t_place; /* per device: of t_device, the host's work around the calls (results placed by id, values
                      gathered for them) */
  /* a later pass's densities (and labels) by id, uploaded once per
   * device for all its calls of the pass (NULL: not yet, or each call
   * uploads its own); freed as the device's pass ends */
  vick_by_id **held;
  /* lists kept on the devices between the passes (density + peaks): per
   * slab, NULL where not kept (the later passes make them again); per
   * device slot, the bytes they hold, and the bytes the later passes
   * need beside them (the keeping leaves those free) */
  vick_slab_lists **kept;
  size_t *kept_bytes;
  /* per device slot, the host bytes of its lists parked on the host
   * (within gathered_cap with the gathers), and how many lists were
   * parked */
  size_t *host_bytes;
  int64_t *parked;
  int64_t *from_kept, *remade; /* per device, in a later pass: slabs run from kept lists, slabs made again */
  int64_t *released; /* per device: kept lists given back for room */
  size_t hold0, hold; /* on the first device, on the others */
  slab_gathered *gathered; /* per slab, where kept (pts NULL where not) */
  size_t *gathered_bytes, gathered_cap; /* per device; the most per device */
  /* while the leftover rows run: a grid of the whole set, whose cells the
   * regions' gathers read instead of the slabs they span (NULL: slabs) */
  const vic_slab_cells *cells;
  /* that grid, made on a host thread of its own while the density pass's
   * slabs run (vic__slab_cells_begin), or NULL */
  struct slab_cells_bg *cells_bg;
  /* per device, in the density pass: the gather of its next slab's first
   * region, made on a host thread of its own while the device answers the
   * current slab (NULL: none) */
  struct slab_prefetch **prefetch;
  /* a later pass on several devices: the slabs whose lists were kept at
   * its start (each on its own device, run there first); the others go
   * to whichever device is free, next_free the next of them to take */
  unsigned char *kept_at_start;
  int64_t next_free;
} slab_job;

/* Rows still to answer: rows[off .. off + count) of the slab, in region.
 * own1: s + 1 where those rows are slab s's own ids in bucket order (its
 * gather then copies them whole from the sorted rows), else 0. */
typedef struct {
  int64_t off, count;
  vic_region reg;
  int64_t own1;
} slab_task;

#define SLAB_TASKS 64 /* rounds per slab; a retry's region holds its rows' balls, so two or three are the rule */

/* The tasks of one call of vic__slab_tasks. */
typedef struct {
  slab_task task[SLAB_TASKS];
  int n, done; /* tasks waiting; tasks run (1 during the first) */
  int stop;    /* set by a pass: no further tasks (a bad row) */
  size_t need; /* device bytes of the current region's call */
  float *pts;  /* the current region's gather: a pass may take it (then NULL) */
  uint32_t *gid;
} slab_stack;

/* How a pass answers a task's rows in its region (vic__slab_tasks). */
typedef struct {
  /* Optional, before the gather: the task's rows reordered so that the
   * first *n_here are answered in its region, the others pushed as tasks
   * (vic__slab_push). */
  int (*select)(slab_job *j, int dev, slab_task *tk, int64_t *rows, slab_stack *st, int64_t *n_here, void *user);
  /* The device call for rows[0, n) of region tk, gathered with the rest
   * of the region as pts / gid (m points); may push tasks. */
  int (*answer)(slab_job *j, int dev, const slab_task *tk, int64_t *rows, int64_t n, const float *pts,
                const uint32_t *gid, int64_t m, slab_stack *st, unsigned char *is_row, void *user);
  size_t extra; /* device bytes a call needs beside vic__slab_bytes */
} slab_pass;

/* Tasks from first on (rows indexed by its off / count) until none is
 * left: each gathers its region and answers its rows by the pass. */
int vic__slab_tasks(slab_job *j, int dev, int64_t *rows, const slab_task *first, unsigned char *is_row,
                    const slab_pass *pass, void *user);
/* Slot dev's prefetched gather waited for and freed where no task took it. */
void vic__slab_prefetch_drop(slab_job *j, int dev);
int vic__slab_push(slab_job *j, int dev, slab_stack *st, slab_task t);
/* A copy of slot dev's call for one device call (budget less the lists
 * kept there and the values held there, counters cleared), and its
 * times, peak, stages and message added back after it. */
void vic__slab_call_begin(const slab_job *j, int dev, vick_call *one);
void vic__slab_call_end(slab_job *j, int dev, const vick_call *one, int rc);
/* Whether a call of need bytes fits slot dev's budget, once the lists
 * kept there (the last slabs' first) are given back when it takes them. */
int vic__slab_room(slab_job *j, int dev, size_t need);
/* Slab s's kept lists on slot dev given back (the later passes make
 * them again). */
void vic__slab_give_back(slab_job *j, int dev, int64_t s);
/* Lists kept on slot dev moved to the host (the last slabs' first; given
 * back where the host has no room for them) until need bytes fit beside
 * the others in the budget: a step between two passes takes their room,
 * the next pass puts them back (vic__slab_unpark).  vic__slab_unpark:
 * slab s's parked lists on its device again, 0 when they could not be
 * (then given back: made again). */
void vic__slab_park(slab_job *j, int dev, size_t need);
int vic__slab_unpark(slab_job *j, int dev, int64_t s);
/* Slab s's kept lists on slot dev freed once consumed by the last pass
 * (not counted as given back). */
void vic__slab_drop(slab_job *j, int dev, int64_t s);
/* The "a slab needs ..." failure. */
int vic__slab_too_big(slab_job *j, int dev, size_t need, int64_t m, int64_t n_rows);

/* A host failure into the call's message; returns code. */
int vic__slab_fail(vick_call *call, int code, const char *what);
/* Slabs whose own range meets the region along the cut axis. */
void vic__slab_span(const slab_job *j, const vic_region *r, int64_t *s_lo, int64_t *s_hi);
int vic__slab_row_add(row_list *l, int64_t i);
int vic__slab_cache_add(row_cache *rc, int32_t k, int64_t row, const int32_t *ids, const float *dist);
/* The density pass over rows_in[0, n_own) from region reg0: slab >= 0
 * when those are slab slab's rows in its first region, -1 otherwise
 * (slab_region_rows.c). */
int vic__slab_rows(slab_job *j, int dev, const int64_t *rows_in, int64_t n_own, const vic_region *reg0, double mid,
                   unsigned char *is_row, int64_t slab);
/* A later pass over slab s on the device of slot dev (slab_known.c). */
int vic__slab_known(slab_job *j, int dev, int64_t s, unsigned char *is_row);
/* The density pass's leftover rows of every slab (slab_leftovers.c). */
int vic__slab_leftovers(slab_job *j);
/* The leftovers' grid of the whole set started on a host thread of its
 * own, beside the density pass's slabs (nothing where no thread starts:
 * the leftovers then make it); vic__slab_cells_end waits for it and
 * frees what the leftovers did not take. */
void vic__slab_cells_begin(slab_job *j);
void vic__slab_cells_end(slab_job *j);

#endif
