/* See gsearch_policy.h. */
#include "gsearch_policy.h"

#ifdef VIC_WITH_CUDA
/* TSDG's occlusion limit for large batches (Wang et al. Sec. 5: edges with
 * a factor below 5; small ones: VIC_TSDG_LIMIT_SMALL). */
#define TSDG_LIMIT_LARGE 5

/* Small-batch search defaults: t0 searches per query and a hop limit,
 * which the paper's "until no improvement" lacks and where its time goes.
 * TSDG takes the most searches (32, 24, then 16 with more hops) whose
 * blocks fit in one wave of the device: a second wave takes the slower
 * pivot-kernel path.  GRNND's graph has no occlusion order and joins
 * disconnected islands by few edges, so it takes fewer searches (16 at
 * every size) with TSDG's hop limit for 16: hops past it added little
 * recall on manifold or islands and a sizeable share of a single query's
 * time.  GGNN's bottom layer takes TSDG's wide searches with more
 * hops: its rows are short (degree k_build), so a hop is one pass of the
 * block but reaches fewer nodes, and TSDG's four stop short of the
 * recall its small batches reach (BENCHMARKS.md).  k > 32
 * (128-key rankings): t0 16 keeps t0 x k merged keys <= 2048, with no hop
 * limit.  The sweeps behind these are in BENCHMARKS.md (graph search). */
#define SMALL_SEARCHES 16
#define SMALL_HOPS_WIDE 4 /* t0 24 or 32 */
#define SMALL_HOPS_TSDG 6
#define SMALL_HOPS_GRNND 6
#define SMALL_HOPS_GGNN 6

static void small_defaults(vic_gs_graph graph, int64_t m, int32_t wave_blocks, int32_t *t0, int32_t *hops) {
  *t0 = SMALL_SEARCHES;
  *hops = graph == VIC_GS_GRNND ? SMALL_HOPS_GRNND : SMALL_HOPS_TSDG;
  if (graph == VIC_GS_GRNND) return;
  if (graph == VIC_GS_GGNN) *hops = SMALL_HOPS_GGNN;
  for (int32_t wide = 32; wide > SMALL_SEARCHES; wide -= 8)
    if (m * wide <= wave_blocks) {
      *t0 = wide;
      *hops = graph == VIC_GS_GGNN ? SMALL_HOPS_GGNN : SMALL_HOPS_WIDE;
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
  p->occlusion_limit = o->occlusion_limit > 0 ? o->occlusion_limit : tsdg ? (small ? VIC_TSDG_LIMIT_SMALL : TSDG_LIMIT_LARGE) : 0;
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
#else
typedef int vic__gsearch_policy_needs_cuda; /* a translation unit may not be empty */
#endif
