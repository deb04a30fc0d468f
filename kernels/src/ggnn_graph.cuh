// The GGNN search graph as it lives on the device, shared by the build,
// query and component translation units.  Layer 0 holds every point in a
// random permutation of the input rows (so a bottom segment is a
// contiguous id range and its vectors are contiguous); layer l > 0 holds
// nseg_l = g^(L-1-l) segments of s_up points sampled from g segments below.
#ifndef VIC_GGNN_GRAPH_CUH
#define VIC_GGNN_GRAPH_CUH

#include "vic_kernels_ggnn.h"

#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>

#define GGNN_MAX_LAYERS 8
// Largest graph degree k (vick_ggnn_params.k).
#define GGNN_MAX_K 96
// Largest candidate set of one block-wide selection or brute-force segment.
#define GGNN_MAX_SEGMENT_POOL 2048

struct ggnn_layer {
  int32_t n;        // points in the layer
  int32_t nseg;     // segments
  int32_t *base;    // [n] bottom-layer id of each point (NULL for layer 0)
  int32_t *down;    // [n] id in the layer below (NULL for layer 0)
  int32_t *graph;   // [n*k] neighbours, layer-local ids, -1 = none
  float *dist;      // [n*k] distances of the merge that filled graph (kNN part)
};

struct vick_ggnn {
  int device;
  int64_t n;
  int32_t d, k, ksym, knn;
  int32_t L, g, s_up;
  int32_t merge_iter; // iteration cap of a construction query on its target layer
  int32_t upper_iter; // ... and on each layer above it (navigation only)
  float *x;          // [n*d] rows in layer-0 order
  int32_t *perm;     // [n] input row of each layer-0 id
  ggnn_layer layer[GGNN_MAX_LAYERS];
  int32_t *forall;   // [n*k] final bottom kNN lists before inverse links, layer-0 ids
  float *dnn1;       // [n] distance to the nearest neighbour, layer-0 order
  int32_t *entry;    // [n_entry] query start points, layer-0 ids
  int32_t n_entry;
  int64_t components;
  double dnn1_mean, dnn1_max;
  double mean_inverse_links;
  size_t device_bytes;
};

// First id of bottom segment j when n points are split into nseg segments
// whose sizes differ by at most one.
__host__ __device__ static inline int64_t ggnn_seg0_start(int64_t j, int64_t n, int64_t nseg) {
  return j * n / nseg;
}
// The bottom segment holding id i (inverse of ggnn_seg0_start).
__host__ __device__ static inline int64_t ggnn_seg0_of(int64_t i, int64_t n, int64_t nseg) {
  return ((i + 1) * nseg - 1) / n;
}

#endif
