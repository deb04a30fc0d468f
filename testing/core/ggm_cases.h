/* The cases of vic_knn_add, vic_knn_merge and vic_knn_build_sharded, run
 * on the CPU by core/test_ggm.c and on the GPU by gpu/test_ggm.c: recall
 * against exact lists, the ids of the union, bad input with its message,
 * a cancelled merge, a cancelled and resumed work-file build, a corrupt
 * section.  Header-only so that both tests share one copy. */
#ifndef VIC_GGM_CASES_H
#define VIC_GGM_CASES_H

#include "test_util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct {
  vic_backend backend;
  int devices;
  int64_t n;
  int32_t d, k;
  double min_recall;
  const char *test; /* name for scratch files */
} ggm_case;

static int gc_cancel_after = -1; /* progress calls on "ggm shards" before a cancel; -1 = never */
static int gc_any_cancel = 0;    /* cancel at the first progress call of any stage */
static int gc_progress(void *user, const char *stage, double fraction) {
  (void)user;
  (void)fraction;
  if (gc_any_cancel) return 1;
  if (gc_cancel_after >= 0 && strcmp(stage, "ggm shards") == 0) {
    if (gc_cancel_after == 0) return 1;
    gc_cancel_after--;
  }
  return 0;
}

static vic_ctx *gc_ctx(const ggm_case *t) {
  vic_ctx_options o;
  vic_ctx_options_init(&o);
  o.backend = t->backend;
  o.devices = t->devices;
  o.seed = 11;
  o.progress = gc_progress;
  return vt_ctx_make(&o);
}

static vic_build_options gc_options(const ggm_case *t) {
  vic_build_options o;
  vic_build_options_init(&o);
  o.k = t->k;
  o.recall_sample = 0;
  o.method = t->backend == VIC_BACKEND_CUDA ? VIC_METHOD_GNND : VIC_METHOD_NNDESCENT;
  return o;
}

/* Recall of got against exact lists (ids), and every id in range, not self. */
static double gc_recall(const vic_knn *got, const vic_knn *exact, int64_t n) {
  int64_t hit = 0, bad = 0;
  const int32_t k = exact->k;
  for (int64_t u = 0; u < n; ++u)
    for (int32_t t = 0; t < got->k; ++t) {
      int64_t id = got->ids[u * got->k + t];
      if (id < 0 || id >= n || id == u) { bad++; continue; }
      for (int32_t e = 0; e < k; ++e) hit += exact->ids[u * k + e] == id;
    }
  VT_CHECK(bad == 0, "%lld entries out of range or self", (long long)bad);
  return (double)hit / ((double)n * k);
}

/* Lists as vic_knn_build promises them: ascending true distances that are
 * the rows' distances (to float rounding), no id twice, -1 only after a
 * row's last entry and only where fewer than k other rows exist. */
static void gc_lists_exact(const vic_knn *got, const float *rows, int32_t d, const char *what) {
  int64_t bad_dist = 0, bad_order = 0, repeats = 0, padded = 0;
  const int32_t k = got->k;
  const int64_t want = got->n - 1 < k ? got->n - 1 : k;
  for (int64_t u = 0; u < got->n; ++u) {
    const int64_t *li = got->ids + u * k;
    const float *ld = got->dist + u * k;
    for (int32_t t = 0; t < k; ++t) {
      if (li[t] < 0) { padded += t < want; continue; }
      double s = 0;
      for (int32_t j = 0; j < d; ++j) {
        const double e = (double)rows[u * d + j] - rows[li[t] * d + j];
        s += e * e;
      }
      bad_dist += fabs(sqrt(s) - ld[t]) > 1e-4 * (1 + sqrt(s));
      bad_order += t > 0 && li[t - 1] >= 0 && ld[t] < ld[t - 1];
      for (int32_t e = 0; e < t; ++e) repeats += li[e] == li[t];
    }
  }
  VT_CHECK(bad_dist == 0 && bad_order == 0 && repeats == 0 && padded == 0,
           "%s: %lld distances off, %lld out of order, %lld repeated ids, %lld missing entries", what,
           (long long)bad_dist, (long long)bad_order, (long long)repeats, (long long)padded);
}

