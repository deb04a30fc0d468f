/* SPH map benchmark (issue 19): on a 3-d particle file (plummer3), the
 * smoothing lengths by vic_knn_density (k = 32; or, with --h subsample,
 * from the 3 nearest of every 10th particle, scaled to 32 neighbours),
 * then vic_sph_resample projecting the data's bounding box along z onto
 * RES x RES pixels.  Prints one JSON line: the best wall time of the map
 * call ("seconds", every transfer included), its kernel and transfer
 * seconds and stages, the smoothing lengths' seconds, the map's integral
 * against the particles' mass, and with --check the CPU's time on the
 * same inputs and the largest GPU/CPU difference.
 *
 * --load-h FILE: smoothing lengths from such a file instead.
 * --save-h FILE / --save-map FILE: the smoothing lengths (n float32) and
 * the best run's map (res x res float32, x fastest) as raw files, for the
 * numpy reference (testing/bench/sph_numpy_ref.py).
 *
 * usage: sph_bench --data FILE [--res 2048] [--backend cuda|cpu] [--repeats 3]
 *                  [--h knn|subsample] [--check] [--threads T] [--save-h FILE] [--save-map FILE]
 *                  [--load-h FILE] */
#define _POSIX_C_SOURCE 199309L
#include "bench_util.h"
#include "vic_io.h"
#include "vicinity.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void log_cb(void *user, vic_log_level level, const char *msg) {
  (void)user;
  if (level >= VIC_LOG_WARNING) fprintf(stderr, "vicinity: %s\n", msg);
}

static int die(vic_ctx *c, const char *what, vic_status s) {
  fprintf(stderr, "sph_bench: %s failed: %s: %s\n", what, vic_status_name(s), c ? vic_ctx_error(c) : "");
  return 1;
}

static vic_ctx *make_ctx(vic_backend b, int threads) {
  vic_ctx_options o;
  vic_ctx_options_init(&o);
  o.backend = b;
  o.threads = threads;
  o.log = log_cb;
  vic_ctx *c = NULL;
  if (vic_ctx_create(&o, &c) != VIC_OK) return NULL;
  return c;
}

/* h from every 10th particle: r_3 among them holds about 30 particles of
 * the whole set; scaled to 32 as r ~ N^(1/3), halved (pynbody h = r_k/2). */
static vic_status subsample_h(vic_ctx *c, const vic_data *x, float *h) {
  const int64_t step = 10, m = (x->n + step - 1) / step;
  float *sub = malloc((size_t)m * 3 * sizeof *sub);
  if (!sub) return VIC_E_NOMEM;
  for (int64_t i = 0; i < m; ++i) memcpy(sub + 3 * i, x->rows + 3 * i * step, 3 * sizeof(float));
  vic_data xs = {sub, m, 3, 0, VIC_L2, NULL};
  vic_knn nn;
  vic_status s = vic_knn_query_exact(c, &xs, x, 4, &nn);
  if (s == VIC_OK) {
    const double scale = 0.5 * cbrt(32.0 / 30.0);
    for (int64_t i = 0; i < x->n; ++i) {
      const float *d = nn.dist + i * 4;
      h[i] = (float)(scale * (d[0] == 0.0f ? d[3] : d[2])); /* a subsample member finds itself first */
    }
    vic_knn_free(&nn);
  }
  free(sub);
  return s;
}

/* CPU seconds of the process, all threads (a loaded machine's wall time misleads). */
static double process_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int write_raw(const char *path, const void *p, size_t bytes) {
  FILE *f = fopen(path, "wb");
  int ok = f && fwrite(p, 1, bytes, f) == bytes;
  if (f && fclose(f) != 0) ok = 0;
  if (!ok) fprintf(stderr, "sph_bench: cannot write %s\n", path);
  return ok;
}

