/* The GPU grid's streamed lists (vick_grid_knn_stream behind vic_knn_build
 * and vic_knn_build_into) equal the CPU grid's: ids equal and distances
 * equal bit for bit, with int64 and int32 ids, under a device budget that
 * forces a ring of small chunks, periodic and clustered, d = 2 and 3.
 * At the kernels' interface: every row delivered once through pieces of a
 * few rows, and a sink that stops the call.  With VIC_TEST_BIG=1 also
 * n*k > 2^31 entries (about 17 GB of host memory), checked on sampled rows
 * against the CPU's exact query.  Skips (exit 77) without a CUDA device. */
#include "test_util.h"
#include "vic_kernels_exact.h"

#include <stdint.h>
#include <string.h>

static vic_ctx *ctx_on(vic_backend be) { return vt_ctx(be, 11); }

/* Entries of got (ids of either width) that differ from ref. */
static int64_t differing(const vic_knn *ref, const void *ids, int id_bytes, const float *dist, int64_t n, int32_t k) {
  if (n != ref->n || k != ref->k) return ref->n > 0 ? ref->n : 1;
  int64_t bad = 0, shown = 0;
  for (int64_t i = 0; i < n * (int64_t)k; ++i) {
    int64_t id = id_bytes == 4 ? (int64_t)((const int32_t *)ids)[i] : ((const int64_t *)ids)[i];
    int diff = id != ref->ids[i] || memcmp(&dist[i], &ref->dist[i], sizeof(float)) != 0;
    if (diff && shown++ < 3)
      fprintf(stderr, "  entry %lld (row %lld): got %lld:%.9g, CPU %lld:%.9g\n", (long long)i, (long long)(i / k),
              (long long)id, dist[i], (long long)ref->ids[i], ref->dist[i]);
    bad += diff;
  }
  return bad;
}

static void check_case(const char *what, const vic_data *x, int32_t k, size_t budget) {
  vic_ctx *cpu = ctx_on(VIC_BACKEND_CPU), *gpu = ctx_on(VIC_BACKEND_CUDA);
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_GRID;
  o.k = k;
  o.device_memory_budget = budget;
  vic_knn ref, lib;
  VT_OK(cpu, vic_knn_build(cpu, x, &o, &ref));
  VT_OK(gpu, vic_knn_build(gpu, x, &o, &lib));
  VT_CHECK(lib.report.backend == VIC_BACKEND_CUDA, "%s: ran on %s", what, vic_backend_name(lib.report.backend));
  int64_t bad = differing(&ref, lib.ids, 8, lib.dist, lib.n, lib.k);
  VT_CHECK(bad == 0, "%s: vic_knn_build on the GPU: %lld entries differ from the CPU grid", what, (long long)bad);
  VT_CHECK(lib.report.dnn1_mean == ref.report.dnn1_mean, "%s: d_nn1 mean %g vs %g", what, lib.report.dnn1_mean,
           ref.report.dnn1_mean);
  for (int t = 0; t < 2; ++t) {
    const int ib = t ? 4 : 8;
    vic_knn_out out;
    vic_knn_out_init(&out);
    out.id_type = t ? VIC_IDS_INT32 : VIC_IDS_INT64;
    out.capacity = ref.n * ref.k;
    out.ids = malloc((size_t)out.capacity * (size_t)ib);
    out.dist = malloc((size_t)out.capacity * sizeof(float));
    if (!out.ids || !out.dist) { fprintf(stderr, "out of memory\n"); exit(1); }
    VT_OK(gpu, vic_knn_build_into(gpu, x, &o, &out));
    bad = differing(&ref, out.ids, ib, out.dist, out.n, out.k);
    VT_CHECK(bad == 0, "%s: vic_knn_build_into (%s ids) on the GPU: %lld entries differ from the CPU grid", what,
             t ? "int32" : "int64", (long long)bad);
    VT_CHECK(out.report.seconds_kernel > 0 && out.report.seconds_transfer > 0, "%s: kernel %g s, transfer %g s", what,
             out.report.seconds_kernel, out.report.seconds_transfer);
    free(out.ids);
    free(out.dist);
  }
  printf("%s: n = %lld, k = %d, budget %.0f MiB: equal to the CPU grid (GPU %.3f s, kernels %.3f s, copies %.3f s)\n",
         what, (long long)x->n, (int)k, budget / 1048576.0, lib.report.seconds_total, lib.report.seconds_kernel,
         lib.report.seconds_transfer);
  vic_knn_free(&ref);
  vic_knn_free(&lib);
  vic_ctx_destroy(cpu);
  vic_ctx_destroy(gpu);
}

