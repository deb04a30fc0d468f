/* GGNN on the GPU as a set of shards (Groh et al., Sec. 5.5): a data set
 * of more than shard_size points is cut into ceil(n / shard_size) shards
 * of consecutive rows, each an independent search graph, shard s built on
 * device first + (s mod devices), the devices side by side (one host
 * thread each).  An unsharded index is the one-shard case on `device`.
 *
 * Queries go to every shard; each shard's k best (its row numbers shifted
 * to the data set's) are merged by (distance, id).  The for-all lists of a
 * sharded build (the paper's "all points tested once against every
 * shard", Sec. 6.2.4) are each point's list from its own shard's
 * construction merged with the point's query into every other shard
 * (slack tau_build, the construction's).
 *
 * Shard s always gets rows [s n / S, (s+1) n / S) and seed + s, whatever
 * the device count, so a one-device and an N-device run build the same
 * shards from the same inputs; their graphs are equal as far as the
 * kernels' construction is reproducible run to run. */
#include "cuda_internal.h"
#include "device_set.h"
#include "gsearch_io.h"
#include "gsearch_policy.h"
#include "topk_merge.h"
#include "vic_kernels_ggnn.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The largest k a GGNN query returns (its lists live in shared memory). */
#define VIC_GGNN_MAX_K 256

typedef struct {
  int shards;
  int first, count;  /* devices: shard s on vic__shard_device(first, count, s) */
  int64_t *start;    /* shards + 1 row offsets */
  vick_ggnn **g;     /* one graph per shard, on its device */
  /* an index's: each shard's query resources, made with the graph (NULL
   * in the sharded for-all lists, whose set lives for one call) */
  vick_ggnn_searcher **srch;
} ggnn_set;

static void set_free(ggnn_set *set) {
  if (!set) return;
  for (int s = 0; set->srch && s < set->shards; ++s) vick_ggnn_searcher_free(set->srch[s]);
  free(set->srch);
  for (int s = 0; set->g && s < set->shards; ++s) vick_ggnn_free(set->g[s]);
  free(set->g);
  free(set->start);
  free(set);
}

/* The shard layout of n rows; refuses more shards than a merge takes. */
static vic_status set_new(vic_ctx *c, int64_t n, int64_t shard_size, ggnn_set **out) {
  *out = NULL;
  int64_t shards = (shard_size > 0 && n > shard_size) ? (n + shard_size - 1) / shard_size : 1;
  if (shards > VIC_MERGE_MAX_LISTS)
    return vic__fail(c, VIC_E_ARGUMENT, "GGNN: shard_size %lld cuts %lld points into %lld shards; at most %d are merged",
                     (long long)shard_size, (long long)n, (long long)shards, VIC_MERGE_MAX_LISTS);
  int first, count;
  vic_status st = vic__cuda_devices(c, &first, &count);
  if (st != VIC_OK) return st;
  ggnn_set *set = vic__calloc(c, 1, sizeof *set, "GGNN shard set");
  if (!set) return VIC_E_NOMEM;
  set->shards = (int)shards;
  set->first = first;
  set->count = count;
  set->start = vic__calloc(c, (size_t)shards + 1, sizeof *set->start, "shard offsets");
  set->g = set->start ? vic__calloc(c, (size_t)shards, sizeof *set->g, "shard graphs") : NULL;
  if (!set->g) {
    set_free(set);
    return VIC_E_NOMEM;
  }
  for (int64_t s = 0; s <= shards; ++s) set->start[s] = n * s / shards;
  *out = set;
  return VIC_OK;
}

static int shard_device(const ggnn_set *set, int s) { return vic__shard_device(set->first, set->count, s); }

/* ------------------------------------------------------------------ build */
typedef struct {
  ggnn_set *set;
  const float *rows;
  int32_t d;
  vick_ggnn_params q;
  vic_ctx *c;
  size_t budget;
  vick_call *call; /* per shard */
  int *rc;         /* per shard */
  double *wall;    /* per device slot */
  /* for-all: each shard's own lists into ids/dist (NULL: index only) */
  int32_t k;
  int64_t *ids;
  float *dist;
} build_job;

