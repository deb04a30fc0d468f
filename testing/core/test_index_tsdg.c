/* TSDG and GRNND index kinds on the CPU (issue 7): the TSDG index (CPU kNN
 * lists, CPU diversification, best-first search) reaches recall@10 >= 0.9
 * on clustered data and its edges respect the occlusion order; a GRNND
 * index without a GPU falls back to the NN-Descent graph with a warning;
 * the TSDG index saved and loaded answers exactly as before; a flipped
 * byte, a truncated file and other data each fail with VIC_E_FORMAT. */
#include "test_util.h"

#include <string.h>
#include <unistd.h>

/* Scratch files of this test (test_util's helpers under a short name). */
static const char *tmp_path(const char *name, char *buf, size_t size) { return vt_tmp_path("tsdg", name, buf, size); }

int main(void) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 5);
  const int64_t n = vt_small() ? 1500 : 5000, m = 200;
  const int32_t d = 16;
  float *p = vt_clusters(n + m, d, 12, 17);
  vic_data x = {p, n, d, 0, VIC_L2, NULL}, q = {p + n * d, m, d, 0, VIC_L2, NULL};
  vic_knn exact;
  VT_OK(c, vic_knn_query_exact(c, &x, &q, 10, &exact));

  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_TSDG;
  vic_index *ix;
  VT_OK(c, vic_index_build(c, &x, &o, &ix));
  const vic_report *rep = vic_index_report(ix);
  VT_CHECK(rep->method == VIC_METHOD_TSDG && rep->backend == VIC_BACKEND_CPU, "built %s on %s",
           vic_method_name(rep->method), vic_backend_name(rep->backend));
  VT_CHECK(strstr(rep->reason, "TSDG") != NULL, "reason '%s'", rep->reason);
  VT_CHECK(vic_index_size(ix) > n * 4, "size %lld", (long long)vic_index_size(ix));

  vic_search_options so;
  vic_search_options_init(&so);
  so.k = 10;
  vic_knn got;
  VT_OK(c, vic_index_search(c, ix, &q, &so, &got));
  double r = vt_recall(&got, &exact);
  printf("TSDG (CPU) n=%lld: recall@10 %.4f (%s)\n", (long long)n, r, got.report.reason);
  VT_CHECK(r >= 0.9, "TSDG recall@10 %.4f", r);
  int64_t bad = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int t = 1; t < 10; ++t)
      if (got.dist[i * 10 + t] < got.dist[i * 10 + t - 1] || got.ids[i * 10 + t] == got.ids[i * 10 + t - 1]) bad++;
  VT_CHECK(bad == 0, "%lld unordered or repeated results", (long long)bad);
  /* the occlusion limit narrows the edges visited: recall may drop, never crash */
  so.occlusion_limit = 1;
  vic_knn narrow;
  VT_OK(c, vic_index_search(c, ix, &q, &so, &narrow));
  printf("TSDG occlusion limit 1: recall@10 %.4f\n", vt_recall(&narrow, &exact));
  vic_knn_free(&narrow);
  so.occlusion_limit = 0;

  /* save, load, same answers */
  char path[600], bad_path[600];
  tmp_path("tsdg", path, sizeof path);
  VT_OK(c, vic_index_save(c, ix, path));
  vic_index *back;
  VT_OK(c, vic_index_load(c, path, &x, &back));
  VT_CHECK(vic_index_report(back)->method == VIC_METHOD_TSDG, "loaded %s", vic_method_name(vic_index_report(back)->method));
  vic_knn again;
  VT_OK(c, vic_index_search(c, back, &q, &so, &again));
  size_t cells = (size_t)m * 10;
  VT_CHECK(memcmp(again.ids, got.ids, cells * sizeof *got.ids) == 0 &&
               memcmp(again.dist, got.dist, cells * sizeof *got.dist) == 0,
           "loaded index answers differently");
  vic_knn_free(&again);
  vic_index_free(back);

  /* corruption: a flipped byte in the edge table, a truncated file, other data */
  long len = 0;
  unsigned char *b = vt_read_file(path, &len);
  VT_CHECK(b != NULL && len > 200, "saved file of %ld bytes", len);
  tmp_path("bad", bad_path, sizeof bad_path);
  if (b) {
    b[len - 7] ^= 0x40;
    vt_write_file(bad_path, b, len);
    VT_CHECK(vic_index_load(c, bad_path, &x, &back) == VIC_E_FORMAT, "flipped byte accepted");
    VT_CHECK(strstr(vic_ctx_error(c), "corrupt") != NULL, "message: %s", vic_ctx_error(c));
    b[len - 7] ^= 0x40;
    vt_write_file(bad_path, b, len - 100);
    VT_CHECK(vic_index_load(c, bad_path, &x, &back) == VIC_E_FORMAT, "truncated file accepted");
    VT_CHECK(strstr(vic_ctx_error(c), "truncated") != NULL, "message: %s", vic_ctx_error(c));
    free(b);
  }
  vic_data other = x;
  other.n = n - 1;
  VT_CHECK(vic_index_load(c, path, &other, &back) == VIC_E_FORMAT, "other data accepted");
  remove(path);
  remove(bad_path);

  /* for-all lists through the TSDG graph (every point searched, itself dropped) */
  {
    vic_build_options ko;
    vic_build_options_init(&ko);
    ko.k = 10;
    ko.recall_sample = 0;
    ko.method = VIC_METHOD_BRUTE;
    vic_knn ex, tl;
    VT_OK(c, vic_knn_build(c, &x, &ko, &ex));
    ko.method = VIC_METHOD_TSDG;
    VT_OK(c, vic_knn_build(c, &x, &ko, &tl));
    double rr = vt_recall(&tl, &ex);
    int64_t self = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int t = 0; t < 10; ++t) self += tl.ids[i * 10 + t] == i;
    printf("kNN lists via TSDG: recall@10 %.4f (%s)\n", rr, tl.report.reason);
    VT_CHECK(tl.report.method == VIC_METHOD_TSDG && rr >= 0.9 && self == 0, "TSDG lists: %s recall %.4f, %lld self",
             vic_method_name(tl.report.method), rr, (long long)self);
    vic_knn_free(&ex);
    vic_knn_free(&tl);
  }

  /* entry_points reaches the CPU search: on 40 islands far apart the graph
   * has no edge between islands, so one random entry row finds the query's
   * island rarely and a thousand find it almost surely.  The islands sit on
   * an 8 x 5 grid of spacing 30 (radius about 4): far apart, yet small
   * coordinates, so float distances keep their precision */
  {
    const int64_t ni = 4000, mi = 200;
    const int islands = 40;
    float *w = vt_clusters(ni + mi, d, 1, 91);
    for (int64_t i = 0; i < ni + mi; ++i) {
      w[i * d] += 30.f * (float)(i % islands % 8);
      w[i * d + 1] += 30.f * (float)(i % islands / 8);
    }
    vic_data xi = {w, ni, d, 0, VIC_L2, NULL}, qi = {w + ni * d, mi, d, 0, VIC_L2, NULL};
    vic_knn ei;
    VT_OK(c, vic_knn_query_exact(c, &xi, &qi, 10, &ei));
    vic_index *isl;
    VT_OK(c, vic_index_build(c, &xi, &o, &isl));
    vic_search_options eo;
    vic_search_options_init(&eo);
    eo.k = 10;
    double rec[2];
    const int32_t counts[2] = {1, 1000};
    for (int t = 0; t < 2; ++t) {
      vic_knn gi;
      eo.entry_points = counts[t];
      VT_OK(c, vic_index_search(c, isl, &qi, &eo, &gi));
      rec[t] = vt_recall(&gi, &ei);
      printf("TSDG (CPU) on %d islands, %d entry points: recall@10 %.4f (%s)\n", islands, (int)counts[t], rec[t],
             gi.report.reason);
      vic_knn_free(&gi);
    }
    VT_CHECK(rec[0] < 0.5 && rec[1] >= 0.95, "entry_points 1 / 1000: recall@10 %.4f / %.4f", rec[0], rec[1]);
    vic_index_free(isl);
    vic_knn_free(&ei);
    free(w);
  }

  /* GRNND needs the GPU: on the CPU the NN-Descent graph, with a warning */
  vic_index_free(ix);
  o.method = VIC_METHOD_GRNND;
  vt_warnings = 0;
  VT_OK(c, vic_index_build(c, &x, &o, &ix));
  VT_CHECK(vic_index_report(ix)->method == VIC_METHOD_NNDESCENT && vt_warnings > 0, "GRNND on the CPU built %s",
           vic_method_name(vic_index_report(ix)->method));
  vic_index_free(ix);

  vic_knn_free(&got);
  vic_knn_free(&exact);
  free(p);
  vic_ctx_destroy(c);
  return vt_finish("test_index_tsdg");
}
