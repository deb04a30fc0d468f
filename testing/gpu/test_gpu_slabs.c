/* Density and peaks out of core (issue 16): under a device memory budget
 * too small for the whole set, vic_knn_density_peaks and vic_knn_density
 * cut the set into slabs with halos, and must return exactly what the
 * in-core run returns -- the same lists (ids and distances), bit-identical
 * densities, the same parents, deltas, saliencies, peak ids, peaks and
 * members -- while the report names the slabs and a peak device memory
 * within the budget.  With several devices present the slabs also run
 * spread over all of them (devices = all) with the same results; a set
 * that fits one device's budget runs in core on the first.  A
 * budget too small for any slab fails with a message naming the budget.
 * Sets: uniform, Plummer spheres in a background with far tails (halos
 * that must grow), masses, periodic, 2-d.  Exit 77 without a device. */
#include "test_util.h"
#include "nbody_models.h"

#include <math.h>
#include <string.h>

static char last_info[1024];
/* slabs whose edges came from lists kept for the later passes, slabs
 * whose lists were made again, lists parked on the host between the
 * passes (made again before lists could be parked) */
static long long kept_slabs, kept_runs, remade_slabs, parked_slabs;
static void log_cb(void *user, vic_log_level level, const char *msg) {
  (void)user;
  if (level >= VIC_LOG_INFO && strstr(msg, "slab")) snprintf(last_info, sizeof last_info, "%s", msg);
  const char *at = strstr(msg, "slab edges: ") == msg ? strstr(msg, "slabs from kept lists: ") : NULL;
  const char *pk = at ? strstr(at, " given back for room, ") : NULL;
  long long kept = 0, remade = 0, parked = 0;
  if (at && pk && sscanf(at, "slabs from kept lists: %lld, made again: %lld", &kept, &remade) == 2 &&
      sscanf(pk, " given back for room, %lld parked", &parked) == 1) {
    kept_slabs += kept;
    kept_runs += kept > 0;
    remade_slabs += remade;
    parked_slabs += parked;
  }
}

static vic_ctx *ctx(size_t budget, int devices) {
  vic_ctx_options o;
  vic_ctx_options_init(&o);
  o.backend = VIC_BACKEND_CUDA;
  o.seed = 3;
  o.log = log_cb;
  o.devices = devices;
  o.device_memory_budget = budget;
  return vt_ctx_make(&o);
}

static int64_t diff_f(const float *a, const float *b, int64_t n) {
  int64_t d = 0;
  for (int64_t i = 0; i < n; ++i) d += memcmp(a + i, b + i, sizeof *a) != 0;
  return d;
}
static int64_t diff_i(const int64_t *a, const int64_t *b, int64_t n) {
  int64_t d = 0;
  for (int64_t i = 0; i < n; ++i) d += a[i] != b[i];
  return d;
}

typedef struct {
  vic_knn nn;
  vic_peaks pk;
  float *f; /* kNN density, SPH density, smoothing length */
} run;

static void run_peaks(vic_ctx *c, const vic_data *x, int32_t k, const float *mass, run *r) {
  r->f = malloc((size_t)x->n * 3 * sizeof(float));
  vic_density_options o;
  vic_density_options_init(&o);
  VT_OK(c, vic_knn_density_peaks(c, x, k, mass, &o, NULL, &r->nn, r->f, r->f + x->n, r->f + 2 * x->n, &r->pk));
}

static void run_free(run *r) {
  vic_knn_free(&r->nn);
  vic_peaks_free(&r->pk);
  free(r->f);
}

