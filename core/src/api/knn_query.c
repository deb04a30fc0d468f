/* vic_knn_query_exact: exact k nearest neighbours of a query set in a data
 * set.  Validation of both views and the choice between the cell grid
 * (d <= 3, L2) and brute force; the methods themselves live elsewhere. */
#include "internal.h"
#include "grid.h"

#include <stdio.h>
#include <string.h>

/* The two views must describe the same space. */
static vic_status check_pair(vic_ctx *c, const vic_data *x, const vic_data *q) {
  vic_status s = vic_data_validate(c, x);
  if (s != VIC_OK) return s;
  if ((s = vic_data_validate(c, q)) != VIC_OK) {
    char why[sizeof c->error];
    snprintf(why, sizeof why, "%s", c->error);
    return vic__fail(c, s, "queries: %s", why);
  }
  if (q->d != x->d)
    return vic__fail(c, VIC_E_ARGUMENT, "queries have d = %d but the data have d = %d", (int)q->d, (int)x->d);
  if (q->metric != x->metric)
    return vic__fail(c, VIC_E_ARGUMENT, "queries use the %s metric but the data use %s", vic_metric_name(q->metric),
                     vic_metric_name(x->metric));
  if (q->box && !x->box)
    return vic__fail(c, VIC_E_ARGUMENT, "queries have a periodic box but the data have none");
  if (q->box && q->box != x->box)
    for (int32_t j = 0; j < x->d; ++j)
      if (q->box[j] != x->box[j])
        return vic__fail(c, VIC_E_ARGUMENT, "queries and data have different periodic box lengths in dimension %d (%g, %g)",
                         (int)j, q->box[j], x->box[j]);
  return VIC_OK;
}

static vic_status run_grid(vic_ctx *c, const vic_data *x, const vic_data *q, int32_t k, vic_knn *out, vic_report *rep) {
  double t = vic__now();
  vic_grid *g = NULL;
  vic_status s = vic__grid_build(c, x, &g);
  if (s != VIC_OK) return s;
  vic__report_stage(rep, "grid build", vic__now() - t);
  t = vic__now();
  s = vic__grid_query(c, g, q, k, out->ids, out->dist);
  vic__report_stage(rep, "grid query", vic__now() - t);
  vic__grid_free(g);
  return s;
}

vic_status vic_knn_query_exact(vic_ctx *c, const vic_data *x_in, const vic_data *q_in, int32_t k, vic_knn *out) {
  if (!c) return VIC_E_ARGUMENT;
  c->error[0] = '\0';
  c->warnings = 0;
  vic__begin_call(c);
  if (!out) return vic__fail(c, VIC_E_ARGUMENT, "no output lists (out is NULL)");
  vic__knn_clear(out);
  if (!x_in || !q_in) return vic__fail(c, VIC_E_ARGUMENT, "no %s (NULL view)", x_in ? "queries" : "data");
  double t0 = vic__now();
  vic_status s = check_pair(c, x_in, q_in);
  if (s != VIC_OK) return s;
  if (k < 1) return vic__fail(c, VIC_E_ARGUMENT, "k must be at least 1 (got %d)", (int)k);

  vic_report rep;
  vic__report_clear(&rep);
  rep.k_requested = k;
  if ((int64_t)k > x_in->n) {
    vic__log(c, VIC_LOG_WARNING, "k = %d > n = %lld data points: clamped to k = %lld", (int)k, (long long)x_in->n,
             (long long)x_in->n);
    k = (int32_t)x_in->n;
  }
  rep.k = k;
  rep.backend = VIC_BACKEND_CPU;
  int grid = x_in->d <= 3 && x_in->metric == VIC_L2;
  rep.method = grid ? VIC_METHOD_GRID : VIC_METHOD_BRUTE;
  if (grid) vic__report_reason(&rep, "exact queries with d = %d <= 3 and L2: cell grid on the CPU", (int)x_in->d);
  else vic__report_reason(&rep, "exact queries with d = %d or metric %s: brute force on the CPU", (int)x_in->d,
                          vic_metric_name(x_in->metric));

  vic_data x, q;
  float *owned_x = NULL, *owned_q = NULL;
  if ((s = vic__prepare_rows(c, x_in, &x, &owned_x)) != VIC_OK) return s;
  if ((s = vic__prepare_rows(c, q_in, &q, &owned_q)) != VIC_OK) goto fail;
  out->n = q.n;
  out->k = k;
  out->ids = vic__malloc(c, (size_t)q.n * (size_t)k * sizeof(int64_t), "neighbour ids");
  out->dist = out->ids ? vic__malloc(c, (size_t)q.n * (size_t)k * sizeof(float), "neighbour distances") : NULL;
  if (!out->dist) { s = VIC_E_NOMEM; goto fail; }

  if (grid) {
    s = run_grid(c, &x, &q, k, out, &rep);
  } else {
    double t = vic__now();
    s = vic__cpu_brute_knn(c, &x, &q, k, out->ids, out->dist);
    vic__report_stage(&rep, "brute", vic__now() - t);
  }
  if (s == VIC_OK) s = vic__check_distances(c, out->n, k, out->ids, out->dist, "exact query");
  if (s != VIC_OK) goto fail;
  vic__report_dnn1(out, &rep);
  rep.recall_estimate = 1.0;
  rep.seconds_total = vic__now() - t0;
  rep.warnings = c->warnings;
  out->report = rep;
  free(owned_x);
  free(owned_q);
  return VIC_OK;

fail:
  free(owned_x);
  free(owned_q);
  vic_knn_free(out);
  return s;
}
