/* Saved indexes: a round trip answers exactly as the original for every
 * kind; a truncated file, flipped bytes, a wrong magic, a newer version,
 * other data and missing or unwritable paths each fail with a clear status
 * and message, never a crash. */
#include "test_util.h"

#include <string.h>
#include <unistd.h>


/* Scratch files of this test (test_util's helpers under a short name). */
static const char *tmp_path(const char *name, char *buf, size_t size) { return vt_tmp_path("index", name, buf, size); }

static int same_results(const vic_knn *a, const vic_knn *b) {
  size_t m = (size_t)a->n * a->k;
  return a->n == b->n && a->k == b->k && memcmp(a->ids, b->ids, m * sizeof *a->ids) == 0 &&
         memcmp(a->dist, b->dist, m * sizeof *a->dist) == 0;
}

/* Save ix, load it back against x, and compare the answers to q. */
static void round_trip(vic_ctx *c, vic_index *ix, const vic_data *x, const vic_data *q, const char *what) {
  char path[600];
  tmp_path("round", path, sizeof path);
  VT_OK(c, vic_index_save(c, ix, path));
  vic_index *back;
  VT_OK(c, vic_index_load(c, path, x, &back));
  vic_search_options so;
  vic_search_options_init(&so);
  so.k = 7;
  vic_knn a, b;
  VT_OK(c, vic_index_search(c, ix, q, &so, &a));
  VT_OK(c, vic_index_search(c, back, q, &so, &b));
  VT_CHECK(same_results(&a, &b), "%s: loaded index answers differently", what);
  const vic_report *ra = vic_index_report(ix), *rb = vic_index_report(back);
  VT_CHECK(ra->method == rb->method && ra->k == rb->k && strcmp(ra->reason, rb->reason) == 0 &&
               ra->seconds_total == rb->seconds_total,
           "%s: build report kept", what);
  VT_CHECK(vic_index_size(back) > 0, "%s: size", what);
  vic_knn_free(&a);
  vic_knn_free(&b);
  vic_index_free(back);
  remove(path);
}

static void test_round_trips(void) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 8);
  int64_t n = vt_small() ? 800 : 3000, m = 100;
  /* grid (d = 3, periodic), brute (small n), graph (forced), graph cosine */
  float *p3 = vt_uniform(n + m, 3, 2.f, 1);
  double box[3] = {2, 2, 2};
  vic_data x3 = {p3, n, 3, 0, VIC_L2, box}, q3 = {p3 + n * 3, m, 3, 0, VIC_L2, NULL};
  float *ph = vt_clusters(n + m, 20, 6, 2);
  vic_data xh = {ph, n, 20, 0, VIC_L2, NULL}, qh = {ph + n * 20, m, 20, 0, VIC_L2, NULL};
  vic_data xc = xh, qc = qh;
  xc.metric = qc.metric = VIC_COSINE;
  struct { const vic_data *x, *q; vic_method method; const char *name; } cases[4] = {
      {&x3, &q3, VIC_METHOD_AUTO, "grid"}, {&xh, &qh, VIC_METHOD_AUTO, "brute"},
      {&xh, &qh, VIC_METHOD_NNDESCENT, "graph"}, {&xc, &qc, VIC_METHOD_NNDESCENT, "graph cosine"}};
  for (int i = 0; i < 4; ++i) {
    vic_build_options o;
    vic_build_options_init(&o);
    o.method = cases[i].method;
    vic_index *ix;
    VT_OK(c, vic_index_build(c, cases[i].x, &o, &ix));
    round_trip(c, ix, cases[i].x, cases[i].q, cases[i].name);
    vic_index_free(ix);
  }
  vic_ctx_destroy(c);
  free(p3);
  free(ph);
}

/* Expect status s and a message containing `word`. */
static void expect_fail(vic_ctx *c, const char *path, const vic_data *x, vic_status s, const char *word,
                        const char *what) {
  vic_index *ix = (vic_index *)&ix; /* must come back NULL */
  vic_status got = vic_index_load(c, path, x, &ix);
  VT_CHECK(got == s, "%s: %s, expected %s (%s)", what, vic_status_name(got), vic_status_name(s), vic_ctx_error(c));
  VT_CHECK(strstr(vic_ctx_error(c), word) != NULL, "%s: message '%s' lacks '%s'", what, vic_ctx_error(c), word);
  VT_CHECK(ix == NULL, "%s: no index on failure", what);
  if (got == VIC_OK) vic_index_free(ix);
}

