/* Best-first search of a graph index (the greedy search of NN-Descent's
 * paper, with GGNN's slack stopping rule).
 *
 * Per query: entry points are the points of the routing-tree leaf the query
 * falls into plus a few random points.  A min-heap of candidates is expanded
 * nearest first; each unvisited neighbour is measured once (a visited set
 * stamped per query) and kept when it could matter.  The search stops when
 * the nearest unexpanded candidate's working distance exceeds (1 + tau)
 * times the current k-th best one, or after max_visits distances.  The
 * working distance is the squared Euclidean (chordal, for cosine) distance,
 * which is also what GGNN's kernels compare, so tau means the same on both
 * backends; the default 0.5 is a slack of 1.22 on true distances.  tau = 0
 * is plain greedy search; a larger tau explores further for higher recall. */
#include "index_internal.h"
#include "l2_kernel.h"
#include "topk.h"

#include <string.h>

enum { AUTO_ENTRY_POINTS = 4 };

/* Candidates start with this capacity and grow; most searches need less. */
enum { FIRST_CAPACITY = 1024 };

typedef struct { /* thread scratch */
  uint16_t *stamp; /* n: stamp of the query that last visited the point */
  uint16_t now;    /* 16 bits halve the memory per thread; a wrap clears them */
  float *cw;       /* candidate min-heap, capacity cap */
  int32_t *ci;
  int64_t cap, size;
  float *qbuf;     /* normalised query (cosine) */
  int nomem;
} search_scratch;

static int grow(search_scratch *s) {
  int64_t cap = 2 * s->cap;
  float *cw = realloc(s->cw, (size_t)cap * sizeof *cw);
  if (cw) s->cw = cw;
  int32_t *ci = cw ? realloc(s->ci, (size_t)cap * sizeof *ci) : NULL;
  if (ci) s->ci = ci;
  if (!cw || !ci) { s->nomem = 1; return 0; }
  s->cap = cap;
  return 1;
}

static void cand_push(search_scratch *s, float w, int32_t id) {
  if (s->size == s->cap && !grow(s)) return; /* reported after the search */
  int64_t p = s->size++;
  while (p > 0) {
    int64_t par = (p - 1) / 2;
    if (!(w < s->cw[par] || (w == s->cw[par] && id < s->ci[par]))) break;
    s->cw[p] = s->cw[par]; s->ci[p] = s->ci[par];
    p = par;
  }
  s->cw[p] = w; s->ci[p] = id;
}

static void cand_pop(search_scratch *s, float *w, int32_t *id) {
  *w = s->cw[0]; *id = s->ci[0];
  float lw = s->cw[--s->size];
  int32_t li = s->ci[s->size];
  int64_t p = 0;
  for (;;) {
    int64_t l = 2 * p + 1, r = l + 1, m;
    if (l >= s->size) break;
    m = (r < s->size && (s->cw[r] < s->cw[l] || (s->cw[r] == s->cw[l] && s->ci[r] < s->ci[l]))) ? r : l;
    if (!(s->cw[m] < lw || (s->cw[m] == lw && s->ci[m] < li))) break;
    s->cw[p] = s->cw[m]; s->ci[p] = s->ci[m];
    p = m;
  }
  s->cw[p] = lw; s->ci[p] = li;
}

static inline int first_visit(search_scratch *s, int32_t id) {
  if (s->stamp[id] == s->now) return 0;
  s->stamp[id] = s->now;
  return 1;
}

