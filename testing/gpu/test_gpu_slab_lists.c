/* A slab's lists kept on its device between the passes of density +
 * peaks out of core (issue 16): vick_slab_density keeps the list ids on
 * the device and hands their distances to the host; the links from the
 * kept lists give each parent's place in its row, whose distance the host
 * looks up.  They must equal the links and first edges of the same slab
 * whose lists are made again (vick_slab_links, vick_slab_edges: the
 * out-of-core peaks' fallback) and a host reference from the lists --
 * also with the values held by id, and after the lists were parked on the
 * host and put back.  Densities with many ties (the id breaks them), a
 * halo around the own rows, ids in the whole set shuffled.  Exit 77
 * without a device. */
#include "test_util.h"
#include "nbody_models.h"
#include "vic_kernels_density.h"
#include "vic_kernels_peaks.h"

#include <math.h>
#include <string.h>

static int denser(const float *rho, int64_t j, int64_t i) { return rho[j] > rho[i] || (rho[j] == rho[i] && j < i); }

int main(int argc, char **argv) {
  const int small = vt_gpu_start(argc, argv);
  const int64_t n_all = small ? 30000 : 300000, n_own = n_all / 2;
  const int32_t k = 24;
  const int64_t n_max = 37;
  /* the slab: all points, the own rows first, their ids in the set shuffled */
  float *pts = vt_uniform(n_all, 3, 1.f, 41), *xs = malloc((size_t)n_all * 3 * sizeof *xs);
  uint32_t *key = malloc((size_t)n_all * sizeof *key);
  float *rho_all = malloc((size_t)n_all * sizeof *rho_all), *rho_x = malloc((size_t)n_all * sizeof *rho_x);
  int32_t *lab_all = malloc((size_t)n_all * sizeof *lab_all), *lab_x = malloc((size_t)n_all * sizeof *lab_x);
  int32_t *rank = malloc((size_t)n_own * sizeof *rank);
  int32_t *ids = malloc((size_t)n_own * k * sizeof *ids);
  float *dist = malloc((size_t)n_own * k * sizeof *dist), *kd = malloc((size_t)n_own * k * sizeof *kd);
  float *rk = malloc((size_t)n_own * sizeof *rk), *knn = malloc((size_t)n_own * sizeof *knn);
  int32_t *pa[3], *up[3], *mx[3], *col = malloc((size_t)n_own * sizeof *col);
  float *de[3];
  for (int v = 0; v < 3; ++v) {
    pa[v] = malloc((size_t)n_own * sizeof *pa[v]);
    up[v] = malloc((size_t)n_own * sizeof *up[v]);
    mx[v] = malloc((size_t)n_own * sizeof *mx[v]);
    de[v] = malloc((size_t)n_own * sizeof *de[v]);
  }
  if (!pts || !xs || !key || !rho_all || !rho_x || !lab_all || !lab_x || !rank || !ids || !dist || !kd || !rk || !knn ||
      !col || !pa[2] || !up[2] || !mx[2] || !de[2]) {
    fprintf(stderr, "out of host memory\n");
    return 1;
  }
  uint64_t s = 7;
  for (int64_t i = 0; i < n_all; ++i) key[i] = (uint32_t)i;
  for (int64_t i = n_all - 1; i > 0; --i) { /* Fisher-Yates */
    const int64_t r = (int64_t)(vt_unif(&s) * (double)(i + 1));
    const uint32_t t = key[i];
    key[i] = key[r];
    key[r] = t;
  }
  for (int64_t r = 0; r < n_all; ++r) memcpy(xs + 3 * r, pts + 3 * (int64_t)key[r], 3 * sizeof *xs);
  /* densities with ties (a few hundred values), basins, density ranks (some rows answered elsewhere: -1) */
  for (int64_t i = 0; i < n_all; ++i) {
    rho_all[i] = (float)(1 + (int64_t)(vt_unif(&s) * 300));
    lab_all[i] = (int32_t)(vt_unif(&s) * (double)n_max);
  }
  for (int64_t r = 0; r < n_all; ++r) {
    rho_x[r] = rho_all[key[r]];
    lab_x[r] = lab_all[key[r]];
  }
  for (int64_t r = 0; r < n_own; ++r) rank[r] = r % 97 == 5 ? -1 : (int32_t)((r * 7919) % n_all);

  const vick_points x = {xs, n_all, 3, 3, VICK_METRIC_L2, NULL};
  const vick_density_params p = {3, 1.0, 4.0 / 3.0 * NB_PI, 8.0 / NB_PI, 0.5};
  vick_call call;
  memset(&call, 0, sizeof call);
  vick_slab_lists *kept = NULL;
  int64_t bad = -1;
  VT_CHECK(vick_slab_density(&call, &x, k, n_own, key, n_all, NULL, &p, knn, NULL, NULL, rk, ids, dist, NULL, &bad,
                             &kept, kd) == VICK_OK && bad < 0 && kept,
           "slab density with kept lists: %s (bad row %lld)", call.message, (long long)bad);
  if (!kept) return vt_finish("test_gpu_slab_lists");
  VT_CHECK(memcmp(kd, dist, (size_t)n_own * k * sizeof *kd) == 0, "the kept lists' distances differ from the lists'");

  /* the host reference from the lists */
  int64_t maxima = 0;
  for (int64_t r = 0; r < n_own; ++r) {
    const int64_t i = key[r];
    int32_t p0 = -2, g = -1;
    float d0 = 0.f;
    for (int32_t t = 0; t < k; ++t) {
      const int64_t j = ids[r * k + t];
      if (j < 0 || j == i || !denser(rho_all, j, i)) continue;
      if (p0 == -2) { p0 = (int32_t)j; d0 = dist[r * k + t]; }
      if (g < 0 || denser(rho_all, j, g)) g = (int32_t)j;
    }
    pa[0][r] = p0;
    de[0][r] = d0;
    up[0][r] = g >= 0 ? g : (int32_t)i;
    mx[0][r] = p0 == -2;
    maxima += p0 == -2;
  }
  VT_CHECK(maxima > 0 && maxima < n_own, "%lld local maxima among %lld rows", (long long)maxima, (long long)n_own);

  /* made again, then from the kept lists (the deltas from the host's distances), then with the values held */
  memset(&call, 0, sizeof call);
  VT_CHECK(vick_slab_links(&call, &x, k, n_own, key, n_all, rho_x, NULL, pa[1], de[1], up[1], mx[1]) == VICK_OK,
           "links made again: %s", call.message);
  vick_by_id *held = NULL;
  memset(&call, 0, sizeof call);
  VT_CHECK(vick_by_id_make(&call, n_all, rho_all, lab_all, &held) == VICK_OK, "values by id: %s", call.message);
  for (int h = 0; h < 2; ++h) {
    memset(&call, 0, sizeof call);
    memset(col, 0xff, (size_t)n_own * sizeof *col);
    VT_CHECK(vick_slab_links_kept(&call, kept, n_all, h ? NULL : rho_all, h ? held : NULL, pa[2], col, up[2], mx[2]) ==
                 VICK_OK,
             "links from kept lists (held %d): %s", h, call.message);
    int64_t bad_col = 0;
    for (int64_t r = 0; r < n_own; ++r) {
      bad_col += col[r] < -1 || col[r] >= k || (col[r] >= 0) != (pa[2][r] != -2) ||
                 (col[r] >= 0 && ids[r * k + col[r]] != pa[2][r]);
      de[2][r] = col[r] < 0 ? 0.f : kd[r * k + col[r]];
    }
    VT_CHECK(bad_col == 0, "held %d: %lld rows whose parent's place is not the parent's", h, (long long)bad_col);
    for (int v = 1; v < 3; ++v) {
      int64_t dp = 0, dd = 0, du = 0, dm = 0;
      for (int64_t r = 0; r < n_own; ++r) {
        dp += pa[v][r] != pa[0][r];
        dd += memcmp(&de[v][r], &de[0][r], sizeof(float)) != 0;
        du += up[v][r] != up[0][r];
        dm += mx[v][r] != mx[0][r];
      }
      VT_CHECK(dp == 0 && dd == 0 && du == 0 && dm == 0,
               "%s (held %d) against the host's: %lld parents, %lld deltas, %lld basin pointers, %lld maxima flags differ",
               v == 1 ? "links made again" : "links from kept lists", h, (long long)dp, (long long)dd, (long long)du,
               (long long)dm);
    }
  }

  /* parked on the host: the kept-list calls refuse them until they are back */
  memset(&call, 0, sizeof call);
  VT_CHECK(vick_slab_lists_park(&call, kept) == VICK_OK && vick_slab_lists_parked(kept), "park: %s", call.message);
  memset(&call, 0, sizeof call);
  VT_CHECK(vick_slab_links_kept(&call, kept, n_all, rho_all, NULL, pa[2], col, up[2], mx[2]) == VICK_ARGUMENT &&
               strstr(call.message, "parked"),
           "links from parked lists: not refused (%s)", call.message);
  memset(&call, 0, sizeof call);
  VT_CHECK(vick_slab_lists_park(&call, kept) == VICK_ARGUMENT, "parked twice");
  memset(&call, 0, sizeof call);
  VT_CHECK(vick_slab_lists_unpark(&call, kept) == VICK_OK && !vick_slab_lists_parked(kept), "unpark: %s", call.message);
  memset(&call, 0, sizeof call);
  VT_CHECK(vick_slab_lists_unpark(&call, kept) == VICK_ARGUMENT, "taken back twice");

  /* first edges: made again, from the put-back lists, from them with the values held */
  uint64_t *pair[3] = {NULL, NULL, NULL}, *pos[3] = {NULL, NULL, NULL};
  int64_t cnt[3] = {-1, -1, -1};
  memset(&call, 0, sizeof call);
  VT_CHECK(vick_slab_edges(&call, &x, k, n_own, key, n_all, rho_x, lab_x, NULL, rank, n_max, &pair[0], &pos[0],
                           &cnt[0]) == VICK_OK,
           "edges made again: %s", call.message);
  memset(&call, 0, sizeof call);
  VT_CHECK(vick_slab_edges_kept(&call, kept, n_all, rho_all, lab_all, NULL, rank, n_max, &pair[1], &pos[1],
                                &cnt[1]) == VICK_OK,
           "edges from kept lists: %s", call.message);
  memset(&call, 0, sizeof call);
  VT_CHECK(vick_slab_edges_kept(&call, kept, n_all, NULL, NULL, held, rank, n_max, &pair[2], &pos[2], &cnt[2]) ==
               VICK_OK,
           "edges from kept lists, values held: %s", call.message);
  VT_CHECK(cnt[0] > 0, "no first edges (%lld)", (long long)cnt[0]);
  for (int v = 1; v < 3; ++v)
    VT_CHECK(cnt[v] == cnt[0] && (cnt[0] <= 0 || (memcmp(pair[v], pair[0], (size_t)cnt[0] * 8) == 0 &&
                                                   memcmp(pos[v], pos[0], (size_t)cnt[0] * 8) == 0)),
             "first edges %d: %lld against %lld made again, or their pairs / places differ", v, (long long)cnt[v],
             (long long)cnt[0]);
  printf("slab of %lld own rows in %lld points, k = %d: %lld local maxima, %lld first edges; kept, parked and put "
         "back, made again: the same links and edges\n",
         (long long)n_own, (long long)n_all, (int)k, (long long)maxima, (long long)cnt[0]);

  for (int v = 0; v < 3; ++v) {
    free(pair[v]);
    free(pos[v]);
    free(pa[v]);
    free(up[v]);
    free(mx[v]);
    free(de[v]);
  }
  vick_by_id_free(held);
  vick_slab_lists_free(kept);
  free(pts); free(xs); free(key); free(rho_all); free(rho_x); free(lab_all); free(lab_x); free(rank);
  free(ids); free(dist); free(kd); free(rk); free(knn); free(col);
  return vt_finish("test_gpu_slab_lists");
}