static void same(const char *what, const vic_data *x, int32_t k, const run *a, const run *b) {
  const int64_t n = x->n;
  int64_t di = diff_i(a->nn.ids, b->nn.ids, n * k), dd = diff_f(a->nn.dist, b->nn.dist, n * k);
  VT_CHECK(di == 0 && dd == 0, "%s: lists differ (%lld ids, %lld distances)", what, (long long)di, (long long)dd);
  int64_t df = diff_f(a->f, b->f, 3 * n);
  VT_CHECK(df == 0, "%s: %lld densities / smoothing lengths differ", what, (long long)df);
  const vic_peaks *p = &a->pk, *q = &b->pk;
  int64_t dp = diff_i(p->parent, q->parent, n), dl = diff_f(p->delta, q->delta, n),
          ds = diff_f(p->saliency, q->saliency, n), dk = diff_i(p->peak_id, q->peak_id, n);
  VT_CHECK(dp == 0 && dl == 0 && ds == 0 && dk == 0, "%s: %lld parents, %lld deltas, %lld saliencies, %lld peak ids differ",
           what, (long long)dp, (long long)dl, (long long)ds, (long long)dk);
  VT_CHECK(p->n_peaks == q->n_peaks, "%s: %lld peaks, %lld in core", what, (long long)p->n_peaks, (long long)q->n_peaks);
  if (p->n_peaks == q->n_peaks) {
    VT_CHECK(diff_i(p->peak_point, q->peak_point, p->n_peaks) == 0 &&
                 diff_i(p->peak_members, q->peak_members, p->n_peaks) == 0,
             "%s: peak points or members differ", what);
    double worst = 0;
    for (int64_t i = 0; i < p->n_peaks * x->d; ++i) worst = fmax(worst, fabs((double)p->peak_centre[i] - q->peak_centre[i]));
    VT_CHECK(worst <= 1e-4, "%s: centres differ by %.3g", what, worst);
  }
}

static void check(const char *name, const vic_data *x, int32_t k, const float *mass, int devices_present) {
  const int64_t n = x->n;
  /* the per-point steps fit, the whole run does not: several slabs */
  const size_t budget = (size_t)n * 160 + ((size_t)18 << 20);
  vic_ctx *big = ctx(0, 1), *small = ctx(budget, 1);
  run in, out;
  run_peaks(big, x, k, mass, &in);
  VT_CHECK(in.pk.report.slabs == 1 && in.pk.report.devices_used == 1 && in.pk.report.device_peak_bytes > 0,
           "%s: in core: %d slabs, %d devices, %lld bytes", name, in.pk.report.slabs, in.pk.report.devices_used,
           (long long)in.pk.report.device_peak_bytes);
  last_info[0] = '\0';
  run_peaks(small, x, k, mass, &out);
  printf("%s: n = %lld, k = %d: in core %.1f MiB; budget %.1f MiB: %d slabs, peak %.1f MiB (%s)\n", name, (long long)n,
         k, in.pk.report.device_peak_bytes / 1048576.0, budget / 1048576.0, out.pk.report.slabs,
         out.pk.report.device_peak_bytes / 1048576.0, last_info);
  VT_CHECK(out.pk.report.slabs >= 2, "%s: %d slabs under a budget of %.1f MiB", name, out.pk.report.slabs,
           budget / 1048576.0);
  VT_CHECK(out.pk.report.device_peak_bytes > 0 && (size_t)out.pk.report.device_peak_bytes <= budget,
           "%s: peak %lld bytes over the budget %zu", name, (long long)out.pk.report.device_peak_bytes, budget);
  char what[160];
  snprintf(what, sizeof what, "%s out of core", name);
  same(what, x, k, &out, &in);

  /* without the lists asked for, none reaches the host: the same peaks */
  {
    float *f = malloc((size_t)n * sizeof(float));
    vic_peaks pk;
    vic_density_options o;
    vic_density_options_init(&o);
    VT_OK(small, vic_knn_density_peaks(small, x, k, mass, &o, NULL, NULL, f, NULL, NULL, &pk));
    const vic_peaks *q = &in.pk;
    int64_t df = diff_f(f, in.f, n), dp = diff_i(pk.parent, q->parent, n), dl = diff_f(pk.delta, q->delta, n),
            dk = diff_i(pk.peak_id, q->peak_id, n);
    VT_CHECK(pk.report.slabs >= 2, "%s without lists: %d slabs", name, pk.report.slabs);
    VT_CHECK(df == 0 && dp == 0 && dl == 0 && dk == 0 && pk.n_peaks == q->n_peaks,
             "%s out of core without lists: %lld densities, %lld parents, %lld deltas, %lld peak ids differ; "
             "%lld peaks, %lld in core", name, (long long)df, (long long)dp, (long long)dl, (long long)dk,
             (long long)pk.n_peaks, (long long)q->n_peaks);
    if (pk.n_peaks == q->n_peaks)
      VT_CHECK(diff_i(pk.peak_point, q->peak_point, pk.n_peaks) == 0 &&
                   diff_i(pk.peak_members, q->peak_members, pk.n_peaks) == 0,
               "%s out of core without lists: peak points or members differ", name);
    vic_peaks_free(&pk);
    free(f);
  }

  /* vic_knn_density alone, out of core (it needs less: a smaller budget) */
  float *f = malloc((size_t)n * 3 * sizeof(float));
  vic_knn nn;
  vic_density_options o;
  vic_density_options_init(&o);
  vic_ctx *dens = ctx((size_t)n * 100 + ((size_t)17 << 20), 1);
  VT_OK(dens, vic_knn_density(dens, x, k, mass, &o, &nn, f, f + n, f + 2 * n));
  vic_ctx_destroy(dens);
  VT_CHECK(nn.report.slabs >= 2, "%s: density alone ran in %d slabs", name, nn.report.slabs);
  VT_CHECK(diff_i(nn.ids, in.nn.ids, n * k) == 0 && diff_f(nn.dist, in.nn.dist, n * k) == 0 && diff_f(f, in.f, 3 * n) == 0,
           "%s: vic_knn_density out of core differs from the in-core run", name);
  vic_knn_free(&nn);
  free(f);

  if (devices_present >= 2) {
    vic_ctx *multi = ctx(budget, VIC_DEVICES_ALL);
    run m;
    run_peaks(multi, x, k, mass, &m);
    VT_CHECK(m.pk.report.devices_used >= 2 && m.pk.report.slabs >= m.pk.report.devices_used,
             "%s: %d devices used of %d, %d slabs", name, m.pk.report.devices_used, devices_present,
             m.pk.report.slabs);
    snprintf(what, sizeof what, "%s on %d devices", name, m.pk.report.devices_used);
    same(what, x, k, &m, &in);
    run_free(&m);
    vic_ctx_destroy(multi);
  }
  run_free(&in);
  run_free(&out);
  vic_ctx_destroy(big);
  vic_ctx_destroy(small);
}

