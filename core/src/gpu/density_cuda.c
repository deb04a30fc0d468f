/* The GPU bridge of the densities (density_cuda.h).  Built in every
 * configuration: with VIC_WITH_CUDA it calls vicinity_kernels and turns
 * their codes into statuses and messages; without it, it answers as the
 * rest of the GPU backend does (cuda_none.c): VIC_E_NODEVICE. */
#include "density_cuda.h"
#include "backend_cuda.h"
#include "density_math.h"
#include "density_slabs.h"
#include "slab_plan.h"

#include <stdio.h>
#include <string.h>

#ifdef VIC_WITH_CUDA
#include "cuda_internal.h"
#include "vic_kernels_density.h"

vic_status vic__cuda_density(vic_ctx *c, const vic_data *x, const vic_knn *nn, const float *mass, double unit_mass,
                             vic_sph_convention sph, float *knn_density, float *sph_density, float *smoothing_length) {
  vick_call call;
  vic__cuda_call_init(c, &call, c->opt.device, 0, 0);
  vick_density_params p = vic__density_params(x->d, unit_mass, sph);
  int rc = vick_density(&call, x->n, nn->k, nn->ids, nn->dist, mass, &p, knn_density, sph_density, smoothing_length);
  vic_status s = vic__kernel_status(c, rc, &call, "density");
  if (s == VIC_OK) vic__kernel_log(c, &call, "density");
  return s;
}

/* Out of core or on several devices: slab by slab (density_slabs.c). */
static vic_status slabs_density(vic_ctx *c, const vic_data *x, int32_t k, const float *mass, double unit_mass,
                                vic_sph_convention sph, size_t budget, float *knn_density, float *sph_density,
                                float *smoothing_length, int64_t *ids, float *dist, vic_report *rep, int64_t *bad_row) {
  const size_t entries = (size_t)x->n * (size_t)k;
  int32_t *lid = ids ? vic__malloc(c, entries * sizeof *lid, "neighbour ids (int32)") : NULL;
  float *rk = (!ids || lid) ? vic__malloc(c, (size_t)x->n * sizeof *rk, "k-th distances") : NULL;
  if (!rk) { free(lid); return VIC_E_NOMEM; }
  vic_slab_stats st;
  vic_status s = vic__slab_density(c, x, k, mass, unit_mass, sph, budget, knn_density, sph_density, smoothing_length,
                                   rk, lid, dist, bad_row, &st);
  if (s == VIC_OK && ids) vic__ids_widen(ids, lid, entries);
  free(lid);
  free(rk);
  if (s != VIC_OK) return s;
  rep->seconds_transfer += st.seconds_transfer;
  rep->seconds_kernel += st.seconds_kernel;
  rep->device_peak_bytes = (int64_t)st.peak_bytes;
  rep->slabs = (int32_t)st.slabs;
  rep->devices_used = st.devices;
  vic__log(c, VIC_LOG_INFO, "GPU grid + density in %lld slabs on %d device%s (%lld rows answered again), peak %.0f MiB "
           "of device memory", (long long)st.slabs, st.devices, st.devices == 1 ? "" : "s", (long long)st.retried,
           st.peak_bytes / 1048576.0);
  return VIC_OK;
}

vic_status vic__cuda_knn_density(vic_ctx *c, const vic_data *x, int32_t k, const float *mass, double unit_mass,
                                 vic_sph_convention sph, float *knn_density, float *sph_density,
                                 float *smoothing_length, int64_t *ids, float *dist, vic_report *rep,
                                 int64_t *bad_row) {
  const size_t budget = vic__density_budget(c, c->opt.device);
  int first = 0, count = 1;
  vic_status s = vic__cuda_devices(c, &first, &count);
  if (s != VIC_OK) return s;
  int rc = VICK_NOMEM;
  vick_call call;
  vic__cuda_call_init(c, &call, c->opt.device, budget, 0);
  (void)first;
  (void)count; /* checked; several devices share the slabs when the set does not fit one (peaks_cuda.c) */
  if (vic__in_core_bytes(x->n, k, x->d, 0) <= budget) {
    vick_density_params p = vic__density_params(x->d, unit_mass, sph);
    vick_points pts = {x->rows, x->n, x->d, x->stride ? x->stride : x->d, VICK_METRIC_L2, x->box};
    rc = vick_grid_knn_density(&call, &pts, k, mass, &p, knn_density, sph_density, smoothing_length, ids, dist,
                               bad_row);
  }
  if (rc == VICK_NOMEM) return slabs_density(c, x, k, mass, unit_mass, sph, budget, knn_density, sph_density,
                                             smoothing_length, ids, dist, rep, bad_row);
  s = vic__kernel_status(c, rc, &call, "grid + density");
  if (s != VIC_OK) return s;
  vic__kernel_report_one(c, rep, &call, "grid + density");
  return VIC_OK;
}

#else /* no CUDA in this build */

vic_status vic__cuda_density(vic_ctx *c, const vic_data *x, const vic_knn *nn, const float *mass, double unit_mass,
                             vic_sph_convention sph, float *knn_density, float *sph_density, float *smoothing_length) {
  (void)x; (void)nn; (void)mass; (void)unit_mass; (void)sph; (void)knn_density; (void)sph_density;
  (void)smoothing_length;
  return vic__cuda_probe(c);
}

vic_status vic__cuda_knn_density(vic_ctx *c, const vic_data *x, int32_t k, const float *mass, double unit_mass,
                                 vic_sph_convention sph, float *knn_density, float *sph_density,
                                 float *smoothing_length, int64_t *ids, float *dist, vic_report *rep,
                                 int64_t *bad_row) {
  (void)x; (void)k; (void)mass; (void)unit_mass; (void)sph; (void)knn_density; (void)sph_density;
  (void)smoothing_length; (void)ids; (void)dist; (void)rep;
  *bad_row = -1;
  return vic__cuda_probe(c);
}

#endif