/* --------------------------------------------- the kernels' interface */
typedef struct {
  int64_t *ids;
  float *dist;
  int *seen;
  int64_t pieces, max_rows, stop_after;
} piece_log;

static int log_piece(void *user, int64_t first, const uint32_t *rows, int64_t m, int32_t k, const void *ids,
                     const float *dist) {
  piece_log *l = user;
  l->pieces++;
  if (m > l->max_rows) l->max_rows = m;
  for (int64_t r = 0; r < m; ++r) {
    const int64_t row = first + (rows ? (int64_t)rows[r] : r);
    l->seen[row]++;
    memcpy(l->ids + row * k, (const int64_t *)ids + r * k, (size_t)k * 8);
    memcpy(l->dist + row * k, dist + r * k, (size_t)k * 4);
  }
  return l->stop_after > 0 && l->pieces >= l->stop_after;
}

static void check_pieces(int by_rows) {
  const int64_t n = 20000, q0 = 1234, q1 = 17000, m = q1 - q0;
  const int32_t k = 9;
  float *p = vt_uniform(n, 3, 1.f, 5);
  vick_points x = {p, n, 3, 3, VICK_METRIC_L2, NULL};
  int64_t *ref_i = malloc((size_t)m * k * 8), *got_i = malloc((size_t)m * k * 8);
  float *ref_d = malloc((size_t)m * k * 4), *got_d = malloc((size_t)m * k * 4);
  int *seen = calloc((size_t)m, sizeof(int));
  if (!ref_i || !got_i || !ref_d || !got_d || !seen) { fprintf(stderr, "out of memory\n"); exit(1); }
  vick_call call;
  memset(&call, 0, sizeof call);
  VT_CHECK(vick_grid_knn_range(&call, &x, k, q0, q1, ref_i, ref_d) == VICK_OK, "range: %s", call.message);
  piece_log l = {got_i, got_d, seen, 0, 0, 0};
  vick_sink sink;
  memset(&sink, 0, sizeof sink);
  sink.id_bytes = 8;
  sink.write = log_piece;
  sink.user = &l;
  sink.piece_bytes = 1000; /* 10 rows of 9 entries */
  sink.chunk_rows = 777;
  sink.by_rows = by_rows;
  memset(&call, 0, sizeof call);
  VT_CHECK(vick_grid_knn_stream(&call, &x, k, q0, q1, &sink) == VICK_OK, "stream: %s", call.message);
  int64_t once = 0;
  for (int64_t r = 0; r < m; ++r) once += seen[r] == 1;
  VT_CHECK(once == m, "by rows %d: %lld of %lld rows delivered exactly once", by_rows, (long long)once, (long long)m);
  VT_CHECK(l.max_rows <= 10 && l.pieces >= m / 10, "%lld pieces of at most %lld rows", (long long)l.pieces,
           (long long)l.max_rows);
  VT_CHECK(memcmp(ref_i, got_i, (size_t)m * k * 8) == 0 && memcmp(ref_d, got_d, (size_t)m * k * 4) == 0,
           "by rows %d: pieces of 10 rows differ from the range call's lists", by_rows);
  /* a sink that says stop */
  memset(seen, 0, (size_t)m * sizeof(int));
  l.pieces = 0;
  l.stop_after = 5;
  memset(&call, 0, sizeof call);
  int rc = vick_grid_knn_stream(&call, &x, k, q0, q1, &sink);
  VT_CHECK(rc == VICK_CANCELLED && l.pieces == 5, "a stopping sink: rc %d after %lld pieces (%s)", rc,
           (long long)l.pieces, call.message);
  /* bad sinks */
  sink.id_bytes = 2;
  VT_CHECK(vick_grid_knn_stream(&call, &x, k, q0, q1, &sink) == VICK_ARGUMENT, "ids of 2 bytes accepted");
  VT_CHECK(vick_grid_knn_stream(&call, &x, k, q0, q1, NULL) == VICK_ARGUMENT, "no sink accepted");
  free(p);
  free(ref_i);
  free(got_i);
  free(ref_d);
  free(got_d);
  free(seen);
  printf("pieces (%s): %lld rows through pieces of <= 10 rows, each once, equal to the range call\n",
         by_rows ? "row order" : "sorted order", (long long)m);
}

/* n*k > 2^31 entries: int32 ids, rows sampled over the whole range (the
 * last ones past entry 2^31) against the CPU's exact query. */
