/* C interface of the sparse search graphs of issue 7, part of
 * vicinity_kernels:
 *  - GRNND (Li et al., GPU relative NN-Descent, Alg. 3-6): random initial
 *    pools, disordered neighbour propagation under the RNG rule, one warp
 *    per vertex, fixed-capacity double-buffered pools, reverse-edge sampling;
 *  - TSDG (Wang, Wang, Zhao, Sec. 3): two-stage diversification of a kNN
 *    graph with an occlusion factor per stored edge;
 *  - graph search on any flat graph (GRNND's, TSDG's, a kNN graph): the
 *    small-batch procedure (Alg. 1, t0 cheap greedy searches per query on
 *    separate blocks, merged) and the large-batch one (Alg. 2, one block
 *    per query with a sorted expansion list, a visited table and the probe
 *    threshold Delta).
 * Kernels own no policy: the caller picks the procedure and parameters.
 *
 * Distances are squared Euclidean on the rows as given (the core hands
 * cosine data over as unit rows).  A flat graph is n rows of `degree`
 * int32 ids, -1 where a row has fewer edges. */
#ifndef VIC_KERNELS_GRNND_H
#define VIC_KERNELS_GRNND_H

#include "vic_kernels.h"
#include "vic_kernels_gnnd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ GRNND */
typedef struct {
  int32_t s;   /* S: random neighbours of the initial pools, 1..R */
  int32_t r;   /* R: pool capacity (maximum out-degree), 8..128 */
  int32_t t1;  /* outer iterations (reverse-edge sampling between them) */
  int32_t t2;  /* inner rounds of disordered propagation per outer iteration */
  float rho;   /* reverse-edge sampling ratio in (0, 1] */
  int32_t final_reverse; /* nonzero: reverse-edge sampling after the last outer iteration too (the paper's
                            Alg. 3 skips it there): the pruned pools get their reverse edges back */
  int32_t pairs;         /* which pairs of a pool a round tests, VICK_GRNND_PAIRS_* */
} vick_grnnd_params;

/* VICK_GRNND_PAIRS_KEPT: RNN-Descent's update (Alg. 2) in a random order
 * (GRNND Sec. 3.3): the pool's candidates are visited in a random order and
 * each is tested against the neighbours kept so far, by the RNG rule of
 * Eq. 2 (the farther of a conflicting pair is redirected to the closer's
 * pool and leaves v's); a round is a full RNG pruning of every pool.
 * VICK_GRNND_PAIRS_RANDOM: each candidate against one random other
 * candidate per round (fewer distances a round, many more rounds). */
enum { VICK_GRNND_PAIRS_KEPT = 0, VICK_GRNND_PAIRS_RANDOM = 1 };

/* Defaults: S = 20, R = 96 and rho = 0.6 (RNN-Descent's S and R, Ono and
 * Matsui; GRNND Sec. 4.4's rho); pairs KEPT with T1 = 3, T2 = 4 and the
 * final reverse-edge pass.  RNN-Descent's T1 4, T2 15 with KEPT pairs
 * over-prunes (the graph thins towards a pure RNG and search recall stops
 * short); fewer rounds with a reverse pass after each outer iteration,
 * the last included, give back the reverse edges pruning took; RANDOM
 * pairs need many more rounds for less recall. */
void vick_grnnd_params_init(vick_grnnd_params *p);

/* GRNND graph of n rows (host, n x d) into ids/dist (host, n * p->r;
 * dist may be NULL): each row's edges ascending by (distance, id), no
 * self, no repeats, -1 / +inf after its last edge.  *mean_degree (may be
 * NULL) gets the mean out-degree. */
int vick_grnnd_build(vick_call *call, const float *rows, int64_t n, int32_t d, const vick_grnnd_params *p,
                     int32_t *ids, float *dist, double *mean_degree);

/* ------------------------------------------------------------------- TSDG */
typedef struct {
  float alpha;      /* stage-1 relaxation (Eq. 2), > 1; default 1.2 */
  int32_t lambda0;  /* edges with an occlusion factor above it are cut; default 10 */
  int32_t degree;   /* stored edges per row at most (the output width), 8..256; default 64 */
} vick_tsdg_params;

void vick_tsdg_params_init(vick_tsdg_params *p);

