/* The exact cell grid (VIC_METHOD_GRID) against the naive double-precision
 * reference: 1-d/2-d/3-d, duplicates, periodic boxes with points on and
 * outside the boundary, clustered data, k beyond a cell's population,
 * k = n - 1, determinism across thread counts, cancellation and the real
 * n-body halo. */
#include "test_util.h"
#include "nbody_models.h"
#include "vic_io.h"

#include <math.h>
#include <string.h>

/* Build with the grid and compare every row with the naive reference. */
static void check_grid(const char *what, const vic_data *x, int32_t k) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_GRID;
  o.k = k;
  vic_knn r;
  VT_OK(c, vic_knn_build(c, x, &o, &r));
  int32_t kk = r.k;
  VT_CHECK(kk == (k < x->n ? k : (int32_t)x->n - 1), "%s: delivered k = %d", what, (int)kk);
  VT_CHECK(r.report.method == VIC_METHOD_GRID && r.report.recall_estimate == 1.0, "%s: report", what);
  int64_t bad = vt_naive_mismatch(&r, x, NULL, kk, 1e-4);
  VT_CHECK(bad == 0, "%s: %lld of %lld rows differ from the naive reference", what, (long long)bad, (long long)x->n);
  int64_t self = 0;
  for (int64_t i = 0; i < x->n; ++i)
    for (int32_t t = 0; t < kk; ++t) self += r.ids[i * kk + t] == i;
  VT_CHECK(self == 0, "%s: a point is its own neighbour %lld times", what, (long long)self);
  const int64_t order = vt_order_violations(&r);
  VT_CHECK(order == 0, "%s: %lld lists not ascending by (distance, id)", what, (long long)order);
  vic_knn_free(&r);
  vic_ctx_destroy(c);
}

static void test_random_dims(void) {
  int64_t n = vt_small() ? 400 : 2500;
  int32_t ks[3] = {1, 7, 16};
  for (int32_t d = 1; d <= 3; ++d) {
    float *p = vt_uniform(n, d, 10.f, 100 + d);
    vic_data x = {p, n, d, 0, VIC_L2, NULL};
    for (int t = 0; t < 3; ++t) {
      char what[64];
      snprintf(what, sizeof what, "uniform d=%d k=%d", (int)d, (int)ks[t]);
      check_grid(what, &x, ks[t]);
    }
    free(p);
  }
}

/* Exact duplicates and points on a lattice (many equal distances): ties must
 * go to the lower id exactly as in the reference. */
static void test_duplicates_and_ties(void) {
  int64_t n = vt_small() ? 300 : 1200;
  float *p = vt_uniform(n, 3, 1.f, 7);
  for (int64_t i = 0; i < n / 4; ++i) memcpy(p + (n - 1 - i) * 3, p + (i % 17) * 3, 3 * sizeof(float));
  vic_data x = {p, n, 3, 0, VIC_L2, NULL};
  check_grid("duplicates", &x, 12);

  int64_t side = 9, m = side * side * side;
  float *lat = malloc((size_t)m * 3 * sizeof(float));
  for (int64_t i = 0; i < m; ++i) {
    lat[3 * i] = (float)(i % side);
    lat[3 * i + 1] = (float)((i / side) % side);
    lat[3 * i + 2] = (float)(i / (side * side));
  }
  vic_data xl = {lat, m, 3, 0, VIC_L2, NULL};
  check_grid("lattice ties", &xl, 10);
  /* with a stride wider than d */
  float *wide = malloc((size_t)m * 5 * sizeof(float));
  for (int64_t i = 0; i < m; ++i) {
    memcpy(wide + 5 * i, lat + 3 * i, 3 * sizeof(float));
    wide[5 * i + 3] = NAN; /* never read: outside the row's d components */
    wide[5 * i + 4] = 1e30f;
  }
  vic_data xw = {wide, m, 3, 5, VIC_L2, NULL};
  check_grid("lattice with stride 5", &xw, 10);
  free(wide);
  free(lat);
  free(p);
}

