/* Internals shared by the graph search's files: the uploaded graph, its
 * components and pivots, the pivot-distance kernel (graph_search_entry.cu),
 * the plan of a call and the host side (graph_search_plan.cu), the two
 * search procedures (graph_search_small.cu, graph_search_large.cu) and the
 * index's reusable workspace (graph_search_workspace.cu). */
#ifndef VICK_GRAPH_SEARCH_CUH
#define VICK_GRAPH_SEARCH_CUH

#include "grnnd_common.cuh"
#include "staged_copy.cuh"
#include "staged_pipeline.cuh"
#include "vic_kernels_grnnd.h"

#include <string.h>

#define GS_EMAX 16      /* nearest pivots handed to each search */
#define GS_SLICE 256    /* pivots per block of the pivot kernel (one per thread) */
#define GS_PQT 8        /* queries per block of the pivot kernel: each pivot value loaded serves 8 */
#define GS_PIVOTS 4096  /* default pivot target */
#define GS_PIVOTS_MAX 8192
#define GS_PIVOTS_CONNECTED 512 /* pivots the pivot kernel scans on a connected graph by default */
#define GS_SLICES_MAX (GS_PIVOTS_MAX / GS_SLICE)
#define GS_SEEDS 32          /* random seeds per search (Alg. 1 line 2, Alg. 2 line 1) */
#define GS_SMALL_THREADS 512 /* threads of a small-batch block */
#define GS_MERGE_MAX 2048    /* t0 x min(k, ranking) keys merged per query */

struct gs_small_ws; /* graph_search_workspace.cu */

struct vick_gsearch {
  int device;
  int64_t n;
  int32_t d, degree;
  int64_t components;
  int32_t pivots;   /* P */
  int32_t sms;
  int unique_rows;  /* no row repeats an id: a hop's candidates need no repeat check among themselves */
  int borrowed;     /* x, g and perm belong to another index (GGNN's bottom layer): not freed here */
  float *x;         /* device n x d */
  int32_t *g;       /* device n x degree */
  const int32_t *perm; /* device n or NULL: the caller's id of each node (GGNN's layer-0 order) */
  uint8_t *occl;    /* device n x degree or NULL */
  float *pt;        /* device: the pivots' rows, four dimensions per float4, pivot fastest (coalesced) */
  int32_t *pid;     /* device P: node id of each pivot */
  int32_t *pcomp;   /* device P: component of each pivot */
  int32_t *members; /* device n: nodes grouped by component */
  int32_t *coff;    /* device components + 1: offsets into members */
  size_t bytes;
  /* blocks of the small-batch kernel (ranking 32, 128) resident at once:
   * batches of up to this many blocks find their pivots inside it */
  int wave_blocks[2];
  struct gs_small_ws *ws; /* small-batch calls' reusable resources */
};

/* The pivots as the small-batch kernel reads them when it finds them
 * itself: the query's t0 blocks split them into `parts` ranges (block j
 * takes range j mod parts), and each starts from the nearest of its own. */
struct gs_pivots {
  const float4 *pt4;
  int P, parts;
};

/* What a search kernel reads of the graph. */
struct gs_graph {
  const float *x;
  const int32_t *g;
  const uint8_t *occl;
  const int32_t *pid, *pcomp, *members, *coff;
  int64_t n;
  int d, degree, limit, slices;
  int one_component;
  int unique_rows;
  const int32_t *perm; /* NULL: node ids are the caller's ids */
};

/* The caller's id of node v. */
__device__ __forceinline__ int64_t gs_out_id(const int32_t *perm, uint32_t v) {
  return perm ? (int64_t)__ldg(perm + v) : (int64_t)v;
}

/* Pivot distances of queries q (device, m x d) in the first `slices` slices of GS_SLICE: the
 * nearest GS_EMAX of each slice as keys (distance, pivot index) into
 * near (device, m x slices x GS_EMAX, VICK_KEY_NONE where fewer).  count
 * (device, m, or NULL) is zeroed on the way: the small procedure's blocks
 * count themselves there, and the last one of a query merges. */
