/* NN-Descent on the CPU (Dong, Charikar & Li, WWW 2011), organised the way
 * PyNNDescent runs it:
 *
 *  1. start: the leaves of a few random projection trees are joined (every
 *     pair inside a leaf offered to both points), then empty slots get
 *     random points;
 *  2. every round: each point's list entries are split into "new" (not yet
 *     joined) and "old"; a candidate list of at most C = 2*rho*K of each,
 *     forward and reverse neighbours together, is sampled by a random
 *     priority; sampled new entries become old;
 *  3. local join: for every point v, every pair of its new candidates and
 *     every (new, old) pair is compared, and each result is offered to both
 *     ends; a round that changes fewer than delta*n*K entries ends the build.
 *
 * Parallel and deterministic: a round first *generates* offers into
 * per-thread buckets, split by which thread owns the receiving point, with
 * the lists frozen; then every thread *applies* the offers to the points it
 * owns.  A list keeps the best K distinct (distance, id) pairs offered,
 * which does not depend on the order of the offers, and the sampling
 * priorities are hashes of (seed, round, pair), so the result is the same
 * for every thread count. */
#include "nndescent.h"
#include "l2_kernel.h"
#include "nnd_heap.h"
#include "random_projection.h"
#include "rp_forest.h"

#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Points per generate/apply block: bounds the offer buffers (a point emits
 * at most ~3*C^2 offers) and sets how often progress and cancel are polled. */
enum { JOIN_BLOCK = 4096, MIN_BUCKET = 1024 };
/* Dimensions the projection trees split in when the rows have more than
 * twice as many.  On MNIST (784-d) 64 dimensions cut the tree time by about
 * 3x for about 10% more distance evaluations in the rounds; 32 lose more. */
enum { TREE_DIMS = 64 };

typedef struct {
  int32_t dst, src;
  float d;
} nnd_offer;

typedef struct {
  nnd_offer *o;
  size_t size, cap;
} nnd_bucket;

typedef struct { /* sampled candidate lists: at most C per point */
  int32_t *id;
  uint32_t *prio;
  int32_t *size;
} nnd_cands;

typedef struct {
  vic_ctx *c;
  const vic_data *x;
  int32_t n, K, C, P; /* points, list length, candidate capacity, thread partitions */
  nnd_heaps h;
  nnd_bucket *buckets; /* P*P, [producer * P + owner] */
  nnd_cands newc, oldc;
  atomic_int nomem;    /* set by a producer whose bucket could not grow */
} nnd_state;

static inline int32_t owner_of(const nnd_state *s, int32_t i) { return (int32_t)(((int64_t)i * s->P) / s->n); }

static inline float dist_ij(const nnd_state *s, int32_t a, int32_t b) {
  return vic__approx_dist(s->x, vic__row(s->x, a), vic__row(s->x, b));
}

static inline int thread_id(void) {
#ifdef _OPENMP
  return omp_get_thread_num();
#else
  return 0;
#endif
}

/* ------------------------------------------------------------ offers */
static void emit(nnd_state *s, int g, int32_t dst, int32_t src, float d) {
  nnd_bucket *b = &s->buckets[(size_t)g * s->P + owner_of(s, dst)];
  if (b->size == b->cap) {
    size_t cap = b->cap ? 2 * b->cap : MIN_BUCKET;
    nnd_offer *o = realloc(b->o, cap * sizeof *o);
    if (!o) { atomic_store(&s->nomem, 1); return; } /* read after the parallel region */
    b->o = o;
    b->cap = cap;
  }
  nnd_offer *o = &b->o[b->size++];
  o->dst = dst; o->src = src; o->d = d;
}

/* 1 when a and b already list each other: their distance could change
 * nothing, and scanning 2K ids is far cheaper than one distance in high d.
 * Leaves of different trees and the candidates of neighbouring points
 * overlap a lot, so this skips a good share of the distance evaluations. */
static inline int mutual(const nnd_state *s, int32_t a, int32_t b) {
  const int32_t *la = s->h.id + (size_t)a * s->K, *lb = s->h.id + (size_t)b * s->K;
  int found = 0;
  for (int32_t t = 0; t < s->K; ++t) found |= la[t] == b;
  if (!found) return 0;
  found = 0;
  for (int32_t t = 0; t < s->K; ++t) found |= lb[t] == a;
  return found;
}

/* Offer the pair to each end whose list it could enter; the lists are
 * frozen during generation, so the roots read here are stable. */
