// Query entry points of a finished GGNN graph.  The paper starts every
// query from the s points of the top layer (Sec. 5.4); on data whose kNN
// graph falls apart into components (the `islands` set: 1,000 separated
// clusters) most components then hold no entry point and their points can
// never be found.  The remedy keeps the design and only widens the entry
// set: label the weakly connected components of the bottom graph (hook and
// compress label propagation) and add one representative per component,
// largest components first.  A query's first fetch then ranks all
// representatives by distance, so it enters the component it belongs to.
#include "ggnn_steps.cuh"

#include <cub/cub.cuh>

__global__ void ggnn_k_cc_init(int32_t *label, int64_t n) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) label[i] = (int32_t)i;
}

// Hook: for an edge between different trees, point the larger root at the smaller.
__global__ void ggnn_k_cc_hook(const int32_t *__restrict__ graph, int k, int64_t n, int32_t *label, int *changed) {
  int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n * k) return;
  int64_t i = t / k;
  int32_t j = graph[t];
  if (j < 0) return;
  int32_t a = label[i], b = label[j];
  if (a == b) return;
  int32_t hi = a > b ? a : b, lo = a > b ? b : a;
  atomicMin(&label[hi], lo);
  *changed = 1;
}

// Compress: every label becomes its tree's root (labels only decrease).
__global__ void ggnn_k_cc_compress(int32_t *label, int64_t n) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int32_t l = label[i];
  while (l != label[l]) l = label[l];
  label[i] = l;
}

__global__ void ggnn_k_cc_sizes(const int32_t *label, int64_t n, int32_t *size) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&size[label[i]], 1);
}

// Sort key of a root: larger components first, then lower id; others last.
__global__ void ggnn_k_cc_keys(const int32_t *label, const int32_t *size, int64_t n, uint64_t *key, int *roots) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  bool root = label[i] == (int32_t)i;
  key[i] = root ? ((uint64_t)(0x7fffffff - size[i]) << 32) | (uint64_t)i : ~0ull;
  if (root) atomicAdd(roots, 1);
}

__global__ void ggnn_k_top_entries(const int32_t *top_base, int cnt, int32_t *entry) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < cnt) entry[i] = top_base ? top_base[i] : i;
}

__global__ void ggnn_k_root_entries(const uint64_t *key, int cnt, int32_t *entry) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < cnt) entry[i] = (int32_t)(key[i] & 0xffffffffu);
}

cudaError_t ggnn_label_components(const int32_t *graph, int k, int64_t n, int32_t *label, int *flag,
                                  cudaStream_t st, int *rounds) {
  const unsigned bn = (unsigned)((n + 255) / 256), bnk = (unsigned)((n * k + 255) / 256);
  cudaError_t e;
  ggnn_k_cc_init<<<bn, 256, 0, st>>>(label, n);
  if ((e = cudaGetLastError()) != cudaSuccess) return e;
  for (;;) {
    int changed = 0;
    if ((e = cudaMemsetAsync(flag, 0, sizeof(int), st)) != cudaSuccess) return e;
    ggnn_k_cc_hook<<<bnk, 256, 0, st>>>(graph, k, n, label, flag);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    ggnn_k_cc_compress<<<bn, 256, 0, st>>>(label, n);
    if ((e = cudaGetLastError()) != cudaSuccess) return e;
    if ((e = cudaMemcpyAsync(&changed, flag, sizeof(int), cudaMemcpyDeviceToHost, st)) != cudaSuccess) return e;
    if ((e = cudaStreamSynchronize(st)) != cudaSuccess) return e;
    ++*rounds;
    if (!changed) return cudaSuccess;
  }
}

cudaError_t ggnn_entries(vick_ggnn *g, int cover_components, int cap, char *msg, size_t msg_size) {
  const int64_t n = g->n;
  const int ntop = g->L > 1 ? g->s_up : (int)(n < g->s_up ? n : g->s_up);
  const int32_t *top_base = g->L > 1 ? g->layer[g->L - 1].base : nullptr;
  int32_t *label = nullptr, *size = nullptr;
  uint64_t *key = nullptr, *key_sorted = nullptr;
  int *flag = nullptr;
  void *tmp = nullptr;
  size_t tmp_bytes = 0;
  int roots = 0, take = 0, rounds = 0;
  cudaError_t e = cudaSuccess;
  const unsigned bn = (unsigned)((n + 255) / 256);

  if (cover_components) {
    if ((e = cudaMalloc(&label, n * sizeof(int32_t))) != cudaSuccess) goto done;
    if ((e = cudaMalloc(&size, n * sizeof(int32_t))) != cudaSuccess) goto done;
    if ((e = cudaMalloc(&flag, 2 * sizeof(int))) != cudaSuccess) goto done;
    if ((e = ggnn_label_components(g->layer[0].graph, g->k, n, label, flag, 0, &rounds)) != cudaSuccess) goto done;
    if ((e = cudaMemset(size, 0, n * sizeof(int32_t))) != cudaSuccess) goto done;
    if ((e = cudaMemset(flag + 1, 0, sizeof(int))) != cudaSuccess) goto done;
    ggnn_k_cc_sizes<<<bn, 256>>>(label, n, size);
    if ((e = cudaGetLastError()) != cudaSuccess) goto done;
    if ((e = cudaMalloc(&key, n * sizeof(uint64_t))) != cudaSuccess) goto done;
    if ((e = cudaMalloc(&key_sorted, n * sizeof(uint64_t))) != cudaSuccess) goto done;
    ggnn_k_cc_keys<<<bn, 256>>>(label, size, n, key, flag + 1);
    if ((e = cudaGetLastError()) != cudaSuccess) goto done;
    if ((e = cub::DeviceRadixSort::SortKeys(nullptr, tmp_bytes, key, key_sorted, (int)n)) != cudaSuccess) goto done;
    if ((e = cudaMalloc(&tmp, tmp_bytes)) != cudaSuccess) goto done;
    if ((e = cub::DeviceRadixSort::SortKeys(tmp, tmp_bytes, key, key_sorted, (int)n)) != cudaSuccess) goto done;
    if ((e = cudaMemcpy(&roots, flag + 1, sizeof(int), cudaMemcpyDeviceToHost)) != cudaSuccess) goto done;
    take = roots < cap ? roots : cap;
  }
  g->components = roots;
  cudaFree(g->entry);
  g->entry = nullptr;
  if ((e = cudaMalloc(&g->entry, (size_t)(ntop + take) * sizeof(int32_t))) != cudaSuccess) goto done;
  g->n_entry = ntop + take;
  ggnn_k_top_entries<<<(ntop + 255) / 256, 256>>>(top_base, ntop, g->entry);
  if ((e = cudaGetLastError()) != cudaSuccess) goto done;
  if (take > 0) {
    ggnn_k_root_entries<<<(take + 255) / 256, 256>>>(key_sorted, take, g->entry + ntop);
    if ((e = cudaGetLastError()) != cudaSuccess) goto done;
  }
  e = cudaDeviceSynchronize();
done:
  if (e != cudaSuccess) snprintf(msg, msg_size, "GGNN entry points (%d label rounds): %s", rounds, cudaGetErrorString(e));
  cudaFree(label);
  cudaFree(size);
  cudaFree(key);
  cudaFree(key_sorted);
  cudaFree(flag);
  cudaFree(tmp);
  return e;
}
