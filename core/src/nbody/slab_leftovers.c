/* The rows the slabs' first regions cannot prove exact, answered once
 * all slabs are done (slab_job.h). */
#include "backend_cuda.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#ifdef VIC_WITH_CUDA
#include "slab_job.h"
#include "cuda_internal.h"
#include "vic_kernels_peaks.h"

/* The leftover rows of the density pass, in groups: rows[off[g],
 * off[g+1]) in region reg[g], group g on the device of slot g % count. */
typedef struct {
  slab_job *j;
  const int64_t *rows, *off;
  const vic_region *reg;
  int groups;
} leftover_job;

static void leftover_slot(void *arg, int slot) {
  leftover_job *lj = arg;
  slab_job *j = lj->j;
#ifdef _OPENMP
  /* a slot on a team's thread (several devices): its device's parallel
   * regions in its share of the host threads, as the slabs' (slab_slot) */
  if (omp_in_parallel()) omp_set_num_threads(j->threads);
#endif
  unsigned char *is_row = calloc((size_t)j->x->n, 1);
  if (!is_row) {
    j->rc[slot] = vic__slab_fail(&j->call[slot], VICK_NOMEM, "no host memory for leftover flags");
    return;
  }
  for (int g = slot; g < lj->groups && j->rc[slot] == VICK_OK; g += j->count)
    j->rc[slot] = vic__slab_rows(j, slot, lj->rows + lj->off[g], lj->off[g + 1] - lj->off[g], &lj->reg[g], NAN, is_row, -1);
  free(is_row);
}

#define LEFTOVER_GROUPS 256
/* fewer beside kept lists: every group gathers the slabs its region spans */
#define LEFTOVER_GROUPS_BESIDE_KEPT 32

/* With the grid: regions of at most 4M points (or 4 k per row), else 16M,
 * else 64M, in at most 64 groups, where the rows allow -- every group's
 * call uploads and indexes its region (and costs a device call), and a
 * region around far-apart rows holds much of the set between them. */
#define LEFTOVER_TARGET ((int64_t)1 << 22)
#define LEFTOVER_TARGET_GROUPS 64
/* The whole set's grid for the leftovers: cells of about 4,000 points at 10^9 */
#define LEFTOVER_CELLS ((int64_t)1 << 18)

/* The grid made beside the slabs: the density pass's device calls leave
 * the host's threads mostly idle, so a quarter of them make it meanwhile
 * (it has the whole pass to finish; the devices' copies and their gathers
 * ahead take the others). */
struct slab_cells_bg {
  pthread_t th;
  const vic_data *x;
  int threads, rc;
  vic_slab_cells cells;
  double seconds;
};

static void *cells_main(void *arg) {
  struct slab_cells_bg *b = arg;
#ifdef _OPENMP
  omp_set_num_threads(b->threads); /* this thread's teams only */
#endif
  const double t0 = vic__now();
  b->rc = vic__slab_cells_make(b->x, LEFTOVER_CELLS, &b->cells);
  b->seconds = vic__now() - t0;
  return NULL;
}

void vic__slab_cells_begin(slab_job *j) {
  if (j->cells_bg) return;
  struct slab_cells_bg *b = calloc(1, sizeof *b);
  if (!b) return;
  b->x = j->x;
  b->threads = 1;
#ifdef _OPENMP
  b->threads = omp_get_max_threads() / 4 > 1 ? omp_get_max_threads() / 4 : 1;
#endif
  if (pthread_create(&b->th, NULL, cells_main, b) != 0) {
    free(b);
    return;
  }
  j->cells_bg = b;
}

/* Waits for the grid made beside the slabs; 0 with it in *g (the
 * caller's now), -1 when none was started or it could not be made. */
static int cells_take(slab_job *j, vic_slab_cells *g, double *seconds, double *waited) {
  struct slab_cells_bg *b = j->cells_bg;
  if (!b) return -1;
  const double t0 = vic__now();
  pthread_join(b->th, NULL);
  *waited = vic__now() - t0;
  *seconds = b->seconds;
  j->cells_bg = NULL;
  const int rc = b->rc;
  if (rc == 0) *g = b->cells;
  free(b);
  return rc == 0 ? 0 : -1;
}

void vic__slab_cells_end(slab_job *j) {
  vic_slab_cells g;
  double s, w;
  if (cells_take(j, &g, &s, &w) == 0) vic__slab_cells_free(&g);
}

typedef struct {
  const slab_job *j;
  const vic_slab_cells *cells; /* NULL: count over the slabs */
  size_t extra, limit; /* device bytes beside a group's run; the most a group's call may take */
  int64_t target;      /* 0: none */
} group_ctx;

/* Points of each region: with the grid, those of the cells it meets (at
 * least its own); else over the slabs it spans along the cut axis only,
 * all regions in one pass over those slabs. */