static inline void offer_pair(nnd_state *s, int g, int32_t a, int32_t b, float d) {
  if (d <= s->h.dist[(size_t)a * s->K]) emit(s, g, a, b, d);
  if (d <= s->h.dist[(size_t)b * s->K]) emit(s, g, b, a, d);
}

/* Every thread applies the offers addressed to the points it owns. */
static void apply_offers(nnd_state *s) {
  const int32_t P = s->P;
#pragma omp parallel for schedule(static, 1) num_threads(P)
  for (int32_t own = 0; own < P; ++own)
    for (int32_t g = 0; g < P; ++g) {
      nnd_bucket *b = &s->buckets[(size_t)g * P + own];
      for (size_t t = 0; t < b->size; ++t) nnd__push(&s->h, b->o[t].dst, b->o[t].d, b->o[t].src, NND_FRESH);
      b->size = 0;
    }
}

/* ------------------------------------------------------- initialisation */
static void join_leaves(nnd_state *s, const vic_rp_tree *t, int64_t *ndist) {
  int64_t count = 0;
#pragma omp parallel num_threads(s->P) reduction(+ : count)
  {
    int g = thread_id();
#pragma omp for schedule(dynamic, 16)
    for (int32_t l = 0; l < t->n_leaves; ++l) {
      if (vic__cancelled(s->c)) continue;
      for (int32_t u = t->leaf_start[l]; u < t->leaf_start[l + 1]; ++u)
        for (int32_t v = u + 1; v < t->leaf_start[l + 1]; ++v) {
          int32_t a = t->order[u], b = t->order[v];
          if (mutual(s, a, b)) continue;
          offer_pair(s, g, a, b, dist_ij(s, a, b));
          count++;
        }
    }
  }
  *ndist += count;
  apply_offers(s);
}

/* Slots no leaf filled get random points (seeded per point), then, if
 * chance leaves gaps in a tiny set, the remaining points in order. */
static void fill_random(nnd_state *s, uint64_t seed, int64_t *ndist) {
  int64_t count = 0;
  const int32_t n = s->n, K = s->K;
#pragma omp parallel for schedule(dynamic, 256) num_threads(s->P) reduction(+ : count)
  for (int32_t i = 0; i < n; ++i) {
    const int32_t *root = s->h.id + (size_t)i * K;
    if (root[0] >= 0) continue; /* the root is -1 while any slot is empty */
    vic_rng g = vic__rng(seed, 0xf111ull + (uint64_t)i);
    for (int32_t tries = 0; tries < 4 * K && root[0] < 0; ++tries) {
      int32_t j = (int32_t)vic__rng_below(&g, (uint64_t)n);
      if (j == i) continue;
      nnd__push(&s->h, i, dist_ij(s, i, j), j, NND_NEW);
      count++;
    }
    for (int32_t j = 0; j < n && root[0] < 0; ++j) {
      if (j == i) continue;
      nnd__push(&s->h, i, dist_ij(s, i, j), j, NND_NEW);
      count++;
    }
  }
  *ndist += count;
}

/* --------------------------------------------------------- candidates */
static inline uint32_t pair_priority(uint64_t key, int32_t a, int32_t b) {
  uint64_t lo = (uint64_t)(a < b ? a : b), hi = (uint64_t)(a < b ? b : a);
  vic_rng r = {key ^ (lo << 32 | hi)};
  return (uint32_t)(vic__rng_next(&r) >> 32);
}

static inline int cand_worse(uint32_t pa, int32_t ia, uint32_t pb, int32_t ib) {
  return pa > pb || (pa == pb && ia > ib);
}

/* Keep the C lowest-priority distinct ids offered to point i. */
static void cand_push(const nnd_cands *cl, int32_t C, int32_t i, int32_t j, uint32_t p) {
  int32_t *id = cl->id + (size_t)i * C;
  uint32_t *pr = cl->prio + (size_t)i * C;
  int32_t n = cl->size[i];
  if (n == C && !cand_worse(pr[0], id[0], p, j)) return;
  for (int32_t t = 0; t < n; ++t)
    if (id[t] == j) return;
  int32_t pos;
  if (n < C) { /* sift up from the end */
    pos = cl->size[i]++;
    while (pos > 0) {
      int32_t par = (pos - 1) / 2;
      if (!cand_worse(p, j, pr[par], id[par])) break;
      pr[pos] = pr[par]; id[pos] = id[par];
      pos = par;
    }
  } else { /* replace the root, sift down */
    pos = 0;
    for (;;) {
      int32_t l = 2 * pos + 1, r = l + 1, m;
      if (l >= C) break;
      m = (r < C && cand_worse(pr[r], id[r], pr[l], id[l])) ? r : l;
      if (!cand_worse(pr[m], id[m], p, j)) break;
      pr[pos] = pr[m]; id[pos] = id[m];
      pos = m;
    }
  }
  pr[pos] = p; id[pos] = j;
}