/* Budgets just above what the first device's steps between the links
 * and the edges need (16 MiB and some 60 bytes a point), lowered until
 * the lists kept there make room for those steps -- parked on the host
 * (or made again) -- and the results stay the in-core ones; a budget
 * too small for the slabs ends the sweep with its message. */
static void check_tight(const char *name, const vic_data *x, int32_t k) {
  const int64_t n = x->n;
  vic_ctx *big = ctx(0, 1);
  run in;
  run_peaks(big, x, k, NULL, &in);
  const long long before = parked_slabs + remade_slabs;
  for (int64_t per = 120; per >= 40 && parked_slabs + remade_slabs == before; per -= 10) {
    const size_t budget = (size_t)n * (size_t)per + ((size_t)33 << 19);
    vic_ctx *c = ctx(budget, 1);
    run r;
    r.f = malloc((size_t)n * 3 * sizeof(float));
    vic_density_options o;
    vic_density_options_init(&o);
    const vic_status st = vic_knn_density_peaks(c, x, k, NULL, &o, NULL, &r.nn, r.f, r.f + n, r.f + 2 * n, &r.pk);
    if (st != VIC_OK) {
      printf("%s, budget %.2f MiB: %s\n", name, budget / 1048576.0, vic_ctx_error(c));
      VT_CHECK(st == VIC_E_NOMEM && strstr(vic_ctx_error(c), "MiB"), "%s, budget %zu: %s: %s", name, budget,
               vic_status_name(st), vic_ctx_error(c));
      free(r.f);
      vic_ctx_destroy(c);
      break;
    }
    char what[160];
    snprintf(what, sizeof what, "%s, budget %.2f MiB (%d slabs)", name, budget / 1048576.0, r.pk.report.slabs);
    printf("%s: %s\n", what, last_info);
    VT_CHECK(r.pk.report.slabs >= 2 && (size_t)r.pk.report.device_peak_bytes <= budget,
             "%s: %d slabs, peak %lld bytes", what, r.pk.report.slabs, (long long)r.pk.report.device_peak_bytes);
    same(what, x, k, &r, &in);
    run_free(&r);
    vic_ctx_destroy(c);
  }
  VT_CHECK(parked_slabs + remade_slabs > before, "%s: no budget made the first device park or remake its kept lists",
           name);
  run_free(&in);
  vic_ctx_destroy(big);
}

