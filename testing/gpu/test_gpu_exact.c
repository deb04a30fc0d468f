/* The GPU's exact methods equal the CPU's: brute force (L2, cosine, inner
 * product, any d, k up to 256, chunked under a small memory budget) and
 * the grid (uniform, clustered, periodic, duplicates, d = 1..3), on random
 * and real data (MNIST, the halo).  Also the GPU's error paths: out of
 * device memory (fallback or VIC_E_NOMEM), cancellation, k too large.
 * Skips (exit 77) where no CUDA device is usable. */
#include "test_util.h"
#include "vic_io.h"

#include <math.h>
#include <string.h>

/* Rows where the GPU lists differ from the CPU's: distances must agree to
 * rel (relative, with an absolute floor for zeros) and ids must agree
 * unless the distance ties with a neighbour of the reference row. */
static int64_t compare_lists(const vic_knn *gpu, const vic_knn *cpu, double rel, const char *what) {
  int64_t bad = 0;
  if (gpu->n != cpu->n || gpu->k != cpu->k) {
    fprintf(stderr, "%s: shapes differ (%lld x %d vs %lld x %d)\n", what, (long long)gpu->n, gpu->k,
            (long long)cpu->n, cpu->k);
    return gpu->n > 0 ? gpu->n : 1;
  }
  for (int64_t i = 0; i < cpu->n; ++i) {
    int row_bad = 0;
    for (int32_t t = 0; t < cpu->k && !row_bad; ++t) {
      int64_t a = i * cpu->k + t;
      double dg = gpu->dist[a], dc = cpu->dist[a];
      if (cpu->ids[a] < 0 || gpu->ids[a] < 0) { row_bad = cpu->ids[a] != gpu->ids[a]; continue; }
      double tol = rel * fmax(fabs(dc), 1e-6);
      if (fabs(dg - dc) > tol) { row_bad = 1; break; }
      if (gpu->ids[a] == cpu->ids[a]) continue;
      /* a tie: the GPU's id must sit in the CPU row at the same distance */
      int found = 0;
      for (int32_t u = 0; u < cpu->k && !found; ++u)
        found = cpu->ids[i * cpu->k + u] == gpu->ids[a] && fabs(cpu->dist[i * cpu->k + u] - dg) <= tol;
      if (!found && fabs(dc - cpu->dist[i * cpu->k + cpu->k - 1]) > tol) row_bad = 1;
    }
    if (row_bad && bad < 3) {
      fprintf(stderr, "%s: row %lld differs:\n  gpu", what, (long long)i);
      for (int32_t t = 0; t < cpu->k && t < 8; ++t) fprintf(stderr, " %lld:%.7g", (long long)gpu->ids[i * cpu->k + t], gpu->dist[i * cpu->k + t]);
      fprintf(stderr, "\n  cpu");
      for (int32_t t = 0; t < cpu->k && t < 8; ++t) fprintf(stderr, " %lld:%.7g", (long long)cpu->ids[i * cpu->k + t], cpu->dist[i * cpu->k + t]);
      fprintf(stderr, "\n");
    }
    bad += row_bad;
  }
  return bad;
}

/* Seconds of stage `name` in a report, -1 when absent. */
/* Build on the CPU with method ref and on the GPU with method m; the
 * lists must agree.  Returns the GPU's kernel seconds. */
