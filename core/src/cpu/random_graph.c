/* The "random" method: every point's k neighbours drawn uniformly from the
 * other points, their true distances computed and sorted.  A baseline for
 * tests and benchmarks, the floor any real method must beat: its recall is
 * about k / (n - 1), and the recall estimate must say so.  CPU only, no
 * index of its own.  Deterministic: row i's draw depends on the context's
 * seed and i alone, whatever the thread count. */
#include "method_table.h"
#include "topk.h"

#include <math.h>

/* Floyd's sampling of k distinct values of 0..m-1 into out (k <= m). */
static void sample_distinct(vic_rng *r, int64_t m, int32_t k, int64_t *out) {
  int32_t got = 0;
  for (int64_t j = m - k; j < m; ++j) {
    int64_t t = (int64_t)vic__rng_below(r, (uint64_t)j + 1);
    int seen = 0;
    for (int32_t u = 0; u < got && !seen; ++u) seen = out[u] == t;
    out[got++] = seen ? j : t;
  }
}

static vic_status random_lists(vic_ctx *c, const vic_data *x, const vic_build_options *o, vic_method m, int32_t k,
                               int64_t *ids, float *dist, vic_report *rep) {
  (void)o, (void)m, (void)rep;
  const int64_t n = x->n;
#pragma omp parallel for num_threads(vic__threads(c)) schedule(static)
  for (int64_t i = 0; i < n; ++i) {
    int64_t *id = ids + i * k;
    float *d = dist + i * k;
    vic_rng r = vic__rng(c->opt.seed, (uint64_t)i ^ 0x7a4d0f5eull);
    sample_distinct(&r, n - 1, k, id); /* of the n - 1 others: skip i */
    for (int32_t t = 0; t < k; ++t) {
      if (id[t] >= i) id[t]++;
      d[t] = vic__work_dist(x, vic__row(x, i), vic__row(x, id[t]));
    }
    /* ascending by (working distance, id), then true distances */
    vic__sort_pairs(d, id, k);
    for (int32_t t = 0; t < k; ++t) d[t] = vic__true_dist(x->metric, d[t]);
  }
  return vic__progress(c, "random", 1.0);
}

const vic_method_ops vic__method_random = {.cpu_lists = random_lists};
