/* A list's distance made again from the coordinates (slab_plan.h), so
 * that lists kept on a device need not bring their distances to the
 * host: the links read one per row, the parent's. */
#include "slab_plan.h"

#include <math.h>

/* A stored coordinate as both grids keep it: periodic axes (box > 0,
 * the period in float) wrapped into [0, L) in double (cpu_grid.c
 * wrap_coord, grid_internal.cuh wrap_stored). */
static inline float stored_coord(float v, float L) {
  if (!(L > 0.f)) return v;
  const double w = (double)v - (double)L * floor((double)v / (double)L);
  const float f = (float)w;
  return f >= L || f < 0.f ? 0.f : f;
}

float vic__slab_list_dist(const vic_data *x, int64_t a, int64_t b) {
  const int64_t stride = x->stride ? x->stride : x->d;
  const float *pa = x->rows + a * stride, *pb = x->rows + b * stride;
  float s = 0.f;
  for (int j = 0; j < x->d && j < 3; ++j) {
    const float L = x->box && x->box[j] > 0 ? (float)x->box[j] : 0.f;
    const float q = stored_coord(pa[j], L), p = stored_coord(pb[j], L);
    float t = p - q;
    if (L > 0.f) { /* the minimum image, the period off one coordinate first (grid_internal.h min_image) */
      const float half = 0.5f * L;
      if (t > half) t = (p - L) - q;
      else if (t < -half) t = p - (q - L);
    }
    s = s + t * t;
  }
  return sqrtf(s > 0.f ? s : 0.f);
}