static double check_against(const char *what, const vic_data *x, int32_t k, vic_method m, size_t budget,
                            vic_method ref_method) {
  vic_ctx *cpu = vt_ctx(VIC_BACKEND_CPU, 7), *gpu = vt_ctx(VIC_BACKEND_CUDA, 7);
  vic_build_options o;
  vic_build_options_init(&o);
  o.k = k;
  o.method = ref_method;
  vic_knn ref, got;
  VT_OK(cpu, vic_knn_build(cpu, x, &o, &ref));
  o.method = m;
  o.device_memory_budget = budget;
  VT_OK(gpu, vic_knn_build(gpu, x, &o, &got));
  VT_CHECK(got.report.backend == VIC_BACKEND_CUDA, "%s ran on %s", what, vic_backend_name(got.report.backend));
  VT_CHECK(got.report.method == m, "%s ran %s", what, vic_method_name(got.report.method));
  VT_CHECK(got.report.seconds_kernel > 0 && got.report.seconds_transfer > 0, "%s: GPU times %g / %g", what,
           got.report.seconds_kernel, got.report.seconds_transfer);
  int64_t bad = compare_lists(&got, &ref, 1e-5, what);
  VT_CHECK(bad == 0, "%s: %lld of %lld rows differ from the CPU", what, (long long)bad, (long long)x->n);
  printf("%-34s n=%-7lld d=%-4d k=%-3d %s: gpu %.3f s (kernels %.3f, transfers %.3f), cpu %.3f s, %lld rows differ\n",
         what, (long long)x->n, x->d, k, vic_method_name(m), got.report.seconds_total, got.report.seconds_kernel,
         got.report.seconds_transfer, ref.report.seconds_total, (long long)bad);
  double kernels = got.report.seconds_kernel;
  if (m == VIC_METHOD_GRID && x->d == 2)
    printf("timing %-27s n=%-7lld d=2 k=%-3d grid search %.4f s, grid sort %.4f s, kernels %.4f s\n", what,
           (long long)x->n, k, vic_report_stage_seconds(&got.report, "grid search"), vic_report_stage_seconds(&got.report, "grid sort"),
           kernels);
  vic_knn_free(&ref);
  vic_knn_free(&got);
  vic_ctx_destroy(cpu);
  vic_ctx_destroy(gpu);
  return kernels;
}

/* The CPU's brute force is the reference... */
static double check_same(const char *what, const vic_data *x, int32_t k, vic_method m, size_t budget) {
  return check_against(what, x, k, m, budget, VIC_METHOD_BRUTE);
}
/* ...except for the grid in a periodic box: both grids take the minimum
 * image by subtracting the period from one wrapped coordinate (exact),
 * the brute force as |a - b| mod L, which rounds to an ulp of L -- more
 * than 1e-5 relative for a close pair across the boundary.  The GPU grid
 * equals the CPU grid there; the CPU's own tests compare the CPU grid
 * with the brute force. */
static double check_periodic_grid(const char *what, const vic_data *x, int32_t k) {
  return check_against(what, x, k, VIC_METHOD_GRID, 0, VIC_METHOD_GRID);
}

static void test_brute_random(int s) {
  int64_t n = s ? 700 : 6000;
  float *u = vt_uniform(n, 24, 1.f, 11);
  vic_data x = {u, n, 24, 0, VIC_L2, NULL};
  check_same("brute uniform L2", &x, 10, VIC_METHOD_BRUTE, 0);
  float *cl = vt_clusters(n, 40, 12, 12);
  vic_data y = {cl, n, 40, 0, VIC_L2, NULL};
  check_same("brute clusters L2 k=256", &y, 256, VIC_METHOD_BRUTE, 0);
  y.metric = VIC_COSINE;
  check_same("brute clusters cosine", &y, 16, VIC_METHOD_BRUTE, 0);
  y.metric = VIC_INNER_PRODUCT;
  check_same("brute clusters inner product", &y, 12, VIC_METHOD_BRUTE, 0);
  /* a strided view and an odd d */
  vic_data z = {cl, n, 37, 40, VIC_L2, NULL};
  check_same("brute strided d=37", &z, 7, VIC_METHOD_BRUTE, 0);
  /* a budget that forces many column chunks and small query tiles */
  check_same("brute chunked (8 MiB budget)", &x, 10, VIC_METHOD_BRUTE, (size_t)8 << 20);
  free(u);
  free(cl);
}

static void test_brute_duplicates(int s) {
  int64_t n = s ? 600 : 4000;
  float *u = vt_uniform(n, 16, 1.f, 13);
  /* every point three times: ties at distance 0 go to the lower id */
  for (int64_t i = n / 3; i < n; ++i) memcpy(u + i * 16, u + (i % (n / 3)) * 16, 16 * sizeof(float));
  vic_data x = {u, n, 16, 0, VIC_L2, NULL};
  check_same("brute duplicates", &x, 9, VIC_METHOD_BRUTE, 0);
  /* far from the origin: centring keeps the GEMM accurate */
  for (int64_t i = 0; i < n * 16; ++i) u[i] += 1000.f;
  check_same("brute offset by 1000", &x, 9, VIC_METHOD_BRUTE, 0);
  free(u);
}

