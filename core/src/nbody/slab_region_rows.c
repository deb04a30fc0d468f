/* A slab pass's rows on one device (slab_job.h): a region's points
 * gathered as packed rows with their ids; the task loop every pass runs
 * (gather a region, answer its rows, push regions for the rows it cannot
 * prove); the device calls' budgets beside the lists kept on the
 * devices; and the density pass's rows answered in their slab's first
 * region, then in regions grown around the balls of the rows that region
 * cannot prove.  Shared by the pass driver (density_slabs.c), the later
 * passes (slab_known.c) and the leftovers (slab_leftovers.c), so none of
 * them calls back into another. */
#include "backend_cuda.h"
#include "slab_plan.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#ifdef VIC_WITH_CUDA
#include "cuda_internal.h"
#include "density_cuda.h"
#include "vic_kernels_density.h"
#include "vic_kernels_peaks.h"
#include "slab_job.h"
#include "slab_rows.h"

/* Slabs whose own range meets [lo, hi) along the axis (all of them when
 * the region wraps; open sides reach the first or last slab). */
void vic__slab_span(const slab_job *j, const vic_region *r, int64_t *s_lo, int64_t *s_hi) {
  const int a = j->plan->axis;
  *s_lo = 0;
  *s_hi = j->plan->n_slabs - 1;
  if (r->period[a] > 0) return;
  if (isfinite(r->lo[a])) *s_lo = vic__slab_of(j->plan, r->lo[a]);
  if (isfinite(r->hi[a])) *s_hi = vic__slab_of(j->plan, r->hi[a]);
}

int vic__slab_fail(vick_call *call, int code, const char *what) {
  snprintf(call->message, sizeof call->message, "%s", what);
  return code;
}

static void add_stage(vick_call *call, const char *name, double seconds) {
  for (int i = 0; i < call->n_stages; ++i)
    if (strcmp(call->stages[i].name, name) == 0) { call->stages[i].seconds += seconds; return; }
  if (call->n_stages >= (int)(sizeof call->stages / sizeof call->stages[0])) return;
  snprintf(call->stages[call->n_stages].name, sizeof call->stages[0].name, "%s", name);
  call->stages[call->n_stages++].seconds = seconds;
}

int vic__slab_row_add(row_list *l, int64_t i) {
  if (l->count == l->cap) {
    const int64_t cap = l->cap ? 2 * l->cap : 1024;
    int64_t *r = realloc(l->row, (size_t)cap * sizeof *r);
    if (!r) return -1;
    l->row = r;
    l->cap = cap;
  }
  l->row[l->count++] = i;
  return 0;
}

int vic__slab_cache_add(row_cache *rc, int32_t k, int64_t row, const int32_t *ids, const float *dist) {
  if (rc->count == rc->cap) {
    int64_t cap = rc->cap ? 2 * rc->cap : 1024;
    int64_t *r = realloc(rc->row, (size_t)cap * sizeof *r);
    if (r) rc->row = r;
    int32_t *a = r ? realloc(rc->ids, (size_t)cap * k * sizeof *a) : NULL;
    if (a) rc->ids = a;
    float *b = a ? realloc(rc->dist, (size_t)cap * k * sizeof *b) : NULL;
    if (b) rc->dist = b;
    if (!b) return -1;
    rc->cap = cap;
  }
  rc->row[rc->count] = row;
  memcpy(rc->ids + rc->count * k, ids, (size_t)k * sizeof *ids);
  memcpy(rc->dist + rc->count * k, dist, (size_t)k * sizeof *dist);
  ++rc->count;
  return 0;
}

int vic__slab_push(slab_job *j, int dev, slab_stack *st, slab_task t) {
  if (st->n >= SLAB_TASKS) return vic__slab_fail(&j->call[dev], VICK_DEVICE, "a slab's halo did not settle");
  st->task[st->n++] = t;
  return VICK_OK;
}

/* The device bytes a call on dev must leave alone: the slabs' lists kept
 * there and the pass's values held there. */
