/* The host list steps of the out-of-core peaks (slab_rows.h), which need
 * no GPU: on CPU lists and densities of clustered points, the links
 * equal what vic_knn_density_peaks gives the points that are not local
 * maxima (their parent is the nearest denser list neighbour), the local
 * maxima are exactly the rows without a denser neighbour, and the
 * boundary edges equal a direct reading of their definition (rows taken
 * in two batches, appended); and the per-point results a slab run makes
 * from its links (vic__peaks_from_links) equal the device's old steps.
 * Runs in CI. */
#include "slab_rows.h"
#include "test_util.h"

#include <stdlib.h>
#include <string.h>

static int denser(const float *rho, int64_t j, int64_t i) {
  return rho[j] > rho[i] || (rho[j] == rho[i] && j < i);
}

static void check(const char *name, const vic_data *x, int32_t k) {
  const int64_t n = x->n;
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  vic_knn nn;
  vic_peaks pk;
  float *rho = malloc((size_t)n * sizeof *rho);
  VT_OK(c, vic_knn_density_peaks(c, x, k, NULL, NULL, NULL, &nn, rho, NULL, NULL, &pk));
  int32_t *ids = malloc((size_t)n * k * sizeof *ids);
  for (int64_t t = 0; t < n * k; ++t) ids[t] = (int32_t)nn.ids[t];
  int64_t *row = malloc((size_t)n * sizeof *row);
  for (int64_t i = 0; i < n; ++i) row[i] = n - 1 - i; /* any order */
  int32_t *parent = malloc((size_t)n * 4), *up = malloc((size_t)n * 4), *is_max = malloc((size_t)n * 4);
  float *delta = malloc((size_t)n * 4);
  /* rows in reverse order: the lists follow their rows */
  int32_t *rids = malloc((size_t)n * k * sizeof *rids);
  float *rdist = malloc((size_t)n * k * sizeof *rdist);
  for (int64_t r = 0; r < n; ++r) {
    memcpy(rids + r * k, ids + row[r] * k, (size_t)k * 4);
    memcpy(rdist + r * k, nn.dist + row[r] * k, (size_t)k * 4);
  }
  vic__rows_links(row, n, k, rids, rdist, n, rho, parent, delta, up, is_max);
  int64_t maxima = 0, bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    int any = 0;
    for (int32_t t = 0; t < k; ++t) any |= ids[i * k + t] != i && denser(rho, ids[i * k + t], i);
    VT_CHECK(is_max[i] == !any, "%s: row %lld: is_max %d but %s denser neighbour", name, (long long)i, is_max[i],
             any ? "a" : "no");
    if (is_max[i]) {
      ++maxima;
      VT_CHECK(parent[i] == -2 && up[i] == i, "%s: maximum %lld: parent %d, up %d", name, (long long)i, parent[i], up[i]);
      continue;
    }
    bad += parent[i] != pk.parent[i] || memcmp(&delta[i], &pk.delta[i], 4) != 0;
    VT_CHECK(up[i] >= 0 && up[i] < n && denser(rho, up[i], i), "%s: row %lld: up %d not denser", name, (long long)i,
             up[i]);
  }
  VT_CHECK(bad == 0, "%s: %lld parents or deltas differ from vic_knn_density_peaks", name, (long long)bad);
  VT_CHECK(maxima > 1 && maxima < n / 2, "%s: %lld local maxima", name, (long long)maxima);

  /* basins (follow up to a maximum), maxima numbered by id, density ranks */
  int32_t *lab = malloc((size_t)n * 4), *num = malloc((size_t)n * 4), *rank = malloc((size_t)n * 4);
  int32_t q = 0;
  for (int64_t i = 0; i < n; ++i) num[i] = is_max[i] ? q++ : -1;
  for (int64_t i = 0; i < n; ++i) {
    int64_t a = i;
    while (up[a] != a) a = up[a];
    lab[i] = num[a];
  }
  for (int64_t i = 0; i < n; ++i) { /* rank: points denser than i */
    int32_t r = 0;
    for (int64_t j = 0; j < n; ++j) r += denser(rho, j, i);
    rank[i] = r;
  }
  uint64_t *pair = NULL, *pos = NULL;
  int64_t count = 0, cap = 0;
  const int64_t half = n / 3;
  VT_CHECK(vic__rows_edges(row, half, k, rids, n, rho, lab, rank, &pair, &pos, &count, &cap) == 0 &&
               vic__rows_edges(row + half, n - half, k, rids + half * k, n, rho, lab, rank, &pair, &pos, &count,
                               &cap) == 0,
           "%s: edges out of memory", name);
  /* the definition, rows in the same order */
  int64_t e = 0, wrong = 0;
  for (int64_t r = 0; r < n; ++r) {
    const int64_t i = row[r];
    for (int32_t t = 0; t < k; ++t) {
      const int64_t j = ids[i * k + t];
      if (!denser(rho, j, i) || lab[j] == lab[i]) continue;
      int first = 1;
      for (int32_t u = 0; u < t; ++u) {
        const int64_t h = ids[i * k + u];
        first &= !(denser(rho, h, i) && lab[h] == lab[j]);
      }
      if (!first) continue;
      const uint64_t lo = (uint64_t)(lab[i] < lab[j] ? lab[i] : lab[j]), hi = (uint64_t)(lab[i] < lab[j] ? lab[j] : lab[i]);
      wrong += e >= count || pair[e] != ((lo << 32) | hi) || pos[e] != (uint64_t)rank[i] * k + (uint64_t)t;
      ++e;
    }
  }
  VT_CHECK(e == count && wrong == 0, "%s: %lld edges, %lld by definition, %lld differ", name, (long long)count,
           (long long)e, (long long)wrong);
  VT_CHECK(count > 0, "%s: no boundary edges (the test meant some)", name);
  printf("%s: n = %lld, k = %d: %lld maxima, %lld boundary edges\n", name, (long long)n, k, (long long)maxima,
         (long long)count);
  free(pair); free(pos); free(lab); free(num); free(rank);
  free(ids); free(row); free(parent); free(up); free(is_max); free(delta); free(rids); free(rdist); free(rho);
  vic_knn_free(&nn);
  vic_peaks_free(&pk);
  vic_ctx_destroy(c);
}

