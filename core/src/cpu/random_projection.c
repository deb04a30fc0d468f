/* vic__random_projection: see random_projection.h.  Random signs (Achlioptas
 * 2003) preserve distances as well as Gaussians for this purpose.  The
 * matrix is stored one output dimension per row, so each output is one call
 * of the vectorised dot kernel over a row that stays in L1. */
#include "random_projection.h"
#include "l2_kernel.h"

vic_status vic__random_projection(vic_ctx *c, const vic_data *x, int32_t dout, uint64_t seed, float **out,
                                  vic_data *view) {
  const int32_t d = x->d;
  float *m = vic__malloc(c, (size_t)d * dout * sizeof *m, "projection matrix");
  float *y = m ? vic__malloc(c, (size_t)x->n * dout * sizeof *y, "projected rows") : NULL;
  if (!y) { free(m); return VIC_E_NOMEM; }
  vic_rng g = vic__rng(seed, 0x9a0bull);
  const float s = 1.f / sqrtf((float)dout);
  for (int64_t e = 0; e < (int64_t)d * dout; ++e) m[e] = (vic__rng_next(&g) >> 63) ? s : -s;
#pragma omp parallel for schedule(static, 256) num_threads(vic__threads(c))
  for (int64_t i = 0; i < x->n; ++i) {
    const float *r = vic__row(x, i);
    for (int32_t j = 0; j < dout; ++j) y[i * dout + j] = vic__dot_fast(r, m + (size_t)j * d, d);
  }
  free(m);
  *out = y;
  vic_data v = {y, x->n, dout, dout, VIC_L2, NULL, NULL};
  *view = v;
  return VIC_OK;
}
