/* Data views: validation, metric preparation and distances. */
#include "internal.h"
#include "topk.h"

#include <float.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Squared distances below this are subnormal floats or zero for every
 * pair of points: the distances, their order and any density lose their
 * precision (about 1e-31 in squared length, 3e-16 in length). */
#define TINY_SQUARED ((double)FLT_MIN / (double)FLT_EPSILON)

/* The float kernels form squared distances (L2, and cosine on unit rows)
 * or dot products (inner product) as sums over the d components.  The
 * largest squared distance is at most the squared diagonal of the data's
 * bounding box, the largest |dot| at most the sum of the squared largest
 * magnitudes per component: where these pass FLT_MAX the sums overflow to
 * infinity and the lists come out wrong, so such data are refused with
 * the numbers and the factor that would fit them.  lo, hi: the box. */
static vic_status range_verdict(vic_ctx *c, const vic_data *x, const float *lo, const float *hi) {
  const int32_t d = x->d;
  double diag2 = 0, mag2 = 0, mag = 0;
  for (int32_t j = 0; j < d; ++j) {
    double e = (double)hi[j] - (double)lo[j];
    if (x->box && x->box[j] > 0 && e > 0.5 * x->box[j]) e = 0.5 * x->box[j]; /* minimum image */
    double m = fabs((double)lo[j]) > fabs((double)hi[j]) ? fabs((double)lo[j]) : fabs((double)hi[j]);
    diag2 += e * e;
    mag2 += m * m;
    if (m > mag) mag = m;
  }
  const double big = x->metric == VIC_INNER_PRODUCT ? mag2 : diag2;
  const char *what = x->metric == VIC_INNER_PRODUCT ? "dot products" : "squared distances";
  if (big > (double)FLT_MAX)
    return vic__fail(c, VIC_E_NONFINITE,
                     "the data are too large for float %s: with d = %d and values up to %.3g in magnitude they reach "
                     "%.3g, above the float maximum %.3g; divide the values by %.3g or more (e.g. change units)",
                     what, (int)d, mag, big, (double)FLT_MAX, sqrt(big / (double)FLT_MAX) * 16.0);
  if (big > 0 && big < TINY_SQUARED)
    return vic__fail(c, VIC_E_ARGUMENT,
                     "the data are too small for float %s: with d = %d and values up to %.3g in magnitude they are at "
                     "most %.3g, below %.3g where floats lose their precision; multiply the values by %.3g or more "
                     "(e.g. change units)",
                     what, (int)d, mag, big, TINY_SQUARED, sqrt(TINY_SQUARED / big) * 16.0);
  return VIC_OK;
}

/* One row into the running box lo, hi; 0 when a value is not finite.
 * Branch-free over restrict pointers, so that it vectorises. */
static int row_scan(const float *restrict r, float *restrict lo, float *restrict hi, int32_t d) {
  int finite = 1;
  for (int32_t j = 0; j < d; ++j) {
    const float v = r[j];
    finite &= v - v == 0.f; /* false for inf and NaN */
    lo[j] = v < lo[j] ? v : lo[j];
    hi[j] = v > hi[j] ? v : hi[j];
  }
  return finite;
}

/* Values below which a pass runs on the calling thread, outside any
 * parallel region: a region's start costs more than such a pass (a few
 * queries), and regions of other sizes than the usual one make OpenMP
 * end and start pool threads. */
#define SERIAL_VALUES 65536

static int zero_row(const float *r, int32_t d) {
  for (int32_t j = 0; j < d; ++j)
    if (r[j] != 0.f) return 0;
  return 1;
}

void vic__unit_row(const float *r, int32_t d, float *out) {
  /* scaled by the largest magnitude first, so that the squared norm can
   * neither overflow (values near 1e19 and above) nor underflow */
  float m = 0.f;
  for (int32_t j = 0; j < d; ++j) m = fabsf(r[j]) > m ? fabsf(r[j]) : m;
  if (m == 0.f) {
    for (int32_t j = 0; j < d; ++j) out[j] = 0.f;
    return;
  }
  double s = 0;
  for (int32_t j = 0; j < d; ++j) { double t = (double)r[j] / m; s += t * t; }
  const double inv = 1.0 / (m * sqrt(s));
  for (int32_t j = 0; j < d; ++j) out[j] = (float)(r[j] * inv);
}

