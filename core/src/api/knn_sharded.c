/* vic_knn_build_sharded and vic_knn_build's out-of-core GNND: shards sized
 * to the device budget, each shard's graph built, every pair of shards
 * merged once (GGM) in rounds of disjoint pairs spread over the devices,
 * every row keeping the best k lists of its merges.  The shards' graphs
 * and the lists live in a shard store (shard_file.h): host memory or a
 * mapped work file that makes the build resumable. */
#include "ggm_common.h"
#include "hash64.h"
#include "shard_file.h"

#include <stdio.h>
#include <string.h>

static void defaults(vic_shard_options *o) {
  memset(o, 0, sizeof *o);
}

void vic_shard_options_init_sized(vic_shard_options *o, size_t struct_size) {
  vic_shard_options d;
  defaults(&d);
  vic__init_sized(o, struct_size, &d, sizeof d);
}

/* Per device: its step, the pair result buffer, its merge workspace and
 * its status. */
typedef struct {
  vic_ggm_step step;
  vic_status status;
  int32_t *ids;
  float *dist;
  vic_ggm_pairs *pairs; /* opened at the slot's first merge, kept to the end of the build */
} slot_state;

typedef struct {
  vic_ctx *c;
  const vic_build_options *o;
  const vic_data *v;
  const vic_ggm_params *p;
  vic_shard_store *st;
  int gpu, slots;
  slot_state *slot;
  /* the work of the running phase */
  int32_t count;       /* shards to build, or pairs to merge */
  const int32_t *a, *b;/* pairs (merge phase); a = shard list (build phase) */
  int merge;
  vic_report *rep;     /* one slot alone: the steps' stages are added here */
} shard_job;

static vic_status build_one(shard_job *j, slot_state *sl, int32_t s) {
  const vic_shard_plan *pl = &j->st->plan;
  const int64_t first = vic__shard_first(pl, s), rows = vic__shard_rows(pl, s);
  const float *r = j->v->rows + (size_t)first * j->v->d;
  int32_t *own = vic__shard_own_ids(j->st, s);
  float *od = vic__shard_own_dist(j->st, s);
  vic_status st = j->gpu ? vic__ggm_gpu_build(j->c, &sl->step, r, rows, j->v->d, j->p, own, od)
                         : vic__ggm_cpu_build(j->c, j->o, r, rows, j->v->d, j->p, own, od);
  if (st != VIC_OK) return st;
  /* the shard's own best k start its result lists, ids made global */
  const int32_t K = j->p->K, k = j->st->k;
  int32_t *ri = vic__shard_res_ids(j->st, s);
  float *rd = vic__shard_res_dist(j->st, s);
#pragma omp parallel for schedule(static) num_threads(j->slots == 1 ? vic__threads(j->c) : 1)
  for (int64_t u = 0; u < rows; ++u)
    for (int32_t t = 0; t < k; ++t) {
      int32_t id = own[u * K + t];
      ri[u * k + t] = id < 0 ? -1 : (int32_t)(id + first);
      rd[u * k + t] = id < 0 ? INFINITY : od[u * K + t];
    }
  return VIC_OK;
}

