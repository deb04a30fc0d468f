/* Index build + search timing for vicinity_bench --query. */
#include "bench_query.h"

#include "bench_env.h"
#include "vic_io.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Exact ids of the k nearest data points of every query (no self
 * exclusion), loaded from the cache or computed with the core's exact
 * query and saved. */
static int bench_query_truth(vic_ctx *c, const vic_data *x, const vic_data *q, int32_t k, const char *path,
                       vio_imatrix *t) {
  char err[1024];
  memset(t, 0, sizeof *t);
  if (access(path, R_OK) == 0) {
    if (vio_load_ivecs(path, t, err, sizeof err) != 0) { fprintf(stderr, "vicinity_bench: %s\n", err); return 1; }
    if (t->n == q->n && t->d >= k) return 0;
    vio_ifree(t);
  }
  vic_knn nn;
  vic_status s = vic_knn_query_exact(c, x, q, k, &nn);
  if (s != VIC_OK) {
    fprintf(stderr, "vicinity_bench: exact queries: %s: %s\n", vic_status_name(s), vic_ctx_error(c));
    return 1;
  }
  t->n = nn.n;
  t->d = nn.k;
  t->rows = malloc((size_t)nn.n * (size_t)nn.k * sizeof(int32_t));
  if (!t->rows) { vic_knn_free(&nn); fprintf(stderr, "vicinity_bench: out of memory\n"); return 1; }
  for (int64_t i = 0; i < nn.n * nn.k; ++i) t->rows[i] = (int32_t)nn.ids[i];
  vic_knn_free(&nn);
  if (vio_save_ivecs(path, t, err, sizeof err) != 0) { fprintf(stderr, "vicinity_bench: %s\n", err); return 1; }
  fprintf(stderr, "bench: exact query lists cached in %s\n", path);
  return 0;
}

static double l2(const float *a, const float *b, int32_t d) {
  double s = 0;
  for (int32_t j = 0; j < d; ++j) { double t = (double)a[j] - b[j]; s += t * t; }
  return sqrt(s);
}

int64_t bench_query_hits(const vic_data *x, const vic_data *q, int64_t q0, const vic_knn *nn, const vio_imatrix *t) {
  int32_t k = nn->k < t->d ? nn->k : t->d;
  int64_t hit = 0;
  for (int64_t i = 0; i < nn->n; ++i) {
    const int32_t *e = t->rows + (q0 + i) * t->d;
    const float *qi = q->rows + (q0 + i) * q->d;
    double kth = x->metric == VIC_L2 ? l2(qi, x->rows + (int64_t)e[k - 1] * x->d, x->d) : -INFINITY;
    int64_t found = 0;
    for (int32_t u = 0; u < k; ++u) {
      int64_t id = nn->ids[i * nn->k + u];
      if (id < 0) continue;
      int in = 0;
      for (int32_t v = 0; v < k && !in; ++v) in = e[v] == id;
      found += in || nn->dist[i * nn->k + u] <= kth * (1 + 1e-5);
    }
    hit += found < k ? found : k;
  }
  return hit;
}

static double query_recall(const vic_data *x, const vic_data *q, const vic_knn *nn, const vio_imatrix *t) {
  const int32_t k = nn->k < t->d ? nn->k : t->d;
  return (double)bench_query_hits(x, q, 0, nn, t) / ((double)nn->n * k);
}

