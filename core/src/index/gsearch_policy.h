/* The core's choices for one graph search on the GPU: the procedure (small
 * or large batch) and its parameters, for GRNND and TSDG indexes
 * (grnnd_tsdg_index.c) and for the bottom layer of a GGNN index
 * (cuda_ggnn_index.c, small batches only). */
#ifndef VIC_GSEARCH_POLICY_H
#define VIC_GSEARCH_POLICY_H

/* TSDG's occlusion limit for small batches (Wang et al. Sec. 5: edges with
 * a factor below 10), also the CPU search's. */
#define VIC_TSDG_LIMIT_SMALL 10

#ifdef VIC_WITH_CUDA
#include "internal.h"
#include "vic_kernels_grnnd.h"

typedef enum { VIC_GS_GRNND, VIC_GS_TSDG, VIC_GS_GGNN } vic_gs_graph;

/* Batches of up to this many queries of up to this k find their device
 * buffers and pinned staging ready after an index's build or load (larger
 * ones grow them on their first call). */
#define VIC_GS_RESERVE_QUERIES 10000
#define VIC_GS_RESERVE_K 32

/* The parameters of a search of m queries for k neighbours; returns 1 for
 * the small-batch procedure; *threshold: the batch size at which the large
 * one takes over. */
int vic__gsearch_params(vic_gs_graph graph, const vick_gsearch_info *info, int64_t m, int32_t k,
                        const vic_search_options *o, vick_gsearch_params *p, double *threshold);
#endif

#endif