static void check_big(void) {
  const int32_t k = 128;
  const int64_t n = ((int64_t)1 << 31) / k + 200000;
  float *p = vt_uniform(n, 3, 1.f, 9);
  vic_data x = {p, n, 3, 0, VIC_L2, NULL};
  vic_ctx *gpu = ctx_on(VIC_BACKEND_CUDA), *cpu = ctx_on(VIC_BACKEND_CPU);
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_GRID;
  o.k = k;
  vic_knn_out out;
  vic_knn_out_init(&out);
  out.id_type = VIC_IDS_INT32;
  out.capacity = n * k;
  out.ids = malloc((size_t)out.capacity * 4);
  out.dist = malloc((size_t)out.capacity * 4);
  if (!out.ids || !out.dist) {
    printf("big: no host memory for %lld entries; not checked\n", (long long)out.capacity);
    free(out.ids);
    free(out.dist);
    free(p);
    return;
  }
  VT_OK(gpu, vic_knn_build_into(gpu, &x, &o, &out));
  const int64_t sample = 400;
  float *q = malloc((size_t)sample * 3 * sizeof(float));
  int64_t rows[400];
  for (int64_t s = 0; s < sample; ++s) {
    rows[s] = s < 200 ? s * (n / 200) : n - 1 - (s - 200); /* the last 200 rows lie past entry 2^31 */
    memcpy(q + s * 3, p + rows[s] * 3, 3 * sizeof(float));
  }
  vic_data qx = {q, sample, 3, 0, VIC_L2, NULL};
  vic_knn ex;
  VT_OK(cpu, vic_knn_query_exact(cpu, &x, &qx, k + 1, &ex));
  int64_t bad = 0, checked = 0;
  const int32_t *ids = out.ids;
  for (int64_t s = 0; s < sample; ++s) {
    if (ex.ids[s * (k + 1)] != rows[s]) continue; /* a duplicate point came first: not comparable */
    checked++;
    int row_bad = 0;
    for (int32_t t = 0; t < k; ++t) {
      int64_t e = rows[s] * k + t;
      row_bad |= (int64_t)ids[e] != ex.ids[s * (k + 1) + t + 1] || out.dist[e] != ex.dist[s * (k + 1) + t + 1];
    }
    bad += row_bad;
  }
  VT_CHECK(checked > sample / 2 && bad == 0, "big: %lld of %lld sampled rows differ from the CPU's exact query",
           (long long)bad, (long long)checked);
  printf("big: n = %lld, k = %d (%lld entries > 2^31): %lld sampled rows equal the CPU (%.2f s, kernels %.2f s, "
         "copies %.2f s)\n",
         (long long)n, (int)k, (long long)(n * k), (long long)checked, out.report.seconds_total,
         out.report.seconds_kernel, out.report.seconds_transfer);
  vic_knn_free(&ex);
  free(q);
  free(out.ids);
  free(out.dist);
  free(p);
  vic_ctx_destroy(gpu);
  vic_ctx_destroy(cpu);
}

int main(int argc, char **argv) {
  const int64_t n = vt_gpu_start(argc, argv) ? 40000 : 300000;

  float *u = vt_uniform(n, 3, 1.f, 1);
  vic_data xu = {u, n, 3, 0, VIC_L2, NULL};
  check_case("uniform 3-d", &xu, 32, 0);
  /* the points and grid need about 60 bytes a point; the rest forces a ring of small chunks */
  check_case("uniform 3-d, small budget", &xu, 32, (size_t)(n * 60 + (8 << 20)));
  double box[3] = {1, 1, 1};
  vic_data xp = {u, n, 3, 0, VIC_L2, box};
  check_case("periodic 3-d", &xp, 16, 0);
  vic_data x2 = {u, n, 2, 3, VIC_L2, NULL}; /* strided: the first two columns */
  check_case("2-d strided", &x2, 7, 0);
  float *cl = vt_clusters(n, 3, 20, 2);
  vic_data xc = {cl, n, 3, 0, VIC_L2, NULL};
  check_case("clustered 3-d", &xc, 64, 0);
  check_pieces(0);
  check_pieces(1);
  const char *big = getenv("VIC_TEST_BIG");
  if (big && *big == '1') check_big();
  else printf("big: n*k > 2^31 not run (set VIC_TEST_BIG=1; about 17 GB of host memory)\n");
  free(u);
  free(cl);
  return vt_finish("test_knn_stream");
}
