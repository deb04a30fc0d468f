/* Public-path mode of vicinity_bench (--batches): what a caller of
 * vic_index_search gets per batch size, wall time beside the kernels'
 * time, so that the fixed cost of a call is a number in every run. */
#include "bench_env.h"
#include "bench_query.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double quantile(double *v, int n, double f) {
  bench_sort(v, n);
  int i = (int)(f * (n - 1) + 0.5);
  return v[i < 0 ? 0 : (i >= n ? n - 1 : i)];
}

/* The queries of call i of batch b: consecutive rows, wrapping to the
 * start where the rest is shorter than b. */
static int64_t first_row(int64_t i, int64_t b, int64_t nq) {
  const int64_t slots = nq / b;
  return (i % slots) * b;
}

/* One call; wall and kernel seconds, hits against the truth (or -1). */
static int one_call(vic_ctx *c, const vic_index *ix, const vic_data *q, int64_t q0, int64_t b,
                    const vic_search_options *so, const vic_data *x, const vio_imatrix *truth, double *wall,
                    double *kernel, int64_t *hits, const char **reason_out, char *reason, size_t rsize) {
  vic_data view = *q;
  view.rows = q->rows + q0 * q->d;
  view.n = b;
  vic_knn nn;
  const double t0 = bench_now();
  vic_status s = vic_index_search(c, ix, &view, so, &nn);
  *wall = bench_now() - t0;
  if (s != VIC_OK) {
    fprintf(stderr, "vicinity_bench: vic_index_search (batch %lld): %s: %s\n", (long long)b, vic_status_name(s),
            vic_ctx_error(c));
    return 1;
  }
  *kernel = nn.report.seconds_kernel;
  *hits = truth ? bench_query_hits(x, q, q0, &nn, truth) : -1;
  snprintf(reason, rsize, "%s", nn.report.reason);
  *reason_out = reason;
  vic_knn_free(&nn);
  return 0;
}

