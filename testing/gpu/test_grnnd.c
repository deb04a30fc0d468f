/* GRNND, TSDG and the two graph searches (issue 7) on the GPU against exact
 * search on the CPU:
 *  - GRNND lists: real other points, no repeats, ascending, distances equal
 *    to the rows' (1e-3 relative), a sparse graph (mean degree well under R);
 *  - TSDG: edges of each row ordered by occlusion factor, none above
 *    lambda0, no self, no repeats;
 *  - recall@10 of both procedures on both graphs >= 0.95 for clustered
 *    data, recall@100 of the large-batch search >= 0.9, and recall@10 >=
 *    0.95 on 40 far-apart islands (a disconnected kNN graph, entry points
 *    from pivots spread over the components), also with the islands joined
 *    in pairs by one edge each (components of two far-apart islands);
 *  - small batches (1 and 10 queries) on the index's reused workspace:
 *    the pivots found inside the search kernel at batch 1 on a connected
 *    graph (by the pivot kernel on a disconnected one), recall as
 *    above, a repeated call and calls from two threads at once (one on
 *    the workspace, one on its own resources) giving the same results as
 *    one thread alone, also after calls of another size and procedure;
 *  - out-of-range parameters refused.
 * Exits 77 (skip) where no CUDA device is usable.  "small" (argv[1]) runs
 * a reduced case for compute-sanitizer. */
#include "test_util.h"
#include "vic_kernels_gnnd.h"
#include "vic_kernels_grnnd.h"

#include <math.h>
#include <pthread.h>
#include <string.h>

static int small_run = 0;

static double recall_at(const int64_t *got, int gk, const int64_t *ref, int rk, int64_t m, int k) {
  int64_t hit = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int t = 0; t < k; ++t)
      for (int u = 0; u < k && u < gk; ++u)
        if (got[i * gk + u] == ref[i * rk + t]) { hit++; break; }
  return (double)hit / (double)(m * k);
}

static double l2sq(const float *a, const float *b, int d) {
  double s = 0;
  for (int j = 0; j < d; ++j) s += ((double)a[j] - b[j]) * ((double)a[j] - b[j]);
  return s;
}

static void check_grnnd(const float *x, int64_t n, int d, const int32_t *ids, const float *dist, int R) {
  int64_t bad = 0, edges = 0;
  for (int64_t i = 0; i < n && bad < 5; ++i)
    for (int t = 0; t < R; ++t) {
      int32_t v = ids[i * R + t];
      if (v < 0) {
        if (t + 1 < R && ids[i * R + t + 1] >= 0) { bad++; fprintf(stderr, "row %lld: gap at %d\n", (long long)i, t); }
        continue;
      }
      edges++;
      if (v >= n || v == i) { bad++; fprintf(stderr, "row %lld: bad id %d\n", (long long)i, (int)v); continue; }
      double want = l2sq(x + i * d, x + (int64_t)v * d, d);
      if (fabs(want - dist[i * R + t]) > 1e-3 * (1 + want)) { bad++; fprintf(stderr, "row %lld: dist %g want %g\n", (long long)i, dist[i * R + t], want); }
      if (t > 0 && dist[i * R + t] < dist[i * R + t - 1]) { bad++; fprintf(stderr, "row %lld: not ascending\n", (long long)i); }
      for (int u = 0; u < t; ++u)
        if (ids[i * R + u] == v) { bad++; fprintf(stderr, "row %lld repeats %d\n", (long long)i, (int)v); }
    }
  double mean = (double)edges / (double)n;
  printf("GRNND: mean degree %.2f (R = %d)\n", mean, R);
  VT_CHECK(bad == 0, "GRNND: %lld bad entries", (long long)bad);
  VT_CHECK(mean >= 2.0 && mean < 0.9 * R, "GRNND mean degree %.2f", mean);
}

static void check_tsdg(int64_t n, const int32_t *ids, const uint8_t *occ, int D, int lambda0) {
  int64_t bad = 0;
  for (int64_t i = 0; i < n && bad < 5; ++i)
    for (int t = 0; t < D; ++t) {
      int32_t v = ids[i * D + t];
      if (v < 0) continue;
      if (v >= n || v == i) { bad++; fprintf(stderr, "tsdg row %lld: bad id %d\n", (long long)i, (int)v); }
      if (occ[i * D + t] > lambda0) { bad++; fprintf(stderr, "tsdg row %lld: factor %d > %d\n", (long long)i, occ[i * D + t], lambda0); }
      if (t > 0 && (ids[i * D + t - 1] < 0 || occ[i * D + t] < occ[i * D + t - 1])) { bad++; fprintf(stderr, "tsdg row %lld: order\n", (long long)i); }
      for (int u = 0; u < t; ++u)
        if (ids[i * D + u] == v) { bad++; fprintf(stderr, "tsdg row %lld repeats %d\n", (long long)i, (int)v); }
    }
  VT_CHECK(bad == 0, "TSDG: %lld bad entries", (long long)bad);
}

