/* The search graph of a graph index, from an NN-Descent kNN graph.
 *
 * A kNN graph alone searches poorly: edges point only to close points, so
 * hubs collect in-edges and outliers are unreachable.  Each point therefore
 * gets its K nearest (forward) edges, then up to K of the points that list
 * it (reverse edges, nearest first), then LONG_LINKS random points, which
 * let a greedy walk leave a region that its entry point left it in.  A
 * routing tree supplies each query with entry points near it, which is what
 * makes disconnected data (separate clusters) searchable. */
#include "index_internal.h"
#include "l2_kernel.h"
#include "nndescent.h"

#include <string.h>

enum { LONG_LINKS = 2 };

typedef struct {
  int32_t id;
  float w;
} edge_t;

static int cmp_edge(const void *a, const void *b) {
  const edge_t *x = a, *y = b;
  if (x->w != y->w) return x->w < y->w ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

/* Reverse lists: rev_off (n+1) and rev (n*K at most), each list sorted by
 * (distance, id) so that the nearest reverse neighbours are kept. */
static vic_status reverse_lists(vic_ctx *c, int32_t n, int32_t K, const int32_t *ids, const float *w, int64_t **off_out,
                                edge_t **rev_out) {
  int64_t *off = vic__calloc(c, (size_t)n + 1, sizeof *off, "reverse edges");
  edge_t *rev = off ? vic__malloc(c, (size_t)n * K * sizeof *rev, "reverse edges") : NULL;
  int64_t *fill = rev ? vic__malloc(c, (size_t)n * sizeof *fill, "reverse edges") : NULL;
  if (!fill) { free(off); free(rev); return VIC_E_NOMEM; }
  for (int64_t e = 0; e < (int64_t)n * K; ++e) off[ids[e] + 1]++;
  for (int32_t i = 0; i < n; ++i) off[i + 1] += off[i];
  memcpy(fill, off, (size_t)n * sizeof *fill);
  for (int32_t i = 0; i < n; ++i) /* sequential: the order within a list is then fixed */
    for (int32_t t = 0; t < K; ++t) {
      int32_t j = ids[(size_t)i * K + t];
      edge_t e = {i, w[(size_t)i * K + t]};
      rev[fill[j]++] = e;
    }
  free(fill);
#pragma omp parallel for schedule(dynamic, 256) num_threads(vic__threads(c))
  for (int32_t j = 0; j < n; ++j) qsort(rev + off[j], (size_t)(off[j + 1] - off[j]), sizeof *rev, cmp_edge);
  *off_out = off;
  *rev_out = rev;
  return VIC_OK;
}

static int contains(const int32_t *list, int64_t len, int32_t id) {
  for (int64_t t = 0; t < len; ++t)
    if (list[t] == id) return 1;
  return 0;
}

vic_status vic__search_graph_build(vic_ctx *c, vic_index *ix, const vic_build_options *o) {
  const vic_data *x = &ix->x;
  vic_search_graph *g = &ix->graph;
  const int32_t n = (int32_t)x->n;
  const int32_t K = vic__nndescent_k_build(x, o, o->k);
  const int32_t links = (int64_t)LONG_LINKS < (int64_t)n - 1 - K ? LONG_LINKS : 0;
  const int64_t max_degree = 2 * (int64_t)K + links;
  g->k_build = K;

  double t0 = vic__now();
  int32_t *ids = vic__malloc(c, (size_t)n * K * sizeof *ids, "NN-Descent lists");
  float *w = ids ? vic__malloc(c, (size_t)n * K * sizeof *w, "NN-Descent lists") : NULL;
  if (!w) { free(ids); return VIC_E_NOMEM; }
  vic_nnd_stats stats;
  vic_status s = vic__nndescent_graph(c, x, o, K, ids, w, &stats);
  if (s != VIC_OK) { free(ids); free(w); return s; }
  vic__report_stage(&ix->report, "nndescent", vic__now() - t0);

  double t1 = vic__now();
  int64_t *roff = NULL;
  edge_t *rev = NULL;
  s = reverse_lists(c, n, K, ids, w, &roff, &rev);
  free(w);
  int32_t *adj = NULL;
  int64_t *deg = NULL;
  if (s == VIC_OK) {
    adj = vic__malloc(c, (size_t)n * max_degree * sizeof *adj, "search graph");
    deg = adj ? vic__malloc(c, (size_t)n * sizeof *deg, "search graph") : NULL;
    if (!deg) s = VIC_E_NOMEM;
  }
  if (s != VIC_OK) { free(ids); free(roff); free(rev); free(adj); free(deg); return s; }

  /* per point: forward, then the nearest reverse edges not already there,
   * then random long links; written into fixed-width rows, compacted below */
#pragma omp parallel for schedule(dynamic, 256) num_threads(vic__threads(c))
  for (int32_t i = 0; i < n; ++i) {
    int32_t *row = adj + (size_t)i * max_degree;
    int64_t m = 0;
    for (int32_t t = 0; t < K; ++t) row[m++] = ids[(size_t)i * K + t];
    int32_t added = 0;
    for (int64_t e = roff[i]; e < roff[i + 1] && added < K; ++e)
      if (!contains(row, m, rev[e].id)) { row[m++] = rev[e].id; added++; }
    vic_rng r = vic__rng(c->opt.seed ^ 0x11e5ull, (uint64_t)i);
    for (int32_t l = 0, tries = 0; l < links && tries < 8 * links; ++tries) {
      int32_t j = (int32_t)vic__rng_below(&r, (uint64_t)n);
      if (j == i || contains(row, m, j)) continue;
      row[m++] = j;
      l++;
    }
    deg[i] = m;
  }
  free(ids);
  free(roff);
  free(rev);

  g->offsets = vic__malloc(c, ((size_t)n + 1) * sizeof *g->offsets, "search graph");
  if (!g->offsets) { free(adj); free(deg); return VIC_E_NOMEM; }
  g->offsets[0] = 0;
  for (int32_t i = 0; i < n; ++i) g->offsets[i + 1] = g->offsets[i] + deg[i];
  for (int32_t i = 0; i < n; ++i) /* in place: row i's start never passes its old start */
    memmove(adj + g->offsets[i], adj + (size_t)i * max_degree, (size_t)deg[i] * sizeof *adj);
  free(deg);
  int32_t *shrunk = realloc(adj, (size_t)(g->offsets[n] ? g->offsets[n] : 1) * sizeof *adj);
  g->edges = shrunk ? shrunk : adj;

  int32_t leaf = K > 16 ? K : 16;
  s = vic__rp_forest_build(c, x, 1, leaf, c->opt.seed ^ 0x5ea6c4ull, 1, &g->tree);
  if (s != VIC_OK) return s;
  vic__report_stage(&ix->report, "search graph", vic__now() - t1);
  vic__log(c, VIC_LOG_INFO, "search graph: %lld edges (%.1f per point), NN-Descent K = %d in %d rounds",
           (long long)g->offsets[n], (double)g->offsets[n] / n, (int)K, (int)stats.iterations);
  return VIC_OK;
}

void vic__search_graph_free(vic_search_graph *g) {
  free(g->offsets);
  free(g->edges);
  vic__rp_forest_free(&g->tree, 1);
  memset(g, 0, sizeof *g);
}

int64_t vic__search_graph_bytes(const vic_search_graph *g, int64_t n) {
  if (!g->offsets) return 0;
  return (n + 1) * (int64_t)sizeof(int64_t) + g->offsets[n] * (int64_t)sizeof(int32_t) +
         n * (int64_t)sizeof(int32_t) * 2 + (int64_t)g->tree.n_nodes * (int64_t)sizeof(vic_rp_node);
}
