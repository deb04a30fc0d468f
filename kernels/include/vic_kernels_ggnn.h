/* C interface of the GGNN kernels (Groh et al., "GGNN: Graph-based GPU
 * Nearest Neighbor Search"): a hierarchical kNN search graph built on one
 * device, queried with batches, with the for-all kNN lists and d_nn1
 * statistics that fall out of its construction.
 *
 * Host pointers in and out; ids are int64 row numbers of the data set as
 * given (the graph permutes the rows internally and maps back).  Distances
 * are Euclidean (the core converts them for the cosine metric).  Kernels
 * own no policy: every size limit is reported as VICK_ARGUMENT with a
 * message and the core words the user-facing error. */
#ifndef VIC_KERNELS_GGNN_H
#define VIC_KERNELS_GGNN_H

#include "vic_kernels.h"
#include "vic_kernels_grnnd.h" /* the search hooks */

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vick_ggnn vick_ggnn;

typedef struct {
  int32_t k;           /* graph degree, 24..96 (k/2 of it may become inverse links) */
  int32_t segment;     /* s: points per bottom batch and per upper-layer segment */
  int32_t layers;      /* L requested; raised when g*s would not fit one block's selection */
  int32_t refinements; /* merge+sym passes after the construction (Alg. 6) */
  float tau_build;     /* slack of the construction queries (Eq. 2 with the mean d_nn1, Eq. 4) */
  int32_t merge_iterations; /* iteration cap of each merge query on its target layer (its visited
                               ring holds as many points, at most 256); 0 = default */
  int32_t upper_iterations; /* the cap on each layer above the target, where the query only
                               finds its way down; 0 = merge_iterations / 4, at least 8 */
  int32_t cover_components; /* nonzero: label the bottom graph's components and add one
                               entry point per component (the islands remedy) */
  int32_t max_entry_components; /* at most this many component entry points (largest first); 0 = 4096 */
  int32_t deterministic;    /* nonzero: the symmetric links' searches see the kNN part only and their
                               slots are given in a fixed order (not first come, first served by
                               atomics), so a build repeats bit for bit on the same GPU model */
  /* NULL: the rows are copied from x.  Else the upload takes them from
   * rows_in: it writes rows [row0, row0 + rows) packed (d floats a row)
   * to dst, in the upload's pinned staging, and returns nonzero to refuse
   * them (the build then stops before any kernel with VICK_ARGUMENT; the
   * caller words the message).  Called by up to call->threads (>= 1) host
   * threads at once on disjoint rows, thread being the caller's slot
   * 0 .. call->threads - 1. */
  int (*rows_in)(void *ctx, int thread, float *dst, int64_t row0, int64_t rows);
  void *rows_ctx;
} vick_ggnn_params;

void vick_ggnn_params_init(vick_ggnn_params *p);

/* What a built graph is: for reports and tests. */
typedef struct {
  int64_t n;
  int32_t d, k, layers, growth, segment, segment0;
  int64_t upper_points;    /* points in all layers above the bottom */
  int64_t components;      /* weakly connected components of the bottom graph (0 if not labelled) */
  int32_t entry_points;    /* start points of a query: top layer + component representatives */
  double dnn1_mean, dnn1_max;
  double mean_inverse_links; /* inverse links per bottom point after the last sym pass */
  size_t device_bytes;     /* graph + data held on the device */
} vick_ggnn_info;

/* Build the search graph of n rows of x (row-major n x d) on call->device.
 * The graph keeps a device copy of the (permuted) rows. */
int vick_ggnn_build(vick_call *call, const float *x, int64_t n, int32_t d, const vick_ggnn_params *p,
                    vick_ggnn **out);

/* For-all kNN lists (Sec. 6.2.4): the final bottom-layer merge's k nearest
 * of every point, self excluded, ascending; kk <= the graph's k.
 * ids/dist: n*kk, -1/+inf where fewer exist. */
int vick_ggnn_forall(vick_call *call, const vick_ggnn *g, int32_t kk, int64_t *ids, float *dist);

/* The bottom layer as a flat graph (ids: n * k, host): row r holds input
 * row r's edges (its kNN part and inverse links), input row ids, -1 after
 * them, so that another search procedure (graph_search_*.cu) can walk the
 * same graph. */
int vick_ggnn_bottom_graph(vick_call *call, const vick_ggnn *g, int32_t *ids);

/* d_nn1 of every point (n floats, in input row order; may be NULL) and its
 * mean and max (Eq. 3-4) from the final bottom layer. */
int vick_ggnn_dnn1(vick_call *call, const vick_ggnn *g, float *dnn1, double *mean, double *max);

/* k nearest rows of each of m queries (row-major m x d): one warp-sized
 * block per query with a shared-memory cache, slack tau (Eq. 2 with
 * d_nn1+ = max d_nn1), starting from the top layer and the component
 * representatives, searching the bottom layer (Sec. 5.4).  max_visits = 0
 * takes the cache's default iteration limit.  ids/dist: m*k. */
int vick_ggnn_query(vick_call *call, const vick_ggnn *g, const float *q, int64_t m, int32_t k, float tau,
                    int32_t max_visits, int64_t *ids, float *dist);

int vick_ggnn_info_get(const vick_ggnn *g, vick_ggnn_info *info);
void vick_ggnn_free(vick_ggnn *g);

/* What an index keeps for the queries of one graph between calls: a stream,
 * events, device buffers and pinned staging (sized for m queries of k
 * results now, grown by larger calls), the query kernel's configuration,
 * and with small != 0 the bottom layer as a graph-search index (the
 * small-batch procedure of vick_gsearch_query over the same device rows
 * and edges, ids mapped to input rows).  The graph must outlive it. */
typedef struct vick_ggnn_searcher vick_ggnn_searcher;
int vick_ggnn_searcher_create(vick_call *call, const vick_ggnn *g, int64_t m, int32_t k, int small,
                              vick_ggnn_searcher **out);
/* vick_ggnn_query's results on the searcher's resources: the queries go
 * up through pinned staging in pieces (the host fills one while the device
 * copies the last), one launch, the results back, one wait;
 * call->seconds_kernel is the kernel's CUDA-event time.  While another
 * thread's call holds the searcher, the call runs as vick_ggnn_query. */
int vick_ggnn_search(vick_call *call, vick_ggnn_searcher *s, const float *q, int64_t m, int32_t k, float tau,
                     int32_t max_visits, int64_t *ids, float *dist);
/* vick_ggnn_search with the queries given and the results taken by h
 * (vic_kernels_grnnd.h's hooks: every query through h->in, every result,
 * its distance squared, through h->out, or the call fails); the same
 * search, the same results.  h's threads are call->threads. */
int vick_ggnn_search_hooked(vick_call *call, vick_ggnn_searcher *s, int64_t m, int32_t k, float tau,
                            int32_t max_visits, const vick_gsearch_hooks *h);
/* The bottom layer's graph-search index (NULL unless made with small). */
const struct vick_gsearch *vick_ggnn_searcher_graph(const vick_ggnn_searcher *s);
void vick_ggnn_searcher_free(vick_ggnn_searcher *s);

#ifdef __cplusplus
}
#endif
#endif