static vic_status merge_one(shard_job *j, slot_state *sl, int32_t a, int32_t b) {
  const vic_shard_plan *pl = &j->st->plan;
  const int64_t fa = vic__shard_first(pl, a), na = vic__shard_rows(pl, a);
  const int64_t fb = vic__shard_first(pl, b), nb = vic__shard_rows(pl, b);
  const int32_t d = j->v->d, k = j->st->k;
  const float *ra = j->v->rows + (size_t)fa * d, *rb = j->v->rows + (size_t)fb * d;
  vic_status st = VIC_OK;
  if (j->gpu && !sl->pairs) st = vic__ggm_gpu_pairs_open(j->c, &sl->step, pl->m, d, j->p, k, &sl->pairs);
  if (st != VIC_OK) return st;
  st = j->gpu ? vic__ggm_gpu_pairs_merge(j->c, &sl->step, sl->pairs, j->p, ra, na, rb, nb, vic__shard_own_ids(j->st, a),
                                         vic__shard_own_dist(j->st, a), vic__shard_own_ids(j->st, b),
                                         vic__shard_own_dist(j->st, b), k, sl->ids, sl->dist)
              : vic__ggm_cpu_merge(j->c, j->o, ra, na, rb, nb, d, j->p, vic__shard_own_ids(j->st, a),
                                  vic__shard_own_dist(j->st, a), vic__shard_own_ids(j->st, b),
                                  vic__shard_own_dist(j->st, b), k, sl->ids, sl->dist);
  if (st != VIC_OK) return st;
  /* pair-local ids to global, then into both shards' running lists */
  const double t = vic__now();
  int32_t *ria = vic__shard_res_ids(j->st, a), *rib = vic__shard_res_ids(j->st, b);
  float *rda = vic__shard_res_dist(j->st, a), *rdb = vic__shard_res_dist(j->st, b);
  /* rows are independent: all threads when one device runs alone (nested
   * regions of several device threads run this serially) */
#pragma omp parallel for schedule(static) num_threads(j->slots == 1 ? vic__threads(j->c) : 1)
  for (int64_t u = 0; u < na + nb; ++u) {
    int32_t *l = sl->ids + u * k;
    for (int32_t t = 0; t < k; ++t)
      if (l[t] >= 0) l[t] = (int32_t)(l[t] < na ? fa + l[t] : fb + (l[t] - na));
    if (u < na) vic__ggm_merge_list(ria + u * k, rda + u * k, k, l, sl->dist + u * k, k);
    else vic__ggm_merge_list(rib + (u - na) * k, rdb + (u - na) * k, k, l, sl->dist + u * k, k);
  }
  if (j->rep) vic__report_stage(j->rep, "lists merged (host)", vic__now() - t);
  return VIC_OK;
}

/* Slot g's share of the phase: items g, g + slots, ...; the next item's
 * own graphs are prefetched while this one merges. */
static void run_slot(shard_job *j, int g) {
  slot_state *sl = &j->slot[g];
  for (int32_t q = g; q < j->count && sl->status == VIC_OK; q += j->slots) {
    if (vic__cancelled(j->c)) {
      snprintf(sl->step.message, sizeof sl->step.message, "cancelled");
      sl->status = VIC_E_CANCELLED;
      break;
    }
    if (j->merge && q + j->slots < j->count) {
      vic__shard_prefetch(j->st, j->a[q + j->slots]);
      vic__shard_prefetch(j->st, j->b[q + j->slots]);
    }
    sl->status = j->merge ? merge_one(j, sl, j->a[q], j->b[q]) : build_one(j, sl, j->a[q]);
  }
}

static void run_phase(shard_job *j) {
  for (int g = 0; g < j->slots; ++g) j->slot[g].status = VIC_OK;
  if (j->slots == 1) {
    run_slot(j, 0);
    return;
  }
#pragma omp parallel for schedule(static, 1) num_threads(j->slots)
  for (int g = 0; g < j->slots; ++g) run_slot(j, g);
}

/* The first failure of a phase, recorded on the context.  A CPU step has
 * already recorded its own. */
static vic_status phase_status(shard_job *j) {
  for (int g = 0; g < j->slots; ++g) {
    vic_status s = j->slot[g].status;
    if (s == VIC_OK) continue;
    const char *msg = j->slot[g].step.message[0] ? j->slot[g].step.message : vic_status_name(s);
    if (!j->gpu && j->c->error[0]) return s; /* the CPU step worded it */
    return vic__fail(j->c, s, "%s", msg);
  }
  return VIC_OK;
}

/* The most rows per shard whose pair merge (workspace, rows and the pair's
 * k lists) fits `budget` bytes of one device. */
