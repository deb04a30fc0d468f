/* vic_knn_build's GNND over several GPUs: the rows cut into S shards, each
 * shard's graph built by GNND on its device (all devices at once), then
 * every ordered pair of shards (A, B) searched once: B's rows look for their
 * nearest rows of A through A's graph (the add by graph search,
 * vic_kernels_add.h), A's rows are offered the B rows that found them and
 * their neighbours.  Each row keeps the best k of its own shard's list and
 * every cross list.  No GGM iterations: one search per ordered pair.
 *
 * The schedule rotates: in round r (1..S-1) task g searches old shard g
 * with the rows of shard (g + r) mod S, on device g mod (devices), so every
 * device has a task in every round when S is a multiple of the devices.
 * The tasks' lists come back to host buffers and are merged into the rows'
 * lists after the round (a shard is old in one task and new in another).
 * On one device the tasks run one after the other, each task's lists
 * merged before the next.
 *
 * On one device the same plan is vic_knn_build's out-of-core GNND where the
 * build fits the device budget neither in fp32 nor with half rows
 * (vic__cuda_gnnd_one_device): the fewest shards whose cross search fits
 * the budget, the tasks one after the other, the budget given to every
 * kernel call.  S shards cost S(S - 1) searches of n / S rows each, (S - 1)
 * n queries in all, against the GGM schedule's S(S - 1) / 2 merges that
 * each run GNND iterations over two shards' rows. */
