/* Weakly connected components by hooking and compressing (graph_components.cuh). */
#include "graph_components.cuh"

__global__ void vick_cc_init(int32_t *label, int64_t n) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) label[i] = (int32_t)i;
}

// Hook: for an edge between different trees, point the larger root at the smaller.
__global__ void vick_cc_hook(const int32_t *__restrict__ graph, int degree, int64_t n, int32_t *label, int *changed) {
  int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n * degree) return;
  int64_t i = t / degree;
  int32_t j = graph[t];
  if (j < 0) return;
  int32_t a = label[i], b = label[j];
  if (a == b) return;
  int32_t hi = a > b ? a : b, lo = a > b ? b : a;
  atomicMin(&label[hi], lo);
  *changed = 1;
}

// Compress: every label becomes its tree's root (labels only decrease).
__global__ void vick_cc_compress(int32_t *label, int64_t n) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int32_t l = label[i];
  while (l != label[l]) l = label[l];
  label[i] = l;
}

cudaError_t vick_label_components(const int32_t *graph, int degree, int64_t n, int32_t *label, int *flag,
                                  cudaStream_t st, int *rounds) {
  const unsigned bn = (unsigned)((n + 255) / 256), bnk = (unsigned)((n * degree + 255) / 256);
  cudaError_t e;
  vick_cc_init<<<bn, 256, 0, st>>>(label, n);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  for (;;) {
    int changed = 0;
    if ((e = cudaMemsetAsync(flag, 0, sizeof(int), st)) != cudaSuccess) return e;
    vick_cc_hook<<<bnk, 256, 0, st>>>(graph, degree, n, label, flag);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    vick_cc_compress<<<bn, 256, 0, st>>>(label, n);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    if ((e = cudaMemcpyAsync(&changed, flag, sizeof(int), cudaMemcpyDeviceToHost, st)) != cudaSuccess) return e;
    if ((e = cudaStreamSynchronize(st)) != cudaSuccess) return e;
    ++*rounds;
    if (!changed) return cudaSuccess;
  }
}