static void test_corruption(void) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 9);
  int64_t n = vt_small() ? 600 : 2000;
  int32_t d = 16;
  float *p = vt_clusters(n, d, 5, 3);
  vic_data x = {p, n, d, 0, VIC_L2, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_NNDESCENT;
  vic_index *ix;
  VT_OK(c, vic_index_build(c, &x, &o, &ix));
  char good[600], bad[600];
  tmp_path("good", good, sizeof good);
  tmp_path("bad", bad, sizeof bad);
  VT_OK(c, vic_index_save(c, ix, good));
  long len = 0;
  unsigned char *orig = vt_read_file(good, &len);
  VT_CHECK(orig && len > 200, "saved file has %ld bytes", len);
  if (!orig) return;
  unsigned char *b = malloc((size_t)len);

  /* truncations: inside the header, right after it, mid-payload, one byte short */
  long cuts[4] = {10, 96, len / 2, len - 1};
  for (int i = 0; i < 4; ++i) {
    vt_write_file(bad, orig, cuts[i]);
    expect_fail(c, bad, &x, VIC_E_FORMAT, cuts[i] < 96 ? "too short" : "truncated", "truncated file");
  }
  /* one flipped byte anywhere: header fields, header checksum, every section */
  long flips[8] = {9, 20, 41, 60, 90, 100, len / 3, len - 2};
  for (int i = 0; i < 8; ++i) {
    memcpy(b, orig, (size_t)len);
    b[flips[i]] ^= 0x10;
    vt_write_file(bad, b, len);
    vic_index *got = NULL;
    vic_status s = vic_index_load(c, bad, &x, &got);
    VT_CHECK(s == VIC_E_FORMAT && got == NULL, "flip at byte %ld: %s (%s)", flips[i], vic_status_name(s), vic_ctx_error(c));
    VT_CHECK(strstr(vic_ctx_error(c), bad) != NULL, "flip at %ld: message names the file: %s", flips[i], vic_ctx_error(c));
  }
  /* a wrong magic, a newer format version, trailing garbage */
  memcpy(b, orig, (size_t)len);
  memcpy(b, "NOTANIDX", 8);
  vt_write_file(bad, b, len);
  expect_fail(c, bad, &x, VIC_E_FORMAT, "not a Vicinity index", "wrong magic");
  memcpy(b, orig, (size_t)len);
  b[8] = 2; /* format version 2 */
  vt_write_file(bad, b, len);
  expect_fail(c, bad, &x, VIC_E_FORMAT, "newer", "newer version");
  unsigned char *longer = malloc((size_t)len + 4);
  memcpy(longer, orig, (size_t)len);
  memset(longer + len, 0, 4);
  vt_write_file(bad, longer, len + 4);
  expect_fail(c, bad, &x, VIC_E_FORMAT, "trailing", "trailing bytes");
  free(longer);

  /* other data: same shape with one value changed; other n; other metric */
  float *p2 = malloc((size_t)n * d * sizeof *p2);
  memcpy(p2, p, (size_t)n * d * sizeof *p2);
  p2[n * d / 2] += 1e-3f;
  vic_data x2 = x;
  x2.rows = p2;
  expect_fail(c, good, &x2, VIC_E_FORMAT, "different data", "changed value");
  vic_data xs = x;
  xs.n = n - 1;
  expect_fail(c, good, &xs, VIC_E_FORMAT, "built over", "other n");
  vic_data xm = x;
  xm.metric = VIC_COSINE;
  expect_fail(c, good, &xm, VIC_E_FORMAT, "metric", "other metric");
  /* the same numbers through a strided view are the same data */
  float *wide = malloc((size_t)n * (d + 3) * sizeof *wide);
  for (int64_t i = 0; i < n; ++i) memcpy(wide + i * (d + 3), p + i * d, (size_t)d * sizeof(float));
  vic_data xw = {wide, n, d, d + 3, VIC_L2, NULL};
  vic_index *ok = NULL;
  VT_OK(c, vic_index_load(c, good, &xw, &ok));
  vic_index_free(ok);
  free(wide);
  free(p2);

  /* files that are not there or cannot be written */
  expect_fail(c, "/nonexistent-dir/none.vix", &x, VIC_E_IO, "cannot open", "missing file");
  VT_CHECK(vic_index_save(c, ix, "/nonexistent-dir/out.vix") == VIC_E_IO, "unwritable path");
  VT_CHECK(strstr(vic_ctx_error(c), "nonexistent-dir") != NULL, "message: %s", vic_ctx_error(c));
  VT_CHECK(vic_index_save(c, ix, "") == VIC_E_ARGUMENT, "empty path");
  VT_CHECK(vic_index_load(c, good, &x, NULL) == VIC_E_ARGUMENT, "NULL out");

  free(b);
  free(orig);
  remove(good);
  remove(bad);
  vic_index_free(ix);
  vic_ctx_destroy(c);
  free(p);
}

int main(void) {
  test_round_trips();
  test_corruption();
  return vt_finish("test_index_file");
}
