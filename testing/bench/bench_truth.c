/* Ground-truth cache and full recall for the bench program. */
#include "bench_truth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int bench_truth(vic_ctx *c, const vic_data *x, int32_t k, const char *path, vio_imatrix *truth, char *err,
                size_t errsize) {
  memset(truth, 0, sizeof *truth);
  if (access(path, R_OK) == 0) {
    if (vio_load_ivecs(path, truth, err, errsize) != 0) return -1;
    if (truth->n == x->n && truth->d >= k) return 0;
    fprintf(stderr, "bench: %s holds %lld x %d ids, need %lld x %d: recomputing\n", path, (long long)truth->n,
            truth->d, (long long)x->n, k);
    vio_ifree(truth);
  }
  vic_build_options o;
  vic_build_options_init(&o);
  o.k = k;
  o.recall_sample = 0;
  o.method = x->d <= 3 && x->metric == VIC_L2 ? VIC_METHOD_GRID : VIC_METHOD_BRUTE;
  vic_knn nn;
  vic_status s = vic_knn_build(c, x, &o, &nn);
  if (s != VIC_OK) {
    snprintf(err, errsize, "exact lists for %s: %s: %s", path, vic_status_name(s), vic_ctx_error(c));
    return -1;
  }
  truth->n = nn.n;
  truth->d = nn.k;
  truth->rows = malloc((size_t)nn.n * (size_t)nn.k * sizeof(int32_t));
  if (!truth->rows) {
    vic_knn_free(&nn);
    snprintf(err, errsize, "out of memory for the exact lists");
    return -1;
  }
  for (int64_t i = 0; i < nn.n * nn.k; ++i) truth->rows[i] = (int32_t)nn.ids[i];
  vic_knn_free(&nn);
  fprintf(stderr, "bench: exact lists (%s) cached in %s\n", vic_method_name(o.method), path);
  return vio_save_ivecs(path, truth, err, errsize);
}

static double distance(const vic_data *x, int64_t a, int64_t b) {
  int64_t st = x->stride ? x->stride : x->d;
  const float *p = x->rows + a * st, *q = x->rows + b * st;
  double s = 0, pp = 0, qq = 0;
  for (int32_t j = 0; j < x->d; ++j) {
    double t = (double)p[j] - q[j];
    s += t * t;
    pp += (double)p[j] * p[j];
    qq += (double)q[j] * q[j];
  }
  if (x->metric == VIC_L2) return sqrt(s);
  double dot = 0.5 * (pp + qq - s);
  if (x->metric == VIC_COSINE) return 1.0 - dot / sqrt(pp * qq);
  return -dot;
}

double bench_recall(const vic_data *x, const vic_knn *nn, const vio_imatrix *truth) {
  int32_t k = nn->k < truth->d ? nn->k : truth->d;
  int64_t hit = 0, total = 0;
#pragma omp parallel for reduction(+ : hit, total) schedule(static)
  for (int64_t i = 0; i < nn->n; ++i) {
    const int32_t *e = truth->rows + i * truth->d;
    const int64_t *a = nn->ids + i * nn->k;
    const float *ad = nn->dist + i * nn->k;
    double kth = distance(x, i, e[k - 1]);
    int64_t found = 0;
    for (int32_t u = 0; u < k; ++u) {
      if (a[u] < 0) continue;
      int in = 0;
      for (int32_t t = 0; t < k && !in; ++t) in = e[t] == a[u];
      found += in || ad[u] <= kth * (1 + 1e-5) + 1e-12;
    }
    hit += found < k ? found : k;
    total += k;
  }
  return total ? (double)hit / (double)total : 1.0;
}
