/* vic_knn_add and vic_knn_merge: a k-NN graph grown by new rows, and two
 * graphs of disjoint rows merged, by the steps of ggm_engine.h on the GPU
 * or the CPU (the core's choice, with the CPU as fallback when the device
 * fails under AUTO). */
#include "backend_cuda.h"
#include "ggm_common.h"
#include "list_dest.h"

#include <string.h>

vic_status vic__ggm_rows(vic_ctx *c, const vic_data *x, const char *what, vic_data *view, float **owned) {
  *owned = NULL;
  if (!x) return vic__fail(c, VIC_E_ARGUMENT, "%s: no data", what);
  vic_status s = vic_data_validate(c, x);
  if (s != VIC_OK) return s;
  if (x->metric == VIC_INNER_PRODUCT)
    return vic__fail(c, VIC_E_UNSUPPORTED, "%s: the inner product is not a metric; graph merges need L2 or cosine", what);
  if (x->box) return vic__fail(c, VIC_E_UNSUPPORTED, "%s: periodic boxes are not supported by graph merges", what);
  if ((s = vic__prepare_rows(c, x, view, owned)) != VIC_OK) return s;
  const int64_t stride = view->stride ? view->stride : view->d;
  if (stride != view->d) {
    float *p = vic__malloc(c, (size_t)view->n * view->d * sizeof *p, "packed rows");
    if (!p) { free(*owned); *owned = NULL; return VIC_E_NOMEM; }
    for (int64_t i = 0; i < view->n; ++i) memcpy(p + i * view->d, vic__row(view, i), (size_t)view->d * sizeof *p);
    free(*owned);
    *owned = p;
    view->rows = p;
  }
  view->stride = view->d;
  return VIC_OK;
}

vic_status vic__ggm_backend(vic_ctx *c, int *gpu) {
  *gpu = 0;
  if (c->opt.backend == VIC_BACKEND_CPU) return VIC_OK;
  vic_status s = vic__cuda_probe(c);
#ifdef VIC_WITH_CUDA /* GNND and GGM run on the GPU in every CUDA build (not via the method table: its
                      * GNND record calls back into the shard build, knn_sharded.c) */
  if (s == VIC_OK) { *gpu = 1; return VIC_OK; }
#endif
  if (c->opt.backend == VIC_BACKEND_CUDA)
    return s != VIC_OK ? s : vic__fail(c, VIC_E_NODEVICE, "this build has no GPU GNND");
  c->error[0] = '\0';
  return VIC_OK;
}

/* The given lists are this data's: ids in -1..n-1 and never the row itself
 * (also the first check of vic__ggm_lists_in). */
static vic_status lists_check(vic_ctx *c, const vic_knn *g, int64_t n, const char *what) {
  if (!g || !g->ids || !g->dist) return vic__fail(c, VIC_E_ARGUMENT, "%s: no lists", what);
  if (g->n != n)
    return vic__fail(c, VIC_E_ARGUMENT, "%s lists %lld rows but its data has %lld", what, (long long)g->n, (long long)n);
  int64_t bad = INT64_MAX; /* the first row that fails */
#pragma omp parallel for schedule(static, 65536) num_threads(vic__threads(c)) reduction(min : bad)
  for (int64_t u = 0; u < n; ++u)
    for (int32_t t = 0; t < g->k; ++t) {
      const int64_t id = g->ids[u * g->k + t];
      if ((id >= n || id < -1 || id == u) && u < bad) bad = u;
    }
  if (bad < INT64_MAX)
    return vic__fail(c, VIC_E_ARGUMENT, "%s: row %lld lists an id outside 0..%lld or itself (not this data's graph?)",
                     what, (long long)bad, (long long)n - 1);
  return VIC_OK;
}

vic_status vic__ggm_lists_in(vic_ctx *c, const vic_knn *g, int64_t n, vic_metric m, const char *what, int32_t K,
                             int32_t *ids, float *dist) {
  vic_status s = lists_check(c, g, n, what);
  if (s != VIC_OK) return s;
  if (g->k < 1 || g->k > K) return vic__fail(c, VIC_E_ARGUMENT, "%s: k = %d outside 1..%d", what, (int)g->k, (int)K);
#pragma omp parallel for schedule(static) num_threads(vic__threads(c))
  for (int64_t u = 0; u < n; ++u) {
    for (int32_t t = 0; t < K; ++t) {
      const int64_t id = t < g->k ? g->ids[u * g->k + t] : -1;
      ids[u * K + t] = (int32_t)id;
      dist[u * K + t] = id < 0 ? INFINITY : vic__ggm_work_of_true(m, g->dist[u * g->k + t]);
    }
  }
  return VIC_OK;
}

