/* vic_sph_resample: adaptive SPH maps (projection, slice, volume) from
 * per-particle smoothing lengths.  This file owns the policy: the checks
 * and their messages, the frame (region, axes, periodic images), the
 * kernel tables, the backend choice, and turning the deposited sums into
 * densities and density-weighted means.  The deposits are sph_cpu.c and
 * the GPU kernels (sph_cuda.c); both evaluate vic_kernels_sph.h. */
#include "sph_internal.h"
#include "nbody_internal.h"

#include <float.h>
#include <stdio.h>
#include <string.h>

static void defaults(vic_sph_options *o) {
  memset(o, 0, sizeof *o);
  o->mode = VIC_SPH_PROJECTION;
  o->kernel = VIC_SPH_CUBIC_SPLINE;
  o->sph = VIC_SPH_PYNBODY;
  o->u[0] = 1;
  o->v[1] = 1;
  o->size[0] = o->size[1] = 1;
  o->resolution[0] = o->resolution[1] = 256;
  o->resolution[2] = 1;
}

void vic_sph_options_init_sized(vic_sph_options *o, size_t struct_size) {
  vic_sph_options d;
  defaults(&d);
  vic__init_sized(o, struct_size, &d, sizeof d);
}

static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static void cross3(const double *a, const double *b, double *c) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

vic_status vic_sph_options_set_view(vic_sph_options *o, const double direction[3], const double up[3]) {
  /* u and v are in every version of the struct, but only one that an
   * init call set says so */
  if (!o || !direction || o->struct_size < offsetof(vic_sph_options, v) + sizeof o->v) return VIC_E_ARGUMENT;
  double w[3] = {direction[0], direction[1], direction[2]}, len = sqrt(dot3(w, w));
  if (!(len > 0) || !isfinite(len)) return VIC_E_ARGUMENT;
  for (int k = 0; k < 3; ++k) w[k] /= len;
  double v[3] = {0, 0, 0};
  if (up) for (int k = 0; k < 3; ++k) v[k] = up[k];
  double along = dot3(v, w);
  for (int k = 0; k < 3; ++k) v[k] -= along * w[k];
  if (!(sqrt(dot3(v, v)) > 1e-6)) { /* no usable up: the world axis least aligned with w */
    int best = 0;
    for (int k = 1; k < 3; ++k) if (fabs(w[k]) < fabs(w[best])) best = k;
    memset(v, 0, sizeof v);
    v[best] = 1;
    along = dot3(v, w);
    for (int k = 0; k < 3; ++k) v[k] -= along * w[k];
  }
  double lv = sqrt(dot3(v, v));
  for (int k = 0; k < 3; ++k) v[k] /= lv;
  double u[3];
  cross3(v, w, u); /* u x v = w */
  for (int k = 0; k < 3; ++k) { o->u[k] = u[k]; o->v[k] = v[k]; }
  return VIC_OK;
}

void vic_sph_image_free(vic_sph_image *im) {
  if (!im) return;
  free(im->density);
  free(im->means);
  memset(im, 0, sizeof *im);
}

static const char *mode_name(vic_sph_mode m) {
  return m == VIC_SPH_SLICE ? "slice" : m == VIC_SPH_VOLUME ? "volume" : "projection";
}