static void build_slot(void *arg, int slot) {
  build_job *j = arg;
  ggnn_set *set = j->set;
  double t0 = vic__now();
  for (int s = slot; s < set->shards; s += set->count) {
    vick_call *call = &j->call[s];
    vic__cuda_call_init(j->c, call, shard_device(set, s), j->budget, 1);
    /* the shard's seed depends on the shard alone, never on the devices */
    call->seed = j->c->opt.seed + 0x9E3779B97F4A7C15ull * (uint64_t)s;
    int64_t a = set->start[s], b = set->start[s + 1];
    j->rc[s] = vick_ggnn_build(call, j->rows + a * j->d, b - a, j->d, &j->q, &set->g[s]);
    if (j->rc[s] == VICK_OK && set->srch) {
      /* the one-time setup of the index's searches (streams, buffers, the
       * bottom layer's small-batch index), so that the first search costs
       * what the later ones do */
      vick_call sc = *call;
      const double ts = vic__now();
      j->rc[s] = vick_ggnn_searcher_create(&sc, set->g[s], VIC_GS_RESERVE_QUERIES, VIC_GS_RESERVE_K,
                                           set->shards == 1, &set->srch[s]);
      if (j->rc[s] != VICK_OK) memcpy(call->message, sc.message, sizeof call->message);
      else {
        /* the setup in all, then its parts as far as the stages hold them */
        const int cap = (int)(sizeof call->stages / sizeof call->stages[0]);
        const double total = vic__now() - ts;
        for (int i = -1; i < sc.n_stages && call->n_stages < cap; ++i) {
          snprintf(call->stages[call->n_stages].name, sizeof call->stages[0].name, "%s%s",
                   i < 0 ? "search setup" : "setup ", i < 0 ? "" : sc.stages[i].name);
          call->stages[call->n_stages++].seconds = i < 0 ? total : sc.stages[i].seconds;
        }
      }
    }
    if (j->rc[s] == VICK_OK && j->ids) {
      vick_call fc = *call;
      j->rc[s] = vick_ggnn_forall(&fc, set->g[s], j->k, j->ids + a * j->k, j->dist + a * j->k);
      if (j->rc[s] != VICK_OK) memcpy(call->message, fc.message, sizeof call->message);
      call->seconds_kernel += fc.seconds_kernel;
      call->seconds_transfer += fc.seconds_transfer;
      for (int64_t i = a * j->k; j->rc[s] == VICK_OK && i < b * j->k; ++i)
        if (j->ids[i] >= 0) j->ids[i] += a;
    }
    if (j->rc[s] != VICK_OK) break;
  }
  j->wall[slot] = vic__now() - t0;
}

/* Build every shard of set from packed rows; with ids, also the shards'
 * own for-all lists (global ids, Euclidean distances). */