static void test_grid(int s) {
  int64_t n = s ? 3000 : 60000;
  float *u = vt_uniform(n, 3, 1.f, 21);
  vic_data x = {u, n, 3, 0, VIC_L2, NULL};
  check_same("grid uniform3", &x, 32, VIC_METHOD_GRID, 0);
  check_same("grid uniform3 k=1", &x, 1, VIC_METHOD_GRID, 0);
  if (!s) check_same("grid uniform3 k=200", &x, 200, VIC_METHOD_GRID, 0);
  double box[3] = {1, 1, 1};
  vic_data p = x;
  p.box = box;
  check_periodic_grid("grid periodic unit box", &p, 32);
  check_same("brute periodic unit box", &p, 8, VIC_METHOD_BRUTE, 0);
  double box2[3] = {1, 0, 1}; /* periodic in x and z only */
  p.box = box2;
  check_periodic_grid("grid periodic x,z", &p, 16);
  vic_data two = {u, n, 2, 3, VIC_L2, NULL};
  /* a query whose own cell is tiny (a close pair) must move to coarser
   * levels, not grow its cube of cells shell by shell (which took minutes
   * of kernel time for these points): the time limit below catches that */
  double t2 = check_same("grid d=2 (strided)", &two, 10, VIC_METHOD_GRID, 0);
  VT_CHECK(s || t2 < 2.0, "grid d=2 (strided): %.3f s of GPU kernels for %lld points", t2, (long long)n);
  p = two;
  p.n = n / 2; /* the CPU's periodic brute force is the slow part */
  p.box = box;
  check_periodic_grid("grid d=2 periodic", &p, 10);
  {
    /* close pairs: every point with a twin 1e-6 away (tiny own cells) */
    float *pr = malloc((size_t)n * 2 * sizeof(float));
    for (int64_t i = 0; i < n; ++i)
      for (int j = 0; j < 2; ++j) pr[i * 2 + j] = u[(i / 2) * 3 + j] + (float)(i & 1) * 1e-6f * (float)(j + 1);
    vic_data cp = {pr, n, 2, 0, VIC_L2, NULL};
    double tc = check_same("grid d=2 close pairs", &cp, 10, VIC_METHOD_GRID, 0);
    VT_CHECK(s || tc < 2.0, "grid d=2 close pairs: %.3f s of GPU kernels for %lld points", tc, (long long)n);
    free(pr);
  }
  vic_data one = {u, n, 1, 3, VIC_L2, NULL};
  check_same("grid d=1", &one, 6, VIC_METHOD_GRID, 0);
  float *cl = vt_clusters(n, 3, 6, 22);
  vic_data c = {cl, n, 3, 0, VIC_L2, NULL};
  check_same("grid clustered 3-d", &c, 32, VIC_METHOD_GRID, 0);
  /* duplicates and a tiny set (the shells wrap: full scans) */
  for (int64_t i = n / 2; i < n; ++i) memcpy(cl + i * 3, cl + (i - n / 2) * 3, 3 * sizeof(float));
  check_same("grid duplicates", &c, 12, VIC_METHOD_GRID, 0);
  vic_data tiny = {u, 40, 3, 0, VIC_L2, box};
  check_periodic_grid("grid tiny periodic", &tiny, 30);
  free(u);
  free(cl);
}

static void test_real_data(int s) {
  vio_matrix m;
  if (vt_load_data("mnist/t10k-images-idx3-ubyte.gz", &m)) {
    vic_data x = {m.rows, s ? 800 : m.n, m.d, 0, VIC_L2, NULL};
    check_same("MNIST brute L2", &x, 10, VIC_METHOD_BRUTE, 0);
    x.metric = VIC_COSINE;
    check_same("MNIST brute cosine", &x, 10, VIC_METHOD_BRUTE, 0);
    vio_free(&m);
  }
  if (vt_load_data("nbody/halo_low_res.npy", &m)) {
    vic_data x = {m.rows, s ? 3000 : m.n, m.d, 0, VIC_L2, NULL};
    check_same("halo grid", &x, 32, VIC_METHOD_GRID, 0);
    check_same("halo brute", &x, 16, VIC_METHOD_BRUTE, 0);
    vio_free(&m);
  }
}

