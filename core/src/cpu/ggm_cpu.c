/* The CPU side of the graph-growing steps (ggm_engine.h): NN-Descent on a
 * block, and a merge that runs NN-Descent over the union of two blocks
 * and keeps, for every row, the best of that list and the given one.  The
 * CPU has no GGM of its own; this merge is never worse than either input
 * and lets every public call run (and be tested) without a GPU. */
#include "ggm_engine.h"
#include "nndescent.h"

#include <string.h>

enum { GGM_MERGE_ITERATIONS = 4 }; /* GGM's lists start good: 4 rounds reach a single build's recall (BENCHMARKS.md) */

vic_status vic__ggm_params(vic_ctx *c, const vic_build_options *o, int32_t k, vic_ggm_params *p) {
  int32_t kb = o->gnnd.k_build > 0 ? o->gnnd.k_build : 64; /* the GNND lists' default (cuda_knn_lists.c) */
  if (kb < k) kb = k;
  kb = (kb + 31) / 32 * 32;
  if (kb > 256) return vic__fail(c, VIC_E_UNSUPPORTED, "GNND/GGM lists hold at most 256 entries (k = %d, k_build = %d)",
                                 (int)k, (int)o->gnnd.k_build);
  if (o->gnnd.samples < 1 || o->gnnd.samples > 32)
    return vic__fail(c, VIC_E_ARGUMENT, "gnnd.samples must be in 1..32 (got %d)", (int)o->gnnd.samples);
  if (o->gnnd.iterations < 1) return vic__fail(c, VIC_E_ARGUMENT, "gnnd.iterations must be >= 1");
  p->K = kb;
  p->samples = o->gnnd.samples;
  p->iterations = o->gnnd.iterations;
  p->merge_iterations = o->gnnd.iterations < GGM_MERGE_ITERATIONS ? o->gnnd.iterations : GGM_MERGE_ITERATIONS;
  p->converge = o->gnnd.converge;
  return VIC_OK;
}

float vic__ggm_work_of_true(vic_metric m, float t) {
  return m == VIC_COSINE ? 2.f * t : t * t;
}

static int before(float da, int32_t ia, float db, int32_t ib) { return da < db || (da == db && ia < ib); }

void vic__ggm_merge_list(int32_t *a_ids, float *a_dist, int32_t ka, const int32_t *b_ids, const float *b_dist,
                         int32_t kb) {
  int32_t tid[256];
  float td[256];
  int32_t n = 0, i = 0, j = 0;
  while (n < ka) {
    int a_ok = i < ka && a_ids[i] >= 0, b_ok = j < kb && b_ids[j] >= 0;
    if (!a_ok && !b_ok) break;
    int take_a = a_ok && (!b_ok || before(a_dist[i], a_ids[i], b_dist[j], b_ids[j]));
    int32_t id = take_a ? a_ids[i] : b_ids[j];
    float dd = take_a ? a_dist[i] : b_dist[j];
    if (take_a) i++; else j++;
    int seen = 0;
    for (int32_t t = n - 1; t >= 0 && !seen; --t) seen = tid[t] == id;
    if (!seen) { tid[n] = id; td[n] = dd; n++; }
  }
  for (int32_t t = 0; t < ka; ++t) {
    a_ids[t] = t < n ? tid[t] : -1;
    a_dist[t] = t < n ? td[t] : INFINITY;
  }
}

/* NN-Descent needs K <= n - 1: a shorter list, padded to K. */
vic_status vic__ggm_cpu_build(vic_ctx *c, const vic_build_options *o, const float *rows, int64_t n, int32_t d,
                              const vic_ggm_params *p, int32_t *ids, float *dist) {
  const int32_t K = p->K, Kc = (int64_t)K < n - 1 ? K : (int32_t)(n - 1);
  const vic_data x = {rows, n, d, d, VIC_L2, NULL, NULL};
  if (Kc < 1) {
    for (int64_t i = 0; i < n * K; ++i) { ids[i] = -1; dist[i] = INFINITY; }
    return VIC_OK;
  }
  if (Kc == K) return vic__nndescent_graph(c, &x, o, K, ids, dist, NULL);
  int32_t *ti = vic__malloc(c, (size_t)n * Kc * sizeof *ti, "short lists");
  float *tw = vic__malloc(c, (size_t)n * Kc * sizeof *tw, "short lists");
  vic_status s = (ti && tw) ? vic__nndescent_graph(c, &x, o, Kc, ti, tw, NULL) : VIC_E_NOMEM;
  for (int64_t i = 0; s == VIC_OK && i < n; ++i)
    for (int32_t t = 0; t < K; ++t) {
      ids[i * K + t] = t < Kc ? ti[i * Kc + t] : -1;
      dist[i * K + t] = t < Kc ? tw[i * Kc + t] : INFINITY;
    }
  free(ti);
  free(tw);
  return s;
}

vic_status vic__ggm_cpu_merge(vic_ctx *c, const vic_build_options *o, const float *rows1, int64_t n1,
                              const float *rows2, int64_t n2, int32_t d, const vic_ggm_params *p,
                              const int32_t *ids1, const float *dist1, const int32_t *ids2, const float *dist2,
                              int32_t k, int32_t *out_ids, float *out_dist) {
  const int64_t n = n1 + n2;
  const int32_t K = p->K;
  float *rows = vic__malloc(c, (size_t)n * d * sizeof *rows, "rows of both blocks");
  int32_t *ui = vic__malloc(c, (size_t)n * K * sizeof *ui, "union lists");
  float *uw = vic__malloc(c, (size_t)n * K * sizeof *uw, "union lists");
  vic_status s = (rows && ui && uw) ? VIC_OK : VIC_E_NOMEM;
  if (s == VIC_OK) {
    memcpy(rows, rows1, (size_t)n1 * d * sizeof *rows);
    memcpy(rows + (size_t)n1 * d, rows2, (size_t)n2 * d * sizeof *rows);
    s = vic__ggm_cpu_build(c, o, rows, n, d, p, ui, uw);
  }
  if (s == VIC_OK) {
#pragma omp parallel for schedule(static) num_threads(vic__threads(c))
    for (int64_t u = 0; u < n; ++u) {
      int32_t li[256];
      const int in1 = u < n1;
      const int32_t *gi = in1 ? ids1 + u * K : ids2 + (u - n1) * K;
      const float *gd = in1 ? dist1 + u * K : dist2 + (u - n1) * K;
      for (int32_t t = 0; t < K; ++t) li[t] = gi[t] < 0 ? -1 : (in1 ? gi[t] : (int32_t)(gi[t] + n1));
      vic__ggm_merge_list(ui + u * K, uw + u * K, K, li, gd, K);
      memcpy(out_ids + u * k, ui + u * K, (size_t)k * sizeof *out_ids);
      memcpy(out_dist + u * k, uw + u * K, (size_t)k * sizeof *out_dist);
    }
  }
  free(rows);
  free(ui);
  free(uw);
  return s;
}