int gs_pivot_launch(vick_call *call, const vick_gsearch *g, const float *q, int64_t m, int slices,
                    unsigned long long *near, int *count, cudaStream_t stream);

/* A search index over rows and a graph already on the device, owned by
 * another index that outlives it (GGNN's bottom layer in its layer-0
 * order; dperm: the caller's id of each node, applied to the results);
 * its own arrays kept within env's budget.  pivots: how many to draw (0 =
 * the default, at most GS_PIVOTS_MAX). */
int gs_create_borrowed(vick_call *call, vick_env *env, const float *dx, int64_t n, int32_t d, const int32_t *dgraph,
                       int32_t degree, const int32_t *dperm, int32_t pivots, vick_gsearch **out);

/* The large-batch search of m queries already on the device (dq, m x d)
 * into device results (dids, ddist: m x k) on env's stream, in launches of
 * at most `chunk` queries (the pivot candidates' scratch is sized by it);
 * queued, not waited for.  The same results as vick_gsearch_query of those
 * queries with p (p->procedure must be VICK_GSEARCH_LARGE). */
int gs_query_device(vick_call *call, vick_env *env, const vick_gsearch *g, const float *dq, int64_t m, int k,
                    const vick_gsearch_params *p, int64_t chunk, int64_t *dids, float *ddist);

/* the pivot kernel, for loading it ahead of the first call */
const void *gs_pivot_kernel_ptr(void);

static inline int gs_slices(int32_t pivots) { return (pivots + GS_SLICE - 1) / GS_SLICE; }

/* Load the large procedure's kernels (graph_search_large.cu), so that the
 * first call does not pay for the module's lazy loading. */
int gs_large_load(vick_call *call);

/* Fill g->wave_blocks (graph_search_small.cu: it holds the kernel). */
int gs_small_wave_capacity(vick_call *call, vick_gsearch *g);

/* A search graph over a graph built on the device (grnnd_adopt.cu): takes
 * d_x (n x d rows), d_g (n x degree ids) and d_occl (or NULL), kept
 * buffers (vick_free_kept) which the result owns (freed here on failure),
 * after the work queued on env->stream.  The range and repeat checks run
 * on the device, then gs_finish: the same components and pivots as
 * vick_gsearch_create makes of that graph, within env's budget (the
 * build's call). */
int gs_adopt(vick_call *call, vick_env *env, int64_t n, int32_t d, float *d_x, int32_t *d_g, int32_t degree,
             uint8_t *d_occl, int32_t max_entries, vick_gsearch **out);
/* The rest of an index whose rows and graph are on the device (graph_search_entry.cu):
 * components, pivots, occupancy, workspace; target: pivots wanted (0 = the default).
 * Scratch and the kept arrays within env's budget. */
int gs_finish(vick_call *call, vick_env *env, vick_gsearch *g, int32_t target);

/* ------------------------------------------- small-batch workspace */
/* What one search call runs on: its stream, events, device buffers (the
 * two counters of the small procedure first, zeroed) and, where it has
 * them, pinned host staging for the queries and the results. */
struct gs_io {
  cudaStream_t stream;
  cudaEvent_t ev_start, ev_pivots, ev_stop;
  /* the workspace's streams for hooked large batches in chunks
   * (staged_pipeline.cuh; stream[0] is `stream`); NULL pipe: resources
   * of a call's own, no chunks */
  const vick_pipe *pipe;
  char *dev;          /* counters, then the call's buffers */
  size_t dev_bytes;
  int *count;         /* per query, at least m */
  char *host;         /* pinned: queries, then ids and distances; NULL = copy the caller's arrays */
  char *host_dev;     /* the same pinned bytes as the device addresses them (mapped) */
  size_t host_bytes;
  /* the small kernel's own clock (GS_CLOCK_WORDS, zeroed with the
   * counters), NULL = timed by events */
  unsigned long long *clk;
};