static int64_t rows_for_budget(int64_t n, int32_t d, int32_t k, const vic_ggm_params *p, size_t budget, int gpu) {
  int64_t lo = 1, hi = n;
  while (lo < hi) {
    int64_t mid = lo + (hi - lo + 1) / 2;
    size_t need = gpu ? vic__ggm_gpu_pair_bytes(mid, d, p, k)
                      : (size_t)mid * 2 * ((size_t)d * 4 + (size_t)p->K * 16);
    if (need <= budget) lo = mid; else hi = mid - 1;
  }
  return lo;
}

size_t vic__ggm_device_budget(const vic_build_options *o, int device) {
  if (o->device_memory_budget) return o->device_memory_budget;
  return vic__ggm_gpu_free_bytes(device) / 10 * 9;
}

/* The sharded build on prepared, packed rows v into true lists (n x k). */
static vic_status sharded(vic_ctx *c, const vic_data *v, vic_metric metric, const vic_build_options *o,
                          const vic_shard_options *so, int32_t k, int gpu, int64_t *ids, float *dist, vic_report *rep) {
  const double t0 = vic__now();
  vic_ggm_params p;
  vic_status s = vic__ggm_params(c, o, k, &p);
  if (s != VIC_OK) return s;
  int first = c->opt.device, slots = 1;
  if (gpu && (s = vic__ggm_gpu_devices(c, &first, &slots)) != VIC_OK) return s;
  int64_t max_rows = so->shard_rows;
  size_t budget = 0;
  if (max_rows <= 0) {
    budget = gpu ? vic__ggm_device_budget(o, first) : o->device_memory_budget;
    max_rows = budget ? rows_for_budget(v->n, v->d, k, &p, budget, gpu) : v->n;
  }
  if (max_rows <= p.K)
    return vic__fail(c, VIC_E_ARGUMENT,
                     "shards of %lld rows are too small for lists of %d entries (raise the device memory budget "
                     "or shard_rows)",
                     (long long)max_rows, (int)p.K);
  vic_shard_store st;
  memset(&st, 0, sizeof st);
  st.plan = vic__shard_plan(v->n, max_rows);
  st.d = v->d;
  st.k = k;
  st.K = p.K;
  st.metric = metric;
  st.seed = c->opt.seed;
  st.fingerprint = so->work_dir ? vic__data_fingerprint(c, v) : 0;
  if (slots > st.plan.shards / 2 && st.plan.shards >= 2) slots = st.plan.shards / 2; /* a round has S/2 pairs */
  if (slots < 1) slots = 1;
  if ((s = vic__shard_store_open(c, &st, so->work_dir, so->resume)) != VIC_OK) return s;
  vic__report_reason(rep, "%d shards of %lld rows, %d merge rounds of disjoint pairs on %d %s%s", (int)st.plan.shards,
                     (long long)st.plan.m, (int)st.plan.rounds, slots, gpu ? "GPU(s)" : "CPU",
                     so->work_dir ? ", graphs in the work file" : "");
  rep->slabs = st.plan.shards;
  rep->devices_used = gpu ? slots : 0;
  if (st.shards_built || st.rounds_done)
    vic__log(c, VIC_LOG_INFO, "resuming '%s': %u of %d shards built, %u of %d merge rounds done", st.path,
             st.shards_built, (int)st.plan.shards, st.rounds_done, (int)st.plan.rounds);

  const int64_t pairs_total = (int64_t)st.plan.shards * (st.plan.shards - 1) / 2;
  const double work_total = (double)st.plan.shards + (double)pairs_total;
  slot_state *slot = vic__calloc(c, (size_t)slots, sizeof *slot, "device slots");
  int32_t *la = vic__malloc(c, ((size_t)st.plan.shards + 1) * sizeof *la, "schedule");
  int32_t *lb = vic__malloc(c, ((size_t)st.plan.shards + 1) * sizeof *lb, "schedule");
  if (!slot || !la || !lb) { s = VIC_E_NOMEM; goto done; }
  for (int g = 0; g < slots; ++g) {
    slot[g].step.device = first + g;
    slot[g].step.threaded = slots > 1;
    slot[g].ids = vic__malloc(c, (size_t)2 * st.plan.m * k * sizeof(int32_t), "pair lists");
    slot[g].dist = vic__malloc(c, (size_t)2 * st.plan.m * k * sizeof(float), "pair lists");
    if (!slot[g].ids || !slot[g].dist) { s = VIC_E_NOMEM; goto done; }
  }
  shard_job j = {c, o, v, &p, &st, gpu, slots, slot, 0, la, lb, 0, slots == 1 ? rep : NULL};
  slot[0].step.stages = j.rep; /* the kernels' stages: uploads, GNND, GGM, downloads */

  /* builds, `slots` shards at a time, checkpointed after each batch */
  double tb = vic__now();
  while (st.shards_built < (uint32_t)st.plan.shards) {
    j.count = 0;
    for (int g = 0; g < slots && st.shards_built + (uint32_t)g < (uint32_t)st.plan.shards; ++g)
      la[j.count++] = (int32_t)st.shards_built + g;
    j.merge = 0;
    run_phase(&j);
    if ((s = phase_status(&j)) != VIC_OK) goto stopped;
    for (int32_t q = 0; q < j.count; ++q) vic__shard_seal(&st, la[q], 1, 1);
    st.shards_built += (uint32_t)j.count;
    if ((s = vic__shard_checkpoint(c, &st)) != VIC_OK) goto done;
    if ((s = vic__progress(c, "ggm shards", st.shards_built / work_total)) != VIC_OK) goto stopped;
  }
  vic__report_stage(rep, "shard builds", vic__now() - tb);

  /* merges, one round of disjoint pairs at a time; alone on one device,
   * progress and cancel come between the pairs of a round too */
  double tm = vic__now();
  while (st.rounds_done < (uint32_t)st.plan.rounds) {
    int32_t np = vic__shard_round(&st.plan, (int32_t)st.rounds_done, la, lb);
    int64_t pairs_before = 0;
    for (uint32_t r = 0; r < st.rounds_done; ++r) pairs_before += vic__shard_round(&st.plan, (int32_t)r, la, lb);
    vic__shard_round(&st.plan, (int32_t)st.rounds_done, la, lb);
    j.merge = 1;
    if (slots == 1) {
      for (int32_t q = 0; q < np; ++q) {
        j.a = la + q;
        j.b = lb + q;
        j.count = 1;
        run_phase(&j);
        vic__shard_seal(&st, la[q], 0, 1);
        vic__shard_seal(&st, lb[q], 0, 1);
        if ((s = phase_status(&j)) != VIC_OK) goto stopped;
        if ((s = vic__progress(c, "ggm shards", (st.plan.shards + pairs_before + q + 1) / work_total)) != VIC_OK)
          goto stopped;
      }
      j.a = la;
      j.b = lb;
    } else {
      j.count = np;
      run_phase(&j);
      for (int32_t q = 0; q < np; ++q) {
        vic__shard_seal(&st, la[q], 0, 1);
        vic__shard_seal(&st, lb[q], 0, 1);
      }
      if ((s = phase_status(&j)) != VIC_OK) goto stopped;
      if ((s = vic__progress(c, "ggm shards", (st.plan.shards + pairs_before + np) / work_total)) != VIC_OK)
        goto stopped;
    }
    st.rounds_done++;
    if ((s = vic__shard_checkpoint(c, &st)) != VIC_OK) goto done;
  }
  vic__report_stage(rep, "pair merges", vic__now() - tm);

  for (int32_t sh = 0; sh < st.plan.shards; ++sh) {
    const int64_t f = vic__shard_first(&st.plan, sh), rows = vic__shard_rows(&st.plan, sh);
    const int32_t *ri = vic__shard_res_ids(&st, sh);
    const float *rd = vic__shard_res_dist(&st, sh);
    for (int64_t i = 0; i < rows * k; ++i) {
      ids[f * k + i] = ri[i];
      dist[f * k + i] = rd[i];
    }
  }
  vic__true_lists(c, metric, v->n, k, ids, dist);
  for (int g = 0; g < slots; ++g) {
    rep->seconds_kernel += slot[g].step.seconds_kernel;
    rep->seconds_transfer += slot[g].step.seconds_transfer;
  }
  vic__log(c, VIC_LOG_INFO, "sharded graph: %d shards of %lld rows, %lld pair merges, %.3f s", (int)st.plan.shards,
           (long long)st.plan.m, (long long)pairs_total, vic__now() - t0);
  goto done;

stopped:
  /* what the stopped round merged is kept (a merge repeated on resume
   * changes nothing), its sections sealed, the round left to redo */
  if (vic__shard_checkpoint(c, &st) == VIC_OK && s == VIC_E_CANCELLED) {
    if (so->work_dir)
      s = vic__fail(c, VIC_E_CANCELLED,
                    "cancelled after %u of %d shard builds and %u of %d merge rounds; '%s' holds the progress: call "
                    "again with resume set to continue",
                    st.shards_built, (int)st.plan.shards, st.rounds_done, (int)st.plan.rounds, st.path);
    else
      s = vic__fail(c, VIC_E_CANCELLED,
                    "cancelled after %u of %d shard builds and %u of %d merge rounds (without a work_dir nothing is "
                    "kept to resume from)",
                    st.shards_built, (int)st.plan.shards, st.rounds_done, (int)st.plan.rounds);
  }
done:
  for (int g = 0; slot && g < slots; ++g) {
    vic__ggm_gpu_pairs_close(slot[g].pairs);
    free(slot[g].ids);
    free(slot[g].dist);
  }
  free(slot);
  free(la);
  free(lb);
  vic__shard_store_close(&st);
  return s;
}

