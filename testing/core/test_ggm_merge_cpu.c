/* The CPU GGM merge (vic__nndescent_merge): from two blocks' own exact
 * lists it compares only pairs across the blocks, so every list it returns
 * is sorted, distinct, free of self, and holds the row's own kept half or
 * rows of the other block; with the given lists merged back it reaches the
 * exact lists of the union; the bucketed start finds more cross neighbours
 * in one round than the uniform one; the result does not depend on the
 * thread count; bad blocks are refused.  Runs in CI. */
#include "nndescent.h"
#include "test_util.h"

#include <string.h>

enum { N = 2400, D = 16, K = 32, KX = 10 };

static float dist2(const float *a, const float *b) {
  float s = 0.f;
  for (int j = 0; j < D; ++j) { float q = a[j] - b[j]; s += q * q; }
  return s;
}

/* Exact sorted K lists of rows [lo, hi) among themselves (ids global), or
 * of every row among all (lo = 0, hi = N). */
static void exact(const float *x, int32_t lo, int32_t hi, int32_t kk, int32_t *ids, float *dd) {
  for (int32_t u = lo; u < hi; ++u) {
    int32_t *li = ids + (size_t)u * kk;
    float *ld = dd + (size_t)u * kk;
    for (int32_t t = 0; t < kk; ++t) { li[t] = -1; ld[t] = INFINITY; }
    for (int32_t v = lo; v < hi; ++v) {
      if (v == u) continue;
      float dv = dist2(x + (size_t)u * D, x + (size_t)v * D);
      int32_t t = kk - 1;
      if (!(dv < ld[t] || (dv == ld[t] && v < li[t]))) continue;
      while (t > 0 && (dv < ld[t - 1] || (dv == ld[t - 1] && v < li[t - 1]))) { li[t] = li[t - 1]; ld[t] = ld[t - 1]; --t; }
      li[t] = v;
      ld[t] = dv;
    }
  }
}

/* recall@KX of lists (stride K) against the exact union lists (stride KX) */
static double recall(const int32_t *ids, const int32_t *truth) {
  int64_t hit = 0;
  for (int32_t u = 0; u < N; ++u)
    for (int32_t t = 0; t < KX; ++t)
      for (int32_t e = 0; e < KX; ++e) hit += ids[(size_t)u * K + t] == truth[(size_t)u * KX + e];
  return (double)hit / ((double)N * KX);
}

/* merge, then the given lists merged back (as vic__ggm_cpu_merge does) */
static vic_status run(int threads, const float *x, const int32_t *gi, const float *gd, int32_t buckets, int32_t rounds,
                      int32_t *ids, float *dd, int check) {
  vic_ctx *c = vt_ctx_threads(threads, 5);
  const vic_data v = {x, N, D, D, VIC_L2, NULL, NULL};
  vic_status s = vic__nndescent_merge(c, &v, N / 2, K, gi, gd, 16, rounds, 0.f, buckets, ids, dd, NULL);
  vic_ctx_destroy(c);
  if (s != VIC_OK || !check) return s;
  const int32_t split = N / 2;
  for (int32_t u = 0; u < N; ++u) {
    const int32_t *li = ids + (size_t)u * K;
    const float *ld = dd + (size_t)u * K;
    int bad = 0;
    for (int32_t t = 0; t < K; ++t) {
      const int32_t j = li[t];
      if (j < 0) continue;
      bad |= j == u || j >= N;
      for (int32_t e = 0; e < t; ++e) bad |= li[e] == j;
      if (t > 0 && li[t - 1] >= 0) bad |= ld[t - 1] > ld[t];
      /* a same-block entry can only be one of the row's given ones */
      if ((j < split) == (u < split)) {
        int given = 0;
        for (int32_t e = 0; e < K; ++e) given |= gi[(size_t)u * K + e] == j;
        bad |= !given;
      }
      bad |= fabsf(ld[t] - dist2(x + (size_t)u * D, x + (size_t)j * D)) > 1e-3f * (1.f + ld[t]);
    }
    VT_CHECK(!bad, "row %d: list not sorted, repeated, out of range, a same-block id never given, or a wrong distance",
             (int)u);
    if (bad) break;
  }
  return s;
}

