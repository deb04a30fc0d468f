/* Density + peaks benchmark (issue 8): on a 3-d particle file (plummer3),
 * times vic_knn_density_peaks -- exact grid lists, kNN and SPH densities
 * and the density peaks in one call; with backend cuda the whole pipeline
 * runs on the device and the n*k lists never reach the host -- and prints
 * one JSON line: the best wall time of the call ("seconds", incl. every
 * transfer), its GPU kernel and transfer seconds (CUDA events) and stages
 * (-1 for a stage the run did not have: the slab path's differ).
 *
 * --check: once more with the lists brought back, then vic_peaks_find on
 * the CPU over those lists and the GPU's densities (the definition the
 * device run must reproduce): its wall time, and how many parents,
 * deltas, saliencies and peak ids differ (must be 0).
 *
 * --budget-mib B: the device memory the call may hold per device (a
 * larger set runs in slabs, out of core); --devices N: GPUs (slabs spread
 * over them).  The JSON line names the slabs, devices and the peak device
 * bytes, and a hash of the peaks (parents, peak ids, peak points, members)
 * that runs with other budgets or devices must reproduce.
 *
 * The file's load is timed too: "seconds_load", "seconds_load_plus_first"
 * (the load and the first repeat: a set from its file to its peaks, as a
 * user's one call sees it) and "seconds_process" (from the start of the
 * program to the line, with the context and the warm-up).
 *
 * usage: density_bench --data FILE [--name NAME] [--k 32] [--backend cuda|cpu|auto]
 *                      [--repeats R] [--limit N] [--check] [--budget-mib B] [--devices N] [--verbose] */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include "bench_util.h"
#include "vic_io.h"
#include "vicinity.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static int verbose = 0;
static void log_cb(void *user, vic_log_level level, const char *msg) {
  (void)user;
  if (level >= VIC_LOG_WARNING || verbose) fprintf(stderr, "vicinity: %s\n", msg);
}

static int die(vic_ctx *c, const char *what, vic_status s) {
  fprintf(stderr, "density_bench: %s failed: %s: %s\n", what, vic_status_name(s), c ? vic_ctx_error(c) : "");
  return 1;
}

/* FNV-1a over what the peaks are: parents, peak ids, peak points, members. */
static unsigned long long fnv(unsigned long long h, const void *p, size_t bytes) {
  const unsigned char *b = p;
  for (size_t i = 0; i < bytes; ++i) { h ^= b[i]; h *= 1099511628211ull; }
  return h;
}
static unsigned long long hash_peaks(const vic_peaks *pk) {
  unsigned long long h = 14695981039346656037ull;
  h = fnv(h, pk->parent, (size_t)pk->n * sizeof *pk->parent);
  h = fnv(h, pk->peak_id, (size_t)pk->n * sizeof *pk->peak_id);
  h = fnv(h, pk->peak_point, (size_t)pk->n_peaks * sizeof *pk->peak_point);
  return fnv(h, pk->peak_members, (size_t)pk->n_peaks * sizeof *pk->peak_members);
}

static int64_t differ_i(const int64_t *a, const int64_t *b, int64_t n) {
  int64_t d = 0;
  for (int64_t i = 0; i < n; ++i) d += a[i] != b[i];
  return d;
}
static int64_t differ_f(const float *a, const float *b, int64_t n) {
  int64_t d = 0;
  for (int64_t i = 0; i < n; ++i) d += memcmp(a + i, b + i, sizeof(float)) != 0;
  return d;
}