/* Sample new and old candidates, forward and reverse, for every point.
 * Each thread scans all lists but writes only the points it owns. */
static void build_candidates(nnd_state *s, uint64_t key) {
  const int32_t n = s->n, K = s->K, C = s->C;
  memset(s->newc.size, 0, (size_t)n * sizeof(int32_t));
  memset(s->oldc.size, 0, (size_t)n * sizeof(int32_t));
#pragma omp parallel num_threads(s->P)
  {
    int32_t g = (int32_t)thread_id();
    for (int32_t i = 0; i < n; ++i) {
      if (g == 0 && (i & 4095) == 0 && vic__cancelled(s->c)) break;
      int own_i = owner_of(s, i) == g;
      for (int32_t t = 0; t < K; ++t) {
        int32_t j = s->h.id[(size_t)i * K + t];
        if (j < 0) continue;
        const nnd_cands *cl = s->h.state[(size_t)i * K + t] == NND_OLD ? &s->oldc : &s->newc;
        uint32_t p = pair_priority(key, i, j);
        if (own_i) cand_push(cl, C, i, j, p);
        if (owner_of(s, j) == g) cand_push(cl, C, j, i, p);
      }
    }
  }
  /* entries that were sampled into their point's new list are joined now */
#pragma omp parallel for schedule(static, 1024) num_threads(s->P)
  for (int32_t i = 0; i < n; ++i) {
    const int32_t *nc = s->newc.id + (size_t)i * C;
    int32_t nn = s->newc.size[i];
    for (int32_t t = 0; t < K; ++t) {
      size_t e = (size_t)i * K + t;
      if (s->h.state[e] != NND_NEW) continue;
      for (int32_t u = 0; u < nn; ++u)
        if (nc[u] == s->h.id[e]) { s->h.state[e] = NND_OLD; break; }
    }
  }
}

/* --------------------------------------------------------- local join */
static int64_t local_join(nnd_state *s, int32_t v0, int32_t v1) {
  const int32_t C = s->C;
  int64_t count = 0;
#pragma omp parallel num_threads(s->P) reduction(+ : count)
  {
    int g = thread_id();
#pragma omp for schedule(dynamic, 32)
    for (int32_t v = v0; v < v1; ++v) {
      if (vic__cancelled(s->c)) continue;
      const int32_t *nv = s->newc.id + (size_t)v * C, *ov = s->oldc.id + (size_t)v * C;
      int32_t nn = s->newc.size[v], no = s->oldc.size[v];
      for (int32_t a = 0; a < nn; ++a) {
        int32_t p = nv[a];
        for (int32_t b = a + 1; b < nn; ++b) {
          if (mutual(s, p, nv[b])) continue;
          offer_pair(s, g, p, nv[b], dist_ij(s, p, nv[b]));
          count++;
        }
        for (int32_t b = 0; b < no; ++b) {
          if (ov[b] == p || mutual(s, p, ov[b])) continue;
          offer_pair(s, g, p, ov[b], dist_ij(s, p, ov[b]));
          count++;
        }
      }
    }
  }
  return count;
}

/* Entries inserted this round: counted (the round's update count, which is
 * order independent) and turned into ordinary new entries. */
static int64_t settle_fresh(nnd_state *s) {
  int64_t fresh = 0;
  const size_t total = (size_t)s->n * s->K;
#pragma omp parallel for schedule(static) num_threads(s->P) reduction(+ : fresh)
  for (size_t e = 0; e < total; ++e)
    if (s->h.state[e] == NND_FRESH) { s->h.state[e] = NND_NEW; fresh++; }
  return fresh;
}

/* ------------------------------------------------------------- driver */
int32_t vic__nndescent_k_build(const vic_data *x, const vic_build_options *o, int32_t k) {
  int32_t K = o->nndescent.k_build > 0 ? o->nndescent.k_build : (k > 20 ? k : 20);
  if (K < k) K = k;
  if ((int64_t)K > x->n - 1) K = (int32_t)(x->n - 1);
  return K;
}