vic_status vic_knn_build_sharded(vic_ctx *c, const vic_data *x, const vic_build_options *o_in,
                                 const vic_shard_options *so_in, vic_knn *out) {
  if (!c) return VIC_E_ARGUMENT;
  c->error[0] = '\0';
  c->warnings = 0;
  vic__begin_call(c);
  if (!out) return vic__fail(c, VIC_E_ARGUMENT, "vic_knn_build_sharded: no place for the result (out is NULL)");
  vic__knn_clear(out);
  if (!o_in) return vic__fail(c, VIC_E_ARGUMENT, "vic_knn_build_sharded: no build options");
  vic_build_options o;
  vic_build_options_init(&o);
  vic_status s = VIC__OPTIONS_IN(c, o_in, &o, "vic_build_options");
  if (s != VIC_OK) return s;
  vic_shard_options so;
  vic_shard_options_init(&so);
  if (so_in && (s = VIC__OPTIONS_IN(c, so_in, &so, "vic_shard_options")) != VIC_OK) return s;
  if (so.shard_rows < 0) return vic__fail(c, VIC_E_ARGUMENT, "shard_rows must be >= 0 (got %lld)", (long long)so.shard_rows);
  const double t0 = vic__now();
  vic_data v;
  float *owned = NULL;
  if ((s = vic__ggm_rows(c, x, "vic_knn_build_sharded", &v, &owned)) != VIC_OK) return s;
  if (x->n < 2) { free(owned); return vic__fail(c, VIC_E_ARGUMENT, "a kNN graph needs at least 2 points"); }
  if (x->n >= INT32_MAX) { free(owned); return vic__fail(c, VIC_E_UNSUPPORTED, "sharded builds handle up to 2^31 - 2 rows"); }
  if (o.k < 1) { free(owned); return vic__fail(c, VIC_E_ARGUMENT, "k must be at least 1 (got %d)", (int)o.k); }
  const int32_t k = (int64_t)o.k < x->n ? o.k : (int32_t)(x->n - 1);
  int gpu;
  if ((s = vic__ggm_backend(c, &gpu)) != VIC_OK) { free(owned); return s; }
  vic_report rep;
  vic__report_clear(&rep);
  rep.method = gpu ? VIC_METHOD_GNND : VIC_METHOD_NNDESCENT;
  rep.backend = gpu ? VIC_BACKEND_CUDA : VIC_BACKEND_CPU;
  rep.k_requested = o.k;
  rep.k = k;
  rep.recall_estimate = -1;
  int64_t *ids = vic__malloc(c, (size_t)x->n * k * sizeof *ids, "neighbour ids");
  float *dist = vic__malloc(c, (size_t)x->n * k * sizeof *dist, "neighbour distances");
  if (!ids || !dist) s = VIC_E_NOMEM;
  else s = sharded(c, &v, x->metric, &o, &so, k, gpu, ids, dist, &rep);
  free(owned);
  if (s != VIC_OK) { free(ids); free(dist); return s; }
  out->n = x->n;
  out->k = k;
  out->ids = ids;
  out->dist = dist;
  rep.seconds_total = vic__now() - t0;
  rep.warnings = c->warnings;
  out->report = rep;
  return VIC_OK;
}