static size_t dev_reserved(const slab_job *j, int dev) {
  return (j->kept_bytes ? j->kept_bytes[dev] : 0) + (j->held ? vick_by_id_bytes(j->held[dev]) : 0);
}

void vic__slab_call_begin(const slab_job *j, int dev, vick_call *one) {
  memcpy(one, &j->call[dev], sizeof *one);
  const size_t kept = dev_reserved(j, dev);
  one->memory_budget = j->budget > kept ? j->budget - kept : 1;
  one->seconds_kernel = one->seconds_transfer = 0;
  one->n_stages = 0;
  one->peak_bytes = 0;
}

void vic__slab_call_end(slab_job *j, int dev, const vick_call *one, int rc) {
  vick_call *call = &j->call[dev];
  const size_t kept = dev_reserved(j, dev);
  call->seconds_kernel += one->seconds_kernel;
  call->seconds_transfer += one->seconds_transfer;
  if (one->peak_bytes + kept > call->peak_bytes) call->peak_bytes = one->peak_bytes + kept;
  for (int i = 0; i < one->n_stages; ++i) add_stage(call, one->stages[i].name, one->stages[i].seconds);
  if (rc != VICK_OK) memcpy(call->message, one->message, sizeof call->message);
}

static size_t lists_bytes(const slab_job *j, int64_t s) {
  return vick_slab_lists_bytes(j->start[s + 1] - j->start[s], j->k);
}

void vic__slab_drop(slab_job *j, int dev, int64_t s) {
  if (!j->kept[s]) return;
  if (vick_slab_lists_parked(j->kept[s])) j->host_bytes[dev] -= lists_bytes(j, s);
  else j->kept_bytes[dev] -= lists_bytes(j, s);
  vick_slab_lists_free(j->kept[s]);
  j->kept[s] = NULL;
}

void vic__slab_give_back(slab_job *j, int dev, int64_t s) {
  vic__slab_drop(j, dev, s);
  j->released[dev]++;
}

void vic__slab_park(slab_job *j, int dev, size_t need) {
  for (int64_t s = j->plan->n_slabs - 1; s >= 0 && need + j->kept_bytes[dev] > j->budget; --s) {
    if (s % j->count != dev || !j->kept[s] || vick_slab_lists_parked(j->kept[s])) continue;
    const size_t b = lists_bytes(j, s);
    int rc = VICK_NOMEM;
    if (j->gathered_bytes[dev] + j->host_bytes[dev] + b <= j->gathered_cap) {
      vick_call one;
      vic__slab_call_begin(j, dev, &one);
      const double td = vic__now();
      rc = vick_slab_lists_park(&one, j->kept[s]);
      j->t_device[dev] += vic__now() - td;
      vic__slab_call_end(j, dev, &one, VICK_OK); /* a failure gives them back instead */
    }
    if (rc != VICK_OK) {
      vic__slab_give_back(j, dev, s);
      continue;
    }
    j->kept_bytes[dev] -= b;
    j->host_bytes[dev] += b;
    j->parked[dev]++;
  }
}

int vic__slab_unpark(slab_job *j, int dev, int64_t s) {
  const size_t b = lists_bytes(j, s), hold = dev == 0 ? j->hold0 : j->hold;
  /* room beside the later passes' hold: the device's other kept lists
   * given back where needed, the last slabs' first */
  for (int64_t q = j->plan->n_slabs - 1; q >= 0 && j->kept_bytes[dev] + b + hold > j->budget; --q)
    if (q != s && q % j->count == dev && j->kept[q] && !vick_slab_lists_parked(j->kept[q])) vic__slab_give_back(j, dev, q);
  int rc = VICK_NOMEM;
  if (j->kept_bytes[dev] + b + hold <= j->budget) {
    vick_call one;
    vic__slab_call_begin(j, dev, &one);
    const double td = vic__now();
    rc = vick_slab_lists_unpark(&one, j->kept[s]);
    j->t_device[dev] += vic__now() - td;
    vic__slab_call_end(j, dev, &one, VICK_OK); /* a failure makes them again */
  }
  if (rc != VICK_OK) {
    vic__slab_give_back(j, dev, s);
    return 0;
  }
  j->host_bytes[dev] -= b;
  j->kept_bytes[dev] += b;
  return 1;
}

