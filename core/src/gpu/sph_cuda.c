/* The GPU bridge of the SPH maps (sph_internal.h): with VIC_WITH_CUDA it
 * calls vick_sph_deposit and turns its code into a status and message;
 * without it, it answers as the rest of the GPU backend does. */
#include "sph_internal.h"
#include "backend_cuda.h"

#ifdef VIC_WITH_CUDA
#include "cuda_internal.h"
#include "density_cuda.h"

vic_status vic__sph_cuda(vic_ctx *c, const vick_sph_frame *f, const vic_data *x, const float *h, const float *mass,
                         int32_t n_arrays, const float *const *arrays, const double *ctab, const double *rtab,
                         double *acc, vic_report *rep) {
  vick_call call;
  vic__cuda_call_init(c, &call, c->opt.device, 0, 0);
  int rc = vick_sph_deposit(&call, f, x->rows, x->n, x->stride ? x->stride : x->d, h, mass, n_arrays, arrays, ctab,
                            rtab, acc);
  vic_status s = vic__kernel_status(c, rc, &call, "SPH map");
  if (s != VIC_OK) return s;
  vic__cuda_copy_stages(rep, &call);
  vic__kernel_log(c, &call, "SPH map");
  return VIC_OK;
}

#else

vic_status vic__sph_cuda(vic_ctx *c, const vick_sph_frame *f, const vic_data *x, const float *h, const float *mass,
                         int32_t n_arrays, const float *const *arrays, const double *ctab, const double *rtab,
                         double *acc, vic_report *rep) {
  (void)f; (void)x; (void)h; (void)mass; (void)n_arrays; (void)arrays; (void)ctab; (void)rtab; (void)acc; (void)rep;
  return vic__cuda_probe(c);
}

#endif