/* Diversify the kNN graph knn (host, n x k int32 ids ascending by distance,
 * -1 padded, k <= 128): stage 1 keeps an edge unless a kept nearer edge
 * occludes it by Eq. 2 with alpha; reverse edges of the kept ones are
 * appended; stage 2 counts for each edge the edges that occlude it by
 * Eq. 1 (its occlusion factor), sorts by (factor, distance) and keeps the
 * first p->degree with factor <= lambda0.  ids: n * p->degree, occl: the
 * factor of each stored edge (255 after the last).  *mean_degree may be
 * NULL. */
int vick_tsdg_build(vick_call *call, const float *rows, int64_t n, int32_t d, const int32_t *knn, int32_t k,
                    const vick_tsdg_params *p, int32_t *ids, uint8_t *occl, double *mean_degree);

/* ------------------------------------------------------------ graph search */
typedef struct vick_gsearch vick_gsearch;

/* Upload rows and a flat graph (occl may be NULL: every edge has factor 0;
 * each row's edges first, -1 after them, TSDG's by ascending factor) and
 * find the weakly connected components of the graph.  About max_entries
 * pivots (0 = 4096 or one node in eight of a smaller graph; at most 8192)
 * are drawn: random nodes of each component in proportion to its size, at
 * least one in each, largest components first.  Every search starts from
 * the query's nearest pivots and random nodes of their components, so it
 * reaches every island of a disconnected graph, also where a component
 * joins several islands by a few edges. */
int vick_gsearch_create(vick_call *call, const float *rows, int64_t n, int32_t d, const int32_t *graph,
                        int32_t degree, const uint8_t *occl, int32_t max_entries, vick_gsearch **out);

enum { VICK_GSEARCH_SMALL = 1, VICK_GSEARCH_LARGE = 2 };

typedef struct {
  int procedure;           /* VICK_GSEARCH_SMALL or VICK_GSEARCH_LARGE */
  int32_t occlusion_limit; /* visit edges with factor < limit; 0 = all */
  int32_t searches;        /* small: t0 greedy searches per query (1..64, t0 * min(k, list) <= 2048) */
  int32_t hops;            /* T: hop limit (small) / expansions limit (large); 0 = default */
  int32_t list;            /* large: sorted list length (>= k, <= 256); small: per-search ranking
                              (32 or 128, >= k); 0 = default */
  float delta;             /* large: stop when the next expansion is farther than (1 + delta) times
                              the k-th distance found */
  int32_t entries;         /* nearest pivots used, 1..16 (0 = 16): the large procedure starts from all of
                              them, search j of the small one from the (j mod entries)-th */
  int32_t pivots;          /* pivots the pivot kernel compares each query with (a prefix, rounded up to 256;
                              0 = 512 on a connected graph, all on a disconnected one); the small procedure's
                              blocks that find their own pivots always split all of them */
} vick_gsearch_params;

void vick_gsearch_params_init(vick_gsearch_params *p);

/* k nearest rows of m queries (host, m x d) into ids/dist (m * k, int64
 * ids, squared L2, ascending, -1 / +inf where fewer were found).
 *
 * Calls run on a workspace that the graph keeps (a stream, events, device
 * buffers and pinned staging, made once and grown on demand, never
 * shrunk; a batch whose buffers would pass 256 MiB runs on resources of
 * its own): one copy in (through the staging in pieces, the host filling
 * one while the device copies the last), one launch of each kernel, one
 * copy out and one wait.  On a graph of one weakly connected component, when the batch's
 * t0 blocks per query all fit on the device at once, each block finds the
 * nearest pivots of its 1/t0 share of them inside the search kernel and
 * starts from those (no pivot kernel, no exchange between blocks);
 * otherwise a pivot kernel runs first and every search starts from the
 * query's nearest pivots overall (so that on a disconnected graph they
 * start on the query's island).  The graph may be searched
 * from several threads at once: one call at a time uses the workspace (a
 * lock), the others make their own resources.
 * call->seconds_kernel: CUDA-event time of the kernels (launch gaps
 * included, copies not); the stages name "pivots" and "search", or
 * "search (pivots inside)", or for a hooked large batch in chunks "pivots
 * and search (chunks under the copies)", the span from the first chunk's
 * kernels to the last one's; seconds_transfer is not measured (0). */
int vick_gsearch_query(vick_call *call, const vick_gsearch *g, const float *q, int64_t m, int32_t k,
                       const vick_gsearch_params *p, int64_t *ids, float *dist);

