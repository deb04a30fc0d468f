/* vic_index_build and the index's lifetime: the choice of kind (the core's
 * policy, reported with its reason), construction, size, report, free. */
#include "backend_cuda.h"
#include "hash64.h"
#include "index_internal.h"

#include <string.h>

static void defaults(vic_search_options *o) {
  memset(o, 0, sizeof *o);
  o->k = 10;
  o->tau = 0.5f;
  o->max_visits = 0;
  o->occlusion_limit = 0;
  o->entry_points = 0;
}

void vic_search_options_init_sized(vic_search_options *o, size_t struct_size) {
  vic_search_options d;
  defaults(&d);
  vic__init_sized(o, struct_size, &d, sizeof d);
}

vic_status vic__index_new(vic_ctx *c, const vic_data *x, vic_index_kind kind, vic_index **out) {
  vic_index *ix = vic__calloc(c, 1, sizeof *ix, "index");
  if (!ix) return VIC_E_NOMEM;
  ix->kind = kind;
  vic_status s = vic__prepare_rows(c, x, &ix->x, &ix->owned_rows);
  if (s != VIC_OK) { free(ix); return s; }
  /* a pass over every value: only where the index keeps no view of the
   * caller's rows to take it from later (saving and loading need it, a
   * build and a search do not) */
  ix->fingerprint_later = ix->owned_rows == NULL;
  if (!ix->fingerprint_later) ix->fingerprint = vic__data_fingerprint(c, x);
  *out = ix;
  return VIC_OK;
}

uint64_t vic__index_fingerprint(vic_ctx *c, const vic_index *ix) {
  return ix->fingerprint_later ? vic__data_fingerprint(c, &ix->x) : ix->fingerprint;
}

/* AUTO picks the exact grid for d <= 3 with L2, exact brute force for small
 * n and for the inner product (no graph method applies to it), the GPU
 * graph with the shortest build at recall@10 0.99 of its default search
 * when a device is usable (auto_gpu_kind), and the NN-Descent graph
 * otherwise.  GGNN builds its graph on the GPU when the
 * context's backend allows one and a device is usable; without one (and for
 * the other GPU methods, which have no index of their own) the CPU graph is
 * built instead, with a warning. */
/* The GPU index AUTO takes: the kind whose build was shortest at recall@10
 * 0.99 of its default search on manifold 1M x 128 and islands (H100,
 * benchmarks/sections/issue17-builds.md).  0 when no device is usable (the
 * CPU graph then), with the probe's message cleared. */
static vic_method kind_method(vic_index_kind k);

static int auto_gpu_kind(vic_ctx *c, const vic_data *x, vic_index_kind *kind) {
  if (c->opt.backend == VIC_BACKEND_CPU || x->box || x->n >= INT32_MAX) return 0;
  if (vic__cuda_probe(c) != VIC_OK) {
    c->error[0] = '\0';
    return 0;
  }
  *kind = VIC_INDEX_GRNND;
  return 1;
}