vic_status vic__ggm_lists_out(vic_ctx *c, vic_metric m, int64_t n, int32_t k, const int32_t *ids, const float *dist,
                              vic_knn *out) {
  vic__knn_clear(out);
  out->ids = vic__malloc(c, (size_t)n * k * sizeof *out->ids, "neighbour ids");
  out->dist = vic__malloc(c, (size_t)n * k * sizeof *out->dist, "neighbour distances");
  if (!out->ids || !out->dist) { vic_knn_free(out); vic__knn_clear(out); return VIC_E_NOMEM; }
#pragma omp parallel for schedule(static, 65536) num_threads(vic__threads(c))
  for (int64_t i = 0; i < n * k; ++i) { out->ids[i] = ids[i]; out->dist[i] = dist[i]; }
  out->n = n;
  out->k = k;
  vic__true_lists(c, m, n, k, out->ids, out->dist);
  return VIC_OK;
}

/* Exact K-wide working lists of a few rows (fewer than GNND's lists hold). */
static void exact_small(const float *rows, int64_t n, int32_t d, int32_t K, int32_t *ids, float *dist) {
  for (int64_t u = 0; u < n; ++u) {
    int32_t *li = ids + u * K;
    float *ld = dist + u * K;
    for (int32_t t = 0; t < K; ++t) { li[t] = -1; ld[t] = INFINITY; }
    for (int64_t v = 0; v < n; ++v) {
      if (v == u) continue;
      float dv = vic__l2sq(rows + u * d, rows + v * d, d, NULL);
      int32_t t = K - 1;
      if (!(dv < ld[t] || (dv == ld[t] && li[t] < 0))) continue;
      while (t > 0 && (dv < ld[t - 1] || (dv == ld[t - 1] && v < li[t - 1]))) { li[t] = li[t - 1]; ld[t] = ld[t - 1]; --t; }
      li[t] = (int32_t)v;
      ld[t] = dv;
    }
  }
}

/* The search's parameters for k-entry lists: new rows search W = 32 old
 * rows (k > 16: 64), enough for an old row to be found by most new rows
 * whose lists it would enter; the old graph's k edges per row are filled
 * up to W with reverse edges.  The joins through the rows' neighbours
 * carry most of the new-to-new pairs (without them a CPU simulation of
 * the add lost 0.03 recall on old rows and 0.09 on new ones). */
vic_add_plan vic__add_plan(int32_t k) {
  vic_add_plan p;
  p.width = k <= 16 ? 32 : 64;
  p.degree = p.width;
  p.list = 2 * p.width;
  p.delta = 0.1f;
  p.reverse = 16;
  p.join = 16; /* an old row: all its k <= 16 entries; a new row: its first 16 found rows */
  p.refine = 0;
  p.pivots = 0;
  p.chunk = 0;
  return p;
}


/* Rows the device left with fewer than min(k, n - 1) entries (a new row
 * whose search found too few rows) get their exact lists by a scan of all
 * rows: working distances, ascending by (distance, id). */
static void complete_short(vic_ctx *c, const vic_data *a, const vic_data *b, int32_t k, int64_t *ids, float *dist) {
  const int64_t n = a->n + b->n, want = n - 1 < k ? n - 1 : k;
  const int32_t d = a->d;
#pragma omp parallel for schedule(dynamic, 1024) num_threads(vic__threads(c))
  for (int64_t u = 0; u < n; ++u) {
    int64_t *li = ids + u * k;
    float *ld = dist + u * k;
    if (want < 1 || li[want - 1] >= 0) continue;
    const float *q = u < a->n ? a->rows + u * d : b->rows + (u - a->n) * d;
    for (int32_t t = 0; t < k; ++t) { li[t] = -1; ld[t] = INFINITY; }
    for (int64_t v = 0; v < n; ++v) {
      if (v == u) continue;
      const float *r = v < a->n ? a->rows + v * d : b->rows + (v - a->n) * d;
      const float dv = vic__l2sq(q, r, d, NULL);
      int32_t t = k - 1;
      if (!(dv < ld[t] || (dv == ld[t] && (li[t] < 0 || v < li[t])))) continue;
      while (t > 0 && (dv < ld[t - 1] || (dv == ld[t - 1] && v < li[t - 1]))) { li[t] = li[t - 1]; ld[t] = ld[t - 1]; --t; }
      li[t] = v;
      ld[t] = dv;
    }
  }
}

