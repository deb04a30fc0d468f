/* GRNND / TSDG / graph-search benchmark (issue 7) on one data set and its
 * queries (from grnnd_truth.py: base.f32, query.f32, qtruth.i32 with 100
 * exact neighbours per query), kernels only:
 *  - GRNND build time and degree; GNND kNN graph (K = 32) + TSDG
 *    diversification time and degree; optionally GGNN's build;
 *  - the recall@10 / QPS curve of both graphs under the same large-batch
 *    search (list length swept), batch 10,000;
 *  - batch 1 and batch 10: the small-batch procedure (t0 and the hop limit
 *    swept) against the large-batch one (list swept) on the same graph:
 *    recall@10 and queries per second of kernel time (pivot kernel + search
 *    + merge, CUDA events, inputs already on the device), and the wall-clock
 *    time of the whole call (allocation, copies, stream and events included);
 *  - batch 10,000 recall@100 (k = 100);
 *  - with GGNN: its own query at batch 10,000, k = 10 and k = 100;
 *  - the public API (vicinity.h): GRNND and TSDG indexes built by
 *    vic_index_build and searched by vic_index_search with the core's
 *    defaults at batch 1 and 10: recall@10, the kernel time it reports
 *    (CUDA events), its own total and the wall-clock time of the call.
 * Every line of the curves is printed as it comes; a compact table last.
 *
 *   grnnd_bench DIR N M D [ggnn] [quick] [latency] [compare] [profile] [ncu]
 *
 * "quick": fewer points of each sweep (islands runs use it).  "latency":
 * only batch 1 and 10 (a few small-batch settings around recall 0.95 and
 * three large-batch lists) through the kernel API, then the public API.
 * "compare": the build comparison at equal recall of one search (GRNND
 * settings, GGNN's bottom layers, TSDG) and GGNN's own query at batch
 * 10,000.  "profile" / "ncu": see profile(). */
#define _POSIX_C_SOURCE 199309L
#include "bench_util.h"
#include "vicinity.h"
#include "vic_kernels_ggnn.h"
#include "vic_kernels_gnnd.h"
#include "vic_kernels_grnnd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int64_t M;
static int D;
static float *Q;
static int32_t *QT; /* M x 100 */

/* recall@c of m lists (stride k >= c) of the queries from `first` on */
static double recall(const int64_t *ids, int k, int64_t first, int64_t m, int c) {
  return bench_hits(ids, k, QT + first * 100, 100, m, NULL, c);
}

typedef struct {
  double recall, qps, us, wall_us, pivot_us;
  int fused; /* calls whose pivot stage ran inside the search kernel */
} point;

/* m queries per call from query `first` on, `calls` calls: recall over all,
 * QPS from the summed kernel time */
static point run(const vick_gsearch *g, const vick_gsearch_params *p, int k, int64_t batch, int64_t calls) {
  int64_t *ids = malloc((size_t)batch * k * 8);
  float *dist = malloc((size_t)batch * k * 4);
  vick_call call;
  double sec = 0, rec = 0, wall = 0, piv = 0;
  int fused = 0;
  for (int64_t c = -1; c < calls; ++c) { /* call -1: warm-up */
    int64_t first = c < 0 ? 0 : (c * batch) % M;
    if (first + batch > M) first = 0;
    memset(&call, 0, sizeof call);
    call.seed = (uint64_t)(c + 2);
    const double t0 = bench_now();
    const int rc = vick_gsearch_query(&call, g, Q + first * D, batch, k, p, ids, dist);
    if (c >= 0) wall += bench_now() - t0;
    if (rc != VICK_OK) {
      fprintf(stderr, "search failed: %s\n", call.message);
      exit(1);
    }
    if (c < 0) continue;
    sec += call.seconds_kernel;
    for (int s = 0; s < call.n_stages; ++s) {
      if (strcmp(call.stages[s].name, "pivots") == 0) piv += call.stages[s].seconds;
      if (strstr(call.stages[s].name, "inside")) fused++;
    }
    rec += recall(ids, k, first, batch, k < 10 ? k : (k >= 100 ? 100 : 10));
  }
  free(ids);
  free(dist);
  point r = {rec / (double)calls, (double)(batch * calls) / sec, sec * 1e6 / (double)calls, wall * 1e6 / (double)calls,
             piv * 1e6 / (double)calls, fused};
  return r;
}

/* compact table rows */
static char table[200][200];
static int rows;
#define ROW(...) snprintf(table[rows < 199 ? rows++ : rows], 200, __VA_ARGS__)

/* An index of method m built and searched through the public API with the
 * core's defaults (its small/large choice and small-batch settings):
 * batch 1 (1,000 calls) and batch 10 (300 calls) after a warm-up call. */