static vic_status build_shards(vic_ctx *c, ggnn_set *set, const float *rows, int32_t d, const vick_ggnn_params *q,
                               size_t budget, int32_t k, int64_t *ids, float *dist, vic_report *rep) {
  build_job j = {set, rows, d, *q, c, budget, NULL, NULL, NULL, k, ids, dist};
  j.call = vic__calloc(c, (size_t)set->shards, sizeof *j.call, "per-shard calls");
  j.rc = j.call ? vic__calloc(c, (size_t)set->shards, sizeof *j.rc, "per-shard codes") : NULL;
  j.wall = j.rc ? vic__calloc(c, (size_t)set->count, sizeof *j.wall, "per-device times") : NULL;
  vic_status st = j.wall ? VIC_OK : VIC_E_NOMEM;
  if (st == VIC_OK) st = vic__progress(c, "ggnn", 0.0);
  double t0 = vic__now();
  if (st == VIC_OK) vic__cuda_parallel(set->count < set->shards ? set->count : set->shards, build_slot, &j);
  for (int s = 0; st == VIC_OK && s < set->shards; ++s)
    if (j.rc[s] != VICK_OK) st = vic__cuda_translate(c, j.rc[s], &j.call[s], VIC_METHOD_GGNN);
  if (st == VIC_OK) {
    double tk = 0, tr = 0;
    for (int slot = 0; slot < set->count && slot < set->shards; ++slot) {
      double sk = 0, sr = 0;
      for (int s = slot; s < set->shards; s += set->count) {
        sk += j.call[s].seconds_kernel;
        sr += j.call[s].seconds_transfer;
      }
      tk = sk > tk ? sk : tk;
      tr = sr > tr ? sr : tr;
      char name[32];
      snprintf(name, sizeof name, "dev%d build", set->first + slot);
      vic__report_stage(rep, name, j.wall[slot]);
    }
    rep->seconds_kernel += tk;
    rep->seconds_transfer += tr;
    if (set->shards > 1) vic__report_stage(rep, "shards build", vic__now() - t0);
    for (int s = 0; s < set->shards; ++s) {
      vick_ggnn_info info;
      memset(&info, 0, sizeof info);
      vick_ggnn_info_get(set->g[s], &info);
      char dev[128] = "";
      vick_device_info(j.call[s].device, dev, sizeof dev, NULL, NULL);
      vic__log(c, VIC_LOG_INFO,
               "GPU GGNN shard %d of %d (rows %lld..%lld) on %s (device %d): %.3f s, L = %d, g = %d, %d entry points, "
               "%.1f MiB",
               s, set->shards, (long long)set->start[s], (long long)set->start[s + 1] - 1, dev, j.call[s].device,
               j.call[s].seconds_total, (int)info.layers, (int)info.growth, (int)info.entry_points,
               info.device_bytes / 1048576.0);
    }
    if (set->shards == 1) /* one graph: its own stages, as before sharding existed */
      for (int i = 0; i < j.call[0].n_stages; ++i)
        vic__report_stage(rep, j.call[0].stages[i].name, j.call[0].stages[i].seconds);
  }
  free(j.call);
  free(j.rc);
  free(j.wall);
  return st;
}

/* ------------------------------------------------------------------ query */
typedef struct {
  const ggnn_set *set;
  vic_ctx *c;
  const float *rows; /* packed query rows */
  int32_t d;
  int32_t k;
  float tau;
  int32_t max_visits;
  int64_t m;          /* queries */
  int skip_own;       /* for-all: shard t skips its own rows (queries = the data set) */
  int64_t **ids;      /* per shard: m*k, global ids */
  float **dist;
  vick_call *call;    /* per shard */
  int *rc;
} query_job;

/* Shard t answers queries [0, a) and [b, m) when skipping its own rows
 * [a, b), all of [0, m) otherwise. */
static int query_part(query_job *j, int t, vick_call *call, int64_t q0, int64_t q1) {
  if (q1 <= q0) return VICK_OK;
  vick_call pc = *call;
  const float *rows = j->rows + q0 * j->d;
  int64_t *ids = j->ids[t] + q0 * j->k;
  float *dist = j->dist[t] + q0 * j->k;
  int rc = j->set->srch ? vick_ggnn_search(&pc, j->set->srch[t], rows, q1 - q0, j->k, j->tau, j->max_visits, ids, dist)
                        : vick_ggnn_query(&pc, j->set->g[t], rows, q1 - q0, j->k, j->tau, j->max_visits, ids, dist);
  call->seconds_kernel += pc.seconds_kernel;
  call->seconds_transfer += pc.seconds_transfer;
  call->seconds_total += pc.seconds_total;
  memcpy(call->message, pc.message, sizeof call->message);
  return rc;
}

static void query_slot(void *arg, int slot) {
  query_job *j = arg;
  const ggnn_set *set = j->set;
  for (int t = slot; t < set->shards; t += set->count) {
    vick_call *call = &j->call[t];
    vic__cuda_call_init(j->c, call, shard_device(set, t), 0, 1);
    int64_t a = j->skip_own ? set->start[t] : j->m, b = j->skip_own ? set->start[t + 1] : j->m;
    int rc = query_part(j, t, call, 0, a);
    if (rc == VICK_OK) rc = query_part(j, t, call, b, j->m);
    /* the shard's row numbers as the data set's (rows answered only) */
    int64_t off = set->start[t];
    for (int64_t i = 0; rc == VICK_OK && off && i < j->m * j->k; ++i) {
      if (i == a * j->k) i = b * j->k;
      if (i < j->m * j->k && j->ids[t][i] >= 0) j->ids[t][i] += off;
    }
    j->rc[t] = rc;
    if (rc != VICK_OK) break;
  }
}

