/* See gsearch_policy.h. */
#include "gsearch_policy.h"

#ifdef VIC_WITH_CUDA
/* TSDG's per-search occlusion limits (Wang et al. Sec. 5: edges with a
 * factor below 10 for small batches, below 5 for large ones). */
#define TSDG_LIMIT_SMALL 10
#define TSDG_LIMIT_LARGE 5

/* Small-batch search defaults, from the H100 sweeps of manifold 1M x 128
 * (BENCHMARKS.md, "Small batches without the pivot exchange"): t0
 * searches per query and a hop limit, which the paper's "until no
 * improvement" lacks, where most of the time went.  TSDG takes the most
 * searches (32, 24, then 16 with 6 hops) whose blocks fit in one wave (a
 * batch past one wave takes the pivot kernel path, about twice the time).
 * GRNND (no occlusion order, more hops needed) keeps t0 16 and 8 hops:
 * its graph joins the islands of disconnected data by few edges, where
 * t0 32 and 4 hops lost recall.  GGNN's bottom layer (degree k_build, one
 * pass of a hop) takes TSDG's wide searches: its rows are short, so a hop
 * costs one pass.  k > 32 (128-key rankings): t0 16 (t0 x k merged keys <=
 * 2048) and no hop limit (not measured). */
#define SMALL_SEARCHES 16
#define SMALL_HOPS_WIDE 4 /* t0 24 or 32 */
#define SMALL_HOPS_TSDG 6
#define SMALL_HOPS_GRNND 8

static void small_defaults(vic_gs_graph graph, int64_t m, int32_t wave_blocks, int32_t *t0, int32_t *hops) {
  *t0 = SMALL_SEARCHES;
  *hops = graph == VIC_GS_GRNND ? SMALL_HOPS_GRNND : SMALL_HOPS_TSDG;
  if (graph == VIC_GS_GRNND) return;
  for (int32_t wide = 32; wide > SMALL_SEARCHES; wide -= 8)
    if (m * wide <= wave_blocks) {
      *t0 = wide;
      *hops = SMALL_HOPS_WIDE;
      return;
    }
}

int vic__gsearch_params(vic_gs_graph graph, const vick_gsearch_info *info, int64_t m, int32_t k,
                        const vic_search_options *o, vick_gsearch_params *p, double *threshold) {
  const int tsdg = graph == VIC_GS_TSDG;
  /* TSDG's division between small and large batches, a SMs + b / d: a and
   * b fitted to the paper's two reported thresholds (300 at d = 128 and
   * 150 at d = 960 on 82 SMs) */
  *threshold = 1.55 * info->sms + 22150.0 / (double)info->d;
  vick_gsearch_params_init(p);
  const int small = (double)m <= *threshold;
  p->procedure = small ? VICK_GSEARCH_SMALL : VICK_GSEARCH_LARGE;
  p->occlusion_limit = o->occlusion_limit > 0 ? o->occlusion_limit : tsdg ? (small ? TSDG_LIMIT_SMALL : TSDG_LIMIT_LARGE) : 0;
  p->searches = SMALL_SEARCHES;
  p->list = small ? 0 : (2 * k < 64 ? 64 : (2 * k > 256 ? 256 : 2 * k));
  if (p->list && p->list < k) p->list = k;
  p->hops = o->max_visits;
  if (small && k <= 32) {
    int32_t t0, hops;
    small_defaults(graph, m, info->small_wave_blocks, &t0, &hops);
    p->searches = t0;
    if (!p->hops) p->hops = hops;
  }
  p->delta = o->tau;
  if (o->entry_points > 0) p->entries = o->entry_points;
  return small;
}
#endif