static vic_status check_options(vic_ctx *c, const vic_sph_options *o, double w[3]) {
  if ((unsigned)o->mode > VIC_SPH_VOLUME) return vic__fail(c, VIC_E_ARGUMENT, "unknown SPH map mode %d", (int)o->mode);
  if ((unsigned)o->kernel > VIC_SPH_WENDLAND_C4)
    return vic__fail(c, VIC_E_ARGUMENT, "unknown SPH kernel %d", (int)o->kernel);
  if ((unsigned)o->sph > VIC_SPH_GADGET) return vic__fail(c, VIC_E_ARGUMENT, "unknown SPH convention %d", (int)o->sph);
  for (int k = 0; k < 3; ++k)
    if (!isfinite(o->centre[k]) || !isfinite(o->u[k]) || !isfinite(o->v[k]) || !isfinite(o->size[k]))
      return vic__fail(c, VIC_E_ARGUMENT, "SPH map: centre, axes and size must be finite");
  if (fabs(dot3(o->u, o->u) - 1) > 1e-6 || fabs(dot3(o->v, o->v) - 1) > 1e-6 || fabs(dot3(o->u, o->v)) > 1e-6)
    return vic__fail(c, VIC_E_ARGUMENT,
                     "SPH map: the axes u = (%g, %g, %g) and v = (%g, %g, %g) must be orthonormal "
                     "(vic_sph_options_set_view builds them from a view direction)",
                     o->u[0], o->u[1], o->u[2], o->v[0], o->v[1], o->v[2]);
  cross3(o->u, o->v, w);
  const int dims = o->mode == VIC_SPH_VOLUME ? 3 : 2;
  for (int k = 0; k < 3; ++k) {
    if (k < dims && !(o->size[k] > 0))
      return vic__fail(c, VIC_E_ARGUMENT, "SPH %s: size[%d] must be > 0 (got %g)", mode_name(o->mode), k, o->size[k]);
    if (k < dims && o->resolution[k] < 1)
      return vic__fail(c, VIC_E_ARGUMENT, "SPH %s: resolution[%d] must be >= 1 (got %d)", mode_name(o->mode), k,
                       (int)o->resolution[k]);
  }
  if (o->mode == VIC_SPH_PROJECTION && o->size[2] < 0)
    return vic__fail(c, VIC_E_ARGUMENT, "SPH projection: size[2] (the depth) must be >= 0, 0 = whole line of sight (got %g)",
                     o->size[2]);
  if (!(o->total_mass >= 0))
    return vic__fail(c, VIC_E_ARGUMENT, "total_mass must be >= 0 and finite (got %g; 0 = unit masses)", o->total_mass);
  return VIC_OK;
}

/* Image memory: double accumulators and float outputs per channel, plus
 * the band lists of the CPU deposit (bounded separately there). */
static vic_status check_memory(vic_ctx *c, const vic_sph_options *o, int64_t cells, int32_t n_arrays) {
  const size_t limit = o->max_bytes ? o->max_bytes : ((size_t)4 << 30);
  const double bytes = (double)cells * (1.0 + n_arrays) * (sizeof(double) + sizeof(float));
  if (cells > ((int64_t)1 << 40) || bytes > (double)limit)
    return vic__fail(c, VIC_E_ARGUMENT,
                     "SPH %s of %d x %d x %d cells with %d arrays needs %.2f GiB of image memory, over the limit of "
                     "%.2f GiB (vic_sph_options.max_bytes); lower the resolution",
                     mode_name(o->mode), (int)o->resolution[0], (int)o->resolution[1],
                     o->mode == VIC_SPH_VOLUME ? (int)o->resolution[2] : 1, (int)n_arrays, bytes / (1 << 30),
                     (double)limit / (1 << 30));
  return VIC_OK;
}

