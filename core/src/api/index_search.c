/* vic_index_search: validation of the queries, the k clamp and the report;
 * the search itself is the index kind's (method_table.h, index_kinds.c). */
#include "method_table.h"

#include <string.h>

vic_status vic_index_search(vic_ctx *c, const vic_index *ix, const vic_data *queries, const vic_search_options *o_in,
                            vic_knn *out) {
  if (!c) return VIC_E_ARGUMENT;
  if (!out) return vic__fail(c, VIC_E_ARGUMENT, "no place for the results (out is NULL)");
  vic__knn_clear(out);
  c->error[0] = '\0';
  c->warnings = 0;
  vic__begin_call(c);
  if (!ix) return vic__fail(c, VIC_E_ARGUMENT, "no index");
  if (!o_in) return vic__fail(c, VIC_E_ARGUMENT, "no search options");
  vic_search_options o_full;
  vic_search_options_init(&o_full);
  vic_status so_ = VIC__OPTIONS_IN(c, o_in, &o_full, "vic_search_options");
  if (so_ != VIC_OK) return so_;
  const vic_search_options *o = &o_full;
  if (o->k <= 0) return vic__fail(c, VIC_E_ARGUMENT, "k must be at least 1 (got %d)", (int)o->k);
  if (!(o->tau >= 0.f) || !isfinite(o->tau) || o->max_visits < 0 || o->entry_points < 0 || o->occlusion_limit < 0)
    return vic__fail(c, VIC_E_ARGUMENT,
                     "search options: tau must be finite and >= 0 (got %g), max_visits (%d), entry_points (%d) and "
                     "occlusion_limit (%d) >= 0",
                     (double)o->tau, (int)o->max_visits, (int)o->entry_points, (int)o->occlusion_limit);
  if (!queries) return vic__fail(c, VIC_E_ARGUMENT, "no queries");
  if (queries->d != ix->x.d)
    return vic__fail(c, VIC_E_ARGUMENT, "queries have d = %d but the index has d = %d", (int)queries->d, (int)ix->x.d);
  /* queries are read in the index's metric, whatever their view says */
  vic_data q = *queries;
  q.metric = ix->x.metric;
  q.box = NULL;
  double t0 = vic__now();
  const vic_index_ops *ops = vic__index_ops(ix->kind);
  if (!ops) return vic__fail(c, VIC_E_ARGUMENT, "corrupt index (kind %d)", (int)ix->kind);
  /* at most every indexed point (warned about once the queries passed) */
  const int32_t k = (int64_t)o->k > ix->x.n ? (int32_t)ix->x.n : o->k;
  /* a search that validates the queries in its copy of them (one pass,
   * the same words) gets them after the shape checks alone */
  const int fused = ops->fused_io && ops->fused_io(c, ix, &q, k);
  vic_status s = fused ? vic__data_shape(c, &q) : vic_data_validate(c, &q);
  if (s != VIC_OK) return s;

  vic_report rep;
  vic__report_clear(&rep);
  rep.method = ix->report.method;
  rep.backend = VIC_BACKEND_CPU;
  rep.k_requested = o->k;
  if (k < o->k) {
    vic__log(c, VIC_LOG_WARNING, "k = %d > n = %lld indexed points: clamped to k = %d", (int)o->k, (long long)ix->x.n,
             (int)k);
  }
  rep.k = k;
  /* more entry points than indexed points cannot help: each point enters once */
  vic_search_options so = *o;
  if ((int64_t)so.entry_points > ix->x.n) {
    so.entry_points = (int32_t)ix->x.n;
    vic__log(c, VIC_LOG_WARNING, "entry_points = %d > n = %lld indexed points: clamped to %d", (int)o->entry_points,
             (long long)ix->x.n, (int)so.entry_points);
  }
  o = &so;

  vic_data qp;
  float *owned = NULL;
  if (!ops->raw_queries && !fused) {
    if ((s = vic__prepare_rows(c, &q, &qp, &owned)) != VIC_OK) return s;
  } else {
    qp = q;
  }
  out->n = q.n;
  out->k = k;
  out->ids = vic__malloc(c, (size_t)q.n * (size_t)k * sizeof(int64_t), "result ids");
  out->dist = out->ids ? vic__malloc(c, (size_t)q.n * (size_t)k * sizeof(float), "result distances") : NULL;
  if (!out->dist) { s = VIC_E_NOMEM; goto fail; }

  double ts = vic__now();
  s = ops->search(c, ix, &qp, o, k, out->ids, out->dist, &rep);
  if (s == VIC_OK && !fused) s = vic__check_distances(c, out->n, k, out->ids, out->dist, "index search");
  if (s != VIC_OK) goto fail;
  vic__report_stage(&rep, "search", vic__now() - ts);
  rep.recall_estimate = ops->exact ? 1.0 : -1.0;
  rep.seconds_total = vic__now() - t0;
  rep.warnings = c->warnings;
  out->report = rep;
  free(owned);
  return VIC_OK;

fail:
  free(owned);
  vic_knn_free(out);
  return s;
}