/* Every shard's k best of every query row, in per-shard buffers. */
static vic_status query_shards(vic_ctx *c, query_job *j, vic_report *rep) {
  const ggnn_set *set = j->set;
  vic_status st = VIC_OK;
  j->call = vic__calloc(c, (size_t)set->shards, sizeof *j->call, "per-shard calls");
  j->rc = j->call ? vic__calloc(c, (size_t)set->shards, sizeof *j->rc, "per-shard codes") : NULL;
  if (!j->rc) st = VIC_E_NOMEM;
  if (st == VIC_OK) vic__cuda_parallel(set->count < set->shards ? set->count : set->shards, query_slot, j);
  for (int t = 0; st == VIC_OK && t < set->shards; ++t)
    if (j->rc[t] != VICK_OK) st = vic__cuda_translate(c, j->rc[t], &j->call[t], VIC_METHOD_GGNN);
  if (st == VIC_OK) {
    double tk = 0, tr = 0;
    for (int slot = 0; slot < set->count && slot < set->shards; ++slot) {
      double sk = 0, sr = 0;
      for (int t = slot; t < set->shards; t += set->count) {
        sk += j->call[t].seconds_kernel;
        sr += j->call[t].seconds_transfer;
      }
      tk = sk > tk ? sk : tk;
      tr = sr > tr ? sr : tr;
    }
    rep->seconds_kernel += tk;
    rep->seconds_transfer += tr;
  }
  free(j->call);
  free(j->rc);
  j->call = NULL;
  j->rc = NULL;
  return st;
}

static void free_lists(int shards, int64_t **ids, float **dist) {
  for (int t = 0; t < shards; ++t) {
    if (ids) free(ids[t]);
    if (dist) free(dist[t]);
  }
  free(ids);
  free(dist);
}

static vic_status alloc_lists(vic_ctx *c, int shards, int64_t rows, int32_t k, int64_t ***ids, float ***dist) {
  *ids = vic__calloc(c, (size_t)shards, sizeof **ids, "per-shard lists");
  *dist = *ids ? vic__calloc(c, (size_t)shards, sizeof **dist, "per-shard lists") : NULL;
  if (!*dist) return VIC_E_NOMEM;
  for (int t = 0; t < shards; ++t) {
    (*ids)[t] = vic__malloc(c, (size_t)rows * (size_t)k * sizeof(int64_t), "shard result ids");
    (*dist)[t] = (*ids)[t] ? vic__malloc(c, (size_t)rows * (size_t)k * sizeof(float), "shard result distances") : NULL;
    if (!(*dist)[t]) return VIC_E_NOMEM;
  }
  return VIC_OK;
}

/* Row i of the answer: the merge of lists[t] row i over the shards, with
 * `own` (k entries) as one more list when given. */
static void merge_rows(const ggnn_set *set, int64_t m, int32_t k, int64_t *const *ids, float *const *dist,
                       const int64_t *own_shard_of, int64_t *out_ids, float *out_dist, int own_in_out, int threads) {
#pragma omp parallel num_threads(threads)
  {
    const int64_t *li[VIC_MERGE_MAX_LISTS];
    const float *ld[VIC_MERGE_MAX_LISTS];
    int32_t len[VIC_MERGE_MAX_LISTS];
    int64_t ti[VIC_GGNN_MAX_K];
    float td[VIC_GGNN_MAX_K];
#pragma omp for schedule(static)
    for (int64_t i = 0; i < m; ++i) {
      int nl = 0;
      int64_t own = own_shard_of ? own_shard_of[i] : -1;
      for (int t = 0; t < set->shards; ++t) {
        if (t == own) continue;
        li[nl] = ids[t] + i * k;
        ld[nl] = dist[t] + i * k;
        len[nl++] = k;
      }
      if (own_in_out) {
        li[nl] = out_ids + i * k;
        ld[nl] = out_dist + i * k;
        len[nl++] = k;
      }
      vic__topk_merge_row(nl, li, ld, len, k, ti, td);
      memcpy(out_ids + i * k, ti, (size_t)k * sizeof *ti);
      memcpy(out_dist + i * k, td, (size_t)k * sizeof *td);
    }
  }
}