/* vic__peaks_from_links against the steps the device took on the same
 * links before (peaks.cu: the maxima's results scattered into the int32
 * links, every saliency rho * delta, the links widened to int64), on a
 * generated set with denormal and zero deltas, for 1 to 3 threads. */
static void check_from_links(int64_t n, int64_t m, uint64_t seed) {
  int32_t *lp = malloc((size_t)n * 4);
  float *ld = malloc((size_t)n * 4), *rho = malloc((size_t)n * 4);
  int64_t *mpt = malloc((size_t)m * 8), *mpar = malloc((size_t)m * 8);
  float *mdel = malloc((size_t)m * 4), *msal = malloc((size_t)m * 4);
  uint64_t r = seed * 0x9E3779B97F4A7C15ull + 7;
  for (int64_t i = 0; i < n; ++i) {
    lp[i] = (int32_t)(vt_xorshift(&r) % (uint64_t)n);
    const uint64_t kind = vt_xorshift(&r) % 64;
    ld[i] = kind == 0 ? 0.0f : kind == 1 ? 1e-40f : (float)(vt_xorshift(&r) % 100000) * 1e-3f;
    rho[i] = kind == 2 ? 1e-39f : (float)(vt_xorshift(&r) % 100000) * 0.37f;
  }
  /* m distinct maxima in ascending id, links -2 there as the slabs leave them */
  for (int64_t q = 0; q < m; ++q) {
    mpt[q] = q * (n / m) + (int64_t)(vt_xorshift(&r) % (uint64_t)(n / m));
    lp[mpt[q]] = -2;
    mpar[q] = q == 0 ? -1 : (int64_t)(vt_xorshift(&r) % (uint64_t)n);
    mdel[q] = (float)(vt_xorshift(&r) % 1000) * 0.01f;
    msal[q] = rho[mpt[q]] * mdel[q];
  }
  /* the device's way */
  int32_t *dp = malloc((size_t)n * 4);
  float *dd = malloc((size_t)n * 4), *ds = malloc((size_t)n * 4);
  int64_t *want_p = malloc((size_t)n * 8);
  memcpy(dp, lp, (size_t)n * 4);
  memcpy(dd, ld, (size_t)n * 4);
  for (int64_t q = 0; q < m; ++q) { dp[mpt[q]] = (int32_t)mpar[q]; dd[mpt[q]] = mdel[q]; }
  for (int64_t i = 0; i < n; ++i) { ds[i] = rho[i] * dd[i]; want_p[i] = dp[i]; }
  int64_t *gp = malloc((size_t)n * 8);
  float *gd = malloc((size_t)n * 4), *gs = malloc((size_t)n * 4);
  for (int threads = 1; threads <= 3; ++threads) {
    memset(gp, 0x5a, (size_t)n * 8);
    memset(gd, 0x5a, (size_t)n * 4);
    memset(gs, 0x5a, (size_t)n * 4);
    vic__peaks_from_links(n, lp, ld, rho, m, mpt, mpar, mdel, msal, threads, gp, gd, gs);
    VT_CHECK(memcmp(gp, want_p, (size_t)n * 8) == 0 && memcmp(gd, dd, (size_t)n * 4) == 0 &&
                 memcmp(gs, ds, (size_t)n * 4) == 0,
             "peaks from links, n %lld, m %lld, %d threads: parents, deltas or saliencies differ from the device's way",
             (long long)n, (long long)m, threads);
  }
  free(lp); free(ld); free(rho); free(mpt); free(mpar); free(mdel); free(msal);
  free(dp); free(dd); free(ds); free(want_p); free(gp); free(gd); free(gs);
}

int main(void) {
  check_from_links(1000, 10, 1);
  check_from_links(300000, 3000, 2);
  const int64_t n = vt_small() ? 1500 : 3000;
  float *cl = vt_clusters(n, 3, 6, 31);
  vic_data xc = {cl, n, 3, 0, VIC_L2, NULL};
  check("clusters", &xc, 16);
  float *u = vt_uniform(n, 2, 1.f, 32);
  vic_data xu = {u, n, 2, 0, VIC_L2, NULL};
  check("uniform 2-d", &xu, 8);
  free(cl);
  free(u);
  return vt_finish("test_slab_rows");
}