int vic__slab_room(slab_job *j, int dev, size_t need) {
  if (!j->kept) return need <= j->budget;
  for (int64_t s = j->plan->n_slabs - 1; s >= 0 && need + j->kept_bytes[dev] > j->budget; --s)
    if (s % j->count == dev && j->kept[s] && !vick_slab_lists_parked(j->kept[s])) vic__slab_give_back(j, dev, s);
  return need + j->kept_bytes[dev] <= j->budget;
}

int vic__slab_too_big(slab_job *j, int dev, size_t need, int64_t m, int64_t n_rows) {
  vick_call *call = &j->call[dev];
  snprintf(call->message, sizeof call->message,
           "a slab needs %.0f MiB of device memory (%lld points with its halo, %lld rows); the budget is %.0f MiB: "
           "raise it to at least %.0f MiB", need / 1048576.0, (long long)m, (long long)n_rows, j->budget / 1048576.0,
           need / 1048576.0);
  return VICK_NOMEM;
}

/* A slab's first region gathered ahead, on a thread of its own: its own
 * rows are the slab's bucket (the sorted rows read whole, no flags
 * read), so the gather is the one vic__slab_tasks would make.  Half the
 * device's share of the host threads: it has the device's whole current
 * slab to finish in, beside that slab's copies. */
struct slab_prefetch {
  pthread_t th;
  const slab_job *j;
  int64_t slab, m;
  float *pts;
  uint32_t *gid;
  int rc;
};

static void *prefetch_main(void *arg) {
  struct slab_prefetch *f = arg;
  const slab_job *j = f->j;
  const vic_slab_source src = {j->x, j->xs, j->start, j->order};
  vic_region reg;
  int64_t s_lo, s_hi;
  vic__slab_region(j->x, j->plan, f->slab, j->h0, &reg);
  vic__slab_span(j, &reg, &s_lo, &s_hi);
  f->rc = -1; /* a slab outside its own span (none): the task gathers it, flags and all */
  if (f->slab >= s_lo && f->slab <= s_hi)
    f->rc = vic__slab_gather(&src, &reg, j->order + j->start[f->slab], j->start[f->slab + 1] - j->start[f->slab], s_lo,
                             s_hi, f->slab, NULL, j->threads / 2 > 1 ? j->threads / 2 : 1, &f->pts, &f->gid, &f->m);
  return NULL;
}

/* Slab s's first region gathered ahead on slot dev (nothing where no
 * thread starts: the task gathers it then). */
static void prefetch_start(slab_job *j, int dev, int64_t s) {
  if (!j->prefetch || j->prefetch[dev] || !j->xs || s >= j->plan->n_slabs || j->start[s + 1] == j->start[s]) return;
  struct slab_prefetch *f = calloc(1, sizeof *f);
  if (!f) return;
  f->j = j;
  f->slab = s;
  if (pthread_create(&f->th, NULL, prefetch_main, f) != 0) { free(f); return; }
  j->prefetch[dev] = f;
}

/* The gather of slab s ahead on slot dev, waited for: 1 with it (the
 * caller's now), 0 where none was made for s. */
static int prefetch_take(slab_job *j, int dev, int64_t s, float **pts, uint32_t **gid, int64_t *m) {
  struct slab_prefetch *f = j->prefetch ? j->prefetch[dev] : NULL;
  if (!f || f->slab != s) return 0;
  pthread_join(f->th, NULL);
  j->prefetch[dev] = NULL;
  const int got = f->rc == 0;
  if (got) { *pts = f->pts; *gid = f->gid; *m = f->m; }
  free(f);
  return got;
}