static vic_status check_particles(vic_ctx *c, const vic_data *x, const float *mass, const float *h, int32_t n_arrays,
                                  const float *const *arrays, const vic_sph_options *o) {
  if (!x) return vic__fail(c, VIC_E_ARGUMENT, "SPH map: no positions (x is NULL)");
  if (x->n < 0) return vic__fail(c, VIC_E_ARGUMENT, "SPH map: negative particle count %lld", (long long)x->n);
  if (x->n > 0) {
    vic_status s = vic_data_validate(c, x);
    if (s != VIC_OK) return s;
  }
  if (x->d != 3) return vic__fail(c, VIC_E_ARGUMENT, "SPH maps need 3-d positions (got d = %d)", (int)x->d);
  if (x->n > 0 && x->metric != VIC_L2)
    return vic__fail(c, VIC_E_UNSUPPORTED, "SPH maps need the L2 metric (got %s)", vic_metric_name(x->metric));
  if (n_arrays < 0 || n_arrays >= VICK_SPH_MAX_CHANNELS)
    return vic__fail(c, VIC_E_ARGUMENT, "SPH map: n_arrays must be in [0, %d] (got %d)", VICK_SPH_MAX_CHANNELS - 1,
                     (int)n_arrays);
  if (n_arrays > 0 && !arrays) return vic__fail(c, VIC_E_ARGUMENT, "SPH map: %d arrays asked but arrays is NULL", (int)n_arrays);
  for (int32_t a = 0; a < n_arrays; ++a)
    if (!arrays[a] && x->n > 0) return vic__fail(c, VIC_E_ARGUMENT, "SPH map: array %d is NULL", (int)a);
  const int64_t n = x->n;
  if (n == 0) return VIC_OK;
  if (!h) return vic__fail(c, VIC_E_ARGUMENT, "SPH map: no smoothing lengths (vic_density or vic_knn_density give them)");
  int64_t bad = INT64_MAX;
#pragma omp parallel for reduction(min : bad) schedule(static)
  for (int64_t i = 0; i < n; ++i)
    if (!(h[i] > 0) || !isfinite(h[i])) bad = i < bad ? i : bad;
  if (bad != INT64_MAX)
    return vic__fail(c, VIC_E_ARGUMENT, "smoothing length of particle %lld is %g; smoothing lengths must be finite and > 0",
                     (long long)bad, (double)h[bad]);
  vic_density_options dop;
  vic_density_options_init(&dop);
  dop.sph = o->sph;
  dop.total_mass = o->total_mass;
  vic_status s = vic__check_density_options(c, n, mass, &dop);
  if (s != VIC_OK) return s;
  for (int32_t a = 0; a < n_arrays; ++a) {
    const float *v = arrays[a];
    bad = INT64_MAX;
#pragma omp parallel for reduction(min : bad) schedule(static)
    for (int64_t i = 0; i < n; ++i)
      if (!isfinite(v[i])) bad = i < bad ? i : bad;
    if (bad != INT64_MAX)
      return vic__fail(c, VIC_E_NONFINITE, "SPH map: array %d has the non-finite value %g at particle %lld", (int)a,
                       (double)v[bad], (long long)bad);
  }
  return VIC_OK;
}

/* The frame of vic_kernels_sph.h from the options; periodic image shifts
 * cover the region's world bounding box grown by the largest support. */