/* ------------------------------------------------------- index interface */
static void ggnn_params(const vic_build_options *o, int32_t k_min, vick_ggnn_params *q) {
  vick_ggnn_params_init(q);
  if (o->ggnn.k_build > 0) q->k = o->ggnn.k_build;
  if (q->k < k_min) q->k = k_min;
  if (o->ggnn.segment > 0) q->segment = o->ggnn.segment;
  if (o->ggnn.layers > 0) q->layers = o->ggnn.layers;
  q->refinements = o->ggnn.refinements;
  q->tau_build = o->ggnn.tau_build;
  q->deterministic = o->ggnn.deterministic;
}

/* The rows' checks in the upload (vick_ggnn_params.rows_in). */
static int rows_in(void *ctx, int thread, float *dst, int64_t row0, int64_t rows) {
  return vic__rows_check_part((vic_rows_check *)ctx, thread, row0, row0 + rows, dst);
}

/* *check_rows: the rows are still to be validated; cleared once they are
 * (first, or fused into the upload of a one-shard build), left set when
 * the build failed before all of them were seen */
static vic_status ggnn_index_build(vic_ctx *c, const vic_data *x, const vic_build_options *o, void **handle,
                                   vic_report *rep, int *check_rows) {
  *handle = NULL;
  vic_status s = vic__cuda_probe(c);
  if (s != VIC_OK) return s;
  if (x->box) return vic__fail(c, VIC_E_UNSUPPORTED, "the GGNN index does not support periodic boxes (use grid or brute)");
  if (x->n >= ((int64_t)1 << 31))
    return vic__fail(c, VIC_E_UNSUPPORTED, "the GGNN index takes at most 2^31 - 1 points (got %lld)", (long long)x->n);
  ggnn_set *set;
  if ((s = set_new(c, x->n, o->shard_size, &set)) != VIC_OK) return s;
  vick_ggnn_params q;
  ggnn_params(o, 0, &q);
  set->srch = vic__calloc(c, (size_t)set->shards, sizeof *set->srch, "shard searchers");
  if (!set->srch) {
    set_free(set);
    return VIC_E_NOMEM;
  }
  /* one shard: the rows validated while the host threads copy them into
   * the upload's pinned slots (one pass over them, not two); several: first */
  vic_rows_check rc;
  int fused = 0;
  if (*check_rows) {
    if (set->shards == 1 && x->metric != VIC_COSINE && !x->box) {
      if ((s = vic__rows_check_begin(c, x, vic__threads(c), &rc)) != VIC_OK) {
        set_free(set);
        return s;
      }
      fused = 1;
      q.rows_in = rows_in;
      q.rows_ctx = &rc;
    } else {
      s = vic_data_validate(c, x);
      *check_rows = 0;
      if (s != VIC_OK) {
        set_free(set);
        return s;
      }
    }
  }
  vick_call pc;
  memset(&pc, 0, sizeof pc);
  float *owned = NULL;
  const float *rows = vic__cuda_packed_rows(x, &owned, &pc);
  s = rows ? build_shards(c, set, rows, x->d, &q, o->device_memory_budget, 0, NULL, NULL, rep)
           : vic__fail(c, VIC_E_NOMEM, "GGNN: %s", pc.message);
  free(owned);
  if (fused) {
    if (s == VIC_OK || vic__rows_check_bad(&rc) != INT64_MAX) {
      /* every row seen, or a bad one: the checks' verdict (a refused row
       * is the first bad one: the slots before it were clean) */
      const vic_status v = vic__rows_check_end(c, &rc);
      *check_rows = 0;
      if (v != VIC_OK) s = v;
    } else {
      vic__rows_check_free(&rc);
    }
  }
  if (s != VIC_OK) {
    set_free(set);
    return s;
  }
  /* d_nn1 over the shards' own graphs (a point's nearest within its
   * shard), Euclidean in the prepared rows: the true distance for L2, the
   * chord for cosine (1 - cos = chord^2 / 2) */
  double mean = 0, mx = 0;
  for (int t = 0; t < set->shards; ++t) {
    vick_ggnn_info info;
    memset(&info, 0, sizeof info);
    vick_ggnn_info_get(set->g[t], &info);
    mean += info.dnn1_mean * (double)(set->start[t + 1] - set->start[t]) / (double)x->n;
    mx = info.dnn1_max > mx ? info.dnn1_max : mx;
    rep->k = info.k;
  }
  rep->method = VIC_METHOD_GGNN;
  rep->backend = VIC_BACKEND_CUDA;
  rep->dnn1_mean = x->metric == VIC_COSINE ? 0.5 * mean * mean : mean;
  rep->dnn1_max = x->metric == VIC_COSINE ? 0.5 * mx * mx : mx;
  *handle = set;
  return VIC_OK;
}

