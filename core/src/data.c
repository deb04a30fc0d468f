/* Data views: validation, metric preparation and distances. */
#include "internal.h"
#include "topk.h"

#include <string.h>

/* Each periodic axis's box against the data (see vic_data_validate). */
static vic_status check_box_holds_data(vic_ctx *c, const vic_data *x) {
  for (int32_t j = 0; j < x->d; ++j) {
    const double L = x->box[j];
    if (L == 0) continue;
    const double tol = 1e-6 * L;
    if (x->origin && !isfinite(x->origin[j]))
      return vic__fail(c, VIC_E_ARGUMENT, "periodic box origin %d is %g; it must be finite", (int)j, x->origin[j]);
    double lo = INFINITY, hi = -INFINITY;
    int64_t lo_row = 0, hi_row = 0;
    for (int64_t i = 0; i < x->n; ++i) {
      const double v = vic__row(x, i)[j];
      if (v < lo) { lo = v; lo_row = i; }
      if (v > hi) { hi = v; hi_row = i; }
    }
    if (hi - lo > L + tol)
      return vic__fail(c, VIC_E_ARGUMENT,
                       "periodic axis %d: the points span %.9g (from %.9g at row %lld to %.9g at row %lld) but the "
                       "box length is %.9g; the box is smaller than the data (wrong box length or units?)",
                       (int)j, hi - lo, lo, (long long)lo_row, hi, (long long)hi_row, L);
    if (x->origin) {
      const double o = x->origin[j];
      const int below = lo < o - tol;
      if (below || hi > o + L + tol)
        return vic__fail(c, VIC_E_ARGUMENT,
                         "periodic axis %d: row %lld has coordinate %.9g, outside the box [%.9g, %.9g) (origin %.9g, "
                         "length %.9g); the points do not lie in their box",
                         (int)j, (long long)(below ? lo_row : hi_row), below ? lo : hi, o, o + L, o, L);
    }
  }
  return VIC_OK;
}

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
  return x->box ? check_box_holds_data(c, x) : VIC_OK;
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