static vic_status choose_kind(vic_ctx *c, const vic_data *x, const vic_build_options *o, vic_report *r,
                              vic_index_kind *kind) {
  switch (o->method) {
  case VIC_METHOD_AUTO:
    if (x->d <= 3 && x->metric == VIC_L2) {
      vic__report_reason(r, "d = %d <= 3 with the L2 metric: exact cell grid", (int)x->d);
      *kind = VIC_INDEX_GRID;
    } else if (x->metric == VIC_INNER_PRODUCT) {
      vic__report_reason(r, "inner product is not a metric: graph search does not apply, exact brute force");
      *kind = VIC_INDEX_BRUTE;
    } else if (x->n <= o->brute_max_n) {
      vic__report_reason(r, "n = %lld <= %lld: exact brute force is cheap", (long long)x->n, (long long)o->brute_max_n);
      *kind = VIC_INDEX_BRUTE;
    } else if (auto_gpu_kind(c, x, kind)) {
      vic__report_reason(r, "d = %d, n = %lld > %lld, GPU usable: %s, the GPU index built fastest at recall@10 0.99 "
                            "of its default search", (int)x->d, (long long)x->n, (long long)o->brute_max_n,
                         vic_method_name(kind_method(*kind)));
    } else {
      vic__report_reason(r, "d = %d, n = %lld > %lld: NN-Descent graph with best-first search", (int)x->d,
                         (long long)x->n, (long long)o->brute_max_n);
      *kind = VIC_INDEX_GRAPH;
    }
    return VIC_OK;
  case VIC_METHOD_BRUTE:
    vic__report_reason(r, "requested by the caller");
    *kind = VIC_INDEX_BRUTE;
    return VIC_OK;
  case VIC_METHOD_GRID:
    if (x->d > 3 || x->metric != VIC_L2)
      return vic__fail(c, VIC_E_UNSUPPORTED, "the grid index needs d <= 3 and the L2 metric (d = %d, metric %s)",
                       (int)x->d, vic_metric_name(x->metric));
    vic__report_reason(r, "requested by the caller");
    *kind = VIC_INDEX_GRID;
    return VIC_OK;
  case VIC_METHOD_NNDESCENT:
    vic__report_reason(r, "requested by the caller");
    *kind = VIC_INDEX_GRAPH;
    break;
  case VIC_METHOD_GGNN:
    if (c->opt.backend != VIC_BACKEND_CPU && vic__cuda_has_method(VIC_METHOD_GGNN) && vic__cuda_probe(c) == VIC_OK) {
      vic__report_reason(r, "requested by the caller: GGNN search graph on the GPU");
      *kind = VIC_INDEX_GGNN;
      break;
    }
    if (c->opt.backend == VIC_BACKEND_CUDA) {
      vic_status ps = vic__cuda_probe(c); /* says why the GPU cannot be used */
      return ps != VIC_OK ? ps : vic__fail(c, VIC_E_UNSUPPORTED, "this build has no GPU GGNN index");
    }
    c->error[0] = '\0'; /* no usable GPU: the CPU graph instead */
    /* fall through */
  case VIC_METHOD_GRNND:
    if (o->method == VIC_METHOD_GRNND) { /* GPU only; without a device the CPU graph below */
      if (c->opt.backend != VIC_BACKEND_CPU && vic__cuda_probe(c) == VIC_OK) {
        vic__report_reason(r, "requested by the caller: GRNND graph on the GPU");
        *kind = VIC_INDEX_GRNND;
        break;
      }
      if (c->opt.backend == VIC_BACKEND_CUDA) return vic__cuda_probe(c);
      c->error[0] = '\0';
    }
    /* fall through */
  case VIC_METHOD_GNND:
    vic__log(c, VIC_LOG_WARNING, "index method '%s' is not available on the CPU; building the NN-Descent graph index",
             vic_method_name(o->method));
    vic__report_reason(r, "'%s' has no CPU index: NN-Descent graph with best-first search instead",
                       vic_method_name(o->method));
    *kind = VIC_INDEX_GRAPH;
    break;
  case VIC_METHOD_TSDG: /* on the GPU when one is usable, else on the CPU (flat_index.c) */
    vic__report_reason(r, "requested by the caller: TSDG graph");
    *kind = VIC_INDEX_TSDG;
    break;
  default:
    return vic__fail(c, VIC_E_ARGUMENT, "unknown method %d", (int)o->method);
  }
  if (x->metric == VIC_INNER_PRODUCT)
    return vic__fail(c, VIC_E_UNSUPPORTED, "the inner product is not a metric; only a brute-force index supports it");
  return VIC_OK;
}

static vic_method kind_method(vic_index_kind k) {
  return k == VIC_INDEX_GRID   ? VIC_METHOD_GRID
         : k == VIC_INDEX_BRUTE ? VIC_METHOD_BRUTE
         : k == VIC_INDEX_GGNN  ? VIC_METHOD_GGNN
         : k == VIC_INDEX_GRNND ? VIC_METHOD_GRNND
         : k == VIC_INDEX_TSDG  ? VIC_METHOD_TSDG
                                : VIC_METHOD_NNDESCENT;
}