#include "cross_plan.h"
#include "cuda_internal.h"
#include "ggm_common.h"
#include "vic_kernels_add.h"
#include "vic_kernels_gnnd.h"
#include "slot_threads.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Below this many rows, where the fp32 build fits one device, that build
 * is about as fast as shards plus their cross searches (each search
 * uploads both shards' rows). */
enum { MULTI_MIN_ROWS = 16000000 };

typedef struct {
  vic_ctx *c;
  const float *rows; /* packed, prepared */
  int64_t n, m;      /* rows, the most rows of a shard */
  int32_t d, k;
  int S, slots, first;
  size_t budget;              /* per device, as given to the kernels (0: what they find free) */
  const vick_gnnd_params *q;  /* shard builds */
  vic_add_plan ap;            /* cross searches */
  int64_t *own;               /* n x k, each shard's own lists, ids local to the shard */
  float *own_dist;            /* n x k */
  int round;                  /* cross phase: r, or 0 in the build phase */
  int64_t **tid;              /* per task of the round (one device: one for every task): (na + nb) x k lists, ids local to the pair */
  float **tdist;
  int one;                    /* one device, out of core: progress after every task */
  vic_ggm_step *step;         /* per slot: device, message, times */
  vic_status *status;         /* per slot */
  double *busy;               /* per slot: wall seconds of this phase */
} multi_job;

/* Shards of floor(n / S) or one more rows, consecutive. */
static int64_t shard_first(const multi_job *j, int s) { return (int64_t)s * j->n / j->S; }
static int64_t shard_rows(const multi_job *j, int s) { return shard_first(j, s + 1) - shard_first(j, s); }

static vic_status build_shard(multi_job *j, int g, int s) {
  vick_call call;
  vic__cuda_call_init(j->c, &call, j->step[g].device, j->budget, 1);
  call.threads = j->step[g].threads;
  const int64_t f = shard_first(j, s), ns = shard_rows(j, s);
  int rc = vick_gnnd_knn(&call, j->rows + (size_t)f * j->d, ns, j->d, j->k, j->q, j->own + f * j->k,
                         j->own_dist + f * j->k);
  j->step[g].seconds_kernel += call.seconds_kernel;
  j->step[g].seconds_transfer += call.seconds_transfer;
  if (call.peak_bytes > j->step[g].peak) j->step[g].peak = call.peak_bytes;
  if (rc == VICK_OK) return VIC_OK;
  snprintf(j->step[g].message, sizeof j->step[g].message, "GPU GNND of shard %d (%lld rows) on device %d: %.400s", s,
           (long long)ns, j->step[g].device, call.message);
  return rc == VICK_NOMEM ? VIC_E_NOMEM : rc == VICK_CANCELLED ? VIC_E_CANCELLED : VIC_E_DEVICE;
}

/* Task t of round r into the lists ti / td. */
static vic_status cross_task(multi_job *j, int g, int r, int t, int64_t *ti, float *td) {
  const int a = t, b = (t + r) % j->S;
  const int64_t fa = shard_first(j, a), na = shard_rows(j, a), fb = shard_first(j, b), nb = shard_rows(j, b);
  vic_ggm_step *st = &j->step[g];
  char keep[sizeof st->message];
  vic_status s = vic__ggm_gpu_add(j->c, st, j->rows + (size_t)fa * j->d, na, j->rows + (size_t)fb * j->d, nb, j->d,
                                  j->own + fa * j->k, j->k, &j->ap, ti, td);
  if (s != VIC_OK) {
    snprintf(keep, sizeof keep, "%s", st->message);
    snprintf(st->message, sizeof st->message, "cross search of shards %d and %d on device %d: %.440s", a, b,
             st->device, keep);
  }
  return s;
}

static void run_slot(void *arg, int g) {
  multi_job *j = arg;
  const double t0 = vic__now();
  for (int t = g; t < j->S && j->status[g] == VIC_OK; t += j->slots) {
    if (vic__cancelled(j->c)) {
      snprintf(j->step[g].message, sizeof j->step[g].message, "cancelled");
      j->status[g] = VIC_E_CANCELLED;
      break;
    }
    j->status[g] = j->round ? cross_task(j, g, j->round, t, j->tid[t], j->tdist[t]) : build_shard(j, g, t);
    /* one device (the calling thread): progress between the steps, the
     * builds counting as one round of S */
    if (j->one && j->status[g] == VIC_OK) {
      const vic_status p = vic__progress(j->c, "gnnd shards", (j->round + (t + 1.0) / j->S) / j->S);
      if (p != VIC_OK) {
        snprintf(j->step[g].message, sizeof j->step[g].message, "cancelled");
        j->status[g] = p;
      }
    }
  }
  j->busy[g] = vic__now() - t0;
}

/* All slots through one phase; the first failure recorded on the context.
 * The report gets the phase's busiest device's kernel and transfer time. */
static vic_status run_phase(multi_job *j, vic_report *rep) {
  double k0[64], x0[64];
  for (int g = 0; g < j->slots; ++g) {
    j->status[g] = VIC_OK;
    j->step[g].message[0] = '\0';
    k0[g] = j->step[g].seconds_kernel;
    x0[g] = j->step[g].seconds_transfer;
  }
  vic__slots_run(j->slots, 1, run_slot, j); /* each slot's copies get its share of the cores */
  double kmax = 0, xmax = 0;
  for (int g = 0; g < j->slots; ++g) {
    if (j->step[g].seconds_kernel - k0[g] > kmax) kmax = j->step[g].seconds_kernel - k0[g];
    if (j->step[g].seconds_transfer - x0[g] > xmax) xmax = j->step[g].seconds_transfer - x0[g];
  }
  rep->seconds_kernel += kmax;
  rep->seconds_transfer += xmax;
  for (int g = 0; g < j->slots; ++g)
    if (j->status[g] != VIC_OK)
      return vic__fail(j->c, j->status[g], "%s",
                       j->status[g] == VIC_E_CANCELLED && vic__cancelled(j->c) ? "cancelled" : j->step[g].message);
  return VIC_OK;
}

/* Candidates (ids over the pair: A's rows 0..na-1, then B's) merged into
 * a row's list li/ld (k, global ids, ascending by (distance, id)): the best
 * k distinct ids of both.  The same id may come with a distance that
 * differs in the last bits (computed by another kernel): the list's entry
 * stays. */
static void merge_row(int64_t *li, float *ld, int32_t k, const int64_t *ci, const float *cd, int64_t fa, int64_t na,
                      int64_t fb) {
  for (int32_t t = 0; t < k; ++t) {
    const int64_t id = ci[t];
    if (id < 0) break;
    const float dv = cd[t];
    if (!(dv < ld[k - 1] || (dv == ld[k - 1] && li[k - 1] < 0))) break; /* candidates ascend */
    const int64_t gid = id < na ? fa + id : fb + (id - na);
    int dup = 0;
    for (int32_t s = 0; s < k && !dup; ++s) dup = li[s] == gid;
    if (dup) continue;
    int32_t p = k - 1;
    while (p > 0 && (dv < ld[p - 1] || (dv == ld[p - 1] && (li[p - 1] < 0 || gid < li[p - 1])))) {
      li[p] = li[p - 1];
      ld[p] = ld[p - 1];
      --p;
    }
    li[p] = gid;
    ld[p] = dv;
  }
}

/* The shards' own lists start the rows' lists, ids made global. */
static void own_lists_start(const multi_job *j, int64_t *ids, float *dist, int threads) {
  const int32_t k = j->k;
  for (int sh = 0; sh < j->S; ++sh) {
    const int64_t f = shard_first(j, sh), e = (f + shard_rows(j, sh)) * k;
#pragma omp parallel for schedule(static, 65536) num_threads(threads)
    for (int64_t i = f * k; i < e; ++i) {
      const int64_t id = j->own[i];
      ids[i] = id < 0 ? -1 : f + id;
      if (id < 0) dist[i] = INFINITY;
    }
  }
}

/* The lists ti / td of task t of round r merged into every row's list. */
static void merge_task(const multi_job *j, int r, int t, const int64_t *ti, const float *td, int64_t *ids,
                       float *dist, int threads) {
  const int32_t k = j->k;
  const int a = t, b = (t + r) % j->S;
  const int64_t fa = shard_first(j, a), na = shard_rows(j, a), fb = shard_first(j, b), nb = shard_rows(j, b);
#pragma omp parallel for schedule(static, 16384) num_threads(threads)
  for (int64_t u = 0; u < na + nb; ++u) {
    const int64_t row = u < na ? fa + u : fb + (u - na);
    merge_row(ids + row * k, dist + row * k, k, ti + u * k, td + u * k, fa, na, fb);
  }
}

/* The round's task lists merged into every row's list (tasks one after
 * the other: a row is in two tasks of a round). */
static void merge_round(multi_job *j, int64_t *ids, float *dist) {
  for (int t = 0; t < j->S; ++t) merge_task(j, j->round, t, j->tid[t], j->tdist[t], ids, dist, vic__threads(j->c));
}

/* One device: the S(S - 1) tasks in the rounds' order (task q: round
 * 1 + q / S, task q % S), each task's lists merged into the rows' lists
 * before the next task searches, so one list buffer serves them all.  The
 * merges keep merge_round's order: the lists are those of the rounds one
 * after the other.  (Merging beside the next search gained nothing: the
 * search's staged copies slowed by what the merges saved.)  The kernel and
 * transfer time into rep. */
static vic_status one_device_cross(multi_job *j, int64_t *ids, float *dist, vic_report *rep) {
  vic_ggm_step *st = &j->step[0];
  const double k0 = st->seconds_kernel, x0 = st->seconds_transfer;
  const int threads = vic__threads(j->c);
  double searching = 0, merging = 0;
  vic_status s = VIC_OK;
  for (int q = 0; q < j->S * (j->S - 1) && s == VIC_OK; ++q) {
    const int r = 1 + q / j->S, t = q % j->S;
    if (vic__cancelled(j->c)) { s = vic__fail(j->c, VIC_E_CANCELLED, "cancelled"); break; }
    double t0 = vic__now();
    s = cross_task(j, 0, r, t, j->tid[0], j->tdist[0]);
    searching += vic__now() - t0;
    if (s != VIC_OK) {
      s = vic__fail(j->c, s, "%s", s == VIC_E_CANCELLED && vic__cancelled(j->c) ? "cancelled" : st->message);
      break;
    }
    t0 = vic__now();
    merge_task(j, r, t, j->tid[0], j->tdist[0], ids, dist, threads);
    merging += vic__now() - t0;
    s = vic__progress(j->c, "gnnd shards", (r + (t + 1.0) / j->S) / j->S); /* the builds counted as one round of S */
  }
  rep->seconds_kernel += st->seconds_kernel - k0;
  rep->seconds_transfer += st->seconds_transfer - x0;
  vic__report_stage(rep, "cross searches", searching);
  vic__report_stage(rep, "lists merged (host)", merging);
  return s;
}

/* Queries per search launch of the one-device plan: small enough that
 * the pivot scratch and the search's 64-bit results leave the budget to
 * fewer, larger shards (fewer searches), large enough that a launch still
 * fills the device (one warp a query). */
enum { ONE_DEVICE_CHUNK = 16384 };

static vic_status cross_build(vic_ctx *c, const vic_data *x, const vic_build_options *o, int32_t k, int first,
                              int count, const char *one_why, int64_t *ids, float *dist, vic_report *rep,
                              int *taken) {
  *taken = 0;
  const int one = one_why != NULL;
  const int forced = !one && o->shard_size > 0 && x->n > o->shard_size;
  if ((!one && count < 2) || k > 32 || x->box || x->metric == VIC_INNER_PRODUCT) return VIC_OK;
  vic_ggm_params p;
  if (vic__ggm_params(c, o, k, &p) != VIC_OK) { c->error[0] = '\0'; return VIC_OK; } /* GNND words it */
  if (one) count = 1;
  if (count > 64) count = 64;
  size_t budget = vic__ggm_device_budget(o, first);
  for (int g = 1; g < count; ++g) {
    const size_t b = vic__ggm_device_budget(o, first + g);
    if (b < budget) budget = b;
  }
  const size_t need = vic__ggm_gpu_build_bytes(x->n, x->d, &p);
  char why[160];
  if (one) snprintf(why, sizeof why, "fp32 needs %.0f MiB > %.0f", need / 1048576.0, budget / 1048576.0);
  else if (forced) snprintf(why, sizeof why, "shard_size %lld", (long long)o->shard_size);
  else if (budget && need > budget)
    snprintf(why, sizeof why, "fp32 needs %.0f MiB > %.0f", need / 1048576.0,
             budget / 1048576.0);
  else if (x->n >= MULTI_MIN_ROWS) snprintf(why, sizeof why, "%lld rows", (long long)x->n);
  else return VIC_OK;
  /* one device: the searches narrowed to what each row needs of the
   * other shards (vic__cross_add_plan), the budget less the slack the
   * half-row plan leaves for the free memory's drift
   * (vic__gnnd_out_of_core), the search's launches bounded so that its
   * scratch is counted; several GPUs: the add's plan */
  vic_add_plan ap = one ? vic__cross_add_plan(k) : vic__add_plan(k);
  size_t fit = budget;
  if (one) {
    ap.chunk = ONE_DEVICE_CHUNK;
    fit -= vic__gnnd_budget_slack(budget);
  }
  /* shards: a multiple of the devices, at least shard_size's count when
   * forced, more until one cross search fits a device (one device: from 2) */
  const int64_t want = forced ? (x->n + o->shard_size - 1) / o->shard_size : one ? 2 : count;
  const int S = vic__cross_shards(x->n, x->d, k, &ap, count, want, budget ? fit : 0);
  const int64_t m = S ? (x->n + S - 1) / S : x->n;
  if (S == 0) {
    if (forced || one) /* shards too small for the cross searches: the other paths */
      return VIC_OK;
    return vic__fail(c, VIC_E_NOMEM,
                     "GNND over %d GPUs: no shard count gives a cross search of two shards within the device budget "
                     "of %.0f MiB (%lld rows of d = %d)", count, budget / 1048576.0, (long long)x->n, (int)x->d);
  }
  /* the shards' builds: the large builds' plan (vic__gnnd_large_plan);
   * fp32 rows, or half-precision rows where fp32 does not fit.  One
   * device, the list width left to the library: the options' iteration
   * count, the in-memory build's, not the narrow lists' higher cap -- the
   * shards' lists leave their builds k wide and every row's list is
   * searched again against each other shard, which recovers more than the
   * late iterations would (BENCHMARKS.md, issue 23) */
  vic_ggm_params b = p;
  vic__gnnd_large_plan(o, k, &b);
  if (one && o->gnnd.k_build == 0) b.iterations = p.iterations;
  vick_gnnd_params q = {b.K, b.samples, b.iterations, b.converge, 0, 0, 0};
  vic_ggm_params compact;
  char how[96];
  snprintf(how, sizeof how, "fp32, K %d, p %d, <= %d iterations", (int)b.K, (int)b.samples, (int)b.iterations);
  if (budget && vic__ggm_gpu_build_bytes(m, x->d, &b) > budget) {
    if (!vic__gnnd_compact_plan(&b, m, x->d, k, budget - vic__gnnd_budget_slack(budget), &compact)) {
      if (one) return VIC_OK; /* the GGM schedule's smaller shards */
      return vic__fail(c, VIC_E_NOMEM,
                       "GNND over %d GPUs: a shard of %lld rows fits the device budget of %.0f MiB neither in fp32 "
                       "nor with half-precision rows", count, (long long)m, budget / 1048576.0);
    }
    q.k_build = compact.K;
    q.samples = compact.samples;
    q.iterations = compact.iterations;
    q.half_rows = 1;
    snprintf(how, sizeof how, "half rows, K %d, p %d, <= %d iterations", (int)compact.K,
             (int)compact.samples, (int)compact.iterations);
  }
  *taken = 1;
  vic_report *out_rep = rep, local = *rep; /* the report changes only when the build succeeds */
  rep = &local;
  const int slots = S < count ? S : count;
  const double t0 = vic__now();
  float *packed = NULL;
  const int64_t stride = x->stride ? x->stride : x->d;
  const float *rows = x->rows;
  vic_status s = VIC_OK;
  multi_job j;
  memset(&j, 0, sizeof j);
  if (stride != x->d) {
    packed = vic__malloc(c, (size_t)x->n * x->d * sizeof *packed, "packed rows");
    if (!packed) return VIC_E_NOMEM;
#pragma omp parallel for schedule(static, 65536) num_threads(vic__threads(c))
    for (int64_t i = 0; i < x->n; ++i) memcpy(packed + i * x->d, vic__row(x, i), (size_t)x->d * sizeof *packed);
    rows = packed;
  }
  j.c = c;
  j.rows = rows;
  j.n = x->n;
  j.m = m;
  j.d = x->d;
  j.k = k;
  j.S = S;
  j.slots = slots;
  j.first = first;
  j.budget = o->device_memory_budget;
  j.one = one;
  j.q = &q;
  j.ap = ap;
  j.own = vic__malloc(c, (size_t)x->n * k * sizeof *j.own, "shard lists");
  j.own_dist = dist; /* the shards' own distances are the rows' first lists */
  j.tid = vic__calloc(c, (size_t)S, sizeof *j.tid, "cross lists");
  j.tdist = vic__calloc(c, (size_t)S, sizeof *j.tdist, "cross lists");
  j.step = vic__calloc(c, (size_t)slots, sizeof *j.step, "device slots");
  j.status = vic__calloc(c, (size_t)slots, sizeof *j.status, "device slots");
  j.busy = vic__calloc(c, (size_t)slots, sizeof *j.busy, "device slots");
  if (!j.own || !j.tid || !j.tdist || !j.step || !j.status || !j.busy) { s = VIC_E_NOMEM; goto done; }
  for (int g = 0; g < slots; ++g) {
    j.step[g].device = first + g;
    j.step[g].threaded = 1;
    j.step[g].threads = vic__slot_threads(vic__threads(c), slots);
    j.step[g].budget = one ? o->device_memory_budget : 0; /* one device: the caller's budget binds the searches too */
    j.step[g].stages = one ? rep : NULL; /* one device: the searches' stages, summed over the tasks */
  }
  if (one)
    vic__log(c, VIC_LOG_WARNING, "building the kNN graph of %lld rows out of core (%s): %d GNND shards of %lld rows "
             "(%s) joined by %d graph searches, one per ordered pair", (long long)x->n, one_why, S, (long long)m, how,
             S * (S - 1));
  else
    vic__log(c, VIC_LOG_INFO, "GNND over %d GPUs: %d shards of %lld rows (%s), %d rounds of cross searches", slots, S,
             (long long)m, how, S - 1);

  double t = vic__now();
  if ((s = run_phase(&j, rep)) != VIC_OK) goto done;
  own_lists_start(&j, ids, dist, vic__threads(c));
  vic__report_stage(rep, "shard builds", vic__now() - t);
  if (!one && (s = vic__progress(c, "gnnd shards", 1.0 / S)) != VIC_OK) goto done;

  for (int tk = 0; tk < (one ? 1 : S); ++tk) { /* one device: one buffer of the largest pair */
    const int64_t rows_t = one ? 2 * m : shard_rows(&j, tk) + m;
    j.tid[tk] = vic__malloc(c, (size_t)rows_t * k * sizeof **j.tid, "cross lists");
    j.tdist[tk] = vic__malloc(c, (size_t)rows_t * k * sizeof **j.tdist, "cross lists");
    if (!j.tid[tk] || !j.tdist[tk]) { s = VIC_E_NOMEM; goto done; }
  }
  if (one) {
    if ((s = one_device_cross(&j, ids, dist, rep)) != VIC_OK) goto done;
  } else {
    double searching = 0, merging = 0;
    for (int r = 1; r < S; ++r) {
      j.round = r;
      t = vic__now();
      if ((s = run_phase(&j, rep)) != VIC_OK) goto done;
      searching += vic__now() - t;
      t = vic__now();
      merge_round(&j, ids, dist);
      merging += vic__now() - t;
      if ((s = vic__progress(c, "gnnd shards", (double)(r + 1) / S)) != VIC_OK) goto done;
    }
    vic__report_stage(rep, "cross searches", searching);
    vic__report_stage(rep, "lists merged (host)", merging);
  }
  t = vic__now();
  vic__true_lists(c, x->metric, x->n, k, ids, dist);
  vic__report_stage(rep, "true distances", vic__now() - t);
  rep->slabs = S;
  rep->devices_used = slots;
  for (int g = 0; g < slots; ++g)
    if ((int64_t)j.step[g].peak > rep->device_peak_bytes) rep->device_peak_bytes = (int64_t)j.step[g].peak;
  if (one)
    vic__report_reason(rep, "out of core, one GPU (%s): %d shards of %lld rows (%s), %d graph searches of width %d, "
                       "1 per ordered pair", why, S, (long long)m, how, S * (S - 1), (int)ap.width);
  else
    vic__report_reason(rep, "GNND over %d GPUs (%s): %d shards of %lld rows (%s), 1 graph search per ordered pair, %d "
                       "rounds", slots, why, S, (long long)m, how, S - 1);
  vic__log(c, VIC_LOG_INFO, "GNND over %d GPU(s): %lld rows in %.3f s", slots, (long long)x->n, vic__now() - t0);
  *out_rep = local;

done:
  /* GBs of touched lists: given back on a thread of their own */
  if (j.tid) vic__free_beside((void *const *)j.tid, (size_t)S);
  if (j.tdist) vic__free_beside((void *const *)j.tdist, (size_t)S);
  void *big[] = {j.own, packed};
  vic__free_beside(big, 2);
  free(j.tid);
  free(j.tdist);
  free(j.step);
  free(j.status);
  free(j.busy);
  return s;
}

vic_status vic__cuda_gnnd_multi(vic_ctx *c, const vic_data *x, const vic_build_options *o, int32_t k, int first,
                                int count, int64_t *ids, float *dist, vic_report *rep, int *taken) {
  return cross_build(c, x, o, k, first, count, NULL, ids, dist, rep, taken);
}

vic_status vic__cuda_gnnd_one_device(vic_ctx *c, const vic_data *x, const vic_build_options *o, int32_t k,
                                     const char *why, int64_t *ids, float *dist, vic_report *rep, int *taken) {
  *taken = 0;
  int first, count;
  vic_status s = vic__cuda_devices(c, &first, &count);
  return s != VIC_OK ? s : cross_build(c, x, o, k, first, 1, why, ids, dist, rep, taken);
}