int64_t vic__true_rows(vic_metric m, int32_t k, int64_t rows, const int64_t *src_ids, const float *src_dist,
                       int64_t *ids, float *dist) {
  int64_t bad = INT64_MAX;
  for (int64_t i = 0; i < rows; ++i)
    for (int32_t t = 0; t < k; ++t) {
      const int64_t e = i * k + t, id = src_ids[e];
      const float v = id < 0 ? INFINITY : vic__true_dist(m, src_dist[e]);
      ids[e] = id;
      dist[e] = v;
      if (id >= 0 && !isfinite(v) && bad == INT64_MAX) bad = i;
    }
  return bad;
}

vic_status vic__distance_verdict(vic_ctx *c, int64_t bad, int32_t k, const int64_t *ids, const float *dist,
                                 const char *what) {
  if (bad == INT64_MAX) return VIC_OK;
  int32_t t = 0;
  while (ids[bad * k + t] < 0 || isfinite(dist[bad * k + t])) ++t;
  return vic__fail(c, VIC_E_NONFINITE,
                   "%s: the distance from row %lld to its neighbour %lld is %g: a float could not hold it (values too "
                   "large for the dimension); rescale the data",
                   what, (long long)bad, (long long)ids[bad * k + t], (double)dist[bad * k + t]);
}

/* Whether a list of k holds a neighbour (id >= 0) at a non-finite distance. */
static int list_bad(const int64_t *ids, const float *dist, int32_t k) {
  for (int32_t t = 0; t < k; ++t)
    if (ids[t] >= 0 && !isfinite(dist[t])) return 1;
  return 0;
}

vic_status vic__check_distances(vic_ctx *c, int64_t n, int32_t k, const int64_t *ids, const float *dist,
                                const char *what) {
  int64_t bad = INT64_MAX;
  if (n * (int64_t)k < SERIAL_VALUES) {
    for (int64_t i = 0; i < n && bad == INT64_MAX; ++i)
      if (list_bad(ids + i * k, dist + i * k, k)) bad = i;
  } else {
#pragma omp parallel for num_threads(vic__threads(c)) reduction(min : bad) schedule(static, 4096)
    for (int64_t i = 0; i < n; ++i)
      if (list_bad(ids + i * k, dist + i * k, k) && i < bad) bad = i;
  }
  return vic__distance_verdict(c, bad, k, ids, dist, what);
}

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

vic_status vic__data_shape(vic_ctx *c, const vic_data *x) {
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
  return VIC_OK;
}

/* One slot's box (lo, hi) in floats, whole cache lines: the slots' threads
 * write theirs on every row, so that none shares a line with another. */
static size_t box_floats(int32_t d) { return (2 * (size_t)d + 15) / 16 * 16; }

vic_status vic__rows_check_begin(vic_ctx *c, const vic_data *x, int threads, vic_rows_check *rc) {
  memset(rc, 0, sizeof *rc);
  vic_status s = vic__data_shape(c, x);
  if (s != VIC_OK) return s;
  if (threads < 1) threads = 1;
  const int32_t d = x->d;
  rc->x = x;
  rc->threads = threads;
  rc->cosine = x->metric == VIC_COSINE;
  rc->box_mem = vic__malloc(c, box_floats(d) * (size_t)threads * sizeof *rc->box + 64, "range check");
  rc->box = rc->box_mem ? (float *)(((uintptr_t)rc->box_mem + 63) / 64 * 64) : NULL;
  rc->bad = rc->box ? vic__malloc(c, (size_t)threads * sizeof *rc->bad, "range check") : NULL;
  if (!rc->bad) {
    vic__rows_check_free(rc);
    return VIC_E_NOMEM;
  }
  /* empty boxes: a slot without rows leaves the merged box as it is */
  for (int t = 0; t < threads; ++t) {
    float *lo = rc->box + box_floats(d) * (size_t)t;
    for (int32_t j = 0; j < d; ++j) {
      lo[j] = INFINITY;
      lo[d + j] = -INFINITY;
    }
    rc->bad[t] = INT64_MAX;
  }
  return VIC_OK;
}

int vic__rows_check_part(vic_rows_check *rc, int thread, int64_t i0, int64_t i1, float *dst) {
  const vic_data *x = rc->x;
  const int32_t d = x->d;
  float *lo = rc->box + box_floats(d) * (size_t)thread, *hi = lo + d;
  for (int64_t i = i0; i < i1; ++i) {
    const float *r = vic__row(x, i);
    if (!row_scan(r, lo, hi, d) || (rc->cosine && zero_row(r, d))) {
      if (i < rc->bad[thread]) rc->bad[thread] = i;
      return 1;
    }
    if (dst) memcpy(dst + (i - i0) * (int64_t)d, r, (size_t)d * sizeof(float));
  }
  return 0;
}