static void check_too_small(const vic_data *x) {
  vic_ctx *tiny = ctx((size_t)2 << 20, 1);
  float *f = malloc((size_t)x->n * sizeof(float));
  vic_peaks pk;
  vic_status s = vic_knn_density_peaks(tiny, x, 32, NULL, NULL, NULL, NULL, f, NULL, NULL, &pk);
  const char *msg = vic_ctx_error(tiny);
  VT_CHECK(s == VIC_E_NOMEM && strstr(msg, "MiB") && strstr(msg, "budget"), "a 2 MiB budget: %s: %s",
           vic_status_name(s), msg);
  printf("2 MiB budget: %s\n", msg);
  free(f);
  vic_ctx_destroy(tiny);
}

/* Plummer spheres in a background, the far tails kept (k-th distances
 * many times the first halo: regions that must grow). */
static float *plummers(int64_t n, uint64_t seed) {
  float *x = malloc((size_t)n * 3 * sizeof(float));
  const double c[3][3] = {{5, 5, 5}, {2, 7, 3}, {7.5, 2.5, 6.5}}, a[3] = {0.4, 0.2, 0.1};
  const int64_t per = n / 4;
  for (int s = 0; s < 3; ++s) nb_plummer(x + 3 * s * per, per, a[s], c[s], 0.999, seed + (uint64_t)s);
  uint64_t st = seed * 7 + 1;
  for (int64_t i = 3 * per; i < n; ++i)
    for (int j = 0; j < 3; ++j) x[3 * i + j] = (float)(10 * vt_unif(&st));
  return x;
}

int main(int argc, char **argv) {
  const int small = vt_gpu_start(argc, argv);
  int present = 1;
  { /* devices present: slabs (a budget below the whole set's) spread over all */
    vic_ctx *all = ctx((size_t)17 << 20, VIC_DEVICES_ALL);
    float *u = vt_uniform(20000, 3, 1.f, 1), *f = malloc(20000 * sizeof(float));
    vic_data x = {u, 20000, 3, 0, VIC_L2, NULL};
    vic_knn nn;
    if (vic_knn_density(all, &x, 8, NULL, NULL, &nn, f, NULL, NULL) == VIC_OK) {
      present = nn.report.devices_used;
      vic_knn_free(&nn);
    }
    free(u);
    free(f);
    vic_ctx_destroy(all);
  }
  printf("%d device(s)\n", present);
  const int64_t n = small ? 20000 : 200000;
  float *u = vt_uniform(n, 3, 10.f, 21);
  vic_data xu = {u, n, 3, 0, VIC_L2, NULL};
  check("uniform", &xu, 32, NULL, present);
  float *p = plummers(n, 22);
  vic_data xp = {p, n, 3, 0, VIC_L2, NULL};
  check("Plummer with tails", &xp, 32, NULL, present);
  float *mass = malloc((size_t)n * sizeof(float));
  uint64_t s = 9;
  for (int64_t i = 0; i < n; ++i) mass[i] = (float)(0.5 + vt_unif(&s));
  check("Plummer with tails, masses", &xp, 16, mass, present);
  const double box[3] = {10, 10, 10};
  for (int64_t i = 0; i < 3 * n; ++i) {
    double v = fmod((double)p[i], 10.0);
    p[i] = (float)(v < 0 ? v + 10 : v);
    if (p[i] >= 10.f) p[i] = 0.f;
  }
  vic_data xw = {p, n, 3, 0, VIC_L2, box};
  check("Plummer periodic", &xw, 16, NULL, present);
  float *u2 = vt_uniform(n, 2, 1.f, 23);
  vic_data x2 = {u2, n, 2, 0, VIC_L2, NULL};
  check("uniform 2-d", &x2, 16, NULL, present);
  check_tight("uniform, tight budgets", &xu, 32);
  check_too_small(&xu);
  /* the budgets above leave room to keep the slabs' lists on their
   * devices between the passes, not always beside the first device's
   * steps between the links and the edges (those lists are parked on the
   * host meanwhile, or made again): both ways ran (test_gpu_slab_lists
   * compares the kept, parked and made-again lists' links and edges) */
  printf("lists kept between the passes: %lld slabs in %lld runs; parked on the host: %lld; made again: %lld slabs\n",
         kept_slabs, kept_runs, parked_slabs, remade_slabs);
  VT_CHECK(kept_runs > 0 && parked_slabs + remade_slabs > 0,
           "kept lists: %lld slabs, parked: %lld, made again: %lld slabs (want kept and parked or made again)",
           kept_slabs, parked_slabs, remade_slabs);
  free(u);
  free(p);
  free(mass);
  free(u2);
  return vt_finish("test_gpu_slabs");
}