int main(int argc, char **argv) {
  const char *path = NULL, *backend = "cuda", *hmode = "knn", *save_h = NULL, *save_map = NULL, *load_h = NULL;
  int res = 2048, repeats = 3, check = 0, threads = 0;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "--data") && i + 1 < argc) path = argv[++i];
    else if (!strcmp(argv[i], "--res") && i + 1 < argc) res = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--backend") && i + 1 < argc) backend = argv[++i];
    else if (!strcmp(argv[i], "--repeats") && i + 1 < argc) repeats = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--h") && i + 1 < argc) hmode = argv[++i];
    else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--check")) check = 1;
    else if (!strcmp(argv[i], "--save-h") && i + 1 < argc) save_h = argv[++i];
    else if (!strcmp(argv[i], "--save-map") && i + 1 < argc) save_map = argv[++i];
    else if (!strcmp(argv[i], "--load-h") && i + 1 < argc) load_h = argv[++i];
    else {
      fprintf(stderr, "usage: sph_bench --data FILE [--res 2048] [--backend cuda|cpu] [--repeats 3] "
                      "[--h knn|subsample] [--check] [--threads T] [--save-h FILE] [--save-map FILE] [--load-h FILE]\n");
      return 2;
    }
  }
  if (!path) return fprintf(stderr, "sph_bench: --data FILE is required\n"), 2;
  vio_matrix m;
  char err[256];
  if (vio_load(path, &m, err, sizeof err) != 0 || m.d != 3) {
    fprintf(stderr, "sph_bench: cannot load 3-d rows from %s: %s\n", path, err);
    return 2;
  }
  vic_backend b;
  if (vic_backend_parse(backend, &b) != VIC_OK) return fprintf(stderr, "sph_bench: bad backend %s\n", backend), 2;
  vic_ctx *c = make_ctx(b, threads);
  if (!c) return fprintf(stderr, "sph_bench: no context\n"), 1;
  vic_data x = {m.rows, m.n, 3, 0, VIC_L2, NULL};
  float *h = malloc((size_t)m.n * sizeof *h);
  double t0 = bench_now();
  vic_status s;
  if (load_h) {
    FILE *f = fopen(load_h, "rb");
    s = f && fread(h, sizeof *h, (size_t)m.n, f) == (size_t)m.n ? VIC_OK : VIC_E_IO;
    if (f) fclose(f);
    hmode = "file";
  } else if (!strcmp(hmode, "subsample")) s = subsample_h(c, &x, h);
  else s = vic_knn_density(c, &x, 32, NULL, NULL, NULL, NULL, NULL, h);
  if (s != VIC_OK) return die(c, "smoothing lengths", s);
  const double h_seconds = bench_now() - t0;
  if (save_h && !write_raw(save_h, h, (size_t)m.n * sizeof *h)) return 1;

  /* the data's bounding box, projected along z */
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int64_t i = 0; i < m.n; ++i)
    for (int d = 0; d < 3; ++d) {
      lo[d] = fmin(lo[d], m.rows[3 * i + d]);
      hi[d] = fmax(hi[d], m.rows[3 * i + d]);
    }
  vic_sph_options o;
  vic_sph_options_init(&o);
  const double side = fmax(hi[0] - lo[0], hi[1] - lo[1]);
  for (int d = 0; d < 3; ++d) o.centre[d] = 0.5 * (lo[d] + hi[d]);
  o.size[0] = o.size[1] = side;
  o.resolution[0] = o.resolution[1] = res;
  vic_sph_image best = {0};
  double best_s = INFINITY, best_cpu = 0;
  for (int r = 0; r < repeats; ++r) {
    vic_sph_image im;
    const double c0 = process_seconds();
    if ((s = vic_sph_resample(c, &x, NULL, h, 0, NULL, &o, &im)) != VIC_OK) return die(c, "vic_sph_resample", s);
    const double used = process_seconds() - c0;
    if (im.report.seconds_total < best_s) {
      best_s = im.report.seconds_total;
      best_cpu = used;
      vic_sph_image_free(&best);
      best = im;
    } else {
      vic_sph_image_free(&im);
    }
  }
  /* mass of particles whose kernel lies inside (unit masses), beside the map's integral */
  double inside = 0, integral = 0;
  for (int64_t i = 0; i < m.n; ++i) {
    const double H = 2.0 * h[i];
    int in = 1;
    for (int d = 0; d < 2; ++d) in &= m.rows[3 * i + d] - H >= o.centre[d] - side / 2 && m.rows[3 * i + d] + H <= o.centre[d] + side / 2;
    inside += in;
  }
  for (int64_t q = 0; q < (int64_t)res * res; ++q) integral += best.density[q];
  integral *= best.spacing[0] * best.spacing[1];
  if (save_map && !write_raw(save_map, best.density, (size_t)res * res * sizeof *best.density)) return 1;
  double cpu_s = -1, worst = -1;
  if (check) {
    vic_ctx *cc = make_ctx(VIC_BACKEND_CPU, threads);
    vic_sph_image ci;
    if ((s = vic_sph_resample(cc, &x, NULL, h, 0, NULL, &o, &ci)) != VIC_OK) return die(cc, "CPU map", s);
    cpu_s = ci.report.seconds_total;
    double mx = 0;
    for (int64_t q = 0; q < (int64_t)res * res; ++q) mx = fmax(mx, ci.density[q]);
    worst = 0;
    for (int64_t q = 0; q < (int64_t)res * res; ++q)
      worst = fmax(worst, fabs((double)best.density[q] - ci.density[q]) / (fabs(ci.density[q]) + 1e-6 * mx));
    vic_sph_image_free(&ci);
    vic_ctx_destroy(cc);
  }
  const vic_report *rp = &best.report;
  printf("{\"bench\": \"sph_map\", \"data\": \"%s\", \"n\": %lld, \"res\": %d, \"backend\": \"%s\", \"h\": \"%s\", "
         "\"h_seconds\": %.4f, \"seconds\": %.4f, \"process_cpu_seconds\": %.3f, \"seconds_kernel\": %.4f, \"seconds_transfer\": %.4f, "
         "\"bin\": %.4f, \"sort\": %.4f, \"deposit\": %.4f, \"repeats\": %d, \"integral\": %.6f, "
         "\"mass_inside\": %.1f, \"mass_total\": %lld, \"cpu_seconds\": %.3f, \"gpu_cpu_worst_rel\": %.3g}\n",
         path, (long long)m.n, res, vic_backend_name(rp->backend), hmode, h_seconds, best_s, best_cpu, rp->seconds_kernel,
         rp->seconds_transfer, vic_report_stage_seconds(rp, "bin"), vic_report_stage_seconds(rp, "sort"),
         vic_report_stage_seconds(rp, "deposit"), repeats, integral, inside,
         (long long)m.n, cpu_s, worst);
  vic_sph_image_free(&best);
  free(h);
  free(m.rows);
  vic_ctx_destroy(c);
  return 0;
}