vic_status vic__cuda_ggnn_index_build(vic_ctx *c, const vic_data *x, const vic_build_options *o, void **handle,
                                      vic_report *rep, int check_rows) {
  vic_status s = ggnn_index_build(c, x, o, handle, rep, &check_rows);
  if (check_rows) {
    /* a build that stopped before it saw every row: bad rows are named
     * first, as when they are validated before the build */
    const vic_status v = vic_data_validate(c, x);
    if (v != VIC_OK) {
      if (*handle) set_free(*handle);
      *handle = NULL;
      return v;
    }
  }
  return s;
}

/* The bottom layer's small-batch index when a batch of m queries is one
 * for it (one graph, k <= 32, at most the policy's threshold), with its
 * parameters; NULL otherwise, where GGNN's own query serves. */
static const vick_gsearch *small_index(const ggnn_set *set, int64_t m, int32_t k, float tau, int32_t max_visits,
                                       vick_gsearch_params *p, double *threshold) {
  if (set->shards != 1 || !set->srch || !set->srch[0] || k > 32) return NULL;
  const vick_gsearch *gs = vick_ggnn_searcher_graph(set->srch[0]);
  if (!gs) return NULL;
  vick_gsearch_info info;
  vick_gsearch_info_get(gs, &info);
  vic_search_options o;
  vic_search_options_init(&o);
  o.tau = tau;
  o.max_visits = max_visits;
  return vic__gsearch_params(VIC_GS_GGNN, &info, m, k, &o, p, threshold) ? gs : NULL;
}

static void small_reason(vic_report *rep, int64_t m, double threshold, const vick_gsearch_params *p) {
  vic__report_reason(rep, "GGNN bottom layer, small-batch search on the GPU (%lld queries, threshold %.0f; t0 %d, "
                          "hop limit %d)", (long long)m, threshold, (int)p->searches, (int)p->hops);
}

/* A small batch on one graph: the small-batch procedure over the bottom
 * layer (its index made with the graph), where GGNN's own query, one warp
 * per query, would leave the device nearly idle.  Returns 0 when the batch
 * is not one for it. */
static int small_batch(vic_ctx *c, const ggnn_set *set, const vic_data *q, const float *rows, int32_t k, float tau,
                       int32_t max_visits, int64_t *ids, float *dist, vic_report *rep, vic_status *s) {
  vick_gsearch_params p;
  double threshold;
  const vick_gsearch *gs = small_index(set, q->n, k, tau, max_visits, &p, &threshold);
  if (!gs) return 0;
  vick_call call;
  vic__cuda_call_init(c, &call, shard_device(set, 0), 0, 0);
  *s = vic__kernel_status(c, vick_gsearch_query(&call, gs, rows, q->n, k, &p, ids, dist), &call, "GGNN small batch");
  if (*s != VIC_OK) return 1;
  /* squared L2 in the prepared rows: the metric's true distance */
  vic__true_dists(c, q->metric, q->n * (int64_t)k, ids, dist);
  vic__cuda_copy_stages(rep, &call);
  small_reason(rep, q->n, threshold, &p);
  return 1;
}