/* Device words of the small kernel's clock: the latest complement of a
 * block's start (so zero is the empty state), the latest end, the blocks
 * done.  The call's last block writes the span (ns) to the pinned host
 * word and zeroes these for the next call. */
#define GS_CLOCK_WORDS 3

/* the most device bytes a call's buffers may keep in the workspace */
#define GS_WS_MAX_BYTES ((size_t)256 << 20)

/* The index's workspace (created with it, buffers grown on demand, never
 * shrunk), for one call at a time: gs_ws_acquire returns 0 while another
 * thread holds it (that call then makes its own resources).  reserve: m
 * per-query counters (zeroed again on the stream after a reallocation or a
 * failed call) and the device and pinned bytes a call needs beyond them. */
int gs_ws_create(vick_call *call, vick_gsearch *g);
void gs_ws_destroy(vick_gsearch *g);
int gs_ws_acquire(const vick_gsearch *g);
int gs_ws_reserve(vick_call *call, const vick_gsearch *g, int64_t m, size_t dev_bytes, size_t host_bytes, gs_io *io);
/* gs_ws_reserve for batches of up to m queries ahead of the first call
 * (nothing done while another thread holds the workspace) */
int gs_ws_prepare(vick_call *call, const vick_gsearch *g, int64_t m, size_t dev_bytes, size_t host_bytes);
/* failed: the counters may not be zero; waits for the stream either way */
void gs_ws_release(const vick_gsearch *g, int failed);

/* The query's nearest pivots (by index, ascending distance, -1 where none)
 * into near[0..GS_EMAX) from its slices' candidates (GS_EMAX ascending keys
 * per slice): a candidate's rank is the sum over the slices of the keys
 * below it, found by binary search (keys are distinct: they carry the
 * pivot index).  sk: shared scratch of slices * GS_EMAX keys; near must
 * hold -1 and be visible to the block before the call. */
__device__ __forceinline__ void gs_pick_near(const unsigned long long *cand, int slices, unsigned long long *sk,
                                             int32_t *near, int tid, int nt) {
  const int nk = slices * GS_EMAX;
  /* L2, not L1: written by the pivot kernel of the same call */
  for (int i = tid; i < nk; i += nt) sk[i] = __ldcg(cand + i);
  __syncthreads();
  for (int i = tid; i < nk; i += nt) {
    const unsigned long long key = sk[i];
    if (key == VICK_KEY_NONE) continue;
    int r = 0;
    for (int s = 0; s < slices && r < GS_EMAX; ++s) r += vick_lower_bound(sk + s * GS_EMAX, 0, GS_EMAX, key);
    if (r < GS_EMAX) near[r] = (int32_t)(uint32_t)key;
  }
  __syncthreads();
}

/* Random seed of a search: a random member of the component of one of the
 * query's nearest pivots (near: pivot indices, ne valid): three in four
 * from the nearest one's, the rest spread over the next ones.  With one
 * component this is a uniformly random node. */
__device__ __forceinline__ int64_t gs_seed(const gs_graph &G, const int32_t *near, int ne, uint64_t r, int s) {
  if (ne < 1 || G.one_component) return (int64_t)(r % (uint64_t)G.n); /* no lookups: a single query feels each */
  int slot = 0;
  if ((s & 3) == 3 && ne > 1) slot = 1 + (s >> 2) % (ne - 1);
  const int c = G.pcomp[near[slot]];
  const int a = G.coff[c], b = G.coff[c + 1];
  return G.members[a + (int)(r % (uint64_t)(b - a))];
}

/* Edge e of node u, if it exists and lies under the occlusion limit; the
 * id and the factor are loaded together, not one after the other. */
__device__ __forceinline__ bool gs_edge_ok(const gs_graph &G, int64_t u, int e, int32_t *id) {
  if (e >= G.degree) return false;
  const bool limited = G.occl && G.limit > 0;
  const int32_t v = __ldg(G.g + u * G.degree + e);
  const int f = limited ? (int)__ldg(G.occl + u * G.degree + e) : 0;
  *id = v;
  return v >= 0 && (!limited || f < G.limit);
}