vic_status vic__nndescent_check_options(vic_ctx *c, const vic_build_options *o) {
  if (!(o->nndescent.rho > 0.f && o->nndescent.rho <= 1.f))
    return vic__fail(c, VIC_E_ARGUMENT, "nndescent.rho must be in (0, 1] (got %g)", (double)o->nndescent.rho);
  if (!(o->nndescent.delta >= 0.f) || o->nndescent.max_iterations < 0)
    return vic__fail(c, VIC_E_ARGUMENT, "nndescent.delta must be >= 0 and max_iterations >= 0 (got %g and %d)",
                     (double)o->nndescent.delta, (int)o->nndescent.max_iterations);
  return VIC_OK;
}

static int32_t candidates_per_point(const vic_build_options *o, int32_t K) {
  int32_t C = (int32_t)lroundf(2.f * o->nndescent.rho * (float)K);
  return C < 2 ? 2 : C;
}

int vic__nndescent_costlier_than_exact(const vic_data *x, const vic_build_options *o, int32_t K) {
  const double C = (double)candidates_per_point(o, K);
  return C * C > (double)x->n;
}

/* The exact K nearest other points in NN-Descent's output form: int32 ids
 * and the working distances its own kernel gives. */
static vic_status exact_lists(vic_ctx *c, const vic_data *x, int32_t K, int32_t *ids, float *work) {
  const size_t len = (size_t)x->n * (size_t)K;
  int64_t *bi = vic__malloc(c, len * sizeof *bi, "exact lists in place of NN-Descent");
  float *bd = bi ? vic__malloc(c, len * sizeof *bd, "exact lists in place of NN-Descent") : NULL;
  vic_status s = bd ? vic__cpu_brute_knn(c, x, NULL, K, bi, bd) : VIC_E_NOMEM;
  if (s == VIC_OK) {
#pragma omp parallel for schedule(static, 256) num_threads(vic__threads(c))
    for (int64_t i = 0; i < x->n; ++i)
      for (int32_t t = 0; t < K; ++t) {
        const int64_t j = bi[i * K + t];
        ids[i * K + t] = (int32_t)j;
        work[i * K + t] = vic__approx_dist(x, vic__row(x, i), vic__row(x, j));
      }
  }
  free(bi);
  free(bd);
  return s;
}

static void free_state(nnd_state *s) {
  free(s->h.id); free(s->h.dist); free(s->h.state);
  free(s->newc.id); free(s->newc.prio); free(s->newc.size);
  free(s->oldc.id); free(s->oldc.prio); free(s->oldc.size);
  if (s->buckets)
    for (int32_t b = 0; b < s->P * s->P; ++b) free(s->buckets[b].o);
  free(s->buckets);
}

static vic_status alloc_state(vic_ctx *c, nnd_state *s) {
  size_t nk = (size_t)s->n * s->K, nc = (size_t)s->n * s->C;
  s->h.K = s->K;
  if (!(s->h.id = vic__malloc(c, nk * sizeof(int32_t), "NN-Descent lists")) ||
      !(s->h.dist = vic__malloc(c, nk * sizeof(float), "NN-Descent distances")) ||
      !(s->h.state = vic__malloc(c, nk, "NN-Descent flags")) ||
      !(s->newc.id = vic__malloc(c, nc * sizeof(int32_t), "NN-Descent candidates")) ||
      !(s->newc.prio = vic__malloc(c, nc * sizeof(uint32_t), "NN-Descent candidates")) ||
      !(s->newc.size = vic__malloc(c, (size_t)s->n * sizeof(int32_t), "NN-Descent candidates")) ||
      !(s->oldc.id = vic__malloc(c, nc * sizeof(int32_t), "NN-Descent candidates")) ||
      !(s->oldc.prio = vic__malloc(c, nc * sizeof(uint32_t), "NN-Descent candidates")) ||
      !(s->oldc.size = vic__malloc(c, (size_t)s->n * sizeof(int32_t), "NN-Descent candidates")) ||
      !(s->buckets = vic__calloc(c, (size_t)s->P * s->P, sizeof(nnd_bucket), "NN-Descent buffers")))
    return VIC_E_NOMEM;
  for (size_t e = 0; e < nk; ++e) { s->h.id[e] = -1; s->h.dist[e] = INFINITY; s->h.state[e] = NND_NEW; }
  return VIC_OK;
}

