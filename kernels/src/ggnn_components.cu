// Query entry points of a finished GGNN graph.  The paper starts every
// query from the s points of the top layer (Sec. 5.4); on data whose kNN
// graph falls apart into components (the `islands` set: 1,000 separated
// clusters) most components then hold no entry point and their points can
// never be found.  The remedy keeps the design and only widens the entry
// set: label the weakly connected components of the bottom graph (hook and
// compress label propagation, graph_components.cu) and add one representative per component,
// largest components first.  A query's first fetch then ranks all
// representatives by distance, so it enters the component it belongs to.
#include "ggnn_steps.cuh"
#include "graph_components.cuh"

#include <cub/cub.cuh>

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

// Scratch of ggnn_entries, released in one place.
struct ggnn_entries_ws {
  vick_buf label, size, flag, key, key_sorted, tmp;
};

static void ggnn_entries_ws_free(vick_env *env, ggnn_entries_ws *w) {
  vick_buf *b[] = {&w->label, &w->size, &w->flag, &w->key, &w->key_sorted, &w->tmp};
  for (size_t i = 0; i < sizeof b / sizeof b[0]; ++i) vick_buf_free(env, b[i]);
}

// The components' representatives, largest first, into w->key_sorted;
// *roots: how many components the bottom graph has.
static int ggnn_component_roots(vick_call *call, vick_env *env, const vick_ggnn *g, ggnn_entries_ws *w, int *roots) {
  const int64_t n = g->n;
  const unsigned bn = (unsigned)((n + 255) / 256);
  int rounds = 0;
  VICK_TRY(vick_buf_alloc(call, env, &w->label, n * sizeof(int32_t), "GGNN component labels"));
  VICK_TRY(vick_buf_alloc(call, env, &w->size, n * sizeof(int32_t), "GGNN component sizes"));
  VICK_TRY(vick_buf_alloc(call, env, &w->flag, 2 * sizeof(int), "GGNN component flags"));
  int32_t *label = (int32_t *)w->label.p, *size = (int32_t *)w->size.p;
  int *flag = (int *)w->flag.p;
  cudaError_t e = vick_label_components(g->layer[0].graph, g->k, n, label, flag, 0, &rounds);
  if (e != cudaSuccess) return vick_cuda_fail(call, e, "GGNN component labels", __FILE__, __LINE__);
  VICK_CUDA(call, cudaMemset(size, 0, n * sizeof(int32_t)));
  VICK_CUDA(call, cudaMemset(flag + 1, 0, sizeof(int)));
  ggnn_k_cc_sizes<<<bn, 256>>>(label, n, size);
  VICK_LAUNCH(call, "ggnn_k_cc_sizes");
  VICK_TRY(vick_buf_alloc(call, env, &w->key, n * sizeof(uint64_t), "GGNN component keys"));
  VICK_TRY(vick_buf_alloc(call, env, &w->key_sorted, n * sizeof(uint64_t), "GGNN component keys"));
  uint64_t *key = (uint64_t *)w->key.p, *key_sorted = (uint64_t *)w->key_sorted.p;
  ggnn_k_cc_keys<<<bn, 256>>>(label, size, n, key, flag + 1);
  VICK_LAUNCH(call, "ggnn_k_cc_keys");
  size_t tmp_bytes = 0;
  VICK_CUDA(call, cub::DeviceRadixSort::SortKeys(nullptr, tmp_bytes, key, key_sorted, (int)n));
  VICK_TRY(vick_buf_alloc(call, env, &w->tmp, tmp_bytes, "GGNN component sort"));
  VICK_CUDA(call, cub::DeviceRadixSort::SortKeys(w->tmp.p, tmp_bytes, key, key_sorted, (int)n));
  VICK_CUDA(call, cudaMemcpy(roots, flag + 1, sizeof(int), cudaMemcpyDeviceToHost));
  return VICK_OK;
}

// g->entry (kept by the index, within the call's budget): the top layer,
// then at most cap component representatives.
static int ggnn_entries_run(vick_call *call, vick_env *env, vick_ggnn *g, int cover_components, int cap,
                            ggnn_entries_ws *w) {
  const int64_t n = g->n;
  const int ntop = g->L > 1 ? g->s_up : (int)(n < g->s_up ? n : g->s_up);
  const int32_t *top_base = g->L > 1 ? g->layer[g->L - 1].base : nullptr;
  int roots = 0;
  if (cover_components) VICK_TRY(ggnn_component_roots(call, env, g, w, &roots));
  const int take = roots < cap ? roots : cap;
  g->components = roots;
  vick_free_kept(g->entry);
  g->entry = nullptr;
  g->n_entry = 0;
  VICK_TRY(vick_alloc_kept(call, env, (void **)&g->entry, (size_t)(ntop + take) * sizeof(int32_t),
                           "GGNN entry points"));
  g->n_entry = ntop + take;
  ggnn_k_top_entries<<<(ntop + 255) / 256, 256>>>(top_base, ntop, g->entry);
  VICK_LAUNCH(call, "ggnn_k_top_entries");
  if (take > 0) {
    ggnn_k_root_entries<<<(take + 255) / 256, 256>>>((const uint64_t *)w->key_sorted.p, take, g->entry + ntop);
    VICK_LAUNCH(call, "ggnn_k_root_entries");
  }
  VICK_CUDA(call, cudaDeviceSynchronize());
  return VICK_OK;
}

int ggnn_entries(vick_call *call, vick_env *env, vick_ggnn *g, int cover_components, int cap) {
  ggnn_entries_ws w = {};
  const int rc = ggnn_entries_run(call, env, g, cover_components, cap, &w);
  ggnn_entries_ws_free(env, &w);
  return rc;
}