static int cancel_at_once(void *user, const char *stage, double f) {
  (void)user; (void)stage; (void)f;
  return 1;
}

static void test_errors(void) {
  int64_t n = 5000;
  float *u = vt_uniform(n, 32, 1.f, 31);
  vic_data x = {u, n, 32, 0, VIC_L2, NULL};
  vic_build_options o;
  vic_build_options_init(&o);
  o.k = 10;
  o.method = VIC_METHOD_BRUTE;
  o.device_memory_budget = 4096; /* far too small */
  vic_knn r;
  vic_ctx *gpu = vt_ctx(VIC_BACKEND_CUDA, 1);
  vic_status st = vic_knn_build(gpu, &x, &o, &r);
  VT_CHECK(st == VIC_E_NOMEM, "forced GPU with a 4 KiB budget: %s", vic_status_name(st));
  VT_CHECK(strstr(vic_ctx_error(gpu), "device memory") != NULL, "message: %s", vic_ctx_error(gpu));
  VT_CHECK(r.ids == NULL, "output zeroed");
  o.method = VIC_METHOD_GRID;
  vic_data x3 = {u, n, 3, 32, VIC_L2, NULL};
  st = vic_knn_build(gpu, &x3, &o, &r);
  VT_CHECK(st == VIC_E_NOMEM, "grid with a 4 KiB budget: %s", vic_status_name(st));

  vic_ctx *aut = vt_ctx(VIC_BACKEND_AUTO, 1);
  vt_warnings = 0;
  o.method = VIC_METHOD_BRUTE;
  VT_OK(aut, vic_knn_build(aut, &x, &o, &r));
  VT_CHECK(r.report.backend == VIC_BACKEND_CPU && vt_warnings >= 1, "AUTO falls back to the CPU with a warning (%s, %d)",
           vic_backend_name(r.report.backend), vt_warnings);
  vic_knn_free(&r);

  o.device_memory_budget = 0;
  o.k = 300;
  st = vic_knn_build(gpu, &x, &o, &r);
  VT_CHECK(st == VIC_E_UNSUPPORTED && strstr(vic_ctx_error(gpu), "k <=") != NULL, "k = 300 on the GPU: %s: %s",
           vic_status_name(st), vic_ctx_error(gpu));
  o.k = 10;

  vic_ctx_options co;
  vic_ctx_options_init(&co);
  co.backend = VIC_BACKEND_CUDA;
  co.progress = cancel_at_once;
  vic_ctx *cc;
  VT_CHECK(vic_ctx_create(&co, &cc) == VIC_OK, "context");
  st = vic_knn_build(cc, &x, &o, &r);
  VT_CHECK(st == VIC_E_CANCELLED, "cancel: %s", vic_status_name(st));
  o.method = VIC_METHOD_GRID;
  st = vic_knn_build(cc, &x3, &o, &r);
  VT_CHECK(st == VIC_E_CANCELLED, "cancel grid: %s", vic_status_name(st));
  vic_ctx_destroy(cc);

  co.progress = NULL;
  co.device = 999;
  o.method = VIC_METHOD_BRUTE;
  VT_CHECK(vic_ctx_create(&co, &cc) == VIC_OK, "context");
  VT_CHECK(!vic_cuda_available(cc), "device 999 is not available");
  st = vic_knn_build(cc, &x, &o, &r);
  VT_CHECK(st == VIC_E_NODEVICE && strstr(vic_ctx_error(cc), "999") != NULL, "device 999: %s: %s", vic_status_name(st),
           vic_ctx_error(cc));
  vic_ctx_destroy(cc);
  vic_ctx_destroy(gpu);
  vic_ctx_destroy(aut);
  free(u);
}

int main(int argc, char **argv) {
  int s = vt_gpu_start(argc, argv);
  test_errors();
  test_brute_random(s);
  test_brute_duplicates(s);
  test_grid(s);
  test_real_data(s);
  return vt_finish("test_gpu_exact");
}