static vic_data gc_view(const float *rows, int64_t n, int32_t d) {
  vic_data x = {rows, n, d, 0, VIC_L2, NULL, NULL};
  return x;
}

static void gc_add_merge(const ggm_case *t, const float *rows, const vic_knn *exact) {
  vic_ctx *c = gc_ctx(t);
  vic_build_options o = gc_options(t);
  const int64_t n = t->n, n_old = n - n / 10, half = n / 2;
  const int32_t d = t->d;

  /* add 10 % */
  vic_data xo = gc_view(rows, n_old, d), xn = gc_view(rows + n_old * d, n - n_old, d);
  vic_knn g = {0}, out = {0};
  VT_OK(c, vic_knn_build(c, &xo, &o, &g));
  VT_OK(c, vic_knn_add(c, &xo, &g, &xn, &o, &out));
  VT_CHECK(out.n == n && out.k == t->k, "add: %lld x %d", (long long)out.n, (int)out.k);
  double r = gc_recall(&out, exact, n);
  printf("%s add %lld + %lld: recall %.4f (%s, %.3f s)\n", t->test, (long long)n_old, (long long)(n - n_old), r,
         vic_backend_name(out.report.backend), out.report.seconds_total);
  VT_CHECK(r >= t->min_recall, "add recall %.4f", r);
  VT_CHECK(out.report.backend == t->backend, "add ran on %s", vic_backend_name(out.report.backend));
  gc_lists_exact(&out, rows, d, "add");
  if (t->backend == VIC_BACKEND_CUDA) /* k <= 32 on the GPU: no new graph, no merge */
    VT_CHECK(strstr(out.report.reason, "graph search") != NULL, "add ran as: %s", out.report.reason);
  vic_knn_free(&out);
  /* against a rebuild of all rows by the same method: the add may not lose
   * more than a little of its recall */
  {
    vic_data xa = gc_view(rows, n, d);
    vic_knn full = {0};
    VT_OK(c, vic_knn_build(c, &xa, &o, &full));
    const double rb = gc_recall(&full, exact, n);
    printf("%s rebuild of %lld rows: recall %.4f (%.3f s); the add %+.4f\n", t->test, (long long)n, rb,
           full.report.seconds_total, r - rb);
    VT_CHECK(r >= rb - 0.01, "add recall %.4f, rebuild %.4f", r, rb);
    vic_knn_free(&full);
  }

  /* a single new row, and bad input: each with its message, out left zeroed */
  vic_data x1 = gc_view(rows + n_old * d, 1, d);
  VT_OK(c, vic_knn_add(c, &xo, &g, &x1, &o, &out));
  VT_CHECK(out.n == n_old + 1 && out.ids[n_old * out.k] >= 0, "one row added");
  vic_knn_free(&out);
  vic_data bad_d = gc_view(rows + n_old * d, 10, d - 1);
  VT_CHECK(vic_knn_add(c, &xo, &g, &bad_d, &o, &out) == VIC_E_ARGUMENT && strstr(vic_ctx_error(c), "d = "),
           "wrong d: %s", vic_ctx_error(c));
  VT_CHECK(out.ids == NULL && out.n == 0, "out not zeroed");
  {
    float *nan_rows = malloc((size_t)10 * d * sizeof *nan_rows);
    memcpy(nan_rows, rows + n_old * d, (size_t)10 * d * sizeof *nan_rows);
    nan_rows[3 * d + 1] = NAN;
    vic_data bad_nan = gc_view(nan_rows, 10, d);
    VT_CHECK(vic_knn_add(c, &xo, &g, &bad_nan, &o, &out) == VIC_E_NONFINITE && strstr(vic_ctx_error(c), "row 3") &&
                 strstr(vic_ctx_error(c), "NaN"),
             "NaN in the new rows: %s", vic_ctx_error(c));
    VT_CHECK(out.ids == NULL && out.n == 0, "out not zeroed after NaN");
    free(nan_rows);
  }
  vic_data empty = gc_view(rows, 0, d);
  VT_CHECK(vic_knn_add(c, &xo, &g, &empty, &o, &out) == VIC_E_ARGUMENT && strstr(vic_ctx_error(c), "nothing to add"),
           "empty add: %s", vic_ctx_error(c));
  vic_data short_x = gc_view(rows, n_old - 1, d);
  VT_CHECK(vic_knn_add(c, &short_x, &g, &xn, &o, &out) == VIC_E_ARGUMENT && strstr(vic_ctx_error(c), "rows"),
           "graph of other rows: %s", vic_ctx_error(c));
  int64_t keep = g.ids[5];
  g.ids[5] = n_old + 3;
  VT_CHECK(vic_knn_add(c, &xo, &g, &xn, &o, &out) == VIC_E_ARGUMENT && strstr(vic_ctx_error(c), "row 0"),
           "id out of range: %s", vic_ctx_error(c));
  g.ids[5] = keep;
  vic_knn_free(&g);

  /* merge of two halves built apart */
  vic_data x1h = gc_view(rows, half, d), x2h = gc_view(rows + half * d, n - half, d);
  vic_knn g1 = {0}, g2 = {0};
  VT_OK(c, vic_knn_build(c, &x1h, &o, &g1));
  VT_OK(c, vic_knn_build(c, &x2h, &o, &g2));
  VT_OK(c, vic_knn_merge(c, &x1h, &g1, &x2h, &g2, &o, &out));
  r = gc_recall(&out, exact, n);
  printf("%s merge %lld + %lld: recall %.4f (%.3f s)\n", t->test, (long long)half, (long long)(n - half), r,
         out.report.seconds_total);
  VT_CHECK(r >= t->min_recall, "merge recall %.4f", r);
  vic_knn_free(&out);
  /* a cancelled merge: VIC_E_CANCELLED, nothing returned, the next call runs */
  gc_any_cancel = 1;
  VT_CHECK(vic_knn_merge(c, &x1h, &g1, &x2h, &g2, &o, &out) == VIC_E_CANCELLED && out.ids == NULL,
           "cancelled merge: %s", vic_ctx_error(c));
  gc_any_cancel = 0;
  VT_OK(c, vic_knn_merge(c, &x1h, &g1, &x2h, &g2, &o, &out));
  vic_knn_free(&out);
  g2.k = t->k - 1;
  VT_CHECK(vic_knn_merge(c, &x1h, &g1, &x2h, &g2, &o, &out) == VIC_E_ARGUMENT && strstr(vic_ctx_error(c), "k = "),
           "k differs: %s", vic_ctx_error(c));
  g2.k = t->k;
  vic_knn_free(&g1);
  vic_knn_free(&g2);
  vic_ctx_destroy(c);
}