int bench_query(vic_ctx *c, const vic_data *x, const vic_build_options *o, const bench_query_args *a) {
  char err[1024], date[32];
  vio_matrix qm;
  if (vio_load(a->query_path, &qm, err, sizeof err) != 0) { fprintf(stderr, "vicinity_bench: %s\n", err); return 1; }
  if (qm.d != x->d) {
    fprintf(stderr, "vicinity_bench: queries have d = %d, the data d = %d\n", qm.d, x->d);
    vio_free(&qm);
    return 1;
  }
  vic_data q = {qm.rows, qm.n, qm.d, 0, x->metric, x->box, x->origin};
  vio_imatrix truth = {0};
  int rc = 0;
  vic_index *ix = NULL;
  if (a->truth_path && bench_query_truth(c, x, &q, a->search.k, a->truth_path, &truth) != 0) { rc = 1; goto done; }
  vic_status s;
  if (a->warmup > 0) { /* an untimed build first: the device context and the allocator's first use */
    if ((s = vic_index_build(c, x, o, &ix)) != VIC_OK) {
      fprintf(stderr, "vicinity_bench: vic_index_build (warm-up): %s: %s\n", vic_status_name(s), vic_ctx_error(c));
      rc = 1;
      goto done;
    }
    vic_index_free(ix);
    ix = NULL;
  }
  double t0 = bench_now();
  s = vic_index_build(c, x, o, &ix);
  double build_s = bench_now() - t0;
  if (s != VIC_OK) {
    fprintf(stderr, "vicinity_bench: vic_index_build: %s: %s\n", vic_status_name(s), vic_ctx_error(c));
    rc = 1;
    goto done;
  }
  const vic_report *br = vic_index_report(ix);
  if (a->batches[0] > 0) {
    rc = bench_batches(c, x, &q, ix, build_s, truth.rows ? &truth : NULL, a);
    goto done;
  }
  for (int run = 0; run < a->warmup + a->repeats; ++run) {
    vic_knn nn;
    double ts = bench_now();
    s = vic_index_search(c, ix, &q, &a->search, &nn);
    double search_s = bench_now() - ts;
    if (s != VIC_OK) {
      fprintf(stderr, "vicinity_bench: vic_index_search: %s: %s\n", vic_status_name(s), vic_ctx_error(c));
      rc = 1;
      goto done;
    }
    if (run >= a->warmup) {
      double recall = truth.rows ? query_recall(x, &q, &nn, &truth) : -1;
      bench_date(date, sizeof date);
      printf("{\"dataset\":");
      bench_json_str(stdout, a->name);
      printf(",\"n\":%lld,\"d\":%d,\"k\":%d,\"queries\":%lld,\"method\":", (long long)x->n, x->d, nn.k,
             (long long)q.n);
      bench_json_str(stdout, vic_method_name(br->method));
      printf(",\"backend\":");
      bench_json_str(stdout, vic_backend_name(nn.report.backend));
      printf(",\"threads\":%d,\"machine\":", a->threads);
      bench_json_str(stdout, a->machine);
      char card[256] = "";
      if (nn.report.backend == VIC_BACKEND_CUDA) bench_card(a->device, card, sizeof card);
      printf(",\"card\":");
      if (card[0]) bench_json_str(stdout, card);
      else printf("null");
      printf(",\"seconds\":%.6f,\"seconds_stages\":{\"index_build\":%.6f,\"index_build_kernel\":%.6f,"
             "\"search\":%.6f},", search_s, build_s, br->seconds_kernel, search_s);
      printf("\"index_build_stages\":{");
      for (int st = 0; st < br->n_stages; ++st)
        printf("%s\"%s\":%.6f", st ? "," : "", br->stages[st].name, br->stages[st].seconds);
      printf("},\"qps\":%.1f,\"tau\":%g,\"max_visits\":%d,\"recall\":", (double)q.n / search_s, a->search.tau,
             a->search.max_visits);
      if (recall >= 0) printf("%.6f", recall);
      else printf("null");
      printf(",\"recall_sample\":%lld,\"index_bytes\":%lld,\"peak_rss_mb\":%.1f,\"date\":",
             recall >= 0 ? (long long)q.n : 0LL, (long long)vic_index_size(ix), bench_peak_rss_mb());
      bench_json_str(stdout, date);
      printf(",\"tool\":\"vicinity-index\",\"reason\":");
      bench_json_str(stdout, br->reason);
      printf("}\n");
      fflush(stdout);
    }
    vic_knn_free(&nn);
  }
done:
  vic_index_free(ix);
  vio_ifree(&truth);
  vio_free(&qm);
  return rc;
}