/* Forest size as PyNNDescent chooses it (5 + n^(1/4), at most 32 here), and
 * leaves about as large as the lists, so one leaf join fills a list. */
static int32_t forest_trees(int64_t n) {
  int32_t t = 5 + (int32_t)lround(pow((double)n, 0.25));
  return t < 32 ? t : 32;
}

/* A phase ends the build when an offer buffer could not grow or a cancel
 * was requested. */
static vic_status check_stop(nnd_state *s, const char *what) {
  if (atomic_load(&s->nomem)) return vic__fail(s->c, VIC_E_NOMEM, "out of memory for NN-Descent offers (%s)", what);
  if (vic__cancelled(s->c)) return vic__fail(s->c, VIC_E_CANCELLED, "cancelled during NN-Descent (%s)", what);
  return VIC_OK;
}

static vic_status initialise(nnd_state *s, uint64_t seed, int64_t *ndist) {
  int32_t n_trees = forest_trees(s->n);
  int32_t leaf = s->K > 10 ? s->K : 10;
  vic_rp_tree trees[32];
  double t0 = vic__now();
  /* high-dimensional rows: trees on a projection (see random_projection.h) */
  vic_data tx = *s->x;
  float *projected = NULL;
  vic_status st = VIC_OK;
  if (s->x->d > 2 * TREE_DIMS && !s->x->box) st = vic__random_projection(s->c, s->x, TREE_DIMS, seed, &projected, &tx);
  if (st == VIC_OK) st = vic__rp_forest_build(s->c, &tx, n_trees, leaf, seed, 0, trees);
  free(projected);
  if (st != VIC_OK) return st;
  vic__log(s->c, VIC_LOG_DEBUG, "NN-Descent start: %d projection trees in %.3f s", (int)n_trees, vic__now() - t0);
  for (int32_t t = 0; t < n_trees && st == VIC_OK; ++t) {
    join_leaves(s, &trees[t], ndist);
    if ((st = check_stop(s, "projection tree leaves")) == VIC_OK)
      st = vic__progress(s->c, "nndescent", 0.1 * (t + 1) / n_trees);
  }
  vic__rp_forest_free(trees, n_trees);
  if (st != VIC_OK) return st;
  fill_random(s, seed, ndist);
  settle_fresh(s);
  return check_stop(s, "random start");
}

vic_status vic__nndescent_graph(vic_ctx *c, const vic_data *x, const vic_build_options *o, int32_t K, int32_t *ids,
                                float *work, vic_nnd_stats *stats) {
  if (x->n >= INT32_MAX) return vic__fail(c, VIC_E_UNSUPPORTED, "NN-Descent handles up to 2^31 - 2 points (got %lld)", (long long)x->n);
  if (x->metric == VIC_INNER_PRODUCT) return vic__fail(c, VIC_E_UNSUPPORTED, "NN-Descent needs a metric; the inner product is not one");
  if (K < 1 || (int64_t)K > x->n - 1) return vic__fail(c, VIC_E_ARGUMENT, "NN-Descent list length %d must be in [1, n-1]", (int)K);
  vic_status cs = vic__nndescent_check_options(c, o);
  if (cs != VIC_OK) return cs;
  if (vic__nndescent_costlier_than_exact(x, o, K)) {
    vic__log(c, VIC_LOG_WARNING,
             "NN-Descent with list length %d on %lld points would cost more than exact brute force; the lists are "
             "computed exactly instead",
             (int)K, (long long)x->n);
    if (stats) memset(stats, 0, sizeof *stats);
    return exact_lists(c, x, K, ids, work);
  }

  nnd_state s;
  memset(&s, 0, sizeof s);
  s.c = c;
  s.x = x;
  s.n = (int32_t)x->n;
  s.K = K;
  s.C = candidates_per_point(o, K);
  s.P = vic__threads(c);
  if (s.P > s.n) s.P = s.n;
  if (s.P < 1) s.P = 1;
  vic_nnd_stats st0;
  memset(&st0, 0, sizeof st0);

  double t0 = vic__now();
  vic_status st = alloc_state(c, &s);
  if (st == VIC_OK) st = initialise(&s, c->opt.seed, &st0.distances);
  st0.seconds_init = vic__now() - t0;
  vic__log(c, VIC_LOG_DEBUG, "NN-Descent start: %lld distances in %.3f s", (long long)st0.distances, st0.seconds_init);

  const int64_t stop = (int64_t)((double)o->nndescent.delta * (double)s.n * (double)K);
  for (int32_t it = 0; st == VIC_OK && it < o->nndescent.max_iterations; ++it) {
    build_candidates(&s, vic__rng(c->opt.seed, 0xca9d00ull + (uint64_t)it).s);
    if ((st = check_stop(&s, "candidates")) != VIC_OK) break;
    for (int32_t v0 = 0; v0 < s.n && st == VIC_OK; v0 += JOIN_BLOCK) {
      int32_t v1 = v0 + JOIN_BLOCK < s.n ? v0 + JOIN_BLOCK : s.n;
      st0.distances += local_join(&s, v0, v1);
      if ((st = check_stop(&s, "local join")) != VIC_OK) break;
      apply_offers(&s);
      double f = 0.1 + 0.9 * (it + (double)v1 / s.n) / o->nndescent.max_iterations;
      st = vic__progress(c, "nndescent", f);
    }
    if (st != VIC_OK) break;
    st0.iterations = it + 1;
    st0.last_updates = settle_fresh(&s);
    vic__log(c, VIC_LOG_DEBUG, "NN-Descent round %d: %lld updates", (int)it + 1, (long long)st0.last_updates);
    if (st0.last_updates <= stop) break;
  }
  st0.seconds_descent = vic__now() - t0 - st0.seconds_init;

  if (st == VIC_OK) {
#pragma omp parallel for schedule(static, 1024) num_threads(s.P)
    for (int32_t i = 0; i < s.n; ++i) nnd__sort(&s.h, i);
    memcpy(ids, s.h.id, (size_t)s.n * K * sizeof(int32_t));
    memcpy(work, s.h.dist, (size_t)s.n * K * sizeof(float));
    if (stats) *stats = st0;
  }
  free_state(&s);
  return st;
}