void vic__gnnd_large_plan(const vic_build_options *o, int32_t k, vic_ggm_params *p) {
  if (o->gnnd.k_build != 0) return;
  const int32_t narrow = (k + 31) / 32 * 32;
  if (narrow < p->K) p->K = narrow;
  if (p->iterations < VIC_GNND_NARROW_ITERATIONS) p->iterations = VIC_GNND_NARROW_ITERATIONS;
}

/* The compact build's parameters under budget: K as given, samples down
 * to half of p's; else K narrowed to k's segments, samples down to 8, and
 * the iteration cap raised to VIC_GNND_NARROW_ITERATIONS: narrower lists gain
 * less per iteration and need more of them to converge (the converge test
 * still ends the descent when it stops improving).  1 with *q set when one
 * fits. */

int vic__gnnd_compact_plan(const vic_ggm_params *p, int64_t n, int32_t d, int32_t k, size_t budget, vic_ggm_params *q) {
  const int32_t Ks[2] = {p->K, (k + 31) / 32 * 32};
  for (int i = 0; i < 2; ++i) {
    if (i == 1 && Ks[1] >= Ks[0]) break;
    int32_t floor = i == 0 && Ks[0] > Ks[1] ? (p->samples + 1) / 2 : 8; /* narrow lists: down to 8 */
    if (floor > p->samples) floor = p->samples;
    *q = *p;
    q->K = Ks[i];
    if (i == 1 && q->iterations < VIC_GNND_NARROW_ITERATIONS) q->iterations = VIC_GNND_NARROW_ITERATIONS;
    for (q->samples = p->samples; q->samples >= floor; --q->samples)
      if (vic__ggm_gpu_compact_bytes(n, d, k, q) <= budget) return 1;
  }
  return 0;
}