static void test_periodic(void) {
  int64_t n = vt_small() ? 400 : 2000;
  double boxes[3][3] = {{1, 1, 1}, {2, 0, 0.5}, {10, 10, 0}};
  for (int b = 0; b < 3; ++b) {
    for (int32_t d = 1; d <= 3; ++d) {
      float *p = vt_uniform(n, d, 1.f, 300 + 10 * b + d);
      for (int64_t i = 0; i < n; ++i)
        for (int32_t j = 0; j < d; ++j) p[i * d + j] *= boxes[b][j] > 0 ? (float)boxes[b][j] : 3.f;
      /* on the boundary; and for the last box the whole cloud a quarter
       * box below [0, L) (the box holds the data, wherever it starts:
       * minimum-image distances wrap it).  The shifted coordinates are
       * multiples of 2^-16, so that the shift and the grid's wrap are
       * exact in float and the comparison tests the search, not rounding. */
      for (int32_t j = 0; j < d; ++j) {
        float L = boxes[b][j] > 0 ? (float)boxes[b][j] : 3.f;
        p[0 * d + j] = 0.f;
        p[1 * d + j] = nextafterf(L, 0.f);
        p[2 * d + j] = L * 0.999f;
        p[3 * d + j] = 0.0001f * L;
        if (b == 2 && boxes[b][j] > 0)
          for (int64_t i = 0; i < n; ++i) p[i * d + j] = ldexpf(rintf(ldexpf(p[i * d + j], 16)), -16) - 0.25f * L;
      }
      vic_data x = {p, n, d, 0, VIC_L2, boxes[b]};
      char what[64];
      snprintf(what, sizeof what, "periodic box %d d=%d", b, (int)d);
      check_grid(what, &x, 9);
      free(p);
    }
  }
  /* a box so small against n that shells wrap all the way round */
  float *p = vt_uniform(50, 3, 1.f, 5);
  double box[3] = {1, 1, 1};
  vic_data x = {p, 50, 3, 0, VIC_L2, box};
  check_grid("periodic, k = n - 1", &x, 49);
  free(p);
}

/* Most points in a tiny ball, a few far away: crowded cells and long searches. */
static void test_clustered(void) {
  int64_t n = vt_small() ? 500 : 3000;
  float *p = vt_uniform(n, 3, 1.f, 9);
  for (int64_t i = 0; i < n; ++i) {
    if (i % 10 == 0) { for (int j = 0; j < 3; ++j) p[3 * i + j] *= 1000.f; continue; }
    for (int j = 0; j < 3; ++j) p[3 * i + j] = 5.f + 1e-3f * p[3 * i + j];
  }
  vic_data x = {p, n, 3, 0, VIC_L2, NULL};
  check_grid("clustered", &x, 16);
  VT_CHECK(strstr(vt_last_log, "kd-tree") != NULL, "clustered data are searched with the kd-tree: %s", vt_last_log);
  /* the same in a periodic box, the dense ball straddling a corner (a fixed
   * size, large enough for the tree also under the sanitizers) */
  int64_t np = 3000;
  float *pp = vt_uniform(np, 3, 1.f, 10);
  double box[3] = {1, 1, 1};
  for (int64_t i = 0; i < np; ++i)
    for (int j = 0; j < 3; ++j) {
      float v = i % 10 == 0 ? pp[3 * i + j] : 1e-3f * pp[3 * i + j] - 0.0005f;
      pp[3 * i + j] = v < 0.f ? v + 1.f : v;
    }
  vic_data xp = {pp, np, 3, 0, VIC_L2, box};
  check_grid("clustered across a periodic corner", &xp, 16);
  VT_CHECK(strstr(vt_last_log, "kd-tree") != NULL, "periodic clustered data use the kd-tree: %s", vt_last_log);
  for (int64_t i = 0; i < 3 * np; ++i) pp[i] = pp[i] * 2.f - 0.5f; /* and without the box, a 1-d/2-d view */
  vic_data x1 = {pp, np, 1, 3, VIC_L2, NULL}, x2 = {pp, np, 2, 3, VIC_L2, NULL};
  check_grid("clustered 1-d", &x1, 7);
  check_grid("clustered 2-d", &x2, 7);
  free(pp);
  /* all points on a line through 3-d space, and all points equal */
  for (int64_t i = 0; i < n; ++i) p[3 * i] = p[3 * i + 1] = p[3 * i + 2] = (float)(i % 97) * 0.5f;
  check_grid("collinear with duplicates", &x, 8);
  for (int64_t i = 0; i < 3 * n; ++i) p[i] = 2.f;
  int64_t m = vt_small() ? 100 : 400;
  vic_data same = {p, m, 3, 0, VIC_L2, NULL};
  check_grid("all points equal", &same, 5);
  free(p);
}

static void test_large_k(void) {
  int64_t n = 300;
  float *p = vt_uniform(n, 3, 1.f, 11);
  vic_data x = {p, n, 3, 0, VIC_L2, NULL};
  check_grid("k = 40 (many cells)", &x, 40);
  check_grid("k = n - 1", &x, (int32_t)n - 1);
  check_grid("k > n (clamped)", &x, 1000);
  vic_data two = {p, 2, 2, 0, VIC_L2, NULL};
  check_grid("n = 2", &two, 3);
  free(p);
}