/* One query: fills the k-heap h; returns the distances computed. */
static int64_t search_one(const vic_index *ix, const float *q, float slack, int64_t budget, int32_t n_random,
                          uint64_t seed, int64_t qi, search_scratch *s, vic_topk *h) {
  const vic_data *x = &ix->x;
  const vic_search_graph *g = &ix->graph;
  const int32_t n = (int32_t)x->n;
  int64_t visits = 0;
  if (++s->now == 0) { /* the stamp wrapped: forget every old visit */
    memset(s->stamp, 0, (size_t)n * sizeof *s->stamp);
    s->now = 1;
  }
  s->size = 0;

  int32_t lb, le;
  vic__rp_tree_route(&g->tree, x, q, &lb, &le);
  vic_rng r = vic__rng(seed, 0x5ea4c4ull + (uint64_t)qi);
  const int64_t entries = (int64_t)(le - lb) + n_random; /* 64-bit: n_random may be close to INT32_MAX */
  for (int64_t e = 0; e < entries && visits < budget; ++e) {
    int32_t id = e < le - lb ? g->tree.order[lb + (int32_t)e] : (int32_t)vic__rng_below(&r, (uint64_t)n);
    if (!first_visit(s, id)) continue;
    float w = vic__approx_dist(x, q, vic__row(x, id));
    visits++;
    vic__topk_push(h, w, id);
    cand_push(s, w, id);
  }
  while (s->size > 0) {
    float w;
    int32_t cur;
    cand_pop(s, &w, &cur);
    if (w > slack * vic__topk_bound(h)) break;
    for (int64_t e = g->offsets[cur]; e < g->offsets[cur + 1]; ++e) {
      int32_t j = g->edges[e];
      if (!first_visit(s, j)) continue;
      if (visits >= budget) return visits;
      float wj = vic__approx_dist(x, q, vic__row(x, j));
      visits++;
      if (wj <= slack * vic__topk_bound(h)) {
        vic__topk_push(h, wj, j);
        cand_push(s, wj, j);
      }
    }
  }
  return visits;
}

vic_status vic__graph_search(vic_ctx *c, const vic_index *ix, const vic_data *q, const vic_search_options *o,
                             int32_t k, int64_t *ids, float *dist, int64_t *visits_out) {
  const vic_data *x = &ix->x;
  const int32_t n = (int32_t)x->n, d = x->d;
  const float slack = 1.f + o->tau;
  const int64_t budget = o->max_visits > 0 ? o->max_visits : n;
  const int32_t n_random = o->entry_points > 0 ? o->entry_points : AUTO_ENTRY_POINTS;
  const int normalise = x->metric == VIC_COSINE;
  atomic_int failed = 0, cancelled = 0;
  int64_t visits = 0;

#pragma omp parallel num_threads(vic__threads(c)) reduction(+ : visits)
  {
    search_scratch s;
    memset(&s, 0, sizeof s);
    s.cap = FIRST_CAPACITY;
    s.stamp = calloc((size_t)n, sizeof *s.stamp);
    s.cw = malloc((size_t)s.cap * sizeof *s.cw);
    s.ci = malloc((size_t)s.cap * sizeof *s.ci);
    s.qbuf = malloc((size_t)d * sizeof *s.qbuf);
    if (!s.stamp || !s.cw || !s.ci || !s.qbuf) atomic_store(&failed, 1);
#pragma omp for schedule(dynamic, 16)
    for (int64_t i = 0; i < q->n; ++i) {
      if (atomic_load(&failed) || atomic_load(&cancelled)) continue;
      if ((i & 255) == 0 && vic__cancelled(c)) { atomic_store(&cancelled, 1); continue; }
      const float *qr = vic__row(q, i);
      if (normalise) { /* the index holds unit rows; so must the query */
        vic__unit_row(qr, d, s.qbuf);
        qr = s.qbuf;
      }
      vic_topk h;
      vic__topk_init(&h, dist + i * k, ids + i * k, k);
      visits += search_one(ix, qr, slack, budget, n_random, c->opt.seed, i, &s, &h);
      vic__topk_finish(&h);
      for (int32_t t = 0; t < h.size; ++t) h.d[t] = vic__true_dist(x->metric, h.d[t]);
    }
    if (s.nomem) atomic_store(&failed, 1);
    free(s.stamp);
    free(s.cw);
    free(s.ci);
    free(s.qbuf);
  }
  if (atomic_load(&failed)) return vic__fail(c, VIC_E_NOMEM, "out of memory for graph search scratch (%lld points)", (long long)n);
  if (atomic_load(&cancelled) || vic__cancelled(c)) return vic__fail(c, VIC_E_CANCELLED, "cancelled during graph search");
  if (visits_out) *visits_out = visits;
  return vic__progress(c, "search", 1.0);
}