static void count_regions(const vic_region *reg, int n_reg, int64_t *points, void *user) {
  const group_ctx *gc = user;
  const slab_job *j = gc->j;
  const vic_data *x = j->x;
  if (gc->cells) {
    for (int g = 0; g < n_reg; ++g) points[g] = vic__slab_cells_bound(gc->cells, &reg[g]);
    return;
  }
  int64_t a[LEFTOVER_GROUPS], b[LEFTOVER_GROUPS], s0 = j->plan->n_slabs, s1 = -1;
  for (int g = 0; g < n_reg; ++g) {
    vic__slab_span(j, &reg[g], &a[g], &b[g]);
    if (a[g] < s0) s0 = a[g];
    if (b[g] > s1) s1 = b[g];
    points[g] = 0;
  }
  for (int64_t s = s0; s <= s1; ++s) {
    int which[LEFTOVER_GROUPS], nw = 0;
    for (int g = 0; g < n_reg; ++g)
      if (a[g] <= s && s <= b[g]) which[nw++] = g;
    if (!nw) continue;
    int64_t c[LEFTOVER_GROUPS] = {0};
#pragma omp parallel for schedule(static) reduction(+ : c[:LEFTOVER_GROUPS])
    for (int64_t t = j->start[s]; t < j->start[s + 1]; ++t) {
      const int64_t i = j->order[t];
      for (int w = 0; w < nw; ++w) c[which[w]] += vic__region_holds(&reg[which[w]], x, i);
    }
    for (int g = 0; g < n_reg; ++g) points[g] += c[g];
  }
}

static int group_fits(int64_t points, int64_t rows, void *user) {
  const group_ctx *gc = user;
  if (gc->target && points > gc->target && points > 4 * gc->j->k * rows) return 0;
  return vic__slab_bytes(points, rows, gc->j->k, gc->j->x->d) + gc->extra <= gc->limit;
}

/* The density pass's leftover rows of every slab, answered in regions
 * holding their k-th-distance balls (the upper bounds their slabs gave):
 * the rows grouped by position in all dimensions (vic__leftover_groups:
 * one group, mostly; rows of different tails apart, so that no group's
 * region reaches across the set; where they can, small enough to leave
 * the lists kept on the devices), the groups spread over the devices;
 * where no grouping fits, slab by slab in two regions each (below and
 * above the slab's middle) on the first. */