/* exact kNN graph (self excluded, int32) of x through the CPU core */
static int32_t *exact_graph(const float *x, int64_t n, int d, int k) {
  vic_ctx *cpu = vt_ctx(VIC_BACKEND_CPU, 1);
  vic_data v = {x, n, d, 0, VIC_L2, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.k = k;
  o.method = VIC_METHOD_BRUTE;
  o.recall_sample = 0;
  vic_knn r;
  VT_OK(cpu, vic_knn_build(cpu, &v, &o, &r));
  int32_t *g = malloc((size_t)n * k * 4);
  for (int64_t i = 0; i < n * k; ++i) g[i] = (int32_t)r.ids[i];
  vic_knn_free(&r);
  vic_ctx_destroy(cpu);
  return g;
}

static int64_t *exact_queries(const float *x, int64_t n, const float *q, int64_t m, int d, int k) {
  vic_ctx *cpu = vt_ctx(VIC_BACKEND_CPU, 1);
  vic_data xv = {x, n, d, 0, VIC_L2, NULL}, qv = {q, m, d, 0, VIC_L2, NULL};
  vic_knn r;
  VT_OK(cpu, vic_knn_query_exact(cpu, &xv, &qv, k, &r));
  int64_t *ids = malloc((size_t)m * k * 8);
  memcpy(ids, r.ids, (size_t)m * k * 8);
  vic_knn_free(&r);
  vic_ctx_destroy(cpu);
  return ids;
}

static void search_both(const char *what, const vick_gsearch *gs, const float *q, int64_t m, int d,
                        const int64_t *truth, int tk, int occlusion_small, int occlusion_large, double want) {
  (void)d;
  vick_call call;
  vick_gsearch_params p;
  int64_t *ids = malloc((size_t)m * 100 * 8);
  float *dist = malloc((size_t)m * 100 * 4);
  for (int proc = VICK_GSEARCH_SMALL; proc <= VICK_GSEARCH_LARGE; ++proc) {
    memset(&call, 0, sizeof call);
    call.seed = 5;
    vick_gsearch_params_init(&p);
    p.procedure = proc;
    p.occlusion_limit = proc == VICK_GSEARCH_SMALL ? occlusion_small : occlusion_large;
    p.searches = 16; /* t0 greedy searches per query */
    p.list = 64;
    int rc = vick_gsearch_query(&call, gs, q, m, 10, &p, ids, dist);
    VT_CHECK(rc == VICK_OK, "%s search failed: %s", what, call.message);
    if (rc != VICK_OK) continue;
    double r = recall_at(ids, 10, truth, tk, m, 10);
    int64_t bad = 0;
    for (int64_t i = 0; i < m; ++i)
      for (int t = 1; t < 10; ++t)
        if (ids[i * 10 + t] >= 0 && (dist[i * 10 + t] < dist[i * 10 + t - 1] || ids[i * 10 + t] == ids[i * 10 + t - 1])) bad++;
    printf("%s %s: recall@10 %.4f (%.1f us/query)\n", what, proc == VICK_GSEARCH_SMALL ? "small" : "large", r,
           call.seconds_kernel * 1e6 / (double)m);
    VT_CHECK(r >= want, "%s %s recall@10 %.4f < %.2f", what, proc == VICK_GSEARCH_SMALL ? "small" : "large", r, want);
    VT_CHECK(bad == 0, "%s: %lld unordered or repeated results", what, (long long)bad);
  }
  if (tk >= 100) {
    memset(&call, 0, sizeof call);
    vick_gsearch_params_init(&p);
    p.procedure = VICK_GSEARCH_LARGE;
    p.occlusion_limit = occlusion_large;
    p.list = 192;
    int rc = vick_gsearch_query(&call, gs, q, m, 100, &p, ids, dist);
    VT_CHECK(rc == VICK_OK, "%s k=100 failed: %s", what, call.message);
    double r = recall_at(ids, 100, truth, tk, m, 100);
    printf("%s large k=100: recall@100 %.4f\n", what, r);
    VT_CHECK(r >= 0.9, "%s recall@100 %.4f", what, r);
  }
  free(ids);
  free(dist);
}

static int fused_call(const vick_call *call) {
  for (int i = 0; i < call->n_stages; ++i)
    if (strstr(call->stages[i].name, "pivots inside")) return 1;
  return 0;
}

/* calls of `batch` queries from `first` on, one after another */
typedef struct {
  const vick_gsearch *gs;
  const vick_gsearch_params *p;
  const float *q;
  int d, batch, first, calls;
  int64_t *ids; /* calls * batch * 10 */
  float *dist;
  int failed, fused;
} batch_job;

static void *run_batches(void *arg) {
  batch_job *j = (batch_job *)arg;
  for (int c = 0; c < j->calls; ++c) {
    vick_call call;
    memset(&call, 0, sizeof call);
    call.seed = 9;
    const int64_t off = (int64_t)c * j->batch;
    if (vick_gsearch_query(&call, j->gs, j->q + (j->first + off) * j->d, j->batch, 10, j->p, j->ids + off * 10,
                           j->dist + off * 10) != VICK_OK) {
      fprintf(stderr, "batch call failed: %s\n", call.message);
      j->failed++;
    }
    j->fused += fused_call(&call);
  }
  return NULL;
}

/* Small batches on the workspace: recall at batch 1 and 10, the fused
 * pivot stage at batch 1, repeat and two-thread results equal to one
 * thread's (a search depends on the query, its place in the batch and the
 * seed only, whichever resources run it). */
static void small_batches(const char *what, const vick_gsearch *gs, const float *q, int64_t m, int d,
                          const int64_t *truth, int tk, int occlusion, double want) {
  vick_gsearch_params p;
  vick_gsearch_params_init(&p);
  p.procedure = VICK_GSEARCH_SMALL;
  p.occlusion_limit = occlusion;
  p.searches = 16;
  /* fewer under compute-sanitizer ("small") */
  const int calls = small_run ? 8 : (int)(m / 2 < 40 ? m / 2 : 40), calls10 = small_run ? 3 : 8;
  for (int bi = 0; bi < 2; ++bi) {
    const int batch = bi == 0 ? 1 : 10, nb = bi == 0 ? calls : (int)(m / 10 < calls10 ? m / 10 : calls10);
    const int64_t nq = (int64_t)nb * batch;
    int64_t *ids = malloc((size_t)nq * 10 * 8 * 3);
    float *dist = malloc((size_t)nq * 10 * 4 * 3);
    batch_job a = {gs, &p, q, d, batch, 0, nb, ids, dist, 0, 0};
    run_batches(&a);
    double r = recall_at(ids, 10, truth, tk, nq, 10);
    printf("%s small batch %d: recall@10 %.4f over %lld queries, %d of %d calls with the pivots found inside the "
           "kernel\n", what, batch, r, (long long)nq, a.fused, nb);
    VT_CHECK(a.failed == 0, "%s batch %d: %d calls failed", what, batch, a.failed);
    VT_CHECK(r >= want, "%s small batch %d recall@10 %.4f < %.2f", what, batch, r, want);
    /* a connected graph: every single query finds its pivots inside the
     * search kernel; a disconnected one: never (the pivot kernel finds the
     * query's nearest overall, so that its searches start on its island) */
    vick_gsearch_info info;
    vick_gsearch_info_get(gs, &info);
    const int want_inside = info.components == 1 ? nb : 0;
    if (batch == 1)
      VT_CHECK(a.fused == want_inside, "%s batch 1 (%lld components): %d of %d calls found the pivots inside the "
               "kernel, expected %d", what, (long long)info.components, a.fused, nb, want_inside);
    /* a large-batch call in between, then the same calls from two threads */
    {
      vick_gsearch_params lp;
      vick_gsearch_params_init(&lp);
      lp.procedure = VICK_GSEARCH_LARGE;
      lp.occlusion_limit = occlusion;
      vick_call call;
      memset(&call, 0, sizeof call);
      int64_t *li = malloc((size_t)m * 10 * 8);
      float *ld = malloc((size_t)m * 10 * 4);
      VT_CHECK(vick_gsearch_query(&call, gs, q, m, 10, &lp, li, ld) == VICK_OK, "%s large call between: %s", what,
               call.message);
      free(li);
      free(ld);
    }
    batch_job t1 = {gs, &p, q, d, batch, 0, nb / 2, ids + nq * 10, dist + nq * 10, 0, 0};
    batch_job t2 = {gs, &p, q, d, batch, (nb / 2) * batch, nb - nb / 2, ids + (nq + (int64_t)(nb / 2) * batch) * 10,
                    dist + (nq + (int64_t)(nb / 2) * batch) * 10, 0, 0};
    pthread_t th;
    const int started = pthread_create(&th, NULL, run_batches, &t2) == 0;
    run_batches(&t1);
    if (started) pthread_join(th, NULL);
    else run_batches(&t2);
    batch_job again = {gs, &p, q, d, batch, 0, nb, ids + 2 * nq * 10, dist + 2 * nq * 10, 0, 0};
    run_batches(&again);
    int64_t diff_threads = 0, diff_repeat = 0;
    for (int64_t i = 0; i < nq * 10; ++i) {
      diff_threads += ids[nq * 10 + i] != ids[i] || dist[nq * 10 + i] != dist[i];
      diff_repeat += ids[2 * nq * 10 + i] != ids[i] || dist[2 * nq * 10 + i] != dist[i];
    }
    VT_CHECK(t1.failed + t2.failed + again.failed == 0, "%s batch %d: calls failed", what, batch);
    VT_CHECK(diff_threads == 0, "%s batch %d: two threads differ from one in %lld entries", what, batch,
             (long long)diff_threads);
    VT_CHECK(diff_repeat == 0, "%s batch %d: a repeat differs in %lld entries", what, batch, (long long)diff_repeat);
    free(ids);
    free(dist);
  }
}

/* n rows of d dimensions on a random `intrinsic`-dimensional subspace:
 * Gaussian clusters there (vt_clusters), mapped by a fixed random matrix,
 * plus a little isotropic noise: a searchable manifold like real data. */
static float *lowdim(int64_t n, int d, int intrinsic, int clusters, float noise, uint64_t seed) {
  float *z = vt_clusters(n, intrinsic, clusters, seed), *w = vt_uniform(intrinsic, d, 2.f, seed + 100);
  float *e = vt_uniform(n, d, 1.f, seed + 200), *x = malloc((size_t)n * d * 4);
  for (int64_t i = 0; i < n; ++i)
    for (int j = 0; j < d; ++j) {
      float s = 0;
      for (int t = 0; t < intrinsic; ++t) s += z[i * intrinsic + t] * (w[t * d + j] - 1.f);
      x[i * d + j] = s + noise * (e[i * d + j] - 0.5f);
    }
  free(z); free(w); free(e);
  return x;
}

/* A search structure on the graph, then both procedures at the small
 * batches and at the full query set (small first: the fused kernel early in
 * a time-limited racecheck run). */
static void search_graph(const char *what, const float *x, int64_t n, int d, const int32_t *graph, int degree,
                         const uint8_t *occl, int occ_small, int occ_large, const float *q, int64_t m,
                         const int64_t *truth, double want) {
  vick_call call;
  memset(&call, 0, sizeof call);
  vick_gsearch *gs = NULL;
  const int rc = vick_gsearch_create(&call, x, n, d, graph, degree, occl, 0, &gs);
  VT_CHECK(rc == VICK_OK, "%s create: %s", what, call.message);
  if (rc != VICK_OK) return;
  small_batches(what, gs, q, m, d, truth, 100, occ_small, want);
  search_both(what, gs, q, m, d, truth, 100, occ_small, occ_large, want);
  vick_gsearch_free(gs);
}

/* A search graph built in place (vick_grnnd_index, vick_tsdg_index) against
 * one made by vick_gsearch_create from its downloaded edges: the same
 * components and pivots, so both searches give the same answers. */
static void same_as_uploaded(const char *what, const vick_gsearch *gs, const float *x, int64_t n, int d, int tsdg,
                             const float *q, int64_t m) {
  vick_gsearch_info a, b;
  vick_gsearch_info_get(gs, &a);
  vick_call call;
  memset(&call, 0, sizeof call);
  int32_t *ids = malloc((size_t)n * a.degree * 4);
  uint8_t *occ = tsdg ? malloc((size_t)n * a.degree) : NULL;
  int rc = vick_gsearch_graph(&call, gs, ids, occ);
  VT_CHECK(rc == VICK_OK, "%s download: %s", what, call.message);
  vick_gsearch *up = NULL;
  if (rc == VICK_OK) rc = vick_gsearch_create(&call, x, n, d, ids, a.degree, occ, 0, &up);
  VT_CHECK(rc == VICK_OK, "%s upload: %s", what, call.message);
  if (rc != VICK_OK) { free(ids); free(occ); return; }
  vick_gsearch_info_get(up, &b);
  VT_CHECK(a.n == b.n && a.degree == b.degree && a.components == b.components && a.entry_points == b.entry_points,
           "%s in place: %lld components, %d pivots; uploaded: %lld, %d", what, (long long)a.components,
           (int)a.entry_points, (long long)b.components, (int)b.entry_points);
  if (tsdg) check_tsdg(n, ids, occ, a.degree, 10);
  int64_t *i1 = malloc((size_t)m * 10 * 8), *i2 = malloc((size_t)m * 10 * 8);
  float *d1 = malloc((size_t)m * 10 * 4), *d2 = malloc((size_t)m * 10 * 4);
  int64_t differ = 0;
  for (int proc = VICK_GSEARCH_SMALL; proc <= VICK_GSEARCH_LARGE; ++proc) {
    vick_gsearch_params p;
    vick_gsearch_params_init(&p);
    p.procedure = proc;
    p.occlusion_limit = tsdg ? (proc == VICK_GSEARCH_SMALL ? 10 : 5) : 0;
    p.searches = 16;
    p.list = 64;
    memset(&call, 0, sizeof call);
    call.seed = 5;
    int r1 = vick_gsearch_query(&call, gs, q, m, 10, &p, i1, d1);
    memset(&call, 0, sizeof call);
    call.seed = 5;
    int r2 = vick_gsearch_query(&call, up, q, m, 10, &p, i2, d2);
    VT_CHECK(r1 == VICK_OK && r2 == VICK_OK, "%s searches: %s", what, call.message);
    for (int64_t i = 0; i < m * 10; ++i) differ += i1[i] != i2[i];
  }
  printf("%s in place: %lld components, %d pivots, %lld of %lld results differ from the uploaded copy's\n", what,
         (long long)a.components, (int)a.entry_points, (long long)differ, (long long)(2 * m * 10));
  VT_CHECK(differ == 0, "%s: %lld results differ between the in-place and the uploaded graph", what, (long long)differ);
  vick_gsearch_free(up);
  free(ids); free(occ); free(i1); free(i2); free(d1); free(d2);
}

static void clustered(void) {
  const int64_t n = small_run ? 3000 : 20000, m = small_run ? 50 : 500;
  const int d = 32, k = 32;
  /* queries: data rows moved by a little uniform noise (vt_clusters draws
   * its centres from the seed too, so another seed is another model) */
  float *x = lowdim(n, d, 8, 20, 0.05f, 3), *q = vt_uniform(m, d, 1.f, 4);
  for (int64_t i = 0; i < m; ++i)
    for (int j = 0; j < d; ++j) q[i * d + j] = x[(i * 37 % n) * d + j] + 0.1f * (q[i * d + j] - 0.5f);
  int64_t *truth = exact_queries(x, n, q, m, d, 100);

  vick_call call;
  memset(&call, 0, sizeof call);
  call.seed = 11;
  vick_grnnd_params gp;
  vick_grnnd_params_init(&gp);
  if (small_run) gp.t1 = 2, gp.t2 = 3;
  int32_t *gids = malloc((size_t)n * gp.r * 4);
  float *gd = malloc((size_t)n * gp.r * 4);
  double deg = 0;
  int rc = vick_grnnd_build(&call, x, n, d, &gp, gids, gd, &deg);
  VT_CHECK(rc == VICK_OK, "GRNND build: %s", call.message);
  if (rc != VICK_OK) exit(1);
  printf("GRNND n=%lld d=%d: %.3f s, mean degree %.2f\n", (long long)n, d, call.seconds_total, deg);
  check_grnnd(x, n, d, gids, gd, gp.r);
  {
    /* the other pairing (one random partner per candidate): a valid graph too */
    vick_grnnd_params rp = gp;
    rp.pairs = VICK_GRNND_PAIRS_RANDOM;
    int32_t *rids = malloc((size_t)n * rp.r * 4);
    float *rd = malloc((size_t)n * rp.r * 4);
    memset(&call, 0, sizeof call);
    call.seed = 11;
    rc = vick_grnnd_build(&call, x, n, d, &rp, rids, rd, &deg);
    VT_CHECK(rc == VICK_OK, "GRNND (random pairs) build: %s", call.message);
    if (rc == VICK_OK) {
      printf("GRNND random pairs: %.3f s, mean degree %.2f\n", call.seconds_total, deg);
      check_grnnd(x, n, d, rids, rd, rp.r);
    }
    free(rids);
    free(rd);
  }

  int32_t *knn = exact_graph(x, n, d, k);
  vick_tsdg_params tp;
  vick_tsdg_params_init(&tp);
  int32_t *tids = malloc((size_t)n * tp.degree * 4);
  uint8_t *occ = malloc((size_t)n * tp.degree);
  memset(&call, 0, sizeof call);
  rc = vick_tsdg_build(&call, x, n, d, knn, k, &tp, tids, occ, &deg);
  VT_CHECK(rc == VICK_OK, "TSDG build: %s", call.message);
  if (rc != VICK_OK) exit(1);
  printf("TSDG: %.3f s, mean degree %.2f\n", call.seconds_total, deg);
  check_tsdg(n, tids, occ, tp.degree, tp.lambda0);

  const double want = small_run ? 0.8 : 0.95;
  {
    /* built in place on the device: GRNND from the rows, TSDG from the rows
     * through GNND's lists; searched as well as the uploaded graphs */
    vick_gsearch *gs = NULL;
    memset(&call, 0, sizeof call);
    call.seed = 11;
    rc = vick_grnnd_index(&call, x, n, d, &gp, 0, &gs, &deg);
    VT_CHECK(rc == VICK_OK, "GRNND in place: %s", call.message);
    if (rc == VICK_OK) {
      printf("GRNND in place: %.3f s (kernels %.3f s), mean degree %.2f\n", call.seconds_total, call.seconds_kernel,
             deg);
      same_as_uploaded("GRNND", gs, x, n, d, 0, q, m);
      search_both("GRNND in place", gs, q, m, d, truth, 100, 0, 0, want);
      vick_gsearch_free(gs);
    }
    vick_gnnd_params np = {32, 16, 10, 0.001f, 0, 0, 0};
    vick_tsdg_params ip;
    vick_tsdg_params_init(&ip);
    memset(&call, 0, sizeof call);
    call.seed = 11;
    gs = NULL;
    rc = vick_tsdg_index(&call, x, n, d, &np, k, &ip, 0, &gs, &deg);
    VT_CHECK(rc == VICK_OK, "TSDG in place: %s", call.message);
    if (rc == VICK_OK) {
      printf("TSDG in place: %.3f s (kernels %.3f s), mean degree %.2f\n", call.seconds_total, call.seconds_kernel,
             deg);
      same_as_uploaded("TSDG", gs, x, n, d, 1, q, m);
      search_both("TSDG in place", gs, q, m, d, truth, 100, 10, 5, want);
      vick_gsearch_free(gs);
    }
    /* out of range: refused before any device work */
    vick_gnnd_params bad = np;
    bad.k_build = 40;
    VT_CHECK(vick_tsdg_index(&call, x, n, d, &bad, k, &ip, 0, &gs, NULL) == VICK_ARGUMENT, "K = 40 accepted");
    VT_CHECK(vick_grnnd_index(&call, x, n, d, &gp, -1, &gs, NULL) == VICK_ARGUMENT, "-1 entry points accepted");
  }
  search_graph("GRNND", x, n, d, gids, gp.r, NULL, 0, 0, q, m, truth, want);
  {
    /* rows that repeat an id (each row's nearest edge again after its
     * last one, or in place of it in a full row): the search checks a
     * hop's candidates for repeats, results stay distinct and as good */
    int32_t *rep = malloc((size_t)n * gp.r * 4);
    memcpy(rep, gids, (size_t)n * gp.r * 4);
    for (int64_t i = 0; i < n; ++i) {
      int32_t *row = rep + i * gp.r;
      int e = 0;
      while (e < gp.r && row[e] >= 0) ++e;
      if (e > 1) row[e < gp.r ? e : gp.r - 1] = row[0];
    }
    search_graph("GRNND repeats", x, n, d, rep, gp.r, NULL, 0, 0, q, m, truth, want);
    free(rep);
  }
  search_graph("TSDG", x, n, d, tids, tp.degree, occ, 10, 5, q, m, truth, want);

  /* parameters out of range */
  memset(&call, 0, sizeof call);
  gp.r = 200;
  VT_CHECK(vick_grnnd_build(&call, x, n, d, &gp, gids, gd, NULL) == VICK_ARGUMENT, "R = 200 accepted");
  gp.r = 96;
  gp.pairs = 7;
  VT_CHECK(vick_grnnd_build(&call, x, n, d, &gp, gids, gd, NULL) == VICK_ARGUMENT, "pairs 7 accepted");
  tp.alpha = 0.5f;
  VT_CHECK(vick_tsdg_build(&call, x, n, d, knn, k, &tp, tids, occ, NULL) == VICK_ARGUMENT, "alpha 0.5 accepted");
  free(x); free(q); free(truth); free(gids); free(gd); free(knn); free(tids); free(occ);
}

/* 40 far-apart Gaussian blobs: the kNN graph has at least 40 components */
static void islands(void) {
  const int nc = 40, d = 16;
  const int64_t n = small_run ? 2000 : 12000, m = small_run ? 40 : 400;
  float *x = malloc((size_t)n * d * 4), *q = malloc((size_t)m * d * 4);
  float *cen = vt_uniform(nc, d, 1000.f, 8), *z = lowdim(n + m, d, 4, 1, 0.05f, 9);
  for (int64_t i = 0; i < n + m; ++i) {
    float *dst = i < n ? x + i * d : q + (i - n) * d;
    for (int j = 0; j < d; ++j) dst[j] = cen[(i % nc) * d + j] + z[i * d + j];
  }
  int64_t *truth = exact_queries(x, n, q, m, d, 10);
  int32_t *knn = exact_graph(x, n, d, 10);
  vick_call call;
  memset(&call, 0, sizeof call);
  vick_tsdg_params tp;
  vick_tsdg_params_init(&tp);
  int32_t *tids = malloc((size_t)n * tp.degree * 4);
  uint8_t *occ = malloc((size_t)n * tp.degree);
  int rc = vick_tsdg_build(&call, x, n, d, knn, 10, &tp, tids, occ, NULL);
  VT_CHECK(rc == VICK_OK, "TSDG islands: %s", call.message);
  vick_gsearch *gs = NULL;
  if (rc == VICK_OK) rc = vick_gsearch_create(&call, x, n, d, tids, tp.degree, occ, 0, &gs);
  VT_CHECK(rc == VICK_OK, "create islands: %s", call.message);
  if (rc == VICK_OK) {
    vick_gsearch_info info;
    vick_gsearch_info_get(gs, &info);
    printf("islands: %lld components, %d entry points\n", (long long)info.components, info.entry_points);
    VT_CHECK(info.components >= nc, "islands: %lld components < %d", (long long)info.components, nc);
    search_both("islands TSDG", gs, q, m, d, truth, 10, 10, 5, 0.95);
    small_batches("islands TSDG", gs, q, m, d, truth, 10, 10, 0.95);
    vick_gsearch_free(gs);
  }
  /* the plain kNN graph searched the same way */
  memset(&call, 0, sizeof call);
  rc = vick_gsearch_create(&call, x, n, d, knn, 10, NULL, 0, &gs);
  VT_CHECK(rc == VICK_OK, "create islands knn: %s", call.message);
  int64_t plain = 0;
  if (rc == VICK_OK) {
    vick_gsearch_info info;
    vick_gsearch_info_get(gs, &info);
    plain = info.components;
    search_both("islands kNN", gs, q, m, d, truth, 10, 0, 0, 0.95);
    vick_gsearch_free(gs);
  }
  /* islands joined in pairs by one edge each (row 2c, of island 2c, gets
   * an edge to row 2c + 1, of island 2c + 1): every component spans two
   * far-apart islands, half of the queries lie in the island without the
   * component's lowest row, and no greedy walk crosses from the other */
  int32_t *bridged = malloc((size_t)n * 10 * 4);
  memcpy(bridged, knn, (size_t)n * 10 * 4);
  for (int c = 0; c + 1 < nc; c += 2) bridged[(int64_t)c * 10 + 9] = c + 1;
  memset(&call, 0, sizeof call);
  rc = vick_gsearch_create(&call, x, n, d, bridged, 10, NULL, 0, &gs);
  VT_CHECK(rc == VICK_OK, "create bridged islands: %s", call.message);
  if (rc == VICK_OK) {
    vick_gsearch_info info;
    vick_gsearch_info_get(gs, &info);
    printf("bridged islands: %lld components, %d entry points\n", (long long)info.components, info.entry_points);
    VT_CHECK(info.components == plain - nc / 2, "bridged islands: %lld components, want %lld",
             (long long)info.components, (long long)(plain - nc / 2));
    search_both("bridged islands kNN", gs, q, m, d, truth, 10, 0, 0, 0.95);
    vick_gsearch_free(gs);
  }
  free(bridged);
  free(x); free(q); free(cen); free(z); free(truth); free(knn); free(tids); free(occ);
}

/* The public API on a CUDA context: GRNND and TSDG indexes built on the
 * GPU, searched with a small batch (small-batch procedure) and a large one
 * (large-batch procedure), saved and loaded back (the loaded index goes to
 * the device again); for-all lists of vic_knn_build through both graphs. */
static void public_api(void) {
  /* m above the small/large division (a SMs + b / d: about 1,130 at d = 24 on 132 SMs) */
  const int64_t n = small_run ? 3000 : 20000, m = 2000;
  const int d = 24;
  float *x = lowdim(n, d, 6, 10, 0.05f, 31), *q = vt_uniform(m, d, 1.f, 32);
  for (int64_t i = 0; i < m; ++i)
    for (int j = 0; j < d; ++j) q[i * d + j] = x[(i * 53 % n) * d + j] + 0.1f * (q[i * d + j] - 0.5f);
  vic_ctx *c = vt_ctx(VIC_BACKEND_CUDA, 7);
  vic_data xv = {x, n, d, 0, VIC_L2, NULL};
  vic_knn exact;
  {
    vic_ctx *cpu = vt_ctx(VIC_BACKEND_CPU, 1);
    vic_data qv = {q, m, d, 0, VIC_L2, NULL};
    VT_OK(cpu, vic_knn_query_exact(cpu, &xv, &qv, 10, &exact));
    vic_ctx_destroy(cpu);
  }
  for (int which = 0; which < 2; ++which) {
    vic_build_options o;
    vic_build_options_init(&o);
    o.method = which == 0 ? VIC_METHOD_GRNND : VIC_METHOD_TSDG;
    const char *name = vic_method_name(o.method);
    vic_index *ix;
    VT_OK(c, vic_index_build(c, &xv, &o, &ix));
    const vic_report *br = vic_index_report(ix);
    VT_CHECK(br->method == o.method && br->backend == VIC_BACKEND_CUDA, "%s built %s on %s", name,
             vic_method_name(br->method), vic_backend_name(br->backend));
    char path[256];
    snprintf(path, sizeof path, "/tmp/vic_test_grnnd_%d.vix", which);
    VT_OK(c, vic_index_save(c, ix, path));
    vic_index *back;
    VT_OK(c, vic_index_load(c, path, &xv, &back));
    remove(path);
    for (int batch = 0; batch < 2; ++batch) {
      const int64_t mb = batch == 0 ? 5 : m;
      vic_data qv = {q, mb, d, 0, VIC_L2, NULL};
      vic_search_options so;
      vic_search_options_init(&so);
      so.k = 10;
      vic_knn r1, r2;
      VT_OK(c, vic_index_search(c, ix, &qv, &so, &r1));
      VT_OK(c, vic_index_search(c, back, &qv, &so, &r2));
      double a = recall_at(r1.ids, 10, exact.ids, 10, mb, 10), b = recall_at(r2.ids, 10, exact.ids, 10, mb, 10);
      printf("API %s batch %lld: recall@10 %.4f, loaded %.4f (%s)\n", name, (long long)mb, a, b, r1.report.reason);
      VT_CHECK(r1.report.backend == VIC_BACKEND_CUDA && r2.report.backend == VIC_BACKEND_CUDA, "%s searched on the CPU",
               name);
      VT_CHECK(strstr(r1.report.reason, batch == 0 ? "small-batch" : "large-batch") != NULL, "%s batch %lld: %s", name,
               (long long)mb, r1.report.reason);
      /* the graph built on the device is searched as its kind (TSDG: under the occlusion limits) */
      VT_CHECK(strstr(r1.report.reason, which == 0 ? "GRNND graph" : "TSDG graph") != NULL &&
                   (which == 0) == (strstr(r1.report.reason, "occlusion limit 0") != NULL),
               "%s batch %lld searched as: %s", name, (long long)mb, r1.report.reason);
      VT_CHECK(a >= 0.9 && b >= 0.9, "%s batch %lld recall %.4f / loaded %.4f", name, (long long)mb, a, b);
      int64_t bad = 0;
      for (int64_t i = 0; i < mb * 10; ++i) {
        int64_t v = r1.ids[i];
        if (v < 0) continue;
        double want = sqrt(l2sq(q + (i / 10) * d, x + v * d, d));
        if (fabs(want - r1.dist[i]) > 1e-3 * (1 + want)) bad++;
      }
      VT_CHECK(bad == 0, "%s: %lld distances are not the true ones", name, (long long)bad);
      vic_knn_free(&r1);
      vic_knn_free(&r2);
    }
    vic_index_free(ix);
    vic_index_free(back);
    /* for-all lists through the graph */
    vic_build_options ko;
    vic_build_options_init(&ko);
    ko.method = o.method;
    ko.k = 10;
    ko.recall_sample = 500;
    vic_knn lists;
    VT_OK(c, vic_knn_build(c, &xv, &ko, &lists));
    printf("API %s for-all lists: recall estimate %.4f (%s)\n", name, lists.report.recall_estimate,
           lists.report.reason);
    VT_CHECK(lists.report.method == o.method && lists.report.recall_estimate >= 0.9, "%s lists: %s, recall %.4f",
             name, vic_method_name(lists.report.method), lists.report.recall_estimate);
    vic_knn_free(&lists);
  }
  vic_knn_free(&exact);
  vic_ctx_destroy(c);
  free(x);
  free(q);
}

int main(int argc, char **argv) {
  small_run = vt_gpu_start(argc, argv);
  clustered();
  islands();
  public_api();
  return vt_finish("test_grnnd");
}