vic_status vic_index_build(vic_ctx *c, const vic_data *x, const vic_build_options *o_in, vic_index **out) {
  if (!c) return VIC_E_ARGUMENT;
  if (!out) return vic__fail(c, VIC_E_ARGUMENT, "no place for the index (out is NULL)");
  *out = NULL;
  c->error[0] = '\0';
  c->warnings = 0;
  vic__begin_call(c);
  if (!o_in) return vic__fail(c, VIC_E_ARGUMENT, "no build options");
  vic_build_options o_full;
  vic_build_options_init(&o_full);
  vic_status s = VIC__OPTIONS_IN(c, o_in, &o_full, "vic_build_options");
  if (s != VIC_OK) return s;
  const vic_build_options *o = &o_full;
  double t0 = vic__now();
  s = vic_data_validate(c, x);
  if (s != VIC_OK) return s;
  if (x->n < 2) return vic__fail(c, VIC_E_ARGUMENT, "an index needs at least 2 points (got %lld)", (long long)x->n);
  if (o->k <= 0) return vic__fail(c, VIC_E_ARGUMENT, "k must be at least 1 (got %d)", (int)o->k);

  vic_report rep;
  vic__report_clear(&rep);
  vic_index_kind kind = VIC_INDEX_GRAPH;
  if ((s = choose_kind(c, x, o, &rep, &kind)) != VIC_OK) return s;
  if (kind == VIC_INDEX_GRAPH && x->n >= INT32_MAX)
    return vic__fail(c, VIC_E_UNSUPPORTED, "the graph index handles up to 2^31 - 2 points (got %lld)", (long long)x->n);

  vic_index *ix;
  if ((s = vic__index_new(c, x, kind, &ix)) != VIC_OK) return s;
  ix->report = rep;
  ix->report.method = kind_method(kind);
  ix->report.backend = VIC_BACKEND_CPU;
  ix->report.k_requested = o->k;
  double tb = vic__now();
  if (kind == VIC_INDEX_GRID) {
    s = vic__grid_build(c, &ix->x, &ix->grid);
    if (s == VIC_OK) vic__report_stage(&ix->report, "grid", vic__now() - tb);
  } else if (kind == VIC_INDEX_GRAPH) {
    s = vic__search_graph_build(c, ix, o);
    ix->report.k = ix->graph.k_build;
  } else if (kind == VIC_INDEX_GGNN) {
    s = vic__cuda_ggnn_index_build(c, &ix->x, o, &ix->gpu, &ix->report);
    if (s == VIC_OK) vic__report_stage(&ix->report, "ggnn", vic__now() - tb);
  } else if (kind == VIC_INDEX_GRNND || kind == VIC_INDEX_TSDG) {
    s = vic__flat_build(c, ix, o);
  }
  if (s != VIC_OK) { vic_index_free(ix); return s; }
  ix->report.recall_estimate = (kind == VIC_INDEX_BRUTE || kind == VIC_INDEX_GRID) ? 1.0 : -1.0;
  ix->report.seconds_total = vic__now() - t0;
  ix->report.warnings = c->warnings;
  *out = ix;
  return VIC_OK;
}

const vic_report *vic_index_report(const vic_index *ix) { return ix ? &ix->report : NULL; }

int64_t vic_index_size(const vic_index *ix) {
  if (!ix) return 0;
  int64_t bytes = (int64_t)sizeof *ix;
  if (ix->owned_rows) bytes += ix->x.n * (int64_t)ix->x.d * (int64_t)sizeof(float);
  if (ix->grid) bytes += (int64_t)vic__grid_bytes(ix->grid);
  bytes += vic__search_graph_bytes(&ix->graph, ix->x.n);
  bytes += vic__flat_bytes(&ix->flat, ix->x.n);
  if (ix->gpu) bytes += vic__cuda_ggnn_index_bytes(ix->gpu); /* device memory */
  return bytes;
}

void vic_index_free(vic_index *ix) {
  if (!ix) return;
  if (ix->grid) vic__grid_free(ix->grid);
  vic__search_graph_free(&ix->graph);
  if (ix->gpu) vic__cuda_ggnn_index_free(ix->gpu);
  vic__flat_free(&ix->flat);
  free(ix->owned_rows);
  free(ix);
}
