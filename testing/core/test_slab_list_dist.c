/* The links of lists kept on a device read their parent's distance made
 * again from the coordinates (vic__slab_list_dist) instead of the list's
 * own; the peaks equal the in-core run's only if that is the same float.
 * Every entry of the CPU grid's lists (which the GPU grid's equal bit for
 * bit, grid.cu) is made again here and compared bit for bit:
 * uniform and clustered 3-d sets, periodic ones with points outside
 * [0, L) and close pairs across the boundary, a 2-d set, a strided one.
 * Runs in CI. */
#include "slab_plan.h"
#include "test_util.h"

#include <math.h>
#include <string.h>

static void check(const char *what, const vic_data *x, int32_t k) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  vic_build_options o;
  vic_build_options_init(&o);
  o.k = k;
  o.method = VIC_METHOD_GRID;
  vic_knn r;
  VT_OK(c, vic_knn_build(c, x, &o, &r));
  int64_t bad = 0, first = -1, entries = 0;
  for (int64_t i = 0; i < x->n; ++i)
    for (int32_t t = 0; t < r.k; ++t) {
      const int64_t j = r.ids[i * r.k + t];
      if (j < 0) continue;
      const float got = vic__slab_list_dist(x, i, j), want = r.dist[i * r.k + t];
      ++entries;
      if (memcmp(&got, &want, sizeof got) != 0) {
        if (first < 0) first = i * r.k + t;
        ++bad;
      }
    }
  VT_CHECK(bad == 0, "%s: %lld of %lld distances differ from the lists' (first: row %lld, %.9g made again, %.9g listed)",
           what, (long long)bad, (long long)entries, (long long)(first < 0 ? 0 : first / r.k),
           first < 0 ? 0.0 : (double)vic__slab_list_dist(x, first / r.k, r.ids[first]),
           first < 0 ? 0.0 : (double)r.dist[first]);
  printf("%s: %lld distances, %lld differ\n", what, (long long)entries, (long long)bad);
  vic_knn_free(&r);
  vic_ctx_destroy(c);
}

int main(void) {
  const int64_t n = vt_small() ? 3000 : 20000;
  float *u = vt_uniform(n, 3, 1.f, 11);
  vic_data x = {u, n, 3, 0, VIC_L2, NULL};
  check("uniform", &x, 16);
  float *cl = vt_clusters(n, 3, 7, 12);
  vic_data xc = {cl, n, 3, 0, VIC_L2, NULL};
  check("clusters", &xc, 32);
  /* periodic: the points shifted partly out of [0, L) (the data may sit
   * anywhere within a box's span), a few close pairs across the boundary */
  double box[3] = {1, 1, 1};
  float *p = vt_uniform(n, 3, 1.f, 13);
  for (int64_t i = 0; i < n; ++i) { p[3 * i] -= 0.4f; p[3 * i + 2] += 0.25f; }
  for (int64_t i = 1; i + 1 < n && i < 200; i += 7) {
    p[3 * i] = -0.4f + 1e-6f * (float)i;
    p[3 * (i + 1)] = 0.6f - 1e-6f * (float)i;
    p[3 * (i + 1) + 1] = p[3 * i + 1];
    p[3 * (i + 1) + 2] = p[3 * i + 2];
  }
  vic_data xp = {p, n, 3, 0, VIC_L2, box};
  check("periodic", &xp, 16);
  double box_mixed[3] = {1, 0, 1};
  vic_data xm = {p, n, 3, 0, VIC_L2, box_mixed};
  check("periodic in x and z", &xm, 8);
  float *q = vt_uniform(n, 2, 1.f, 14);
  vic_data x2 = {q, n, 2, 0, VIC_L2, NULL};
  check("uniform 2-d", &x2, 12);
  /* strided: the 3-d points' first two columns */
  vic_data xs = {u, n, 2, 3, VIC_L2, NULL};
  check("strided 2-d", &xs, 10);
  free(u);
  free(cl);
  free(p);
  free(q);
  return vt_finish("test_slab_list_dist");
}
