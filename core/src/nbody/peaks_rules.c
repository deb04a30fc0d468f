/* Peak rules shared by the CPU and device peak finders (peaks_rules.h). */
#include "peaks_rules.h"

#include <stdlib.h>

vic_status vic__check_peak_options(vic_ctx *c, const vic_peak_options *o) {
  if (!(o->min_density >= 0) || !(o->min_delta >= 0) || !(o->delta_factor >= 0) || !(o->min_prominence >= 0) ||
      !isfinite(o->min_prominence) || o->min_members < 0 || !isfinite(o->min_density) || !isfinite(o->min_delta) ||
      !isfinite(o->delta_factor))
    return vic__fail(c, VIC_E_ARGUMENT,
                     "peak options must be finite and >= 0 (min_density %g, min_delta %g, delta_factor %g, "
                     "min_members %lld)",
                     o->min_density, o->min_delta, o->delta_factor, (long long)o->min_members);
  return VIC_OK;
}

double vic__prominence_ratio(const vic_peak_options *o, int64_t k) {
  return o->min_prominence > 0 ? o->min_prominence : exp(6.0 / sqrt((double)(k > 1 ? k - 1 : 1)));
}

int vic__peak_thresholds(const vic_peak_options *o, float rho, float delta, float rk) {
  double min_delta = o->min_delta > 0 ? o->min_delta : o->delta_factor * rk;
  return rho >= o->min_density && delta >= min_delta;
}

typedef struct {
  float saliency;
  int64_t id;
} ranked;

static int by_saliency(const void *a, const void *b) {
  const ranked *p = a, *q = b;
  if (p->saliency != q->saliency) return p->saliency > q->saliency ? -1 : 1;
  return p->id < q->id ? -1 : (p->id > q->id);
}

vic_status vic__rank_by_saliency(vic_ctx *c, int64_t *ids, const float *saliency, int64_t np) {
  ranked *list = vic__malloc(c, (size_t)(np > 0 ? np : 1) * sizeof *list, "peak list");
  if (!list) return VIC_E_NOMEM;
  for (int64_t p = 0; p < np; ++p) { list[p].id = ids[p]; list[p].saliency = saliency[p]; }
  qsort(list, (size_t)np, sizeof *list, by_saliency);
  for (int64_t p = 0; p < np; ++p) ids[p] = list[p].id;
  free(list);
  return VIC_OK;
}

void vic__centres_from_sums(const vic_data *x, const int64_t *peak_point, const double *sum, const int64_t *taken,
                            int64_t np, float *centre) {
  const int32_t d = x->d;
  for (int64_t p = 0; p < np; ++p) {
    const float *b = vic__row(x, peak_point[p]);
    for (int32_t j = 0; j < d; ++j) {
      double v = b[j] + sum[p * d + j] / (double)taken[p];
      if (x->box && x->box[j] > 0) v -= x->box[j] * floor(v / x->box[j]); /* back into [0, L) */
      centre[p * d + j] = (float)v;
    }
  }
}