int main(int argc, char **argv) {
  const double t_start = bench_now();
  const char *path = NULL, *name = NULL, *backend = "cuda";
  int k = 32, repeats = 3, check = 0, devices = 1;
  long long limit = 0, budget_mib = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--data") && i + 1 < argc) path = argv[++i];
    else if (!strcmp(argv[i], "--name") && i + 1 < argc) name = argv[++i];
    else if (!strcmp(argv[i], "--k") && i + 1 < argc) k = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--backend") && i + 1 < argc) backend = argv[++i];
    else if (!strcmp(argv[i], "--repeats") && i + 1 < argc) repeats = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--limit") && i + 1 < argc) limit = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--check")) check = 1;
    else if (!strcmp(argv[i], "--budget-mib") && i + 1 < argc) budget_mib = atoll(argv[++i]);
    else if (!strcmp(argv[i], "--devices") && i + 1 < argc) devices = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--verbose")) verbose = 1;
    else {
      fprintf(stderr, "usage: %s --data FILE [--name NAME] [--k 32] [--backend cuda|cpu|auto] [--repeats R] [--limit N] "
                      "[--check] [--budget-mib B] [--devices N] [--verbose]\n", argv[0]);
      return 2;
    }
  }
  if (!path || k < 2 || repeats < 1) { fprintf(stderr, "density_bench: --data FILE and k >= 2 needed\n"); return 2; }
  if (!name) name = path;
  vic_backend be;
  if (vic_backend_parse(backend, &be) != VIC_OK) { fprintf(stderr, "density_bench: unknown backend %s\n", backend); return 2; }

  char err[512];
  vio_matrix m;
  const double tl = bench_now();
  if (vio_load(path, &m, err, sizeof err) != 0) { fprintf(stderr, "density_bench: %s\n", err); return 1; }
  if (limit > 0 && limit < m.n) m.n = limit;
  const double t_load = bench_now() - tl;
  fprintf(stderr, "density_bench: %s: %lld x %d loaded in %.2f s\n", path, (long long)m.n, m.d, t_load);
  if (m.d > 3) { fprintf(stderr, "density_bench: expects 3-d particles (got d = %d)\n", m.d); return 1; }

  vic_ctx_options co;
  vic_ctx_options_init(&co);
  co.backend = be;
  co.log = log_cb;
  co.devices = devices;
  co.device_memory_budget = (size_t)budget_mib << 20;
  vic_ctx *c = NULL;
  vic_status s = vic_ctx_create(&co, &c);
  if (s != VIC_OK) return die(c, "context", s);
  if (be == VIC_BACKEND_CUDA && !vic_cuda_available(c)) {
    fprintf(stderr, "density_bench: no usable CUDA device\n");
    return 77;
  }
  vic_data x = {m.rows, m.n, m.d, 0, VIC_L2, NULL};
  const int64_t n = m.n;
  float *rho = malloc((size_t)n * sizeof *rho), *sph = malloc((size_t)n * sizeof *sph);
  if (!rho || !sph) { fprintf(stderr, "density_bench: out of memory\n"); return 1; }
  vic_density_options o;
  vic_density_options_init(&o);

  /* warm-up on a slice: device context, kernels loaded */
  {
    vic_data w = x;
    w.n = n < 20000 ? n : 20000;
    vic_peaks pk;
    if ((s = vic_knn_density_peaks(c, &w, k, NULL, &o, NULL, NULL, rho, sph, NULL, &pk)) != VIC_OK)
      return die(c, "warm-up", s);
    vic_peaks_free(&pk);
  }

  double best = INFINITY, first = 0;
  vic_report rep;
  memset(&rep, 0, sizeof rep);
  int64_t n_peaks = 0, main_members = 0;
  unsigned long long peaks_hash = 0;
  for (int r = 0; r < repeats; ++r) {
    vic_peaks pk;
    double t0 = bench_now();
    if ((s = vic_knn_density_peaks(c, &x, k, NULL, &o, NULL, NULL, rho, sph, NULL, &pk)) != VIC_OK)
      return die(c, "vic_knn_density_peaks", s);
    double t = bench_now() - t0;
    if (r == 0) first = t;
    fprintf(stderr, "density_bench: repeat %d: density + peaks %.3f s wall (%s: kernels %.3f s, transfers %.3f s), %lld peaks, "
            "%d slab(s) on %d device(s), peak %.0f MiB of device memory\n",
            r, t, vic_backend_name(pk.report.backend), pk.report.seconds_kernel, pk.report.seconds_transfer,
            (long long)pk.n_peaks, pk.report.slabs, pk.report.devices_used, pk.report.device_peak_bytes / 1048576.0);
    if (t < best) {
      best = t;
      rep = pk.report;
      n_peaks = pk.n_peaks;
      main_members = pk.n_peaks ? pk.peak_members[0] : 0;
    }
    const unsigned long long hsh = hash_peaks(&pk);
    if (r > 0 && hsh != peaks_hash) fprintf(stderr, "density_bench: repeat %d gave other peaks\n", r);
    peaks_hash = hsh;
    vic_peaks_free(&pk);
  }

  /* --check: the CPU peak finder on the same lists and densities */
  double check_cpu = -1, check_lists = -1;
  long long mism = -1;
  if (check) {
    vic_knn nn;
    vic_peaks gp, cp;
    double t0 = bench_now();
    if ((s = vic_knn_density_peaks(c, &x, k, NULL, &o, NULL, &nn, rho, sph, NULL, &gp)) != VIC_OK)
      return die(c, "vic_knn_density_peaks with lists", s);
    check_lists = bench_now() - t0;
    vic_ctx_options cc = co;
    cc.backend = VIC_BACKEND_CPU;
    vic_ctx *cpu = NULL;
    if ((s = vic_ctx_create(&cc, &cpu)) != VIC_OK) return die(cpu, "CPU context", s);
    t0 = bench_now();
    if ((s = vic_peaks_find(cpu, &x, &nn, rho, NULL, &cp)) != VIC_OK) return die(cpu, "vic_peaks_find", s);
    check_cpu = bench_now() - t0;
    mism = differ_i(gp.parent, cp.parent, n) + differ_f(gp.delta, cp.delta, n) +
           differ_f(gp.saliency, cp.saliency, n) + differ_i(gp.peak_id, cp.peak_id, n) +
           (gp.n_peaks != cp.n_peaks) +
           (gp.n_peaks == cp.n_peaks ? differ_i(gp.peak_point, cp.peak_point, gp.n_peaks) +
                                           differ_i(gp.peak_members, cp.peak_members, gp.n_peaks)
                                     : 0);
    fprintf(stderr, "density_bench: check: with lists back %.3f s; CPU vic_peaks_find %.3f s; %lld differences "
            "(%lld / %lld peaks)\n", check_lists, check_cpu, mism, (long long)gp.n_peaks, (long long)cp.n_peaks);
    vic_peaks_free(&gp);
    vic_peaks_free(&cp);
    vic_knn_free(&nn);
    vic_ctx_destroy(cpu);
  }
  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  /* method, seconds, seconds_stages and recall as vicinity_bench writes them, so one table reads both (tools/bench_report.py) */
  printf("{\"bench\": \"density_peaks\", \"dataset\": \"%s\", \"method\": \"grid+density+peaks\", "
         "\"seconds\": %.4f, \"seconds_stages\": {\"kernel\": %.4f, \"transfer\": %.4f}, \"recall\": 1.0, "
         "\"n\": %lld, \"d\": %d, \"k\": %d, \"backend\": \"%s\", \"threads\": %d, "
         "\"seconds_density_peaks\": %.4f, \"seconds_kernel\": %.4f, \"seconds_transfer\": %.4f, "
         "\"seconds_grid_sort\": %.4f, \"seconds_grid_search\": %.4f, \"seconds_density_kernel\": %.4f, "
         "\"seconds_peaks_kernels\": %.4f, \"seconds_peaks_search\": %.4f, "
         "\"n_peaks\": %lld, \"main_peak_members\": %lld, \"repeats\": %d, "
         "\"check_seconds_with_lists\": %.4f, \"check_seconds_cpu_peaks\": %.3f, \"check_differences\": %lld, "
         "\"budget_mib\": %lld, \"slabs\": %d, \"devices\": %d, \"device_peak_bytes\": %lld, \"peaks_hash\": \"%016llx\", "
         "\"seconds_load\": %.3f, \"seconds_first\": %.3f, \"seconds_load_plus_first\": %.3f, \"seconds_process\": %.3f}\n",
         name, best, rep.seconds_kernel, rep.seconds_transfer, (long long)n, m.d, k, vic_backend_name(rep.backend),
         threads, best, rep.seconds_kernel, rep.seconds_transfer, vic_report_stage_seconds(&rep, "grid sort"),
         vic_report_stage_seconds(&rep, "grid search"), vic_report_stage_seconds(&rep, "density"),
         vic_report_stage_seconds(&rep, "peaks"), vic_report_stage_seconds(&rep, "peaks search"), (long long)n_peaks,
         (long long)main_members, repeats, check_lists, check_cpu, mism, budget_mib, rep.slabs, rep.devices_used,
         (long long)rep.device_peak_bytes, peaks_hash, t_load, first, t_load + first, bench_now() - t_start);
  free(rho);
  free(sph);
  vio_free(&m);
  vic_ctx_destroy(c);
  return mism > 0 ? 1 : 0;
}