size_t vic__gnnd_budget_slack(size_t budget) {
  const size_t most = (size_t)128 << 20;
  return budget / 64 < most ? budget / 64 : most;
}

vic_status vic__gnnd_out_of_core(vic_ctx *c, const vic_data *x, const vic_build_options *o, int32_t k, int64_t *ids,
                                 float *dist, vic_report *rep, int *taken, vic_ggm_params *compact,
                                 vic_gnnd_one_device_fn one_device) {
  *taken = 0;
  compact->K = 0;
  vic_ggm_params p;
  if (vic__ggm_params(c, o, k, &p) != VIC_OK) { c->error[0] = '\0'; return VIC_OK; } /* GNND words it */
  int first, count;
  vic_status s = vic__ggm_gpu_devices(c, &first, &count);
  if (s != VIC_OK) return s;
  const size_t budget = vic__ggm_device_budget(o, first), need = vic__ggm_gpu_build_bytes(x->n, x->d, &p);
  const int forced = o->shard_size > 0 && x->n > o->shard_size;
  if (!forced && (need <= budget || budget == 0)) return VIC_OK;
  const size_t slack = vic__gnnd_budget_slack(budget);
  vic_ggm_params large = p;
  vic__gnnd_large_plan(o, k, &large);
  if (!forced && vic__gnnd_compact_plan(&large, x->n, x->d, k, budget - slack, compact)) {
    vic__log(c, VIC_LOG_WARNING,
             "building the kNN graph of %lld rows in memory with half-precision rows (GNND needs %.0f MiB in fp32, "
             "over the budget of %.0f MiB): lists of %d, %d samples, up to %d iterations, the candidates re-ranked "
             "in fp32",
             (long long)x->n, need / 1048576.0, budget / 1048576.0, (int)compact->K, (int)compact->samples,
             (int)compact->iterations);
    vic__report_reason(rep, "in memory with half-precision rows (fp32 needs %.0f MiB, budget %.0f MiB): K %d, p %d, "
                       "%d iterations at most, fp32 re-rank", need / 1048576.0, budget / 1048576.0, (int)compact->K,
                       (int)compact->samples, (int)compact->iterations);
    return VIC_OK;
  }
  char why[160];
  if (forced) snprintf(why, sizeof why, "shard_size %lld", (long long)o->shard_size);
  else
    snprintf(why, sizeof why, "GNND needs %.0f MiB of device memory, over the budget of %.0f MiB", need / 1048576.0,
             budget / 1048576.0);
  /* the budget decides: shards joined by graph searches, (S - 1) n queries
   * against the GGM schedule's S(S - 1) / 2 pair merges; shard_size keeps
   * the GGM schedule (its tests and the work-file builds share it) */
  if (!forced && one_device) {
    int one = 0;
    const double t = vic__now();
    s = one_device(c, x, o, k, why, ids, dist, rep, &one);
    if (one && (s == VIC_E_NOMEM || s == VIC_E_DEVICE || s == VIC_E_UNSUPPORTED)) {
      vic__log(c, VIC_LOG_WARNING, "the out-of-core build by graph searches failed (%s); merging shards by GGM instead",
               vic_ctx_error(c));
      vic__report_stage(rep, "graph-search plan (failed)", vic__now() - t);
      c->error[0] = '\0';
    } else if (s != VIC_OK || one) {
      *taken = 1;
      return s;
    }
  }
  *taken = 1;
  vic_shard_options so;
  vic_shard_options_init(&so);
  so.shard_rows = forced ? o->shard_size : 0;
  vic_data v = *x;
  float *packed = NULL;
  const int64_t stride = x->stride ? x->stride : x->d;
  if (stride != x->d) {
    packed = vic__malloc(c, (size_t)x->n * x->d * sizeof *packed, "packed rows");
    if (!packed) return VIC_E_NOMEM;
    for (int64_t i = 0; i < x->n; ++i) memcpy(packed + i * x->d, vic__row(x, i), (size_t)x->d * sizeof *packed);
    v.rows = packed;
    v.stride = x->d;
  }
  vic__log(c, VIC_LOG_WARNING, "building the kNN graph of %lld rows out of core (%s): GNND shards merged pairwise by GGM",
           (long long)x->n, why);
  s = sharded(c, &v, x->metric, o, &so, k, 1, ids, dist, rep);
  free(packed);
  if (s == VIC_OK) {
    char reason[sizeof rep->reason];
    snprintf(reason, sizeof reason, "%s", rep->reason);
    vic__report_reason(rep, "out of core (%s): %s", why, reason);
  }
  return s;
}