int bench_batches(vic_ctx *c, const vic_data *x, const vic_data *q, const vic_index *ix, double build_s,
                  const vio_imatrix *truth, const bench_query_args *a) {
  int nb = 0;
  int64_t bmax = 0;
  while (nb < BENCH_MAX_BATCHES && a->batches[nb] > 0) {
    if (a->batches[nb] > q->n) {
      fprintf(stderr, "vicinity_bench: batch %lld > %lld queries\n", (long long)a->batches[nb], (long long)q->n);
      return 1;
    }
    if (a->batches[nb] > bmax) bmax = a->batches[nb];
    ++nb;
  }
  const int ntaus = a->ntaus > 0 ? a->ntaus : 1;
  const vic_report *br = vic_index_report(ix);
  char card[256] = "", date[32], reason[512];
  bench_card(a->device, card, sizeof card);
  const char *why = "";
  /* the first call after the build: the largest batch at the first tau */
  vic_search_options so = a->search;
  if (a->ntaus > 0) so.tau = a->taus[0];
  double first_wall = 0, first_kernel = 0;
  int64_t first_hits = 0;
  if (one_call(c, ix, q, 0, bmax, &so, x, truth, &first_wall, &first_kernel, &first_hits, &why, reason,
               sizeof reason))
    return 1;
  for (int t = 0; t < ntaus; ++t) {
    if (a->ntaus > 0) so.tau = a->taus[t];
    for (int bi = 0; bi < nb; ++bi) {
      const int64_t b = a->batches[bi];
      /* calls: 10,000 queries' worth, at least 5 and at most 2,000 (which
       * still times more than 1,000 single queries) */
      int calls = (int)(10000 / b);
      if (calls < 5) calls = 5;
      if (calls > 2000) calls = 2000;
      const int warm = b >= 1000 ? 2 : 20;
      double *wall = malloc((size_t)calls * sizeof *wall), *kern = malloc((size_t)calls * sizeof *kern);
      if (!wall || !kern) {
        free(wall);
        free(kern);
        fprintf(stderr, "vicinity_bench: out of memory\n");
        return 1;
      }
      int64_t hits = 0, answered = 0;
      double sum_wall = 0, sum_kern = 0;
      for (int i = -warm; i < calls; ++i) {
        const int64_t q0 = first_row(i + warm, b, q->n);
        double w, kt;
        int64_t h;
        if (one_call(c, ix, q, q0, b, &so, x, truth, &w, &kt, &h, &why, reason, sizeof reason)) {
          free(wall);
          free(kern);
          return 1;
        }
        if (i < 0) continue;
        wall[i] = w;
        kern[i] = kt;
        sum_wall += w;
        sum_kern += kt;
        hits += h;
        answered += b;
      }
      const double later_mean = sum_wall / calls, kern_mean = sum_kern / calls;
      const double wmed = quantile(wall, calls, 0.5), wp90 = quantile(wall, calls, 0.9);
      const double kmed = quantile(kern, calls, 0.5);
      const int32_t k = a->search.k;
      bench_date(date, sizeof date);
      printf("{\"dataset\":");
      bench_json_str(stdout, a->name);
      printf(",\"n\":%lld,\"d\":%d,\"k\":%d,\"queries\":%lld,\"method\":", (long long)x->n, x->d, k, (long long)q->n);
      bench_json_str(stdout, vic_method_name(br->method));
      printf(",\"machine\":");
      bench_json_str(stdout, a->machine);
      printf(",\"card\":");
      if (card[0]) bench_json_str(stdout, card);
      else printf("null");
      printf(",\"tau\":%g,\"max_visits\":%d,\"occlusion_limit\":%d,\"entry_points\":%d,\"batch\":%lld,"
             "\"calls\":%d,\"warmup_calls\":%d",
             so.tau, so.max_visits, so.occlusion_limit, so.entry_points, (long long)b, calls, warm);
      printf(",\"wall_us_per_call_median\":%.2f,\"wall_us_per_call_p90\":%.2f,\"wall_us_per_call_mean\":%.2f",
             1e6 * wmed, 1e6 * wp90, 1e6 * later_mean);
      /* no kernel time (a CPU search): null, not 0 */
      if (kmed > 0) {
        printf(",\"kernel_us_per_call_median\":%.2f,\"kernel_us_per_call_mean\":%.2f", 1e6 * kmed, 1e6 * kern_mean);
        printf(",\"wall_us_per_query\":%.4f,\"kernel_us_per_query\":%.4f", 1e6 * wmed / b, 1e6 * kmed / b);
        printf(",\"qps_wall\":%.1f,\"qps_kernel\":%.1f,\"wall_over_kernel\":%.3f", b / wmed, b / kmed, wmed / kmed);
      } else {
        printf(",\"kernel_us_per_call_median\":null,\"kernel_us_per_call_mean\":null");
        printf(",\"wall_us_per_query\":%.4f,\"kernel_us_per_query\":null", 1e6 * wmed / b);
        printf(",\"qps_wall\":%.1f,\"qps_kernel\":null,\"wall_over_kernel\":null", b / wmed);
      }
      printf(",\"recall\":");
      if (truth) printf("%.6f", (double)hits / ((double)answered * (k < truth->d ? k : truth->d)));
      else printf("null");
      if (t == 0 && b == bmax)
        printf(",\"first_call_wall_us\":%.2f,\"first_call_kernel_us\":%.2f,\"first_over_later_median\":%.3f",
               1e6 * first_wall, 1e6 * first_kernel, first_wall / wmed);
      printf(",\"index_build_seconds\":%.4f,\"index_bytes\":%lld,\"date\":", build_s, (long long)vic_index_size(ix));
      bench_json_str(stdout, date);
      printf(",\"tool\":\"vicinity-index-batches\",\"build_reason\":");
      bench_json_str(stdout, br->reason);
      printf(",\"reason\":");
      bench_json_str(stdout, why);
      printf("}\n");
      fflush(stdout);
      free(wall);
      free(kern);
    }
  }
  return 0;
}
