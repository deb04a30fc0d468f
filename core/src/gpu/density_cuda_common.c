/* What the densities' GPU files share (density_cuda.h): the kernels'
 * density constants, the report of a one-device run and the slabs' int32
 * ids widened, in their own unit: density_cuda.c calls into density_slabs.c, which needs them too,
 * and must not call back. */
#include "density_cuda.h"
#include "density_math.h"

#ifdef VIC_WITH_CUDA
vick_density_params vic__density_params(int32_t d, double unit_mass, vic_sph_convention sph) {
  vick_density_params p;
  p.d = d;
  p.unit_mass = unit_mass;
  p.vd = vic__unit_ball_volume(d);
  p.sigma = vic__m4_norm(d);
  p.h_of_rk = sph == VIC_SPH_PYNBODY ? 0.5 : 1.0;
  return p;
}

void vic__kernel_report_one(vic_ctx *c, vic_report *rep, const vick_call *call, const char *what) {
  vic__cuda_copy_stages(rep, call);
  rep->device_peak_bytes = (int64_t)call->peak_bytes;
  rep->slabs = 1;
  rep->devices_used = 1;
  vic__kernel_log(c, call, what);
}

void vic__ids_widen(int64_t *dst, const int32_t *src, size_t n) {
#pragma omp parallel for
  for (int64_t t = 0; t < (int64_t)n; ++t) dst[t] = src[t];
}
#endif
