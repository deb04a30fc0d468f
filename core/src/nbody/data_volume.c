/* The volume a point set fills, for mean densities (halo catalogue) and
 * mean spacings (friends-of-friends): on periodic axes the box length, on
 * open axes the points' extent. */
#include "nbody_internal.h"

vic_status vic__data_volume(vic_ctx *c, const vic_data *x, double *volume) {
  const int32_t d = x->d;
  double v = 1.0;
  for (int32_t j = 0; j < d; ++j) {
    double side;
    if (x->box && x->box[j] > 0) {
      side = x->box[j];
    } else {
      float lo = INFINITY, hi = -INFINITY;
#pragma omp parallel for num_threads(vic__threads(c)) reduction(min : lo) reduction(max : hi) schedule(static)
      for (int64_t i = 0; i < x->n; ++i) {
        const float t = vic__row(x, i)[j];
        lo = t < lo ? t : lo;
        hi = t > hi ? t : hi;
      }
      side = (double)hi - (double)lo;
    }
    v *= side;
  }
  if (!(v > 0) || !isfinite(v))
    return vic__fail(c, VIC_E_ARGUMENT,
                     "the points fill no volume (extent %g): a mean density needs points spread over every axis, "
                     "or the box lengths",
                     v);
  *volume = v;
  return VIC_OK;
}