/* Host work a caller fuses into the copies of a graph search, so that the
 * queries and the results are each gone over once on the host.  `in`
 * writes queries [row0, row0 + rows) packed (d floats a row) to dst, in
 * the call's pinned staging, and returns nonzero to refuse them: the call
 * then stops (a large batch may have started searching its first rows;
 * no result reaches `out`) and fails with VICK_ARGUMENT (the caller words
 * the message).  `out` takes the results of queries [row0, row0 +
 * rows): k ids a query (-1: none) and k working distances (squared L2,
 * or negated dot products) from ids and dist.  Both are called by up to
 * call->threads (>= 1) host threads at once on disjoint rows; thread is
 * the caller's slot, 0 .. call->threads - 1, one thread a slot at a time. */
typedef struct {
  int (*in)(void *ctx, int thread, float *dst, int64_t row0, int64_t rows);
  void (*out)(void *ctx, int thread, const int64_t *ids, const float *dist, int64_t row0, int64_t rows);
  void *ctx;
} vick_gsearch_hooks;

/* vick_gsearch_query with the queries given and the results taken by h
 * (every query goes through h->in, every result through h->out, or the
 * call fails); the same search, the same results. */
int vick_gsearch_query_hooked(vick_call *call, const vick_gsearch *g, int64_t m, int32_t k,
                              const vick_gsearch_params *p, const vick_gsearch_hooks *h);

/* Size the workspace for batches of up to m queries of k results and load
 * every search kernel, so that the first call of that size allocates and
 * loads nothing (the index's build or load calls it). */
int vick_gsearch_reserve(vick_call *call, const vick_gsearch *g, int64_t m, int32_t k);

typedef struct {
  int64_t n;
  int32_t d, degree;
  int64_t components;    /* weakly connected components of the graph */
  int32_t entry_points;  /* pivots drawn */
  int32_t sms;           /* multiprocessors of the device */
  int32_t small_wave_blocks; /* small-batch blocks (k <= 32) resident at once: batches of up to this many
                                (queries x t0) find their pivots inside the search kernel on a connected graph */
  size_t device_bytes;
} vick_gsearch_info;

int vick_gsearch_info_get(const vick_gsearch *g, vick_gsearch_info *info);

/* -------------------------------------------- search graphs built in place */
/* The GRNND graph of vick_grnnd_build made into a search graph on the
 * device (as vick_gsearch_create would make it from that graph): the rows
 * are uploaded once (beside the first clears), the graph, its components,
 * its checks and its pivots stay on the device; nothing of size n x R
 * crosses to the host.  *mean_degree may be NULL. */
int vick_grnnd_index(vick_call *call, const float *rows, int64_t n, int32_t d, const vick_grnnd_params *p,
                     int32_t max_entries, vick_gsearch **out, double *mean_degree);

/* TSDG on the device from the rows alone: GNND's k-NN lists (gp, k <=
 * gp->k_build, k <= 128) and both diversification stages run on the
 * uploaded rows, and the result becomes a search graph as in
 * vick_grnnd_index.  The same graph as vick_gnnd_build followed by
 * vick_tsdg_build on its lists, when both run on one device. */
int vick_tsdg_index(vick_call *call, const float *rows, int64_t n, int32_t d, const vick_gnnd_params *gp, int32_t k,
                    const vick_tsdg_params *p, int32_t max_entries, vick_gsearch **out, double *mean_degree);

/* A search graph's edges (n x degree ids, -1 after a row's last) and, where
 * it has them, occlusion factors (occl may be NULL) into host memory. */
int vick_gsearch_graph(vick_call *call, const vick_gsearch *g, int32_t *ids, uint8_t *occl);

#ifdef VICK_GS_TRACE
/* Development builds only (CMake -DVIC_GS_TRACE=ON): the global timer (ns)
 * at the stages of the small-batch kernel for its first GS_TRACE_BLOCKS
 * blocks in the last call (0 where a block did not reach a stage), then
 * cleared.  Stages: 0 start, 1 the block's pivots found (batches that
 * find them inside the kernel), 2 entry points set, 3 seeds merged, 4 hops
 * done, 5 ranking written and counted, 6 merge done (the query's last
 * block only); 7 and 8: clock64() at stages 0 and 4 (the multiprocessor's
 * clock rate over the search is their difference over the timer's). */
#define GS_TRACE_BLOCKS 64
#define GS_TRACE_STAGES 9
int vick_gsearch_trace(unsigned long long *out /* GS_TRACE_BLOCKS * GS_TRACE_STAGES */);
#endif
void vick_gsearch_free(vick_gsearch *g);

#ifdef __cplusplus
}
#endif
#endif
