// The construction's steps as host launchers, one translation unit each
// (kernels are launched where they are defined).  Each returns the CUDA
// status of its launches, or (those with scratch of their own, taken from
// the call's budget through the common layer) a vick code with the
// message set; the driver in ggnn_build.cu checks and syncs.
#ifndef VIC_GGNN_STEPS_CUH
#define VIC_GGNN_STEPS_CUH

#include "common.cuh"
#include "ggnn_graph.cuh"

// Warps (queries) packed into one block of the search kernels.
#define GGNN_WARPS_PER_BLOCK 4

// Random order of the rows: perm[i] = input row of layer-0 id i; the rows
// are gathered into g->x.  x_in is the unpermuted device copy; cub_tmp
// grows to what the sort needs.
int ggnn_permute(vick_call *call, vick_env *env, vick_ggnn *g, const float *x_in, uint64_t seed, vick_buf *cub_tmp);

// Exact k nearest neighbours inside every segment of layer l (the merge of
// a top layer, Alg. 3 "brute force if l_top = l_m") into out_g/out_d.
cudaError_t ggnn_brute_segments(const vick_ggnn *g, int l, int32_t *out_g, float *out_d);

// select (Sec. 5.1): s_up points of each layer-l segment from its g child
// segments by weighted reservoir sampling (Efraimidis-Spirakis) with d_nn1 weights.
cudaError_t ggnn_select(vick_ggnn *g, int l, uint64_t seed);

// merge(l_top, l_m) for l_top > l_m: hierarchical query (Alg. 4) of every
// layer-l_m point into out_g/out_d.
cudaError_t ggnn_merge(const vick_ggnn *g, int ltop, int lm, float tau, float dnn1, int32_t *out_g, float *out_d);

// sym(l) (Alg. 5 with the midpoint constraint, Sec. 5.2.1): inverse links
// into the last k_sym slots of layer l's rows.  symcnt/sym: n_l and
// n_l*k_sym scratch; *links receives the inverse links placed.
// deterministic != 0: the searches read the kNN part only and slots are
// given by ggnn_sym_place, so the links repeat bit for bit.
int ggnn_sym(vick_call *call, vick_env *env, vick_ggnn *g, int l, int32_t *symcnt, int32_t *sym,
             unsigned long long *links_dev, int deterministic);

// Candidates kept per unanswered link request of the deterministic sym.
#define GGNN_SYM_DET_CANDIDATES 8

// Deterministic slot assignment: req holds, per request r = z * knn + i,
// rcap candidate points (nearest first, -1 after the last).  In round j
// every request still open asks its j-th candidate; each point grants its
// free slots to the asking requests in order of r.  symcnt/sym as sym()
// fills them (counts zero and slots -1 on entry).
int ggnn_sym_place(vick_call *call, vick_env *env, const int32_t *req, int rcap, int64_t n, int knn, int ksym,
                   int32_t *symcnt, int32_t *sym);

// d_nn1 of every bottom point (column 0 of layer 0) into g->dnn1.
cudaError_t ggnn_extract_dnn1(vick_ggnn *g);

// Weakly connected components of the bottom graph; entry points = top
// layer + one representative per component (largest first, at most cap);
// scratch and g->entry within env's budget.
int ggnn_entries(vick_call *call, vick_env *env, vick_ggnn *g, int cover_components, int cap);

#endif