/* vic_knn_add on the GPU by a graph search over the old rows (ggm_engine.h,
 * vic_kernels_add.h): no graph of the new rows and no merge, so the call
 * costs a fraction of a rebuild.  Fills out (true distances) or returns
 * the device's status with its message in st. */
static vic_status add_search(vic_ctx *c, vic_ggm_step *st, const vic_data *a, const vic_knn *ga, const vic_data *b,
                             vic_knn *out) {
  const int64_t n = a->n + b->n;
  const int32_t k = ga->k;
  const vic_add_plan p = vic__add_plan(k);
  out->ids = vic__malloc_lists(c, (size_t)n * k * sizeof *out->ids, "neighbour ids");
  out->dist = vic__malloc_lists(c, (size_t)n * k * sizeof *out->dist, "neighbour distances");
  if (!out->ids || !out->dist) { vic_knn_free(out); vic__knn_clear(out); return VIC_E_NOMEM; }
  vic_status s = vic__ggm_gpu_add(c, st, a->rows, a->n, b->rows, b->n, a->d, ga->ids, k, &p, out->ids, out->dist);
  if (s != VIC_OK) { vic_knn_free(out); vic__knn_clear(out); return s; }
  const double t = vic__now();
  complete_short(c, a, b, k, out->ids, out->dist);
  out->n = n;
  out->k = k;
  vic__true_lists(c, a->metric, n, k, out->ids, out->dist);
  if (st->stages) vic__report_stage(st->stages, "true distances", vic__now() - t);
  return VIC_OK;
}

typedef struct {
  const vic_data *a, *b; /* prepared, packed blocks */
  int32_t *ia, *ib;      /* K-wide working lists, ids local to each block */
  float *da, *db;
} grow_job;

/* Merge the two blocks' lists into out (k wide, ids over the union) on the
 * GPU, or on the CPU when gpu is 0 or the GPU fails under AUTO. */
static vic_status merge_blocks(vic_ctx *c, const vic_build_options *o, int gpu, const grow_job *j,
                               const vic_ggm_params *p, int32_t k, int32_t *oi, float *od, vic_report *rep) {
  const double t = vic__now();
  vic_status s = VIC_E_NODEVICE;
  if (gpu) {
    vic_ggm_step st = {c->opt.device, 0, "", 0, 0, NULL, 0, 0, 0};
    s = vic__ggm_gpu_merge(c, &st, j->a->rows, j->a->n, j->b->rows, j->b->n, j->a->d, p, j->ia, j->da, j->ib, j->db, k,
                           oi, od);
    rep->seconds_kernel += st.seconds_kernel;
    rep->seconds_transfer += st.seconds_transfer;
    if (s == VIC_OK) { vic__report_stage(rep, "ggm merge", vic__now() - t); return VIC_OK; }
    if (s == VIC_E_CANCELLED) return vic__fail(c, s, "%s", vic__cancelled(c) ? "cancelled" : st.message);
    if (c->opt.backend == VIC_BACKEND_CUDA || (s != VIC_E_NOMEM && s != VIC_E_DEVICE)) return vic__fail(c, s, "%s", st.message);
    vic__log(c, VIC_LOG_WARNING, "GPU failed (%s); merging on the CPU", st.message);
  }
  rep->backend = VIC_BACKEND_CPU;
  rep->method = VIC_METHOD_NNDESCENT;
  s = vic__ggm_cpu_merge(c, o, j->a->rows, j->a->n, j->b->rows, j->b->n, j->a->d, p, j->ia, j->da, j->ib, j->db, k,
                         oi, od);
  if (s == VIC_OK) vic__report_stage(rep, "cpu merge", vic__now() - t);
  return s;
}

