/* The flat search graphs of issue 7 behind index kinds GRNND and TSDG:
 * every row's out-edges in a fixed-width table (-1 after the last), with an
 * occlusion factor per edge for TSDG (edges ordered by it, so a search that
 * visits the edges under a limit reads a prefix of the row).  GRNND builds
 * on the GPU only; TSDG diversifies a kNN graph on the GPU (GNND lists) or
 * on the CPU (NN-Descent or brute-force lists).  Search runs on the GPU
 * (small- or large-batch procedure, chosen from the batch size, the SM
 * count and d) when the index holds a device copy, else a best-first
 * search on the CPU. */
#ifndef VIC_FLAT_INDEX_H
#define VIC_FLAT_INDEX_H

#include "internal.h"

typedef struct {
  int32_t degree;  /* edges per row */
  int32_t *ids;    /* n * degree, -1 after a row's last edge; NULL when built on the device (the edges stay
                      in gpu: vic__flat_edges) */
  uint8_t *occl;   /* n * degree occlusion factors (TSDG), NULL for GRNND */
  void *gpu;       /* device copy (vick_gsearch) or NULL */
} vic_flat_graph;

struct vic_index;

/* Build ix->flat for ix->kind GRNND or TSDG over ix->x (prepared rows);
 * stages and the reason's details go to ix->report. */
vic_status vic__flat_build(vic_ctx *c, struct vic_index *ix, const vic_build_options *o);
/* After loading: a device copy when the context's backend allows one and a
 * device is usable (otherwise searches run on the CPU). */
void vic__flat_attach_gpu(vic_ctx *c, struct vic_index *ix);
/* Whether vic__flat_search_fused takes this search (the GPU's, raw
 * queries of a non-cosine index); it then validates the queries itself
 * (vic_data_validate's words) and checks the results (vic__check_distances'),
 * fused into its copies: the caller skips both. */
int vic__flat_fused_io(const vic_ctx *c, const struct vic_index *ix, const vic_data *q, int32_t k);
vic_status vic__flat_search_fused(vic_ctx *c, const struct vic_index *ix, const vic_data *q,
                                  const vic_search_options *o, int32_t k, int64_t *ids, float *dist, vic_report *rep);
vic_status vic__flat_search(vic_ctx *c, const struct vic_index *ix, const vic_data *q, const vic_search_options *o,
                            int32_t k, int64_t *ids, float *dist, vic_report *rep);
/* Every id in -1..n-1, no edge after a -1, factors ascending along a row. */
int vic__flat_valid(const vic_flat_graph *g, int64_t n);
/* The graph's edges (and TSDG's factors) in host memory: g's own, or a
 * copy from its device graph into *owned (free it) when it has none. */
vic_status vic__flat_edges(vic_ctx *c, const vic_flat_graph *g, int64_t n, int tsdg, const int32_t **ids,
                           const uint8_t **occl, void **owned);
int64_t vic__flat_bytes(const vic_flat_graph *g, int64_t n);
void vic__flat_free(vic_flat_graph *g);

/* For-all kNN lists (self excluded) through a GRNND / TSDG index built
 * over x and a search of every point; true distances. */
vic_status vic__flat_knn(vic_ctx *c, const vic_data *x, const vic_build_options *o, vic_method m, int32_t k,
                         int64_t *ids, float *dist, vic_report *rep);

/* The kNN lists TSDG diversifies (tsdg_input_lists.c): k per row of x
 * (prepared rows), int64 ids and true distances in new buffers; GNND when
 * gpu, else o->method (brute or nndescent) under vic_knn_build's rules.
 * Resets the context's warning count as a public build does. */
vic_status vic__tsdg_input_lists(vic_ctx *c, const vic_data *x, const vic_build_options *o, int gpu, int32_t k,
                                 int64_t **ids, float **dist, double *seconds);

/* CPU TSDG diversification (the GPU kernels' rules, vic_kernels_grnnd.h) of
 * the kNN lists knn (n x k, int32, ascending) of the rows of x (L2 or unit
 * rows): ids / occl of n x degree. */
vic_status vic__tsdg_cpu(vic_ctx *c, const vic_data *x, const int32_t *knn, int32_t k, float alpha, int32_t lambda0,
                         int32_t degree, int32_t *ids, uint8_t *occl);

#endif
