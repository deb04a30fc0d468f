/* Weakly connected components of a graph on the device, one copy for the
 * families that need them: GGNN's entry points (ggnn_components.cu) and
 * the graph search's pivots (graph_search_entry.cu). */
#ifndef VICK_GRAPH_COMPONENTS_CUH
#define VICK_GRAPH_COMPONENTS_CUH

#include <cuda_runtime.h>
#include <stdint.h>

/* Components of an n x degree graph (-1 = no edge): label[i] ends as the
 * smallest node of i's component (hook larger roots to smaller ones, then
 * compress, until no edge joins two labels; labels only decrease, so the
 * end is the same whatever order the atomics take).  flag: one device int
 * of scratch; a host wait per round on stream st; *rounds counts them. */
cudaError_t vick_label_components(const int32_t *graph, int degree, int64_t n, int32_t *label, int *flag,
                                  cudaStream_t st, int *rounds);

#endif