void vic__slab_prefetch_drop(slab_job *j, int dev) {
  struct slab_prefetch *f = j->prefetch ? j->prefetch[dev] : NULL;
  if (!f) return;
  pthread_join(f->th, NULL);
  j->prefetch[dev] = NULL;
  if (f->rc == 0) { free(f->pts); free(f->gid); }
  free(f);
}

int vic__slab_tasks(slab_job *j, int dev, int64_t *rows, const slab_task *first, unsigned char *is_row,
                    const slab_pass *ps, void *user) {
  const vic_data *x = j->x;
  vick_call *call = &j->call[dev];
  const vic_slab_source src = {x, j->xs, j->start, j->order};
  slab_stack st;
  memset(&st, 0, sizeof st);
  st.task[st.n++] = *first;
  int rc = VICK_OK;
  while (rc == VICK_OK && st.n > 0 && !st.stop) {
    slab_task tk = st.task[--st.n];
    int64_t *tr = rows + tk.off;
    if (++st.done > SLAB_TASKS) { rc = vic__slab_fail(call, VICK_DEVICE, "a slab's halo did not settle"); break; }
    int64_t n_here = tk.count;
    if (ps->select && (rc = ps->select(j, dev, &tk, tr, &st, &n_here, user)) != VICK_OK) break;
    if (n_here == 0) continue;
    for (int64_t t = 0; t < n_here; ++t) is_row[tr[t]] = 1;
    int64_t s_lo, s_hi, m = 0;
    vic__slab_span(j, &tk.reg, &s_lo, &s_hi);
    float *pts = NULL;
    uint32_t *gid = NULL;
    const double tg = vic__now();
    /* a slab's first region in the density pass: maybe gathered ahead
     * while the device answered the slab before; the device's next slab
     * is gathered ahead while this one's call runs */
    const int64_t own = tk.own1 > 0 && n_here == tk.count ? tk.own1 - 1 : -1;
    const int ahead = !j->pass && !j->cells && own >= 0 && st.done == 1;
    int got = ahead && prefetch_take(j, dev, own, &pts, &gid, &m) ? 0 : -1;
    if (got != 0)
      got = j->cells ? vic__slab_cells_gather(j->cells, x, &tk.reg, tr, n_here, is_row, j->threads, &pts, &gid, &m)
                     : vic__slab_gather(&src, &tk.reg, tr, n_here, s_lo, s_hi, own, is_row, j->threads, &pts, &gid, &m);
    if (got != 0) rc = vic__slab_fail(call, VICK_NOMEM, "no host memory to gather a slab");
    j->t_gather[dev] += vic__now() - tg;
    if (ahead && got == 0) prefetch_start(j, dev, own + j->count);
    for (int64_t t = 0; t < n_here; ++t) is_row[tr[t]] = 0;
    if (rc != VICK_OK) break;
    if (m <= j->k) { /* a tiny region: the whole set is the region */
      free(pts);
      free(gid);
      for (int jj = 0; jj < 3; ++jj) { tk.reg.lo[jj] = -INFINITY; tk.reg.hi[jj] = INFINITY; }
      tk.count = n_here;
      rc = vic__slab_push(j, dev, &st, tk);
      continue;
    }
    st.need = vic__slab_bytes(m, n_here, j->k, x->d) + ps->extra;
    if (!vic__slab_room(j, dev, st.need)) rc = vic__slab_too_big(j, dev, st.need, m, n_here);
    else {
      const double td = vic__now();
      st.pts = pts;
      st.gid = gid;
      rc = ps->answer(j, dev, &tk, tr, n_here, pts, gid, m, &st, is_row, user);
      pts = st.pts;
      gid = st.gid;
      j->t_device[dev] += vic__now() - td;
    }
    free(pts);
    free(gid);
  }
  return rc;
}

/* The density pass's scratch (per task row) and where its rows come from. */
typedef struct {
  float *rk, *knn, *sph, *h;
  int64_t slab; /* >= 0: the rows of that slab, first in its first region */
  double mid;
} rows_pass;