vic_status vic__cuda_ggnn_index_search(vic_ctx *c, void *handle, const vic_data *q, int32_t k, float tau,
                                       int32_t max_visits, int64_t *ids, float *dist, vic_report *rep) {
  ggnn_set *set = handle;
  if (!set || !set->g) return vic__fail(c, VIC_E_ARGUMENT, "GGNN index without its device graph");
  if (k > VIC_GGNN_MAX_K)
    return vic__fail(c, VIC_E_UNSUPPORTED, "GGNN index search supports k <= %d (got k = %d)", VIC_GGNN_MAX_K, (int)k);
  vick_call pc;
  memset(&pc, 0, sizeof pc);
  float *owned = NULL;
  const float *rows = vic__cuda_packed_rows(q, &owned, &pc);
  if (!rows) return vic__fail(c, VIC_E_NOMEM, "GGNN: %s", pc.message);
  vic_status s = VIC_OK;
  rep->backend = VIC_BACKEND_CUDA;
  if (small_batch(c, set, q, rows, k, tau, max_visits, ids, dist, rep, &s)) {
    free(owned);
    return s;
  }
  query_job j = {set, c, rows, q->d, k, tau, max_visits, q->n, 0, NULL, NULL, NULL, NULL};
  double tq = vic__now();
  if (set->shards == 1) { /* one graph answers straight into the result */
    int64_t *li[1] = {ids};
    float *ld[1] = {dist};
    j.ids = li;
    j.dist = ld;
    s = query_shards(c, &j, rep);
  } else if ((s = alloc_lists(c, set->shards, q->n, k, &j.ids, &j.dist)) == VIC_OK &&
             (s = query_shards(c, &j, rep)) == VIC_OK) {
    vic__report_stage(rep, "shards query", vic__now() - tq);
    double tm = vic__now();
    merge_rows(set, q->n, k, j.ids, j.dist, NULL, ids, dist, 0, vic__threads(c));
    vic__report_stage(rep, "shards merge", vic__now() - tm);
  }
  if (set->shards > 1) free_lists(set->shards, j.ids, j.dist);
  free(owned);
  if (s != VIC_OK) return s;
  /* Euclidean in the prepared rows: square to the working distance, then
   * the metric's true distance as everywhere else */
  for (int64_t i = 0; i < q->n * (int64_t)k; ++i) dist[i] *= dist[i];
  vic__true_dists(c, q->metric, q->n * (int64_t)k, ids, dist);
  vic__report_reason(rep, "GGNN search on the GPU, tau = %g", (double)tau);
  return VIC_OK;
}

int vic__cuda_ggnn_index_fused(const void *handle, vic_metric metric, int64_t m, int32_t k) {
  const ggnn_set *set = handle;
  if (!set || set->shards != 1 || !set->srch || !set->srch[0] || metric != VIC_L2 || k > VIC_GGNN_MAX_K) return 0;
  /* small batches keep their plain path, measured the faster one for them
   * (the small-batch choice depends on m and k alone, not on tau) */
  vick_gsearch_params p;
  double threshold;
  return small_index(set, m, k, 0.f, 0, &p, &threshold) == NULL;
}

/* Host threads of a fused search: every region of the call the same size
 * (OpenMP keeps its pool threads between them) and no more than the graph
 * search's hooked team, whose regions do not stall on threads of this host
 * that are slow to wake. */
#define GGNN_FUSED_TEAM 8