/* What one call runs: the procedure and the byte layout of its device
 * buffers (after the counters) and of its pinned staging. */
typedef struct {
  int small, fused, RS, t0, kk, ne, parts, L, hops;
  int grouped; /* large: eight lanes per distance (a batch that fills the device) */
  int slices;  /* pivot slices the pivot kernel scans (a prefix of the pivots) */
  size_t qbytes;                                  /* one query in shared memory */
  size_t off_near, off_res, off_rank, dev_bytes;  /* the queries at offset 0 */
  size_t host_res, host_bytes;                    /* pinned: queries, then ids and distances */
  size_t host_clk;                                /* pinned: the small kernel's span in ns */
} gs_plan;

/* Small batches of at most this many blocks read their queries straight
 * from the pinned staging (one row per block over the link costs less than
 * a copy's turn on the stream); larger ones copy them in. */
#define GS_MAPPED_IN_BLOCKS 64

static inline size_t gs_align(size_t b) { return (b + 255) / 256 * 256; }

/* Rows of row_bytes each into pinned staging (room for all of them) and
 * on to device dst in pieces on stream: the host threads fill a piece
 * (fill: rows [row0, row0 + rows) to dst, nonzero to refuse them), then
 * the calling thread starts its copy while they fill the next one, all in
 * one parallel region of call->threads (a region per piece would pay a
 * team's start each; one search launch follows: kernels split by chunks
 * would each pay their own tail).  A refused piece stops the staging
 * (the copies started have ended on return) with VICK_ARGUMENT. */
#define GS_STAGE_PIECE ((size_t)1 << 20)
/* a hooked call's staging (graph_search_plan.cu): pieces that threads
 * claim in turn, and at most this many threads */
#define GS_CLAIM_PIECE ((size_t)256 << 10)
#define GS_HOOKED_TEAM 8
typedef int (*gs_fill_fn)(void *ctx, int thread, void *dst, int64_t row0, int64_t rows);
int gs_stage_rows(vick_call *call, cudaStream_t stream, void *dst, void *pinned, int64_t rows, size_t row_bytes,
                  gs_fill_fn fill, void *ctx);

/* bytes of host src to device dst through the pinned staging (gs_stage_rows) */
int gs_stage_in(vick_call *call, cudaStream_t stream, void *dst, void *pinned, const void *src, size_t bytes);

/* The results of m queries (k ids and k distances a row, in pinned memory)
 * to h->out by the hooked team (graph_search_plan.cu), each thread a share
 * of the rows; square: the distances are Euclidean and go out squared (the
 * hooks take working distances). */
void gs_hooked_out(const vick_call *call, const int64_t *ids, float *dist, int64_t m, int k, int square,
                   const vick_gsearch_hooks *h);

/* The launches of one call's search kernel on io (graph_search_small.cu,
 * graph_search_large.cu); dq: the queries on the device, dids/ddist: the
 * results. */
/* hclk: (device address of) the pinned word the launch writes its span
 * to, timed on io->clk; NULL: timed by the caller's events */
int gs_small_launch(vick_call *call, const vick_gsearch *g, const gs_io *io, const gs_plan *P, const gs_graph &G,
                    const float *dq, int64_t m, int k, int64_t *dids, float *ddist, unsigned long long *hclk);
/* near: the pivot kernel's candidates of these m queries; qbase: the
 * first query's index in the whole batch (its random seeds depend on it,
 * so that a part of a batch searched alone gives the batch's results) */
int gs_large_launch(vick_call *call, cudaStream_t stream, const gs_plan *P, const gs_graph &G, const float *dq,
                    const unsigned long long *near, int64_t m, int64_t qbase, int k, float delta, int64_t *dids,
                    float *ddist);

#endif