/* The shared body: lists of block b built unless given (gb), then merged. */
static vic_status grow(vic_ctx *c, const vic_data *xa, const vic_knn *ga, const vic_data *xb, const vic_knn *gb,
                       const vic_build_options *o_in, vic_knn *out, const char *call) {
  if (!c) return VIC_E_ARGUMENT;
  c->error[0] = '\0';
  c->warnings = 0;
  vic__begin_call(c);
  if (!out) return vic__fail(c, VIC_E_ARGUMENT, "%s: no place for the result (out is NULL)", call);
  vic__knn_clear(out);
  if (!o_in) return vic__fail(c, VIC_E_ARGUMENT, "%s: no build options", call);
  vic_build_options o;
  vic_build_options_init(&o);
  vic_status s = VIC__OPTIONS_IN(c, o_in, &o, "vic_build_options");
  if (s != VIC_OK) return s;
  const double t0 = vic__now();
  if (!xa || !xb || !ga) return vic__fail(c, VIC_E_ARGUMENT, "%s: data and lists are required", call);
  if (xb->n < 1) return vic__fail(c, VIC_E_ARGUMENT, "%s: nothing to add (the new rows are empty)", call);
  if (xa->d != xb->d)
    return vic__fail(c, VIC_E_ARGUMENT, "%s: the new rows have d = %d, the graph's rows d = %d", call, (int)xb->d,
                     (int)xa->d);
  if (xa->metric != xb->metric)
    return vic__fail(c, VIC_E_ARGUMENT, "%s: the new rows' metric is %s, the graph's %s", call,
                     vic_metric_name(xb->metric), vic_metric_name(xa->metric));
  if (xa->n < 2) return vic__fail(c, VIC_E_ARGUMENT, "%s: the graph needs at least 2 rows", call);
  if (xa->n + xb->n >= INT32_MAX)
    return vic__fail(c, VIC_E_UNSUPPORTED, "%s: graph merges handle up to 2^31 - 2 rows", call);
  if (gb && ga->k != gb->k)
    return vic__fail(c, VIC_E_ARGUMENT, "%s: the graphs have k = %d and k = %d", call, (int)ga->k, (int)gb->k);
  const int32_t k = ga->k;
  vic_ggm_params p;
  if ((s = vic__ggm_params(c, &o, k, &p)) != VIC_OK) return s;
  int gpu;
  if ((s = vic__ggm_backend(c, &gpu)) != VIC_OK) return s;

  vic_data va, vb;
  float *owned_a = NULL, *owned_b = NULL;
  const int64_t n = xa->n + xb->n;
  int32_t *ia = NULL, *ib = NULL, *oi = NULL;
  float *da = NULL, *db = NULL, *od = NULL;
  vic_report rep;
  vic__report_clear(&rep);
  rep.method = gpu ? VIC_METHOD_GNND : VIC_METHOD_NNDESCENT;
  rep.backend = gpu ? VIC_BACKEND_CUDA : VIC_BACKEND_CPU;
  rep.k_requested = rep.k = k;
  rep.recall_estimate = -1;
  if ((s = vic__ggm_rows(c, xa, call, &va, &owned_a)) != VIC_OK) goto done;
  if ((s = vic__ggm_rows(c, xb, call, &vb, &owned_b)) != VIC_OK) goto done;
  if (!gb && gpu && k <= 32) {
    if ((s = lists_check(c, ga, xa->n, "the graph")) != VIC_OK) goto done;
    vic_ggm_step st = {c->opt.device, 0, "", 0, 0, &rep, 0, 0, 0};
    vic__report_stage(&rep, "checks", vic__now() - t0);
    s = add_search(c, &st, &va, ga, &vb, out);
    rep.seconds_kernel += st.seconds_kernel;
    rep.seconds_transfer += st.seconds_transfer;
    if (s == VIC_OK) {
      vic__report_reason(&rep, "add of %lld rows to %lld: a graph search over the old rows (their lists and reverse "
                         "edges) on the GPU", (long long)xb->n, (long long)xa->n);
      rep.seconds_total = vic__now() - t0;
      rep.warnings = c->warnings;
      out->report = rep;
      goto done;
    }
    if (s == VIC_E_CANCELLED || c->opt.backend == VIC_BACKEND_CUDA || (s != VIC_E_NOMEM && s != VIC_E_DEVICE)) {
      s = vic__fail(c, s, "%s", s == VIC_E_CANCELLED && vic__cancelled(c) ? "cancelled" : st.message);
      goto done;
    }
    vic__log(c, VIC_LOG_WARNING, "GPU add failed (%s); adding by GNND and GGM", st.message);
    vic__report_clear(&rep);
    rep.method = VIC_METHOD_GNND;
    rep.backend = VIC_BACKEND_CUDA;
    rep.k_requested = rep.k = k;
    rep.recall_estimate = -1;
  }
  ia = vic__malloc(c, (size_t)xa->n * p.K * sizeof *ia, "working lists");
  da = vic__malloc(c, (size_t)xa->n * p.K * sizeof *da, "working lists");
  ib = vic__malloc(c, (size_t)xb->n * p.K * sizeof *ib, "working lists");
  db = vic__malloc(c, (size_t)xb->n * p.K * sizeof *db, "working lists");
  oi = vic__malloc(c, (size_t)n * k * sizeof *oi, "merged lists");
  od = vic__malloc(c, (size_t)n * k * sizeof *od, "merged lists");
  if (!ia || !da || !ib || !db || !oi || !od) { s = VIC_E_NOMEM; goto done; }
  if ((s = vic__ggm_lists_in(c, ga, xa->n, xa->metric, gb ? "the first graph" : "the graph", p.K, ia, da)) != VIC_OK)
    goto done;
  if (gb) {
    if ((s = vic__ggm_lists_in(c, gb, xb->n, xb->metric, "the second graph", p.K, ib, db)) != VIC_OK) goto done;
  } else {
    const double tb = vic__now();
    if (xb->n <= 2 * (int64_t)p.K) {
      exact_small(vb.rows, vb.n, vb.d, p.K, ib, db);
    } else {
      s = VIC_E_NODEVICE;
      if (gpu) {
        vic_ggm_step st = {c->opt.device, 0, "", 0, 0, NULL, 0, 0, 0};
        s = vic__ggm_gpu_build(c, &st, vb.rows, vb.n, vb.d, &p, ib, db);
        rep.seconds_kernel += st.seconds_kernel;
        rep.seconds_transfer += st.seconds_transfer;
        if (s != VIC_OK && (s == VIC_E_CANCELLED || c->opt.backend == VIC_BACKEND_CUDA ||
                            (s != VIC_E_NOMEM && s != VIC_E_DEVICE))) {
          s = vic__fail(c, s, "%s", s == VIC_E_CANCELLED && vic__cancelled(c) ? "cancelled" : st.message);
          goto done;
        }
        if (s != VIC_OK) vic__log(c, VIC_LOG_WARNING, "GPU failed (%s); building on the CPU", st.message);
      }
      if (s != VIC_OK && (s = vic__ggm_cpu_build(c, &o, vb.rows, vb.n, vb.d, &p, ib, db)) != VIC_OK) goto done;
    }
    vic__report_stage(&rep, "build new rows", vic__now() - tb);
  }
  if ((s = vic__progress(c, call, 0.5)) != VIC_OK) goto done;
  {
    const grow_job j = {&va, &vb, ia, ib, da, db};
    if ((s = merge_blocks(c, &o, gpu, &j, &p, k, oi, od, &rep)) != VIC_OK) goto done;
  }
  if ((s = vic__progress(c, call, 1.0)) != VIC_OK) goto done;
  if ((s = vic__ggm_lists_out(c, xa->metric, n, k, oi, od, out)) != VIC_OK) goto done;
  vic__report_reason(&rep, "%s of %lld + %lld rows: %s", gb ? "GGM merge" : "GGM add", (long long)xa->n,
                     (long long)xb->n, rep.backend == VIC_BACKEND_CUDA ? "GNND and GGM on the GPU"
                                                                     : "NN-Descent over the union, lists merged (CPU)");
  rep.seconds_total = vic__now() - t0;
  rep.warnings = c->warnings;
  out->report = rep;
done:
  free(owned_a);
  free(owned_b);
  free(ia); free(ib); free(da); free(db); free(oi); free(od);
  return s;
}

vic_status vic_knn_add(vic_ctx *c, const vic_data *x, const vic_knn *graph, const vic_data *added,
                       const vic_build_options *o, vic_knn *out) {
  return grow(c, x, graph, added, NULL, o, out, "vic_knn_add");
}

vic_status vic_knn_merge(vic_ctx *c, const vic_data *x1, const vic_knn *g1, const vic_data *x2, const vic_knn *g2,
                         const vic_build_options *o, vic_knn *out) {
  if (c && !g2 && out) {
    vic__knn_clear(out);
    return vic__fail(c, VIC_E_ARGUMENT, "vic_knn_merge: the second graph is required");
  }
  return grow(c, x1, g1, x2, g2, o, out, "vic_knn_merge");
}