int64_t vic__rows_check_bad(const vic_rows_check *rc) {
  int64_t bad = INT64_MAX;
  for (int t = 0; t < rc->threads; ++t) bad = rc->bad[t] < bad ? rc->bad[t] : bad;
  return bad;
}

void vic__rows_check_free(vic_rows_check *rc) {
  free(rc->box_mem);
  free(rc->bad);
  rc->box_mem = NULL;
  rc->box = NULL;
  rc->bad = NULL;
}

vic_status vic__rows_check_end(vic_ctx *c, vic_rows_check *rc) {
  const vic_data *x = rc->x;
  const int32_t d = x->d;
  const int64_t bad = vic__rows_check_bad(rc);
  float *box = rc->box;
  if (bad != INT64_MAX) {
    vic__rows_check_free(rc);
    const float *r = vic__row(x, bad);
    for (int32_t j = 0; j < d; ++j)
      if (!isfinite(r[j]))
        return vic__fail(c, VIC_E_NONFINITE, "row %lld, component %d is %s; remove or fix non-finite values first",
                         (long long)bad, (int)j, isnan(r[j]) ? "NaN" : "infinite");
    return vic__fail(c, VIC_E_ARGUMENT, "row %lld is the zero vector; the cosine metric is undefined for it", (long long)bad);
  }
  for (int t = 1; t < rc->threads; ++t) {
    const float *lo = box + box_floats(d) * (size_t)t, *hi = lo + d;
    for (int32_t j = 0; j < d; ++j) {
      box[j] = lo[j] < box[j] ? lo[j] : box[j];
      box[d + j] = hi[j] > box[d + j] ? hi[j] : box[d + j];
    }
  }
  /* cosine: unit rows, normalised in a scaled frame, cannot overflow */
  vic_status s = rc->cosine ? VIC_OK : range_verdict(c, x, box, box + d);
  vic__rows_check_free(rc);
  if (s == VIC_OK && x->box) s = check_box_holds_data(c, x);
  return s;
}

vic_status vic_data_validate(vic_ctx *c, const vic_data *x) {
  if (!c) return VIC_E_ARGUMENT;
  /* One pass: the first row with a non-finite value (or, for cosine, the
   * zero row) and the bounding box, per thread then merged.  Small inputs
   * (a few queries) on the calling thread, outside any parallel region. */
  const int threads = x && x->n * (int64_t)x->d < SERIAL_VALUES ? 1 : vic__threads(c);
  vic_rows_check rc;
  vic_status s = vic__rows_check_begin(c, x, threads, &rc);
  if (s != VIC_OK) return s;
  if (threads == 1) {
    vic__rows_check_part(&rc, 0, 0, x->n, NULL);
  } else {
#pragma omp parallel num_threads(threads)
    {
      int t = 0, nt = 1;
#ifdef _OPENMP
      t = omp_get_thread_num();
      nt = omp_get_num_threads();
#endif
      vic__rows_check_part(&rc, t, x->n * t / nt, x->n * (t + 1) / nt, NULL);
    }
  }
  return vic__rows_check_end(c, &rc);
}

vic_status vic__prepare_rows(vic_ctx *c, const vic_data *x, vic_data *view, float **owned) {
  *view = *x;
  *owned = NULL;
  if (x->metric != VIC_COSINE) return VIC_OK;
  float *u = vic__malloc(c, (size_t)x->n * (size_t)x->d * sizeof(float), "normalised rows");
  if (!u) return VIC_E_NOMEM;
  for (int64_t i = 0; i < x->n; ++i) vic__unit_row(vic__row(x, i), x->d, u + i * x->d);
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

void vic__true_dists(vic_ctx *c, vic_metric m, int64_t n, const int64_t *ids, float *dist) {
  if (n < SERIAL_VALUES) {
    for (int64_t i = 0; i < n; ++i) dist[i] = ids[i] < 0 ? INFINITY : vic__true_dist(m, dist[i]);
    return;
  }
#pragma omp parallel for num_threads(vic__threads(c)) schedule(static)
  for (int64_t i = 0; i < n; ++i) dist[i] = ids[i] < 0 ? INFINITY : vic__true_dist(m, dist[i]);
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
