/* Data views: validation, metric preparation and distances. */
#include "internal.h"
#include "topk.h"

#include <string.h>

vic_status vic_data_validate(vic_ctx *c, const vic_data *x) {
  if (!c) return VIC_E_ARGUMENT;
  if (!x || !x->rows) return vic__fail(c, VIC_E_ARGUMENT, "no data (NULL rows)");
  if (x->n <= 0) return vic__fail(c, VIC_E_ARGUMENT, "empty data set (n = %lld)", (long long)x->n);
  if (x->d <= 0) return vic__fail(c, VIC_E_ARGUMENT, "data has no components (d = %d)", (int)x->d);
  if (x->stride != 0 && x->stride < x->d)
    return vic__fail(c, VIC_E_ARGUMENT, "row stride %lld is smaller than d = %d", (long long)x->stride, (int)x->d);
  if ((unsigned)x->metric > VIC_INNER_PRODUCT) return vic__fail(c, VIC_E_ARGUMENT, "unknown metric %d", (int)x->metric);
  if (x->box) {
    if (x->metric != VIC_L2) return vic__fail(c, VIC_E_ARGUMENT, "periodic boxes need the L2 metric");
    for (int32_t j = 0; j < x->d; ++j)
      if (!(x->box[j] >= 0) || !isfinite(x->box[j]))
        return vic__fail(c, VIC_E_ARGUMENT, "periodic box length %d is %g; it must be > 0 (or 0 for an open axis)", (int)j, x->box[j]);
  }
  for (int64_t i = 0; i < x->n; ++i) {
    const float *r = vic__row(x, i);
    for (int32_t j = 0; j < x->d; ++j)
      if (!isfinite(r[j]))
        return vic__fail(c, VIC_E_NONFINITE, "row %lld, component %d is %s; remove or fix non-finite values first",
                         (long long)i, (int)j, isnan(r[j]) ? "NaN" : "infinite");
    if (x->metric == VIC_COSINE && vic__dot(r, r, x->d) == 0.f)
      return vic__fail(c, VIC_E_ARGUMENT, "row %lld is the zero vector; the cosine metric is undefined for it", (long long)i);
  }
  return VIC_OK;
}

vic_status vic__prepare_rows(vic_ctx *c, const vic_data *x, vic_data *view, float **owned) {
  *view = *x;
  *owned = NULL;
  if (x->metric != VIC_COSINE) return VIC_OK;
  float *u = vic__malloc(c, (size_t)x->n * (size_t)x->d * sizeof(float), "normalised rows");
  if (!u) return VIC_E_NOMEM;
  for (int64_t i = 0; i < x->n; ++i) {
    const float *r = vic__row(x, i);
    float inv = 1.f / sqrtf(vic__dot(r, r, x->d));
    for (int32_t j = 0; j < x->d; ++j) u[i * x->d + j] = r[j] * inv;
  }
  view->rows = u;
  view->stride = x->d;
  *owned = u;
  return VIC_OK;
}

float vic__work_dist(const vic_data *x, const float *a, const float *b) {
  if (x->metric == VIC_INNER_PRODUCT) return -vic__dot(a, b, x->d);
  return vic__l2sq(a, b, x->d, x->box);
}

float vic__true_dist(vic_metric m, float work) {
  switch (m) {
  case VIC_L2: return sqrtf(work > 0.f ? work : 0.f);
  case VIC_COSINE: return 0.5f * work;
  default: return work;
  }
}

void vic__true_lists(vic_ctx *c, vic_metric m, int64_t n, int32_t k, int64_t *ids, float *dist) {
#pragma omp parallel for num_threads(vic__threads(c)) schedule(static, 4096)
  for (int64_t i = 0; i < n; ++i) {
    float *d = dist + i * k;
    int64_t *id = ids + i * k;
    for (int32_t t = 0; t < k; ++t) d[t] = id[t] < 0 ? INFINITY : vic__true_dist(m, d[t]);
    vic__sort_pairs(d, id, k);
  }
}