static void gc_sharded(const ggm_case *t, const float *rows, const vic_knn *exact) {
  vic_ctx *c = gc_ctx(t);
  vic_build_options o = gc_options(t);
  vic_data x = gc_view(rows, t->n, t->d);
  vic_shard_options so;
  vic_shard_options_init(&so);
  so.shard_rows = t->n / 6 + 1;
  vic_knn a = {0}, b = {0};
  VT_OK(c, vic_knn_build_sharded(c, &x, &o, &so, &a));
  double r = gc_recall(&a, exact, t->n);
  printf("%s sharded in memory (%d shards): recall %.4f (%.3f s) %s\n", t->test, (int)a.report.slabs, r,
         a.report.seconds_total, a.report.reason);
  VT_CHECK(a.report.slabs == 6, "shards: %d", (int)a.report.slabs);
  VT_CHECK(r >= t->min_recall, "sharded recall %.4f", r);
  /* cancelled in memory: nothing returned, the message says nothing is kept */
  gc_cancel_after = 7;
  VT_CHECK(vic_knn_build_sharded(c, &x, &o, &so, &b) == VIC_E_CANCELLED && strstr(vic_ctx_error(c), "merge rounds") &&
               b.ids == NULL,
           "cancel in memory: %s", vic_ctx_error(c));
  gc_cancel_after = -1;

  /* in a work file: cancelled after 4 steps, resumed to the same lists */
  char dir[512];
  vt_tmp_path(t->test, "shards", dir, sizeof dir);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
  VT_CHECK(system(cmd) == 0, "mkdir %s", dir);
  so.work_dir = dir;
  gc_cancel_after = 8;
  vic_status s = vic_knn_build_sharded(c, &x, &o, &so, &b);
  VT_CHECK(s == VIC_E_CANCELLED && strstr(vic_ctx_error(c), "resume") && b.ids == NULL, "cancel: %s %s",
           vic_status_name(s), vic_ctx_error(c));
  gc_cancel_after = -1;
  so.resume = 1;
  VT_OK(c, vic_knn_build_sharded(c, &x, &o, &so, &b));
  r = gc_recall(&b, exact, t->n);
  printf("%s sharded, cancelled and resumed: recall %.4f\n", t->test, r);
  VT_CHECK(r >= t->min_recall, "resumed recall %.4f", r);
  vic_knn_free(&b);
  /* another k: refused, the file untouched */
  o.k = t->k - 1;
  VT_CHECK(vic_knn_build_sharded(c, &x, &o, &so, &b) == VIC_E_ARGUMENT && strstr(vic_ctx_error(c), "another build"),
           "other k: %s", vic_ctx_error(c));
  o.k = t->k;
  /* a corrupt section: named, nothing returned */
  char file[600];
  snprintf(file, sizeof file, "%s/vicinity_shards.vgs", dir);
  long len = 0;
  unsigned char *bytes = vt_read_file(file, &len);
  VT_CHECK(bytes && len > 8192, "work file %s: %ld bytes", file, len);
  if (bytes && len > 8192) {
    bytes[4096 + 100] ^= 0x40;
    vt_write_file(file, bytes, len);
    VT_CHECK(vic_knn_build_sharded(c, &x, &o, &so, &b) == VIC_E_FORMAT && strstr(vic_ctx_error(c), "own graph[0]") &&
                 b.ids == NULL,
             "corrupt section: %s", vic_ctx_error(c));
    bytes[4096 + 100] ^= 0x40;
    bytes[20] ^= 1; /* header */
    vt_write_file(file, bytes, len);
    VT_CHECK(vic_knn_build_sharded(c, &x, &o, &so, &b) == VIC_E_FORMAT && strstr(vic_ctx_error(c), "header"),
             "corrupt header: %s", vic_ctx_error(c));
  }
  free(bytes);
  remove(file);
  so.resume = 0;
  so.work_dir = NULL;
  /* bad shard sizes */
  so.shard_rows = 3;
  VT_CHECK(vic_knn_build_sharded(c, &x, &o, &so, &b) == VIC_E_ARGUMENT && strstr(vic_ctx_error(c), "too small"),
           "tiny shards: %s", vic_ctx_error(c));
  so.shard_rows = -1;
  VT_CHECK(vic_knn_build_sharded(c, &x, &o, &so, &b) == VIC_E_ARGUMENT, "negative shard_rows");
  vic_knn_free(&a);
  snprintf(cmd, sizeof cmd, "rmdir '%s'", dir);
  (void)!system(cmd);
  vic_ctx_destroy(c);
}

/* Exact lists by brute force on the case's backend. */
static void gc_exact(const ggm_case *t, const float *rows, vic_knn *exact) {
  vic_ctx *c = gc_ctx(t);
  vic_build_options o;
  vic_build_options_init(&o);
  o.k = t->k;
  o.method = VIC_METHOD_BRUTE;
  o.recall_sample = 0;
  vic_data x = gc_view(rows, t->n, t->d);
  VT_OK(c, vic_knn_build(c, &x, &o, exact));
  vic_ctx_destroy(c);
}

#endif