static vic_status make_frame(vic_ctx *c, const vic_data *x, const float *h, const vic_sph_options *o,
                             const double w[3], vick_sph_frame *f) {
  memset(f, 0, sizeof *f);
  f->mode = (int)o->mode;
  f->nx = o->resolution[0];
  f->ny = o->resolution[1];
  f->nz = o->mode == VIC_SPH_VOLUME ? o->resolution[2] : 1;
  const double *ax[3] = {o->u, o->v, w};
  for (int k = 0; k < 3; ++k) for (int d = 0; d < 3; ++d) f->axis[k][d] = ax[k][d];
  f->cell[0] = o->size[0] / f->nx;
  f->cell[1] = o->size[1] / f->ny;
  f->cell[2] = o->mode == VIC_SPH_VOLUME ? o->size[2] / f->nz : 1.0;
  for (int k = 0; k < 3; ++k) f->inv_cell[k] = 1.0 / f->cell[k];
  /* the corner: half the widths back from the centre; along w the slab starts at
   * -depth/2 (projection), the volume at -size/2, the slice plane is the centre */
  const double back[3] = {0.5 * o->size[0], 0.5 * o->size[1],
                          o->mode == VIC_SPH_SLICE ? 0.0 : 0.5 * o->size[2]};
  for (int d = 0; d < 3; ++d) f->origin[d] = o->centre[d] - back[0] * o->u[d] - back[1] * o->v[d] - back[2] * w[d];
  f->depth = o->mode == VIC_SPH_PROJECTION ? o->size[2] : 0.0;
  f->support_of_h = o->sph == VIC_SPH_PYNBODY ? 2.0 : 1.0;
  f->unit_mass = o->total_mass > 0 && x->n > 0 ? o->total_mass / (double)x->n : 1.0;
  f->table_n = VIC_SPH_TABLE_N;
  f->radial_n = VIC_SPH_RADIAL_N;
  f->n_shifts = 1;
  if (!x->box || x->n == 0) return VIC_OK;
  float hmax = 0;
#pragma omp parallel for reduction(max : hmax) schedule(static)
  for (int64_t i = 0; i < x->n; ++i) hmax = h[i] > hmax ? h[i] : hmax;
  const double reach = f->support_of_h * hmax;
  const int whole_column = o->mode == VIC_SPH_PROJECTION && o->size[2] == 0;
  for (int d = 0; d < 3; ++d) {
    const double L = x->box[d];
    if (!(L > 0)) continue;
    f->box[d] = L;
    if (whole_column && fabs(w[d]) > 1e-12) {
      if (fabs(fabs(w[d]) - 1.0) > 1e-12)
        return vic__fail(c, VIC_E_UNSUPPORTED,
                         "SPH projection through a periodic box along an oblique direction needs a depth "
                         "(size[2] > 0): the whole line of sight crosses the box's copies without end");
      continue; /* along the line of sight each particle counts once */
    }
    /* the region's extent along world axis d */
    double lo = f->origin[d], hi = f->origin[d];
    for (int k = 0; k < 3; ++k) {
      double span = (k < 2 || o->mode != VIC_SPH_SLICE ? o->size[k] : 0.0) * f->axis[k][d];
      if (span < 0) lo += span; else hi += span;
    }
    f->shift_lo[d] = (int)floor((lo - reach) / L);
    f->shift_hi[d] = (int)floor((hi + reach) / L);
  }
  int64_t combos = 1;
  for (int d = 0; d < 3; ++d) combos *= (int64_t)(f->shift_hi[d] - f->shift_lo[d] + 1);
  if (combos > 4096)
    return vic__fail(c, VIC_E_ARGUMENT,
                     "SPH map: the region (with the largest kernel, %g) spans %lld periodic copies of the box; "
                     "make it at most a few boxes wide",
                     reach, (long long)combos);
  f->n_shifts = (int)combos;
  return VIC_OK;
}

/* Densities and means from the deposited sums. */
static void finish_image(const vick_sph_frame *f, const double *acc, int64_t cells, int32_t n_arrays,
                         vic_sph_image *out) {
  const double scale = f->mode == VICK_SPH_PROJECTION ? 1.0 / (f->cell[0] * f->cell[1])
                       : f->mode == VICK_SPH_VOLUME   ? 1.0 / (f->cell[0] * f->cell[1] * f->cell[2])
                                                      : 1.0;
  double total = 0;
#pragma omp parallel for reduction(+ : total) schedule(static)
  for (int64_t i = 0; i < cells; ++i) {
    total += acc[i];
    out->density[i] = (float)(acc[i] * scale);
    for (int32_t a = 0; a < n_arrays; ++a)
      out->means[(size_t)a * cells + i] = acc[i] > 0 ? (float)(acc[(size_t)(a + 1) * cells + i] / acc[i]) : NAN;
  }
  out->mass_deposited = f->mode == VICK_SPH_SLICE ? 0.0 : total;
}