/* Whether slab s's lists (n_rows) may stay on slot dev: beside those kept
 * there already, the later passes' needs, and, while another slab of the
 * device is still to run, a region as large as this one (need: its
 * estimate before the call; after it, what the call held, with a
 * twentieth more) -- the one during this pass, the other after it, so
 * each beside the kept lists, not both.  Their distances stay where
 * they are made: the links make a parent's again from the coordinates
 * (vic__slab_list_dist), the only one a later pass reads. */
static int keep_fits(const slab_job *j, int dev, int64_t s, int64_t n_rows, size_t need) {
  const int more = s + j->count < j->plan->n_slabs;
  const size_t hold = dev == 0 ? j->hold0 : j->hold;
  const size_t kept = j->kept_bytes[dev] + vick_slab_lists_bytes(n_rows, j->k);
  return kept + hold <= j->budget && (!more || kept + need <= j->budget);
}

/* rows_answer's work; *t_call: the seconds of its device call. */
static int rows_answer_work(slab_job *j, int dev, const slab_task *tk, int64_t *tr, int64_t n_rows, const float *pts,
                            const uint32_t *gid, int64_t m, slab_stack *st, unsigned char *is_row, void *user,
                            double *t_call) {
  rows_pass *u = user;
  const vic_data *x = j->x;
  const int32_t k = j->k;
  vick_call *call = &j->call[dev];
  const int first = u->slab >= 0 && st->done == 1;
  float *rk = u->rk, *knn = u->knn, *sph = u->sph, *h = u->h;
  vick_points vp = {pts, m, x->d, x->d, VICK_METRIC_L2, x->box};
  int64_t bad = -1;
  /* the lists go straight to their rows of the whole set's arrays; rows
   * answered again overwrite theirs.  Rows past the first region, with
   * a cache, come back packed for it. */
  const int keep = j->cache && !first;
  int32_t *tid = keep ? malloc((size_t)n_rows * k * sizeof *tid) : NULL;
  float *tdist = keep ? malloc((size_t)n_rows * k * sizeof *tdist) : NULL;
  if (keep && (!tid || !tdist)) {
    free(tid);
    free(tdist);
    return vic__slab_fail(call, VICK_NOMEM, "no host memory for a slab's retried lists");
  }
  vick_slab_lists *kl = NULL;
  vick_slab_lists **want = first && j->kept && keep_fits(j, dev, u->slab, n_rows, 0) ? &kl : NULL;
  vick_call one;
  const double tc = vic__now();
  vic__slab_call_begin(j, dev, &one);
  int rc = keep ? vick_slab_density(&one, &vp, k, n_rows, gid, x->n, j->mass, &j->p, knn, sph, h, rk, tid, tdist,
                                    NULL, &bad, NULL, NULL)
                : vick_slab_density(&one, &vp, k, n_rows, gid, x->n, j->mass, &j->p, knn, sph, h, rk, j->ids,
                                    j->dist, tr, &bad, want, NULL);
  vic__slab_call_end(j, dev, &one, rc);
  *t_call = vic__now() - tc;
  if (kl && !keep_fits(j, dev, u->slab, n_rows, one.peak_bytes + one.peak_bytes / 20)) {
    vick_slab_lists_free(kl); /* the device's next slab would not fit beside them */
    kl = NULL;
  }
  if (kl) {
    j->kept[u->slab] = kl;
    j->kept_bytes[dev] += vick_slab_lists_bytes(n_rows, k);
  }
  if (rc == VICK_OK && first && bad < 0 && j->gathered) {
    /* the lists will be made again from the same gather: the host keeps
     * it -- also beside lists kept on the device, which a later pass may
     * give back for room (then made again from it, not gathered again),
     * where the device's slabs still to come would fit too as large */
    const size_t gb = (size_t)m * ((size_t)x->d * sizeof *pts + sizeof *gid);
    const int64_t later = (j->plan->n_slabs - 1 - u->slab) / j->count;
    /* room left for the device's later slabs' gathers beside kept lists */
    if (j->gathered_bytes[dev] + j->host_bytes[dev] + gb * (kl ? 1 + (size_t)later : 1) <= j->gathered_cap) {
      j->gathered[u->slab] = (slab_gathered){st->pts, st->gid, m};
      j->gathered_bytes[dev] += gb;
      st->pts = NULL;
      st->gid = NULL;
    }
  }
  if (rc != VICK_OK || bad >= 0) { free(tid); free(tdist); }
  if (rc != VICK_OK) return rc;
  if (bad >= 0) {
    if (j->bad_row[dev] < 0 || tr[bad] < j->bad_row[dev]) j->bad_row[dev] = tr[bad];
    st->stop = 1;
    return VICK_OK;
  }
  if (keep) { /* the exact rows: into the cache, and the whole set's lists where asked */
    for (int64_t t = 0; t < n_rows && rc == VICK_OK; ++t) {
      const int64_t i = tr[t];
      if (!vic__region_exact(&tk->reg, x, i, rk[t])) continue;
      if (vic__slab_cache_add(&j->cache[dev], k, i, tid + t * k, tdist + t * k) != 0)
        rc = vic__slab_fail(call, VICK_NOMEM, "no host memory for a slab's retried lists");
      j->cached[i] = 1;
      if (j->ids) memcpy(j->ids + i * k, tid + t * k, (size_t)k * sizeof *tid);
      if (j->dist) memcpy(j->dist + i * k, tdist + t * k, (size_t)k * sizeof *tdist);
    }
    free(tid);
    free(tdist);
    if (rc != VICK_OK) return rc;
  }
  /* place the exact rows; mark the others (is_row) for another round */
  int64_t left = 0;
#pragma omp parallel for schedule(static) num_threads(j->threads) reduction(+ : left)
  for (int64_t t = 0; t < n_rows; ++t) {
    const int64_t i = tr[t];
    if (!vic__region_exact(&tk->reg, x, i, rk[t])) {
      is_row[i] = 1;
      ++left;
      continue;
    }
    j->rk[i] = rk[t];
    if (knn) j->knn[i] = knn[t];
    if (sph) j->sph[i] = sph[t];
    if (h) j->h[i] = h[t];
  }
  if (!left) return VICK_OK;
  j->retried[dev] += left;
  if (first && j->left) { /* to the leftovers, with their k-th distances so far */
    for (int64_t t = 0; t < n_rows && rc == VICK_OK; ++t) {
      const int64_t i = tr[t];
      if (!is_row[i]) continue;
      is_row[i] = 0;
      j->rk[i] = rk[t];
      if (vic__slab_row_add(&j->left[dev], i) != 0)
        rc = vic__slab_fail(call, VICK_NOMEM, "no host memory for a slab's leftover rows");
    }
    return rc;
  }
  /* the rows left, those below the slab's middle first: two tasks whose
   * regions hold their rows' balls */
  const int axis = j->plan->axis;
  const double mid = u->mid;
  int64_t lo_n = 0, hi_n = 0;
  vic_region lo_reg, hi_reg;
  int64_t *tmp = malloc((size_t)left * sizeof *tmp);
  if (!tmp) return vic__slab_fail(call, VICK_NOMEM, "no host memory for a slab's retries");
  for (int64_t t = 0; t < n_rows; ++t) {
    const int64_t i = tr[t];
    if (!is_row[i]) continue;
    const int low = isfinite(mid) && vic__slab_coord(x, i, axis) < mid;
    vic_region b;
    vic__ball_region(x, i, rk[t], &b);
    vic_region *g = low ? &lo_reg : &hi_reg;
    int64_t *cnt = low ? &lo_n : &hi_n;
    if (*cnt == 0) *g = b; else vic__region_union(g, &b);
    ++*cnt;
  }
  int64_t a = 0; /* the rows left in order: low ones, then high ones */
  for (int pass = 0; pass < 2; ++pass)
    for (int64_t t = 0; t < n_rows; ++t) {
      const int64_t i = tr[t];
      if (!is_row[i]) continue;
      const int low = isfinite(mid) && vic__slab_coord(x, i, axis) < mid;
      if (low != (pass == 0)) continue;
      tmp[a++] = i;
    }
  for (int64_t t = 0; t < left; ++t) is_row[tmp[t]] = 0;
  memcpy(tr, tmp, (size_t)left * sizeof *tr);
  free(tmp);
  if (hi_n) rc = vic__slab_push(j, dev, st, (slab_task){tk->off + lo_n, hi_n, hi_reg, 0});
  if (rc == VICK_OK && lo_n) rc = vic__slab_push(j, dev, st, (slab_task){tk->off, lo_n, lo_reg, 0});
  return rc;
}