vic_status vic__cpu_nndescent_knn(vic_ctx *c, const vic_data *x, const vic_build_options *o, int32_t k, int64_t *ids,
                                  float *dist, vic_report *r) {
  int32_t K = vic__nndescent_k_build(x, o, k);
  int32_t *gi = vic__malloc(c, (size_t)x->n * K * sizeof(int32_t), "NN-Descent result");
  float *gd = gi ? vic__malloc(c, (size_t)x->n * K * sizeof(float), "NN-Descent result") : NULL;
  vic_nnd_stats stats;
  vic_status st = gd ? vic__nndescent_graph(c, x, o, K, gi, gd, &stats) : VIC_E_NOMEM;
  if (st == VIC_OK) {
    for (int64_t i = 0; i < x->n; ++i)
      for (int32_t t = 0; t < k; ++t) {
        ids[i * k + t] = gi[i * K + t];
        dist[i * k + t] = vic__true_dist(x->metric, gd[i * K + t]);
      }
    vic__log(c, VIC_LOG_INFO, "NN-Descent: K = %d, start %.3f s, %d rounds %.3f s, %lld distances (%.3f per pair of points)",
             (int)K, stats.seconds_init, (int)stats.iterations, stats.seconds_descent, (long long)stats.distances,
             (double)stats.distances * 2.0 / ((double)x->n * (double)(x->n - 1)));
    if (r) {
      vic__report_stage(r, "nndescent init", stats.seconds_init);
      vic__report_stage(r, "nndescent rounds", stats.seconds_descent);
    }
  }
  free(gi);
  free(gd);
  return st;
}

/* NN-Descent's options checked; exact brute force where NN-Descent would
 * cost more (a large k_build on few points). */
vic_status vic__nndescent_plan(vic_ctx *c, const vic_data *x, const vic_build_options *o, int32_t k,
                               vic_report *rep, vic_method *m) {
  vic_status s = vic__nndescent_check_options(c, o);
  if (s != VIC_OK) return s;
  const int32_t K = vic__nndescent_k_build(x, o, k);
  if (vic__nndescent_costlier_than_exact(x, o, K)) {
    vic__log(c, VIC_LOG_WARNING,
             "NN-Descent with k_build = %d on n = %lld points would cost more than exact brute force; using brute "
             "force",
             (int)K, (long long)x->n);
    vic__report_reason(rep, "NN-Descent with k_build = %d costs more than brute force on n = %lld: exact brute force",
                       (int)K, (long long)x->n);
    *m = VIC_METHOD_BRUTE;
  }
  return VIC_OK;
}