static void test_determinism(void) {
  int64_t n = vt_small() ? 2000 : 20000;
  float *p = vt_uniform(n, 3, 1.f, 21);
  for (int64_t i = 0; i < n / 3; ++i) memcpy(p + 3 * (n - 1 - i), p + 3 * i, 3 * sizeof(float));
  vic_data x = {p, n, 3, 0, VIC_L2, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_GRID;
  vic_knn a, b;
  /* seed 42, the default one: the grid draws nothing at random */
  vic_ctx *c1 = vt_ctx_threads(1, 42), *c2 = vt_ctx_threads(2, 42);
  VT_OK(c1, vic_knn_build(c1, &x, &o, &a));
  VT_OK(c2, vic_knn_build(c2, &x, &o, &b));
  VT_CHECK(memcmp(a.ids, b.ids, (size_t)n * a.k * sizeof *a.ids) == 0, "ids equal for 1 and 2 threads");
  VT_CHECK(memcmp(a.dist, b.dist, (size_t)n * a.k * sizeof *a.dist) == 0, "distances equal for 1 and 2 threads");
  vic_knn_free(&a);
  vic_knn_free(&b);
  vic_ctx_destroy(c1);
  vic_ctx_destroy(c2);
  free(p);
}

/* The grid stores row numbers in 4 bytes below 2^32 points, in 8 above;
 * the core's limit lowered here runs the 8-byte layout on small sets: the
 * same lists, on the cell grid and on the kd-tree. */
extern int64_t vic__grid_ids32_rows;
static void test_wide_ids(void) {
  int64_t n = vt_small() ? 2000 : 20000;
  float *p = vt_uniform(n, 3, 1.f, 31), *q = vt_uniform(n, 3, 1.f, 32);
  for (int64_t i = 0; i < n; ++i) /* a dense core in a sparse background: the tree */
    for (int j = 0; j < 3; ++j) q[3 * i + j] = i % 10 == 0 ? 1000.f * q[3 * i + j] : 5.f + 1e-3f * q[3 * i + j];
  const vic_data sets[2] = {{p, n, 3, 0, VIC_L2, NULL}, {q, n, 3, 0, VIC_L2, NULL}};
  const char *names[2] = {"uniform", "clustered"};
  const int64_t narrow = vic__grid_ids32_rows;
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_GRID;
  o.k = 12;
  vic_ctx *c = vt_ctx_threads(2, 42);
  for (int s = 0; s < 2; ++s) {
    vic_knn a, b;
    VT_OK(c, vic_knn_build(c, &sets[s], &o, &a));
    vic__grid_ids32_rows = 0;
    VT_OK(c, vic_knn_build(c, &sets[s], &o, &b));
    check_grid(s ? "clustered, 8-byte grid ids" : "uniform, 8-byte grid ids", &sets[s], 12);
    vic__grid_ids32_rows = narrow;
    VT_CHECK(memcmp(a.ids, b.ids, (size_t)n * a.k * sizeof *a.ids) == 0 &&
                 memcmp(a.dist, b.dist, (size_t)n * a.k * sizeof *a.dist) == 0,
             "%s: the lists differ between 4- and 8-byte grid ids", names[s]);
    vic_knn_free(&a);
    vic_knn_free(&b);
  }
  vic_ctx_destroy(c);
  free(p);
  free(q);
}

static int calls;
static int cancel_later(void *user, const char *stage, double f) {
  (void)user;
  calls++;
  return strcmp(stage, "grid") == 0 && f > 0.1;
}

static void test_cancel(void) {
  vic_ctx_options co;
  vic_ctx_options_init(&co);
  co.backend = VIC_BACKEND_CPU;
  co.progress = cancel_later;
  vic_ctx *c;
  vic_ctx_create(&co, &c);
  int64_t n = vt_small() ? 20000 : 200000;
  float *p = vt_uniform(n, 3, 1.f, 4);
  vic_data x = {p, n, 3, 0, VIC_L2, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  vic_knn r;
  calls = 0;
  vic_status s = vic_knn_build(c, &x, &o, &r);
  VT_CHECK(s == VIC_E_CANCELLED, "cancel mid-search: %s", vic_status_name(s));
  VT_CHECK(calls >= 2, "progress reported before the cancel (%d calls)", calls);
  VT_CHECK(r.ids == NULL && r.n == 0, "nothing returned after cancel");
  VT_CHECK(strstr(vic_ctx_error(c), "cancel") != NULL, "message: %s", vic_ctx_error(c));
  vic_ctx_destroy(c);
  free(p);
}

static void test_unsupported(void) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  float *p = vt_uniform(100, 4, 1.f, 2);
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_GRID;
  vic_knn r;
  vic_data x4 = {p, 100, 4, 0, VIC_L2, NULL};
  VT_CHECK(vic_knn_build(c, &x4, &o, &r) == VIC_E_UNSUPPORTED, "grid with d = 4");
  VT_CHECK(strstr(vic_ctx_error(c), "d <= 3") != NULL, "message: %s", vic_ctx_error(c));
  vic_data xc = {p, 100, 3, 0, VIC_COSINE, NULL};
  VT_CHECK(vic_knn_build(c, &xc, &o, &r) == VIC_E_UNSUPPORTED, "grid with cosine");
  /* AUTO on 3-d L2 data picks the grid and says why */
  o.method = VIC_METHOD_AUTO;
  vic_data x3 = {p, 100, 3, 0, VIC_L2, NULL};
  VT_OK(c, vic_knn_build(c, &x3, &o, &r));
  VT_CHECK(r.report.method == VIC_METHOD_GRID && strstr(r.report.reason, "grid") != NULL, "auto: %s",
           r.report.reason);
  vic_knn_free(&r);
  vic_ctx_destroy(c);
  free(p);
}

/* A halo: grid lists of a sample of particles against the naive search
 * of those particles (as queries, with their own entry removed). */
static void check_halo(const char *label, const vio_matrix m) {
  int32_t k = 16;
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  vic_data x = {m.rows, m.n, m.d, 0, VIC_L2, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_GRID;
  o.k = k;
  vic_knn r;
  VT_OK(c, vic_knn_build(c, &x, &o, &r));
  int64_t sample = vt_small() ? 60 : 600;
  float *qs = malloc((size_t)sample * 3 * sizeof *qs);
  int64_t *rows = malloc((size_t)sample * sizeof *rows);
  for (int64_t s = 0; s < sample; ++s) {
    rows[s] = (s * 7919) % m.n;
    memcpy(qs + 3 * s, m.rows + 3 * rows[s], 3 * sizeof(float));
  }
  vic_data q = {qs, sample, 3, 0, VIC_L2, NULL};
  int64_t *ref = malloc((size_t)sample * (k + 1) * sizeof *ref);
  double *refd = malloc((size_t)sample * (k + 1) * sizeof *refd);
  vt_naive_knn(&x, &q, k + 1, ref, refd);
  int64_t *ids = malloc((size_t)sample * k * sizeof *ids);
  double *dist = malloc((size_t)sample * k * sizeof *dist);
  for (int64_t s = 0; s < sample; ++s) { /* drop the query's own entry */
    int32_t out = 0;
    for (int32_t t = 0; t <= k && out < k; ++t) {
      if (ref[s * (k + 1) + t] == rows[s]) continue;
      ids[s * k + out] = ref[s * (k + 1) + t];
      dist[s * k + out] = refd[s * (k + 1) + t];
      out++;
    }
  }
  vic_knn sub = {.n = sample, .k = k, .ids = malloc((size_t)sample * k * sizeof(int64_t)),
                 .dist = malloc((size_t)sample * k * sizeof(float)), .report = r.report};
  for (int64_t s = 0; s < sample; ++s) {
    memcpy(sub.ids + s * k, r.ids + rows[s] * k, k * sizeof(int64_t));
    memcpy(sub.dist + s * k, r.dist + rows[s] * k, k * sizeof(float));
  }
  int64_t bad = vt_compare_knn(&sub, ids, dist, 1e-4);
  VT_CHECK(bad == 0, "%s: %lld of %lld sampled rows differ", label, (long long)bad, (long long)sample);
  printf("%s: %lld particles, %lld sampled rows equal the naive search\n", label, (long long)m.n, (long long)sample);
  vic_knn_free(&sub);
  vic_knn_free(&r);
  free(qs); free(rows); free(ref); free(refd); free(ids); free(dist);
  vic_ctx_destroy(c);
}

int main(void) {
  test_random_dims();
  test_duplicates_and_ties();
  test_periodic();
  test_clustered();
  test_large_k();
  test_determinism();
  test_wide_ids();
  test_cancel();
  test_unsupported();
  nb_each_halo(check_halo);
  return vt_finish("test_grid");
}