static void merge_back(int32_t *ids, float *dd, const int32_t *gi, const float *gd) {
  for (int32_t u = 0; u < N; ++u) {
    int32_t ti[2 * K];
    float td[2 * K];
    int32_t n = 0, a = 0, b = 0;
    const int32_t *ai = ids + (size_t)u * K, *bi = gi + (size_t)u * K;
    const float *ad = dd + (size_t)u * K, *bd = gd + (size_t)u * K;
    while (n < K && (a < K || b < K)) {
      int ta = a < K && ai[a] >= 0, tb = b < K && bi[b] >= 0;
      if (!ta && !tb) break;
      int take_a = ta && (!tb || ad[a] < bd[b] || (ad[a] == bd[b] && ai[a] <= bi[b]));
      int32_t j = take_a ? ai[a] : bi[b];
      float w = take_a ? ad[a++] : bd[b++];
      int seen = 0;
      for (int32_t e = 0; e < n; ++e) seen |= ti[e] == j;
      if (!seen) { ti[n] = j; td[n] = w; n++; }
    }
    for (int32_t t = 0; t < K; ++t) {
      ids[(size_t)u * K + t] = t < n ? ti[t] : -1;
      dd[(size_t)u * K + t] = t < n ? td[t] : INFINITY;
    }
  }
}

int main(void) {
  float *x = vt_clusters(N, D, 12, 3);
  int32_t *gi = malloc((size_t)N * K * sizeof *gi), *truth = malloc((size_t)N * KX * sizeof *truth);
  float *gd = malloc((size_t)N * K * sizeof *gd), *td = malloc((size_t)N * KX * sizeof *td);
  int32_t *ids = malloc((size_t)N * K * sizeof *ids), *ids2 = malloc((size_t)N * K * sizeof *ids2);
  float *dd = malloc((size_t)N * K * sizeof *dd), *dd2 = malloc((size_t)N * K * sizeof *dd2);
  exact(x, 0, N / 2, K, gi, gd);
  exact(x, N / 2, N, K, gi, gd);
  exact(x, 0, N, KX, truth, td);
  const double given = recall(gi, truth);

  /* converged: with the given lists merged back, the union's exact lists */
  VT_CHECK(run(2, x, gi, gd, 0, 8, ids, dd, 1) == VIC_OK, "merge failed");
  merge_back(ids, dd, gi, gd);
  const double full = recall(ids, truth);
  VT_CHECK(full >= 0.97, "merge to convergence: recall %.4f (given lists alone %.4f)", full, given);

  /* one round: the bucketed start is nearer than the uniform one */
  VT_CHECK(run(2, x, gi, gd, 0, 1, ids, dd, 1) == VIC_OK, "one round failed");
  merge_back(ids, dd, gi, gd);
  const double uniform1 = recall(ids, truth);
  VT_CHECK(run(2, x, gi, gd, 48, 1, ids, dd, 1) == VIC_OK, "one bucketed round failed");
  merge_back(ids, dd, gi, gd);
  const double bucket1 = recall(ids, truth);
  VT_CHECK(bucket1 > uniform1 + 0.02 && bucket1 >= 0.9, "one round: bucketed start %.4f, uniform %.4f", bucket1,
           uniform1);

  /* the same lists for any thread count */
  VT_CHECK(run(1, x, gi, gd, 48, 2, ids, dd, 0) == VIC_OK && run(2, x, gi, gd, 48, 2, ids2, dd2, 0) == VIC_OK,
           "merges failed");
  VT_CHECK(memcmp(ids, ids2, (size_t)N * K * sizeof *ids) == 0 && memcmp(dd, dd2, (size_t)N * K * sizeof *dd) == 0,
           "1 and 2 threads give different lists");

  /* bad blocks */
  vic_ctx *c = vt_ctx_threads(1, 5);
  const vic_data v = {x, N, D, D, VIC_L2, NULL, NULL};
  VT_CHECK(vic__nndescent_merge(c, &v, 0, K, gi, gd, 16, 2, 0.f, 0, ids, dd, NULL) == VIC_E_ARGUMENT &&
               strstr(vic_ctx_error(c), "split"),
           "split 0 accepted (%s)", vic_ctx_error(c));
  VT_CHECK(vic__nndescent_merge(c, &v, N, K, gi, gd, 16, 2, 0.f, 0, ids, dd, NULL) == VIC_E_ARGUMENT,
           "split n accepted");
  vic_ctx_destroy(c);
  printf("given %.4f, converged %.4f, one round: uniform %.4f, bucketed %.4f\n", given, full, uniform1, bucket1);
  free(x); free(gi); free(gd); free(truth); free(td); free(ids); free(ids2); free(dd); free(dd2);
  return vt_finish("test_ggm_merge_cpu");
}