/* The density pass's answer (slab_pass.answer): the device call, then
 * its rows placed by id -- the host's part counted in j->t_place. */
static int rows_answer(slab_job *j, int dev, const slab_task *tk, int64_t *tr, int64_t n_rows, const float *pts,
                       const uint32_t *gid, int64_t m, slab_stack *st, unsigned char *is_row, void *user) {
  const double t0 = vic__now();
  double tc = 0;
  const int rc = rows_answer_work(j, dev, tk, tr, n_rows, pts, gid, m, st, is_row, user, &tc);
  j->t_place[dev] += vic__now() - t0 - tc;
  return rc;
}

/* Rows rows_in[0, n_own) of the density pass on the device of slot dev,
 * in reg0 first, then the rows that fail the gap test in regions around
 * their k-th-distance balls -- one for the rows below mid along the
 * axis, one for those above, so that neither spans the whole slab.  With
 * slab >= 0, reg0 is that slab's first region: the rows it cannot prove
 * go to the device's leftovers (j->left), answered once all slabs are
 * done (slab_leftovers.c), and the lists may stay on the device for the
 * later passes (j->kept). */
int vic__slab_rows(slab_job *j, int dev, const int64_t *rows_in, int64_t n_own, const vic_region *reg0, double mid,
                   unsigned char *is_row, int64_t slab) {
  vick_call *call = &j->call[dev];
  if (n_own == 0) return VICK_OK;
  rows_pass u = {NULL, NULL, NULL, NULL, slab, mid};
  /* per row of a slab (huge-page advice: few faults) */
  int64_t *rows = vic__malloc_huge((size_t)n_own * sizeof *rows);
  u.rk = vic__malloc_huge((size_t)n_own * sizeof *u.rk);
  if (j->knn) u.knn = vic__malloc_huge((size_t)n_own * sizeof *u.knn);
  if (j->sph) u.sph = vic__malloc_huge((size_t)n_own * sizeof *u.sph);
  if (j->h) u.h = vic__malloc_huge((size_t)n_own * sizeof *u.h);
  int rc = VICK_OK;
  if (!rows || !u.rk || (j->knn && !u.knn) || (j->sph && !u.sph) || (j->h && !u.h))
    rc = vic__slab_fail(call, VICK_NOMEM, "no host memory for a slab's results");
  if (rc == VICK_OK) {
    memcpy(rows, rows_in, (size_t)n_own * sizeof *rows);
    /* a slab's own rows as run_slab hands them: bucket order */
    const int own = slab >= 0 && rows_in == j->order + j->start[slab] && n_own == j->start[slab + 1] - j->start[slab];
    const slab_task first = {0, n_own, *reg0, own ? slab + 1 : 0};
    const slab_pass ps = {NULL, rows_answer, j->mass ? (size_t)j->x->n * 4 : 0};
    rc = vic__slab_tasks(j, dev, rows, &first, is_row, &ps, &u);
  }
  free(rows);
  free(u.rk);
  free(u.knn);
  free(u.sph);
  free(u.h);
  return rc;
}
#endif