int vic__slab_leftovers(slab_job *j) {
  const vic_data *x = j->x;
  const int64_t n = x->n;
  int64_t L = 0;
  for (int d = 0; d < j->count; ++d) L += j->left[d].count;
  if (L == 0) {
    vic__slab_cells_end(j);
    return VICK_OK;
  }
  vick_call *call = &j->call[0];
  int64_t *rows = malloc((size_t)L * sizeof *rows), *tmp = malloc((size_t)L * sizeof *tmp);
  int64_t *scratch = malloc((size_t)L * sizeof *scratch);
  unsigned char *is_row = calloc((size_t)n, 1), *flags = malloc((size_t)L);
  int64_t *off = malloc((LEFTOVER_GROUPS + 1) * sizeof *off);
  vic_region *reg = malloc(LEFTOVER_GROUPS * sizeof *reg);
  int rc = rows && tmp && scratch && is_row && flags && off && reg ? VICK_OK
                                                                   : vic__slab_fail(call, VICK_NOMEM, "no host memory for leftovers");
  int groups = 0;
  vic_slab_cells cells;
  memset(&cells, 0, sizeof cells);
  double t_cells = 0, t_waited = -1;
  const double t0 = vic__now();
  if (rc == VICK_OK) {
    int64_t a = 0;
    for (int d = 0; d < j->count; ++d) {
      memcpy(rows + a, j->left[d].row, (size_t)j->left[d].count * sizeof *rows);
      a += j->left[d].count;
    }
    /* groups small enough to leave every device's kept lists in place
     * (the later passes would make them again), else as large as the
     * budget allows */
    size_t kept = 0;
    for (int d = 0; j->kept && d < j->count; ++d)
      if (j->kept_bytes[d] > kept) kept = j->kept_bytes[d];
    if (cells_take(j, &cells, &t_cells, &t_waited) == 0) j->cells = &cells; /* made beside the slabs */
    else {
      t_waited = -1;
      const double tc = vic__now();
      if (vic__slab_cells_make(x, LEFTOVER_CELLS, &cells) == 0) j->cells = &cells;
      t_cells = vic__now() - tc;
    }
    group_ctx gc = {j, j->cells, (j->mass ? (size_t)n * 4 : 0) + (j->cache ? vic__slab_pass_bytes(n) : 0),
                    j->budget - kept, 0};
    /* not worth the counting where the kept lists leave the groups less
     * than a quarter of their room */
    if (kept >= j->budget || gc.extra >= j->budget || j->budget - kept < gc.extra + (j->budget - gc.extra) / 4)
      gc.limit = j->budget;
    int64_t most = 0;
    const size_t beside = gc.limit;
    /* with the grid (its cells' points bound the regions', and gathers
     * read only the cells a region meets), then, should its bounds be too
     * loose, counting the regions' points exactly */
    for (int exact = 0; exact < 2 && groups == 0; ++exact) {
      if (exact && !gc.cells) break;
      gc.cells = exact ? NULL : j->cells;
      gc.limit = beside;
      /* groups small where the rows allow */
      for (int64_t t = LEFTOVER_TARGET; gc.cells && groups == 0 && t <= 16 * LEFTOVER_TARGET; t *= 4) {
        gc.target = t;
        groups = vic__leftover_groups(x, j->rk, rows, L, LEFTOVER_TARGET_GROUPS, count_regions, group_fits, &gc, off,
                                      reg, &most);
      }
      gc.target = 0;
      if (groups == 0)
        groups = vic__leftover_groups(x, j->rk, rows, L,
                                      gc.limit < j->budget && !gc.cells ? LEFTOVER_GROUPS_BESIDE_KEPT : LEFTOVER_GROUPS,
                                      count_regions, group_fits, &gc, off, reg, &most);
      if (groups == 0 && gc.limit < j->budget) {
        vic__log(j->c, VIC_LOG_INFO, "%lld leftover rows of the slabs: no regions fit beside the kept lists (%lld points "
                 "at most), taking their room", (long long)L, (long long)most);
        gc.limit = j->budget;
        groups = vic__leftover_groups(x, j->rk, rows, L, LEFTOVER_GROUPS, count_regions, group_fits, &gc, off, reg, &most);
      }
    }
    if (groups < 0) {
      rc = vic__slab_fail(call, VICK_NOMEM, "no host memory for leftovers");
      groups = 0;
    }
    vic__log(j->c, VIC_LOG_INFO, "%lld leftover rows of the slabs in %d region%s of at most %lld points%s",
             (long long)L, groups, groups == 1 ? "" : "s", (long long)most,
             groups ? "" : ": too many for a device, slab by slab on the first");
  }
  if (rc == VICK_OK && groups) {
    leftover_job lj = {j, rows, off, reg, groups};
    for (int d = 0; d < j->count; ++d) j->rc[d] = VICK_OK;
    const int slots = groups < j->count ? groups : j->count;
    if (slots == 1) leftover_slot(&lj, 0);
    else vic__cuda_parallel(slots, leftover_slot, &lj);
    for (int d = 0; d < slots && rc == VICK_OK; ++d) rc = j->rc[d];
    if (rc != VICK_OK)
      for (int d = 0; d < slots; ++d)
        if (j->rc[d] != VICK_OK) { j->rc[0] = j->rc[d]; memcpy(&j->call[0].message, &j->call[d].message, sizeof j->call[0].message); break; }
  } else if (rc == VICK_OK) {
    for (int64_t s = 0; s < j->plan->n_slabs && rc == VICK_OK; ++s) {
      int64_t c = 0;
      for (int64_t t = 0; t < L; ++t)
        if (vic__slab_of(j->plan, vic__slab_coord(x, rows[t], j->plan->axis)) == s) tmp[c++] = rows[t];
      if (!c) continue;
      vic_region sreg, lo, hi;
      vic__slab_region(x, j->plan, s, j->h0, &sreg);
      const double mid = 0.5 * (j->plan->cut[s] + j->plan->cut[s + 1]);
      int64_t ne = 0, lo_n = 0, hi_n = 0;
      vic__slab_split(x, j->rk, &sreg, j->plan->axis, mid, tmp, c, scratch, flags, &ne, &lo_n, &lo, &hi_n, &hi);
      if (ne) rc = vic__slab_rows(j, 0, tmp, ne, &sreg, mid, is_row, -1);
      if (rc == VICK_OK && lo_n) rc = vic__slab_rows(j, 0, tmp + ne, lo_n, &lo, mid, is_row, -1);
      if (rc == VICK_OK && hi_n) rc = vic__slab_rows(j, 0, tmp + ne + lo_n, hi_n, &hi, mid, is_row, -1);
    }
  }
  char made[96] = "";
  if (j->cells && t_waited >= 0) snprintf(made, sizeof made, ", made beside the slabs, waited for %.3f s", t_waited);
  vic__log(j->c, VIC_LOG_INFO, "leftover rows answered in %.3f s (%s%.3f s%s)", vic__now() - t0,
           j->cells ? "the whole set's grid of cells " : "no grid of cells: ", t_cells, made);
  j->cells = NULL;
  vic__slab_cells_free(&cells);
  free(rows);
  free(tmp);
  free(scratch);
  free(is_row);
  free(flags);
  free(off);
  free(reg);
  return rc;
}

#else
/* no slab runs without CUDA (density_slabs.c answers VIC_E_NODEVICE) */
typedef int vic__slab_leftovers_unused;
#endif
