/* vic_index_build and the index's lifetime: the choice of kind (the core's
 * policy, reported with its reason), construction, size, report, free;
 * each kind's work through its ops in the method table. */
#include "backend_cuda.h"
#include "method_table.h"

#include <string.h>

/* The GPU index AUTO takes: the kind whose build was shortest at recall@10
 * 0.99 of its default search on manifold 1M x 128 and islands (H100,
 * benchmarks/sections/issue17-builds.md).  0 when no device is usable (the
 * CPU graph then), with the probe's message cleared. */
static int auto_gpu_kind(vic_ctx *c, const vic_data *x, vic_index_kind *kind) {
  if (c->opt.backend == VIC_BACKEND_CPU || x->box || x->n >= INT32_MAX) return 0;
  if (vic__cuda_probe(c) != VIC_OK) {
    c->error[0] = '\0';
    return 0;
  }
  *kind = VIC_INDEX_GRNND;
  return 1;
}

/* AUTO picks the exact grid for d <= 3 with L2, exact brute force for small
 * n and for the inner product (no graph method applies to it), the GPU
 * graph built fastest at recall@10 0.99 of its default search when a device
 * is usable (auto_gpu_kind), and the NN-Descent graph otherwise.  A method asked for builds its own index; one
 * whose index builds on the GPU only (GGNN, GRNND) does so when the
 * context's backend allows one and a device is usable.  Without one, and
 * for methods with no index of their own (GNND), the record's stand-in
 * index (the CPU graph) is built instead, with a warning. */
static vic_status choose_kind(vic_ctx *c, const vic_data *x, const vic_build_options *o, vic_report *r,
                              vic_index_kind *kind) {
  if (o->method == VIC_METHOD_AUTO) {
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
                         vic_method_name(vic__index_method(*kind)));
    } else {
      vic__report_reason(r, "d = %d, n = %lld > %lld: NN-Descent graph with best-first search", (int)x->d,
                         (long long)x->n, (long long)o->brute_max_n);
      *kind = VIC_INDEX_GRAPH;
    }
    return VIC_OK;
  }
  const vic_method_ops *ops = vic__method_ops(o->method);
  if (!ops) return vic__fail(c, VIC_E_ARGUMENT, "unknown method %d", (int)o->method);
  if ((ops->flags & VIC_OPS_LOW_D_L2) && (x->d > 3 || x->metric != VIC_L2))
    return vic__fail(c, VIC_E_UNSUPPORTED, "the %s index needs d <= 3 and the L2 metric (d = %d, metric %s)",
                     vic_method_name(o->method),
                     (int)x->d, vic_metric_name(x->metric));
  const vic_index_ops *own = ops->index;
  if (own && own->on_gpu &&
      !(c->opt.backend != VIC_BACKEND_CPU && vic__method_on_gpu(ops) && vic__cuda_probe(c) == VIC_OK)) {
    if (c->opt.backend == VIC_BACKEND_CUDA) return vic__cuda_probe(c); /* says why the GPU cannot be used */
    c->error[0] = '\0'; /* no usable GPU: the stand-in's index instead */
    own = NULL;
  }
  if (own) {
    vic__report_reason(r, "%s", own->reason);
    *kind = own->kind;
  } else {
    const vic_method_ops *in = vic__method_ops(ops->index_stand_in);
    if (!in || !in->index)
      return vic__fail(c, VIC_E_UNSUPPORTED, "method '%s' builds kNN lists only; it has no index",
                       vic_method_name(o->method));
    const char *title = vic__method_title(ops->index_stand_in);
    vic__log(c, VIC_LOG_WARNING, "index method '%s' is not available on the CPU; building the %s graph index",
             vic_method_name(o->method), title);
    vic__report_reason(r, "'%s' has no CPU index: %s graph with best-first search instead", vic_method_name(o->method),
                       title);
    *kind = in->index->kind;
  }
  if (x->metric == VIC_INNER_PRODUCT && !(ops->flags & VIC_OPS_INNER_PRODUCT))
    return vic__fail(c, VIC_E_UNSUPPORTED, "the inner product is not a metric; only a brute-force index supports it");
  return VIC_OK;
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
  /* a GGNN build validates the rows while it uploads them (one pass over
   * them, not two; the same words): the shape checks alone here */
  const int later = o->method == VIC_METHOD_GGNN && x && x->n >= 2 && o->k > 0 && x->metric != VIC_COSINE &&
                    !x->box && c->opt.backend != VIC_BACKEND_CPU;
  s = later ? vic__data_shape(c, x) : vic_data_validate(c, x);
  if (s != VIC_OK) return s;
  if (x->n < 2) return vic__fail(c, VIC_E_ARGUMENT, "an index needs at least 2 points (got %lld)", (long long)x->n);
  if (o->k <= 0) return vic__fail(c, VIC_E_ARGUMENT, "k must be at least 1 (got %d)", (int)o->k);

  vic_report rep;
  vic__report_clear(&rep);
  vic_index_kind kind = VIC_INDEX_GRAPH;
  s = choose_kind(c, x, o, &rep, &kind);
  /* any other index (a stand-in), or a refusal: the rows first, as always */
  if (later && (s != VIC_OK || kind != VIC_INDEX_GGNN)) {
    const vic_status v = vic_data_validate(c, x);
    if (v != VIC_OK) return v;
  }
  if (s != VIC_OK) return s;
  const vic_index_ops *ops = vic__index_ops(kind);
  if (ops->admit && (s = ops->admit(c, x)) != VIC_OK) return s;

  vic_index *ix;
  if ((s = vic__index_new(c, x, kind, &ix)) != VIC_OK) {
    const vic_status v = later ? vic_data_validate(c, x) : VIC_OK;
    return v != VIC_OK ? v : s;
  }
  ix->report = rep;
  ix->report.method = vic__index_method(kind);
  ix->report.backend = VIC_BACKEND_CPU;
  ix->report.k_requested = o->k;
  ix->rows_unchecked = later && kind == VIC_INDEX_GGNN;
  if ((s = ops->build(c, ix, o)) != VIC_OK) { vic_index_free(ix); return s; }
  ix->rows_unchecked = 0;
  ix->report.recall_estimate = ops->exact ? 1.0 : -1.0;
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
  const vic_index_ops *ops = vic__index_ops(ix->kind);
  if (ops) bytes += ops->bytes(ix); /* host or device memory */
  return bytes;
}

void vic_index_free(vic_index *ix) {
  if (!ix) return;
  const vic_index_ops *ops = vic__index_ops(ix->kind);
  if (ops) ops->free(ix);
  free(ix->owned_rows);
  free(ix);
}