vic_status vic__cuda_ggnn_index_search_fused(vic_ctx *c, void *handle, const vic_data *q, int32_t k, float tau,
                                             int32_t max_visits, int64_t *ids, float *dist, vic_report *rep) {
  ggnn_set *set = handle;
  if (!vic__cuda_ggnn_index_fused(handle, q->metric, q->n, k))
    return vic__fail(c, VIC_E_ARGUMENT, "internal: a fused GGNN search where vic__cuda_ggnn_index_fused says no");
  vick_call call;
  vic__cuda_call_init(c, &call, shard_device(set, 0), 0, 0);
  if (call.threads > GGNN_FUSED_TEAM) call.threads = GGNN_FUSED_TEAM;
  vic_gsearch_io io;
  vick_gsearch_hooks h;
  vic_status s = vic__gsearch_io_begin(c, q, q->metric, k, ids, dist, call.threads, &io, &h);
  if (s != VIC_OK) return s;
  const int rc = vick_ggnn_search_hooked(&call, set->srch[0], q->n, k, tau, max_visits, &h);
  if ((s = vic__gsearch_io_end(c, &io, rc, &call, "GGNN search", "index search")) != VIC_OK) return s;
  vic__cuda_copy_stages(rep, &call);
  rep->backend = VIC_BACKEND_CUDA;
  vic__report_reason(rep, "GGNN search on the GPU, tau = %g", (double)tau);
  return VIC_OK;
}

int64_t vic__cuda_ggnn_index_bytes(const void *handle) {
  const ggnn_set *set = handle;
  int64_t bytes = 0;
  for (int t = 0; set && t < set->shards; ++t) {
    vick_ggnn_info info;
    if (set->g[t] && vick_ggnn_info_get(set->g[t], &info) == VICK_OK) bytes += (int64_t)info.device_bytes;
  }
  return bytes;
}

void vic__cuda_ggnn_index_free(void *handle) { set_free(handle); }

/* ------------------------------------------------------ sharded for-all */
vic_status vic__cuda_ggnn_forall_sharded(vic_ctx *c, const vic_data *x, const vic_build_options *o, int32_t k,
                                         int64_t *ids, float *dist, vic_report *rep) {
  if (k > VIC_GGNN_MAX_K)
    return vic__fail(c, VIC_E_UNSUPPORTED, "sharded GGNN for-all lists support k <= %d (got k = %d)", VIC_GGNN_MAX_K,
                     (int)k);
  ggnn_set *set;
  vic_status s = set_new(c, x->n, o->shard_size, &set);
  if (s != VIC_OK) return s;
  vick_ggnn_params q;
  ggnn_params(o, k, &q);
  vick_call pc;
  memset(&pc, 0, sizeof pc);
  float *owned = NULL;
  int64_t *shard_of = NULL;
  query_job j = {set, c, NULL, x->d, k, o->ggnn.tau_build, 0, x->n, 1, NULL, NULL, NULL, NULL};
  j.rows = vic__cuda_packed_rows(x, &owned, &pc);
  if (!j.rows) s = vic__fail(c, VIC_E_NOMEM, "GGNN: %s", pc.message);
  if (s == VIC_OK) s = build_shards(c, set, j.rows, x->d, &q, o->device_memory_budget, k, ids, dist, rep);
  double tq = vic__now();
  if (s == VIC_OK) s = vic__progress(c, "ggnn", 0.6);
  if (s == VIC_OK) s = alloc_lists(c, set->shards, x->n, k, &j.ids, &j.dist);
  if (s == VIC_OK) s = query_shards(c, &j, rep);
  if (s == VIC_OK) {
    vic__report_stage(rep, "shards query", vic__now() - tq);
    shard_of = vic__malloc(c, (size_t)x->n * sizeof *shard_of, "shard of each row");
    if (!shard_of) s = VIC_E_NOMEM;
  }
  if (s == VIC_OK) {
    double tm = vic__now();
    for (int t = 0; t < set->shards; ++t)
      for (int64_t i = set->start[t]; i < set->start[t + 1]; ++i) shard_of[i] = t;
    merge_rows(set, x->n, k, j.ids, j.dist, shard_of, ids, dist, 1, vic__threads(c));
    vic__report_stage(rep, "shards merge", vic__now() - tm);
    vic__log(c, VIC_LOG_INFO, "GGNN for-all over %d shards on %d device%s: each point's own list merged with its "
             "queries into the other %d shard%s", set->shards, set->count, set->count == 1 ? "" : "s",
             set->shards - 1, set->shards == 2 ? "" : "s");
  }
  free(shard_of);
  if (j.ids) free_lists(set->shards, j.ids, j.dist);
  free(owned);
  set_free(set);
  return s;
}