vic_status vic_sph_resample(vic_ctx *c, const vic_data *x, const float *mass, const float *smoothing_length,
                            int32_t n_arrays, const float *const *arrays, const vic_sph_options *o_in,
                            vic_sph_image *out) {
  if (!c) return VIC_E_ARGUMENT;
  c->error[0] = '\0';
  c->warnings = 0;
  if (!out) return vic__fail(c, VIC_E_ARGUMENT, "SPH map: no output image (out is NULL)");
  vic__sph_image_clear(out);
  const double t0 = vic__now();
  vic_sph_options o;
  vic_sph_options_init(&o);
  if (o_in) {
    vic_status so_ = VIC__OPTIONS_IN(c, o_in, &o, "vic_sph_options");
    if (so_ != VIC_OK) return so_;
  }
  double w[3];
  vic_status s = check_options(c, &o, w);
  if (s == VIC_OK) s = check_particles(c, x, mass, smoothing_length, n_arrays, arrays, &o);
  if (s != VIC_OK) return s;
  vick_sph_frame f;
  if ((s = make_frame(c, x, smoothing_length, &o, w, &f)) != VIC_OK) return s;
  const int64_t cells = (int64_t)f.nx * f.ny * f.nz;
  if ((s = check_memory(c, &o, cells, n_arrays)) != VIC_OK) return s;
  if ((s = vic__progress(c, "sph map", 0.0)) != VIC_OK) return s;

  const size_t nch = 1 + (size_t)n_arrays;
  double *acc = vic__calloc(c, nch * (size_t)cells, sizeof *acc, "SPH map accumulators");
  double *rtab = vic__malloc(c, (VIC_SPH_RADIAL_N + 1) * sizeof *rtab, "SPH kernel table");
  double *ctab = vic__malloc(c, (size_t)(VIC_SPH_TABLE_N + 1) * (VIC_SPH_TABLE_N + 1) * sizeof *ctab,
                             "SPH projected kernel table");
  out->density = vic__malloc(c, (size_t)cells * sizeof *out->density, "SPH map density");
  out->means = n_arrays ? vic__malloc(c, (size_t)n_arrays * (size_t)cells * sizeof *out->means, "SPH map means") : NULL;
  if (!acc || !rtab || !ctab || !out->density || (n_arrays && !out->means)) {
    s = VIC_E_NOMEM;
    goto done;
  }
  vic__sph_tables(o.kernel, rtab, ctab);
  vic_report *rep = &out->report;
  rep->backend = VIC_BACKEND_CPU;
  if (x->n > 0) {
    int gpu = 0;
    if ((s = vic__density_use_gpu(c, "SPH map", &gpu)) != VIC_OK) goto done;
    int done_gpu = 0;
    if (gpu) {
      s = vic__sph_cuda(c, &f, x, smoothing_length, mass, n_arrays, arrays, ctab, rtab, acc, rep);
      if (s == VIC_OK) {
        done_gpu = 1;
        rep->backend = VIC_BACKEND_CUDA;
      } else {
        if ((s = vic__density_after_gpu(c, s, "SPH map")) != VIC_OK) goto done;
        memset(acc, 0, nch * (size_t)cells * sizeof *acc);
      }
    }
    if (!done_gpu) {
      const double tc = vic__now();
      s = vic__sph_cpu(c, &f, x, smoothing_length, mass, n_arrays, arrays, ctab, rtab, acc);
      if (s != VIC_OK) goto done;
      vic__report_stage(rep, "deposit", vic__now() - tc);
    }
  }
  finish_image(&f, acc, cells, n_arrays, out);
  out->nx = f.nx;
  out->ny = f.ny;
  out->nz = f.nz;
  out->n_arrays = n_arrays;
  for (int k = 0; k < 3; ++k) {
    out->spacing[k] = f.cell[k];
    for (int d = 0; d < 3; ++d) out->axes[k][d] = f.axis[k][d];
  }
  for (int d = 0; d < 3; ++d)
    out->origin[d] = f.origin[d] + 0.5 * f.cell[0] * f.axis[0][d] + 0.5 * f.cell[1] * f.axis[1][d] +
                     (f.mode == VICK_SPH_VOLUME ? 0.5 * f.cell[2] * f.axis[2][d] : 0.0);
  vic__report_reason(rep, "%s, %d x %d x %d cells, %lld particles x %d periodic images tried, %s", mode_name(o.mode),
                     f.nx, f.ny, f.nz, (long long)x->n, f.n_shifts, rep->backend == VIC_BACKEND_CUDA ? "GPU" : "CPU");
  rep->seconds_total = vic__now() - t0;
  rep->warnings = c->warnings;
  s = vic__progress(c, "sph map", 1.0);
done:
  free(acc);
  free(rtab);
  free(ctab);
  if (s != VIC_OK) vic_sph_image_free(out);
  return s;
}