static void core_api(const float *x, int64_t n, vic_method m) {
  vic_ctx_options co;
  vic_ctx_options_init(&co);
  co.backend = VIC_BACKEND_CUDA;
  co.seed = 3;
  vic_ctx *c = NULL;
  if (vic_ctx_create(&co, &c) != VIC_OK) {
    fprintf(stderr, "core API: no context\n");
    exit(1);
  }
  vic_data xv = {x, n, D, 0, VIC_L2, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = m;
  vic_index *ix = NULL;
  const double tb = bench_now();
  if (vic_index_build(c, &xv, &o, &ix) != VIC_OK) {
    fprintf(stderr, "core API: %s build failed: %s\n", vic_method_name(m), vic_ctx_error(c));
    exit(1);
  }
  printf("-- public API, %s index: built in %.3f s (%s)\n", vic_method_name(m), bench_now() - tb,
         vic_index_report(ix)->reason);
  vic_search_options so;
  vic_search_options_init(&so);
  so.k = 10;
  for (int bi = 0; bi < 2; ++bi) {
    const int64_t batch = bi == 0 ? 1 : 10, calls = bi == 0 ? 1000 : 300;
    double gpu = 0, total = 0, wall = 0, rec = 0;
    char reason[160] = "";
    for (int64_t cc = -1; cc < calls; ++cc) { /* call -1: warm-up */
      int64_t first = cc < 0 ? 0 : (cc * batch) % M;
      if (first + batch > M) first = 0;
      vic_data qv = {Q + first * D, batch, D, 0, VIC_L2, NULL};
      vic_knn r;
      const double t0 = bench_now();
      if (vic_index_search(c, ix, &qv, &so, &r) != VIC_OK) {
        fprintf(stderr, "core API: %s search failed: %s\n", vic_method_name(m), vic_ctx_error(c));
        exit(1);
      }
      const double t1 = bench_now();
      if (cc >= 0) {
        wall += t1 - t0;
        gpu += r.report.seconds_kernel;
        total += r.report.seconds_total;
        rec += recall(r.ids, 10, first, batch, 10);
        snprintf(reason, sizeof reason, "%s", r.report.reason);
      }
      vic_knn_free(&r);
    }
    const double us = 1e6 / (double)calls;
    printf("%s batch %lld (%lld calls): recall@10 %.4f, GPU %.1f us, core total %.1f us, wall %.1f us per call "
           "(%s)\n", vic_method_name(m), (long long)batch, (long long)calls, rec / (double)calls, gpu * us,
           total * us, wall * us, reason);
    ROW("%-8s API    b=%-3lld default  recall@10 %.4f  GPU %6.1f us  wall %6.1f us per call", vic_method_name(m),
        (long long)batch, rec / (double)calls, gpu * us, wall * us);
  }
  vic_index_free(ix);
  vic_ctx_destroy(c);
}

/* the point of best QPS at recall >= goal of a sweep (-1 when none reaches it) */
static int best_at(const point *pts, int np, double goal) {
  int b = -1;
  for (int i = 0; i < np; ++i)
    if (pts[i].recall >= goal && (b < 0 || pts[i].qps > pts[b].qps)) b = i;
  return b;
}

/* QPS at recall exactly goal read off a sweep's frontier: the best of the
 * points at or above it and of the straight lines from a point below it
 * to one above it (0 when none reaches it).  Unlike best_at it does not
 * favour the procedure whose nearest point happens to lie just above the
 * goal. */
static double qps_at(const point *pts, int np, double goal) {
  double best = 0;
  for (int j = 0; j < np; ++j) {
    if (pts[j].recall < goal) continue;
    if (pts[j].qps > best) best = pts[j].qps;
    for (int i = 0; i < np; ++i) {
      if (pts[i].recall >= goal) continue;
      const double f = (goal - pts[i].recall) / (pts[j].recall - pts[i].recall);
      const double q = pts[i].qps + f * (pts[j].qps - pts[i].qps);
      if (q > best) best = q;
    }
  }
  return best;
}

/* mode: 0 full, 1 quick, 2 latency (batch 1 and 10 only, settings near recall 0.95) */
static void sweep_graph(const char *name, const vick_gsearch *g, int occ_small, int occ_large, int mode) {
  vick_gsearch_params p;
  static const int lists[] = {16, 24, 32, 48, 64, 96, 128, 192, 256};
  /* small-batch points: (t0, hop limit; 0 = the default 64) */
  static const int t0s[] = {2,  4,  8, 16, 32, 8, 16, 4, 8, 16, 32, 8, 16,
                            32, 16, 32, 64, 16, 24, 32, 24, 12, 16, 48, 64, 48};
  static const int hopss[] = {0, 0, 0, 0, 0, 16, 16, 8, 8, 8, 8, 6, 6, 6, 4, 4, 4, 3, 3, 3, 4, 4, 5, 3, 3, 4};
  static const int qt[] = {1, 2, 3, 8, 9, 12, 15};   /* quick: a few of them */
  /* latency: (8,6) (16,3) (24,3) (32,3) (48,3) (64,3) (12,4) (16,4) (24,4) (32,4) (48,4) (16,5) (16,6) (16,8) */
  static const int lt[] = {11, 17, 18, 19, 23, 24, 21, 14, 20, 15, 25, 22, 12, 9};
  const int quick = mode == 1, latency = mode == 2;
  const int nl = quick ? 4 : (latency ? 3 : 9), nt = quick ? 7 : (latency ? 14 : 17);
  point pts[16];
  if (latency) goto small_batches;
  /* batch 10,000 curve, k = 10, large-batch procedure */
  printf("-- %s: batch %lld, large-batch procedure, k=10\n%8s %10s %12s\n", name, (long long)M, "list", "recall@10",
         "QPS");
  for (int i = 0; i < nl; ++i) {
    vick_gsearch_params_init(&p);
    p.procedure = VICK_GSEARCH_LARGE;
    p.occlusion_limit = occ_large;
    p.list = quick ? lists[2 * i + 1] : lists[i];
    pts[i] = run(g, &p, 10, M, 3);
    printf("%8d %10.4f %12.0f\n", p.list, pts[i].recall, pts[i].qps);
    ROW("%-8s large  b=%-5lld k=10  list=%-4d recall@10 %.4f  QPS %10.0f", name, (long long)M, p.list, pts[i].recall,
        pts[i].qps);
  }
  /* batch 10,000 recall@100 */
  for (int i = 0; i < (quick ? 1 : 2); ++i) {
    vick_gsearch_params_init(&p);
    p.procedure = VICK_GSEARCH_LARGE;
    p.occlusion_limit = occ_large;
    p.list = i == 0 ? 128 : 256;
    point r = run(g, &p, 100, M, 1);
    printf("%s batch %lld k=100 list %d: recall@100 %.4f QPS %.0f\n", name, (long long)M, p.list, r.recall, r.qps);
    ROW("%-8s large  b=%-5lld k=100 list=%-4d recall@100 %.4f QPS %10.0f", name, (long long)M, p.list, r.recall,
        r.qps);
  }
  /* batch 10,000 through the small-batch procedure too (for islands) */
  if (quick) {
    vick_gsearch_params_init(&p);
    p.procedure = VICK_GSEARCH_SMALL;
    p.occlusion_limit = occ_small;
    p.searches = 16;
    point r = run(g, &p, 10, M, 1);
    printf("%s batch %lld small t0=16: recall@10 %.4f QPS %.0f\n", name, (long long)M, r.recall, r.qps);
    ROW("%-8s small  b=%-5lld k=10  t0=16     recall@10 %.4f  QPS %10.0f", name, (long long)M, r.recall, r.qps);
  }
small_batches:
  /* batch 1 and 10: small-batch (t0) vs large-batch (list) */
  for (int bi = 0; bi < 2; ++bi) {
    /* enough queries that recall@10 near 0.95 is told apart from it (1,000 at batch 1) */
    const int64_t batch = bi == 0 ? 1 : 10, calls = quick ? (bi == 0 ? 300 : 100) : (bi == 0 ? 1000 : 300);
    point sp[24], lp[24];
    int st0[24], shop[24], llist[24];
    printf("-- %s: batch %lld (%lld calls; us/call: kernels by CUDA events, wall: the whole call; fused: calls "
           "with the pivot stage inside the search kernel)\n"
           "%8s %6s %6s %10s %12s %10s %10s %10s %6s\n",
           name, (long long)batch, (long long)calls, "proc", "t0/L", "hops", "recall@10", "QPS", "us/call", "pivots us",
           "wall us", "fused");
    for (int i = 0; i < nt; ++i) {
      const int j = quick ? qt[i] : (latency ? lt[i] : i);
      vick_gsearch_params_init(&p);
      p.procedure = VICK_GSEARCH_SMALL;
      p.occlusion_limit = occ_small;
      p.searches = st0[i] = t0s[j];
      p.hops = shop[i] = hopss[j];
      sp[i] = run(g, &p, 10, batch, calls);
      printf("%8s %6d %6d %10.4f %12.0f %10.1f %10.1f %10.1f %6d\n", "small", p.searches, p.hops, sp[i].recall,
             sp[i].qps, sp[i].us, sp[i].pivot_us, sp[i].wall_us, sp[i].fused);
    }
    for (int i = 0; i < nl; ++i) {
      vick_gsearch_params_init(&p);
      p.procedure = VICK_GSEARCH_LARGE;
      p.occlusion_limit = occ_large;
      p.list = llist[i] = quick ? lists[2 * i + 1] : lists[i];
      lp[i] = run(g, &p, 10, batch, calls);
      printf("%8s %6d %6s %10.4f %12.0f %10.1f %10.1f %10.1f %6d\n", "large", p.list, "-", lp[i].recall, lp[i].qps,
             lp[i].us, lp[i].pivot_us, lp[i].wall_us, lp[i].fused);
    }
    const int bs = best_at(sp, nt, 0.95), bl = best_at(lp, nl, 0.95);
    if (bs >= 0 && bl >= 0)
      ROW("%-8s b=%-3lld @R10>=0.95: small t0 %d hops %d QPS %8.0f (R %.3f, %5.1f us, wall %5.1f us%s)  large L %d "
          "QPS %8.0f (R %.3f, %5.1f us, wall %5.1f us)  ratio %.2f (wall %.2f)",
          name, (long long)batch, st0[bs], shop[bs], sp[bs].qps, sp[bs].recall, sp[bs].us, sp[bs].wall_us,
          sp[bs].fused ? ", fused" : "", llist[bl], lp[bl].qps, lp[bl].recall, lp[bl].us, lp[bl].wall_us,
          sp[bs].qps / lp[bl].qps, lp[bl].wall_us / sp[bs].wall_us);
    else
      ROW("%-8s b=%-3lld @R10>=0.95: small %s, large %s", name, (long long)batch, bs >= 0 ? "reached" : "NOT reached",
          bl >= 0 ? "reached" : "NOT reached");
    const double qs = qps_at(sp, nt, 0.95), ql = qps_at(lp, nl, 0.95);
    if (qs > 0 && ql > 0)
      ROW("%-8s b=%-3lld at R10 = 0.95 (frontier): small QPS %8.0f  large QPS %8.0f  ratio %.2f", name,
          (long long)batch, qs, ql, qs / ql);
  }
}

/* The GNND kNN graph (K = 32) and TSDG's diversification of it with the
 * kernels' defaults: the graph every TSDG figure here searches.  Wall time
 * of each build; the TSDG call's stages stay in *call; exits on failure.
 * The kNN lists (n x 32) are handed back when keep_knn, else freed. */
typedef struct {
  vick_tsdg_params p;
  int32_t *ids, *knn;
  uint8_t *occl;
  double mean_degree, s_gnnd, s_tsdg;
} tsdg_graph;

static tsdg_graph build_tsdg(const float *x, int64_t n, vick_call *call, int keep_knn) {
  tsdg_graph t;
  memset(&t, 0, sizeof t);
  vick_gnnd_params np = {32, 16, 10, 0.001f, 0, 0, 0};
  vick_gnnd_graph kg = {n, 32, malloc((size_t)n * 32 * 4), malloc((size_t)n * 32 * 4)};
  memset(call, 0, sizeof *call);
  double t0 = bench_now();
  if (vick_gnnd_build(call, x, n, D, &np, &kg) != VICK_OK) {
    fprintf(stderr, "GNND failed: %s\n", call->message);
    exit(1);
  }
  t.s_gnnd = bench_now() - t0;
  vick_tsdg_params_init(&t.p);
  t.ids = malloc((size_t)n * t.p.degree * 4);
  t.occl = malloc((size_t)n * t.p.degree);
  memset(call, 0, sizeof *call);
  t0 = bench_now();
  if (vick_tsdg_build(call, x, n, D, kg.ids, kg.k, &t.p, t.ids, t.occl, &t.mean_degree) != VICK_OK) {
    fprintf(stderr, "TSDG failed: %s\n", call->message);
    exit(1);
  }
  t.s_tsdg = bench_now() - t0;
  free(kg.dist);
  if (keep_knn) t.knn = kg.ids;
  else free(kg.ids);
  return t;
}

/* ------------------------------------------------------------ "compare" */
/* One graph's recall@10 / QPS curve at batch 10,000 under the large-batch
 * procedure, the same lists for every graph. */
/* delta < 0 and pivots 0: the kernels' defaults */
static void large_curve_opts(const char *name, const vick_gsearch *g, int occ, float delta, int pivots) {
  static const int lists[] = {16, 24, 32, 48, 64, 96};
  vick_gsearch_params p;
  for (int i = 0; i < 6; ++i) {
    vick_gsearch_params_init(&p);
    p.procedure = VICK_GSEARCH_LARGE;
    p.occlusion_limit = occ;
    p.pivots = pivots;
    if (delta >= 0.f) p.delta = delta;
    p.list = lists[i];
    const point r = run(g, &p, 10, M, 3);
    printf("%-22s large b=%lld k=10 list %3d: recall@10 %.4f QPS %9.0f (pivot kernel %.0f of %.0f us)\n", name,
           (long long)M, p.list, r.recall, r.qps, r.pivot_us, r.us);
    ROW("%-22s large  list=%-3d recall@10 %.4f  QPS %9.0f", name, p.list, r.recall, r.qps);
  }
}

static void large_curve(const char *name, const vick_gsearch *g, int occ) { large_curve_opts(name, g, occ, -1.f, 0); }

static void large_k100(const char *name, const vick_gsearch *g, int occ) {
  static const int lists[] = {100, 128, 192, 256};
  vick_gsearch_params p;
  for (int i = 0; i < 4; ++i) {
    vick_gsearch_params_init(&p);
    p.procedure = VICK_GSEARCH_LARGE;
    p.occlusion_limit = occ;
    p.list = lists[i];
    const point r = run(g, &p, 100, M, 1);
    printf("%-22s large b=%lld k=100 list %3d: recall@100 %.4f QPS %9.0f\n", name, (long long)M, p.list, r.recall,
           r.qps);
    ROW("%-22s large  k=100 list=%-3d recall@100 %.4f  QPS %9.0f", name, p.list, r.recall, r.qps);
  }
}

static vick_gsearch *upload(const float *x, int64_t n, const int32_t *graph, int deg, const uint8_t *occl) {
  vick_call call;
  memset(&call, 0, sizeof call);
  vick_gsearch *g = NULL;
  if (vick_gsearch_create(&call, x, n, D, graph, deg, occl, 0, &g) != VICK_OK) {
    fprintf(stderr, "upload failed: %s\n", call.message);
    exit(1);
  }
  return g;
}

/* GGNN's own query at batch 10,000: median kernel time of 3 after a warm-up */
static void ggnn_own_query(const vick_ggnn *g, const char *name, int k, const float *taus, int nt) {
  int64_t *ids = malloc((size_t)M * k * 8);
  float *dist = malloc((size_t)M * k * 4);
  vick_call call;
  for (int t = 0; t < nt; ++t) {
    double s[4];
    for (int r = 0; r < 4; ++r) {
      memset(&call, 0, sizeof call);
      if (vick_ggnn_query(&call, g, Q, M, k, taus[t], 0, ids, dist) != VICK_OK) {
        fprintf(stderr, "GGNN query failed: %s\n", call.message);
        exit(1);
      }
      s[r] = call.seconds_kernel;
    }
    /* s[0] is the warm-up; the median of the other three */
    double a = s[1], b = s[2], c = s[3], med = a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
    const double rr = recall(ids, k, 0, M, k);
    printf("%-22s own query k=%d tau %.2f: recall@%d %.4f QPS %9.0f (%.3f us/query)\n", name, k, (double)taus[t], k, rr,
           (double)M / med, med * 1e6 / (double)M);
    ROW("%-22s own    k=%-3d tau=%.2f recall@%d %.4f  QPS %9.0f", name, k, (double)taus[t], k, rr, (double)M / med);
  }
  free(ids);
  free(dist);
}

/* GRNND graphs of the given settings, each searched by the large-batch
 * procedure at batch 10,000 (k = 10) at the same lists; build = wall time
 * of the build call (rows uploaded inside it, the n x R graph copied back),
 * after the warm-up; the build's stage times show the cost of a round. */
typedef struct {
  int pairs, s, r, t1, t2, final_reverse;
} grnnd_setting;

static void grnnd_settings(const float *x, int64_t n, const grnnd_setting *set, int nset, int with_k100) {
  vick_call call;
  char name[64];
  for (int i = 0; i < nset; ++i) {
    vick_grnnd_params gp;
    vick_grnnd_params_init(&gp);
    gp.pairs = set[i].pairs;
    gp.s = set[i].s;
    gp.r = set[i].r;
    gp.t1 = set[i].t1;
    gp.t2 = set[i].t2;
    gp.final_reverse = set[i].final_reverse;
    int32_t *gg = malloc((size_t)n * gp.r * 4);
    /* the output touched first: its first-touch page faults are the
     * caller's allocation, not the build, and would be timed as download */
    memset(gg, 0xff, (size_t)n * gp.r * 4);
    double deg = 0;
    memset(&call, 0, sizeof call);
    call.seed = 1;
    const double t0 = bench_now();
    if (vick_grnnd_build(&call, x, n, D, &gp, gg, NULL, &deg) != VICK_OK) {
      fprintf(stderr, "GRNND failed: %s\n", call.message);
      exit(1);
    }
    const double w = bench_now() - t0;
    snprintf(name, sizeof name, "GRNND %s S%d R%d T%d/%d%s", gp.pairs == VICK_GRNND_PAIRS_KEPT ? "kept" : "rand",
             gp.s, gp.r, gp.t1, gp.t2, gp.final_reverse ? " +rev" : "");
    printf("%s: build %.3f s wall (%.3f s in the call, kernels %.3f s), degree %.1f; stages", name, w,
           call.seconds_total, call.seconds_kernel, deg);
    for (int st = 0; st < call.n_stages; ++st) printf(" %s %.1f ms", call.stages[st].name, call.stages[st].seconds * 1e3);
    printf("\n");
    ROW("%-28s build  %.3f s, mean degree %.1f", name, w, deg);
    vick_gsearch *g = upload(x, n, gg, gp.r, NULL);
    free(gg);
    large_curve(name, g, 0);
    if (with_k100) large_k100(name, g, 0);
    vick_gsearch_free(g);
  }
}

/* GGNN search graphs (k = 24, 64 and 32 merge iterations): build wall time,
 * their bottom layers under the large-batch procedure, and (own_query)
 * GGNN's own query at batch 10,000, k = 10 and 100. */
static void ggnn_graphs(const float *x, int64_t n, int own_query) {
  static const int merges[] = {64, 32};
  static const float t10[] = {0.02f, 0.04f, 0.06f, 0.08f, 0.10f, 0.12f, 0.16f, 0.20f, 0.30f};
  static const float t100[] = {0.06f, 0.10f, 0.20f, 0.30f, 0.50f};
  vick_call call;
  char name[64];
  for (int i = 0; i < 2; ++i) {
    vick_ggnn_params q;
    vick_ggnn_params_init(&q);
    q.k = 24;
    q.cover_components = 1;
    q.merge_iterations = merges[i];
    vick_ggnn *gn = NULL;
    memset(&call, 0, sizeof call);
    const double t0 = bench_now();
    if (vick_ggnn_build(&call, x, n, D, &q, &gn) != VICK_OK) {
      fprintf(stderr, "GGNN build failed: %s\n", call.message);
      exit(1);
    }
    const double w = bench_now() - t0;
    snprintf(name, sizeof name, "GGNN k24 merge %d", merges[i]);
    int32_t *bg = malloc((size_t)n * 24 * 4);
    memset(&call, 0, sizeof call);
    if (vick_ggnn_bottom_graph(&call, gn, bg) != VICK_OK) {
      fprintf(stderr, "GGNN bottom graph: %s\n", call.message);
      exit(1);
    }
    int64_t edges = 0;
    for (int64_t j = 0; j < n * 24; ++j) edges += bg[j] >= 0;
    printf("%s: build %.3f s wall, bottom degree %.1f\n", name, w, (double)edges / (double)n);
    ROW("%-28s build  %.3f s, bottom degree %.1f", name, w, (double)edges / (double)n);
    vick_gsearch *g = upload(x, n, bg, 24, NULL);
    free(bg);
    large_curve(name, g, 0);
    if (i == 0 && own_query) large_k100(name, g, 0);
    vick_gsearch_free(g);
    if (own_query) {
      ggnn_own_query(gn, name, 10, t10, i == 0 ? 9 : 5);
      if (i == 0) ggnn_own_query(gn, name, 100, t100, 5);
    }
    vick_ggnn_free(gn);
  }
}

/* Issue 7's build comparison at equal recall of the same search: GRNND
 * graphs, GGNN's bottom layers and TSDG on the GNND K = 32 graph, each
 * searched by the same large-batch procedure at the same lists (batch
 * 10,000, k = 10); then batch 10,000 against GGNN's own query at k = 10
 * and k = 100. */
static void compare(const float *x, int64_t n) {
  /* the defaults (kept pairs, T1 3, T2 4, final reverse pass), the fastest
   * setting measured above GGNN's recall at every list, RNN-Descent's T1 4,
   * T2 15 with both pairings */
  static const grnnd_setting set[] = {{VICK_GRNND_PAIRS_KEPT, 20, 96, 3, 4, 1},
                                      {VICK_GRNND_PAIRS_KEPT, 20, 64, 2, 6, 1},
                                      {VICK_GRNND_PAIRS_KEPT, 20, 96, 4, 15, 0},
                                      {VICK_GRNND_PAIRS_RANDOM, 20, 96, 4, 15, 0}};
  grnnd_settings(x, n, set, 4, 1);
  {
    vick_call call;
    tsdg_graph t = build_tsdg(x, n, &call, 0);
    printf("TSDG on GNND K=32: build %.3f + %.3f s wall, degree %.1f\n", t.s_gnnd, t.s_tsdg, t.mean_degree);
    ROW("%-22s build  %.3f + %.3f s, mean degree %.1f", "TSDG (GNND K=32)", t.s_gnnd, t.s_tsdg, t.mean_degree);
    vick_gsearch *g = upload(x, n, t.ids, t.p.degree, t.occl);
    free(t.ids);
    free(t.occl);
    large_curve("TSDG (GNND K=32)", g, 5);
    large_curve("TSDG occlusion < 3", g, 3);
    large_curve("TSDG occlusion < 8", g, 8);
    large_curve_opts("TSDG delta 0.05", g, 5, 0.05f, 0);
    large_curve_opts("TSDG delta 0.2", g, 5, 0.2f, 0);
    large_curve_opts("TSDG all 4096 pivots", g, 5, -1.f, 4096);
    large_k100("TSDG (GNND K=32)", g, 5);
    vick_gsearch_free(g);
  }
  ggnn_graphs(x, n, 1);
}

/* "grnnd": the GRNND settings of GRNND_SETS ("pairs,S,R,T1,T2,rev;...",
 * pairs k(ept) or r(andom)) against GGNN's bottom layers, same search. */
static void grnnd_sweep(const float *x, int64_t n) {
  const char *env = getenv("GRNND_SETS");
  if (!env) env = "k,20,96,4,15,0;k,20,96,2,4,0;r,20,96,4,15,0";
  grnnd_setting set[32];
  int nset = 0;
  for (const char *c = env; *c && nset < 32;) {
    char pr = 0;
    grnnd_setting t;
    int used = 0;
    if (sscanf(c, " %c,%d,%d,%d,%d,%d%n", &pr, &t.s, &t.r, &t.t1, &t.t2, &t.final_reverse, &used) != 6) {
      fprintf(stderr, "GRNND_SETS: cannot read \"%s\"\n", c);
      exit(2);
    }
    t.pairs = pr == 'r' ? VICK_GRNND_PAIRS_RANDOM : VICK_GRNND_PAIRS_KEPT;
    set[nset++] = t;
    c += used;
    while (*c == ';' || *c == ' ') ++c;
  }
  grnnd_settings(x, n, set, nset, 0);
  ggnn_graphs(x, n, 0);
}

/* ------------------------------------------------------------ "profile" */
/* Where a single query's small-batch time goes, by leaving parts out:
 * batch 1 on the TSDG graph, the hop limit swept at t0 16 and t0 swept at
 * 4 hops (the intercept of time against hops is the per-call cost outside
 * the hops).  "ncu": only t0 16, 4 hops, 40 calls (for a profiler). */
static void profile(const vick_gsearch *g, int only) {
  vick_gsearch_params p;
  static const int t0s[] = {16, 16, 16, 16, 16, 16, 16, 16, 1, 2, 4, 8, 24, 32, 48};
  static const int hops[] = {1, 2, 3, 4, 5, 6, 7, 8, 4, 4, 4, 4, 4, 4, 4};
  for (int i = 0; i < (only ? 1 : 15); ++i) {
    vick_gsearch_params_init(&p);
    p.procedure = VICK_GSEARCH_SMALL;
    p.occlusion_limit = 10;
    p.searches = only ? 16 : t0s[i];
    p.hops = only ? 4 : hops[i];
    const point r = run(g, &p, 10, 1, only ? 40 : 500);
    printf("profile TSDG b=1 small t0 %2d hops %2d: recall@10 %.4f  %6.1f us (wall %6.1f us) fused %d\n", p.searches,
           p.hops, r.recall, r.us, r.wall_us, r.fused);
  }
}

#ifdef VICK_GS_TRACE
/* Stage times inside the fused small-batch kernel (a -DVIC_GS_TRACE=ON
 * build): per call, each block's global-timer stamps relative to the first
 * block's start; mean over the calls of the mean and of the latest block
 * at each stage (the query waits for its latest block twice: at the pivot
 * exchange and at the merge). */
static void trace(const vick_gsearch *g, int t0, int hops, int calls) {
  static const char *names[7] = {"start",     "pivots found",    "entry points set", "seeds merged",
                                 "hops done", "ranking counted", "merge done"};
  unsigned long long buf[GS_TRACE_BLOCKS * GS_TRACE_STAGES];
  double mean[7] = {0}, late[7] = {0}, ev = 0, ghz = 0;
  int64_t ids[10];
  float dist[10];
  vick_gsearch_params p;
  vick_gsearch_params_init(&p);
  p.procedure = VICK_GSEARCH_SMALL;
  p.occlusion_limit = 10;
  p.searches = t0;
  p.hops = hops;
  if (vick_gsearch_trace(buf)) { /* clears the stamps of earlier calls */
    fprintf(stderr, "trace read failed\n");
    exit(1);
  }
  for (int c = 0; c < calls; ++c) {
    vick_call call;
    memset(&call, 0, sizeof call);
    call.seed = (uint64_t)c + 7;
    if (vick_gsearch_query(&call, g, Q + (int64_t)(c % M) * D, 1, 10, &p, ids, dist) != VICK_OK ||
        vick_gsearch_trace(buf)) {
      fprintf(stderr, "trace: search failed: %s\n", call.message);
      exit(1);
    }
    ev += call.seconds_kernel;
    unsigned long long base = ~0ull;
    for (int b = 0; b < t0; ++b)
      if (buf[b * GS_TRACE_STAGES] && buf[b * GS_TRACE_STAGES] < base) base = buf[b * GS_TRACE_STAGES];
    /* block 0's clock rate over its search (cycles per timer nanosecond) */
    if (buf[4] > buf[0]) ghz += (double)(buf[8] - buf[7]) / (double)(buf[4] - buf[0]);
    for (int st = 0; st < 7; ++st) {
      double sum = 0, mx = 0;
      int nb = 0;
      for (int b = 0; b < t0; ++b) {
        const unsigned long long v = buf[b * GS_TRACE_STAGES + st];
        if (!v) continue;
        const double us = (double)(v - base) * 1e-3;
        sum += us;
        if (us > mx) mx = us;
        nb++;
      }
      mean[st] += nb ? sum / nb : 0;
      late[st] += mx;
    }
  }
  printf("trace TSDG b=1 small t0 %d hops %d (%d calls): CUDA-event time %.1f us, SM clock %.2f GHz\n", t0, hops,
         calls, ev * 1e6 / calls, ghz / calls);
  for (int st = 0; st < 7; ++st)
    printf("  %-18s mean block %6.2f us   latest block %6.2f us\n", names[st], mean[st] / calls, late[st] / calls);
}
#endif

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: grnnd_bench DIR N M D [ggnn] [quick | latency | compare | grnnd | profile | ncu]\n");
    return 2;
  }
  const char *dir = argv[1];
  int64_t n = atoll(argv[2]);
  M = atoll(argv[3]);
  D = atoi(argv[4]);
  int with_ggnn = 0, quick = 0, latency = 0, cmp = 0, prof = 0, ncu = 0, sweep = 0;
  for (int i = 5; i < argc; ++i) {
    with_ggnn |= strcmp(argv[i], "ggnn") == 0;
    quick |= strcmp(argv[i], "quick") == 0;
    latency |= strcmp(argv[i], "latency") == 0;
    cmp |= strcmp(argv[i], "compare") == 0;
    prof |= strcmp(argv[i], "profile") == 0;
    ncu |= strcmp(argv[i], "ncu") == 0;
    sweep |= strcmp(argv[i], "grnnd") == 0;
  }
  const int mode = latency ? 2 : (quick ? 1 : 0);
  float *x = bench_load(dir, "base.f32", (size_t)n * D * 4);
  Q = bench_load(dir, "query.f32", (size_t)M * D * 4);
  QT = bench_load(dir, "qtruth.i32", (size_t)M * 400);
  vick_call call;
  int rc;

  /* warm-up: context and modules */
  {
    vick_grnnd_params gp;
    vick_grnnd_params_init(&gp);
    gp.t1 = 1;
    gp.t2 = 1;
    int64_t nw = n < 20000 ? n : 20000;
    int32_t *w = malloc((size_t)nw * gp.r * 4);
    memset(&call, 0, sizeof call);
    if ((rc = vick_grnnd_build(&call, x, nw, D, &gp, w, NULL, NULL)) != VICK_OK) {
      fprintf(stderr, "warm-up failed: %s\n", call.message);
      return 1;
    }
    free(w);
  }

  if (cmp || sweep) {
    if (cmp) compare(x, n);
    else grnnd_sweep(x, n);
    printf("\n==== %s (%s, n=%lld, %lld queries, d=%d; QPS from CUDA-event kernel time) ====\n",
           cmp ? "compare" : "grnnd", dir, (long long)n, (long long)M, D);
    for (int i = 0; i < rows; ++i) printf("%s\n", table[i]);
    return 0;
  }
  if (prof || ncu) {
    tsdg_graph t = build_tsdg(x, n, &call, 0);
    vick_gsearch *g = upload(x, n, t.ids, t.p.degree, t.occl);
    free(t.ids);
    free(t.occl);
#ifdef VICK_GS_TRACE
    trace(g, 16, 4, 300);
    trace(g, 8, 4, 300);
    trace(g, 16, 1, 300);
    trace(g, 32, 4, 300);
#endif
    profile(g, ncu);
    vick_gsearch_free(g);
    return 0;
  }

  /* GRNND */
  vick_grnnd_params gp;
  vick_grnnd_params_init(&gp);
  int32_t *gg = malloc((size_t)n * gp.r * 4);
  double gdeg = 0;
  memset(&call, 0, sizeof call);
  call.seed = 1;
  if ((rc = vick_grnnd_build(&call, x, n, D, &gp, gg, NULL, &gdeg)) != VICK_OK) {
    fprintf(stderr, "GRNND failed: %s\n", call.message);
    return 1;
  }
  printf("GRNND n=%lld d=%d S=%d R=%d T1=%d T2=%d rho=%.2f: %.3f s (kernels %.3f s), mean degree %.2f\n",
         (long long)n, D, gp.s, gp.r, gp.t1, gp.t2, (double)gp.rho, call.seconds_total, call.seconds_kernel, gdeg);
  for (int i = 0; i < call.n_stages; ++i) printf("  stage %-10s %.3f s\n", call.stages[i].name, call.stages[i].seconds);
  ROW("GRNND build %.3f s (S=%d R=%d T1=%d T2=%d rho=%.2f), mean degree %.1f", call.seconds_total, gp.s, gp.r, gp.t1,
      gp.t2, (double)gp.rho, gdeg);

  /* GNND kNN graph, then TSDG */
  tsdg_graph tsdg = build_tsdg(x, n, &call, 1);
  const vick_tsdg_params tp = tsdg.p;
  int32_t *tg = tsdg.ids, *knn = tsdg.knn;
  uint8_t *to = tsdg.occl;
  printf("GNND K=32: %.3f s; TSDG alpha=%.2f lambda0=%d: %.3f s, mean degree %.2f\n", tsdg.s_gnnd,
         (double)tp.alpha, tp.lambda0, tsdg.s_tsdg, tsdg.mean_degree);
  for (int i = 0; i < call.n_stages; ++i) printf("  stage %-10s %.3f s\n", call.stages[i].name, call.stages[i].seconds);
  ROW("GNND(K=32) %.3f s + TSDG %.3f s (alpha %.1f, lambda0 %d), mean degree %.1f", tsdg.s_gnnd, tsdg.s_tsdg,
      (double)tp.alpha, tp.lambda0, tsdg.mean_degree);
  int64_t hist[12] = {0};
  for (int64_t i = 0; i < n * tp.degree; ++i)
    if (tg[i] >= 0) hist[to[i] < 11 ? to[i] : 11]++;
  printf("TSDG edges per row by occlusion factor:");
  for (int i = 0; i < 12; ++i) printf(" %d:%.2f", i, (double)hist[i] / (double)n);
  printf("\n");

  vick_gsearch *gs_g = NULL, *gs_t = NULL, *gs_k = NULL;
  memset(&call, 0, sizeof call);
  if (vick_gsearch_create(&call, x, n, D, gg, gp.r, NULL, 0, &gs_g) != VICK_OK ||
      vick_gsearch_create(&call, x, n, D, tg, tp.degree, to, 0, &gs_t) != VICK_OK ||
      vick_gsearch_create(&call, x, n, D, knn, 32, NULL, 0, &gs_k) != VICK_OK) {
    fprintf(stderr, "upload failed: %s\n", call.message);
    return 1;
  }
  vick_gsearch_info ig, it, ik;
  vick_gsearch_info_get(gs_g, &ig);
  vick_gsearch_info_get(gs_t, &it);
  vick_gsearch_info_get(gs_k, &ik);
  printf("components: GRNND %lld, TSDG %lld, GNND kNN %lld; pivots %d / %d / %d; SMs %d\n", (long long)ig.components,
         (long long)it.components, (long long)ik.components, ig.entry_points, it.entry_points, ik.entry_points, ig.sms);
  ROW("components GRNND %lld TSDG %lld kNN %lld; pivots %d / %d / %d; SMs %d", (long long)ig.components,
      (long long)it.components, (long long)ik.components, ig.entry_points, it.entry_points, ik.entry_points, ig.sms);

  sweep_graph("GRNND", gs_g, 0, 0, mode);
  sweep_graph("TSDG", gs_t, 10, 5, mode);
  if (mode == 0) sweep_graph("kNN32", gs_k, 0, 0, 1);
  vick_gsearch_free(gs_k);
  gs_k = NULL;
  core_api(x, n, VIC_METHOD_TSDG);
  core_api(x, n, VIC_METHOD_GRNND);

  if (with_ggnn) {
    vick_ggnn_params q;
    vick_ggnn_params_init(&q);
    q.k = 24;
    q.cover_components = 1;
    vick_ggnn *g = NULL;
    memset(&call, 0, sizeof call);
    if (vick_ggnn_build(&call, x, n, D, &q, &g) != VICK_OK) {
      fprintf(stderr, "GGNN build failed: %s\n", call.message);
    } else {
      printf("GGNN k=24 build %.3f s\n", call.seconds_total);
      ROW("GGNN build %.3f s (k=24)", call.seconds_total);
      int64_t *ids = malloc((size_t)M * 100 * 8);
      float *dist = malloc((size_t)M * 100 * 4);
      static const float taus[] = {0.2f, 0.5f, 1.0f};
      for (int kk = 10; kk <= 100; kk += 90)
        for (int t = 0; t < 3; ++t) {
          double best = 1e30;
          for (int r = 0; r < 3; ++r) {
            memset(&call, 0, sizeof call);
            if (vick_ggnn_query(&call, g, Q, M, kk, taus[t], 0, ids, dist) != VICK_OK) {
              fprintf(stderr, "GGNN query failed: %s\n", call.message);
              break;
            }
            if (call.seconds_kernel < best) best = call.seconds_kernel;
          }
          double rr = recall(ids, kk, 0, M, kk);
          printf("GGNN query k=%d tau=%.1f: recall@%d %.4f QPS %.0f\n", kk, (double)taus[t], kk, rr, (double)M / best);
          ROW("GGNN     query  b=%-5lld k=%-3d tau=%.1f   recall@%d %.4f QPS %10.0f", (long long)M, kk,
              (double)taus[t], kk, rr, (double)M / best);
        }
      free(ids);
      free(dist);
      vick_ggnn_free(g);
    }
  }
  vick_gsearch_free(gs_g);
  vick_gsearch_free(gs_t);
  vick_gsearch_free(gs_k);
  printf("\n==== summary (%s, n=%lld, %lld queries, d=%d; QPS from CUDA-event kernel time) ====\n", dir, (long long)n,
         (long long)M, D);
  for (int i = 0; i < rows; ++i) printf("%s\n", table[i]);
  free(x); free(Q); free(QT); free(gg); free(knn); free(tg); free(to);
  return 0;
}
