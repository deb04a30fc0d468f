/* vic_knn_density_peaks: exact lists, densities and density peaks in one
 * call.  On the CPU (and wherever the device run does not apply) it is
 * vic_knn_density then vic_peaks_find on the kNN density.  On the GPU
 * with d <= 3 the whole pipeline runs in one device run (peaks_cuda.c):
 * the n*k lists stay on the device, which is what makes it fast -- for
 * 10^7 particles and k = 32 the lists are 3.8 GB, seconds of copying. */
#include "nbody_internal.h"
#include "peaks_cuda.h"
#include "peaks_rules.h"

#include <string.h>

static vic_status on_cpu(vic_ctx *c, const vic_data *x, int32_t k, const float *mass, const vic_density_options *o,
                         const vic_peak_options *po, vic_knn *nn, float *knn_density, float *sph_density,
                         float *smoothing_length, vic_peaks *out) {
  vic_knn lists;
  vic_status s = vic__knn_density(c, x, k, mass, o, &lists, knn_density, sph_density, smoothing_length);
  if (s != VIC_OK) return s;
  const int warned = c->warnings;
  s = vic__peaks_find(c, x, &lists, knn_density, po, out);
  c->warnings += warned;
  if (s == VIC_OK) { /* the lists' report, with the peaks' time */
    const double peaks_seconds = out->report.seconds_total;
    out->report = lists.report;
    vic__report_stage(&out->report, "peaks", peaks_seconds);
    out->report.seconds_total += peaks_seconds;
    out->report.warnings = c->warnings;
  }
  if (s == VIC_OK && nn) *nn = lists;
  else vic_knn_free(&lists);
  return s;
}

/* The device run; VIC_OK with *done = 0 means "use the CPU instead". */
static vic_status on_gpu(vic_ctx *c, const vic_data *x, int32_t k, const float *mass, double unit_mass,
                         const vic_density_options *o, const vic_peak_options *po, vic_knn *nn, float *knn_density,
                         float *sph_density, float *smoothing_length, vic_peaks *out, double t0, int *done) {
  *done = 0;
  vic_knn lists;
  vic_status s = vic__device_grid_lists(c, x, k, nn != NULL, "densities and peaks", &lists);
  if (s != VIC_OK) return s;
  int64_t bad = -1;
  s = vic__cuda_density_peaks(c, x, k, mass, unit_mass, o->sph, po, knn_density, sph_density, smoothing_length,
                              lists.ids, lists.dist, &lists.report, &bad, out);
  if (s == VIC_OK && bad >= 0) {
    vic_knn_free(&lists);
    return vic__fail_duplicate_row(c, bad, k);
  }
  if (s != VIC_OK) {
    vic_knn_free(&lists);
    return vic__density_after_gpu(c, s, "grid + density + peaks");
  }
  if (vic__density_needs_cpu_check(c, x->n, mass, knn_density, sph_density)) {
    vic_knn_free(&lists); /* densities out of float range: the CPU path names them, no peaks from them */
    vic_peaks_free(out);
    return VIC_OK;
  }
  *done = 1;
  vic__finish_device_lists(c, &lists, nn != NULL, t0);
  out->report = lists.report;
  if (nn) *nn = lists;
  return VIC_OK;
}

vic_status vic_knn_density_peaks(vic_ctx *c, const vic_data *x, int32_t k, const float *mass,
                                 const vic_density_options *o_in, const vic_peak_options *po_in, vic_knn *nn,
                                 float *knn_density, float *sph_density, float *smoothing_length, vic_peaks *out) {
  if (!c) return VIC_E_ARGUMENT;
  vic__begin_call(c);
  if (nn) vic__knn_clear(nn);
  if (out) vic__peaks_clear(out);
  c->error[0] = '\0';
  c->warnings = 0;
  const double t0 = vic__now();
  if (!out || !knn_density)
    return vic__fail(c, VIC_E_ARGUMENT, "density peaks need an output structure and a kNN density array");
  vic_density_options o;
  vic_density_options_init(&o);
  if (o_in) {
    vic_status so_ = VIC__OPTIONS_IN(c, o_in, &o, "vic_density_options");
    if (so_ != VIC_OK) return so_;
  }
  vic_peak_options po;
  vic_peak_options_init(&po);
  if (po_in) {
    vic_status so_ = VIC__OPTIONS_IN(c, po_in, &po, "vic_peak_options");
    if (so_ != VIC_OK) return so_;
  }
  vic_status s = vic__check_density_input(c, x, k);
  if (s != VIC_OK) return s;
  if ((s = vic__check_density_options(c, x->n, mass, &o)) != VIC_OK) return s;
  if ((s = vic__check_peak_options(c, &po)) != VIC_OK) return s;
  if ((s = vic__progress(c, "peaks", 0.0)) != VIC_OK) return s;
  int gpu = 0;
  if ((s = vic__density_use_gpu(c, "density peaks", &gpu)) != VIC_OK) return s;
  if (gpu && x->d <= 3) {
    const double unit_mass = o.total_mass > 0 ? o.total_mass / (double)x->n : 1.0;
    int done = 0;
    s = on_gpu(c, x, k, mass, unit_mass, &o, &po, nn, knn_density, sph_density, smoothing_length, out, t0, &done);
    if (s != VIC_OK || done) return s == VIC_OK ? vic__progress(c, "peaks", 1.0) : s;
  }
  return on_cpu(c, x, k, mass, &o, &po, nn, knn_density, sph_density, smoothing_length, out);
}
