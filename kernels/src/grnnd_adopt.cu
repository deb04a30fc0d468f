/* A graph built on the device becomes a search graph without a trip
 * through host memory: its rows and edges stay where the build left them;
 * the range and repeat checks run on the device, and gs_finish
 * (graph_search_entry.cu) adds the components and pivots as for an
 * uploaded graph. */
#include "graph_search.cuh"

#include <stdlib.h>
#include <string.h>

/* One warp per row: ids outside -1..n-1 set bad[0]; an id that the row
 * repeats sets bad[1]. */
__global__ void gs_rows_check_kernel(const int32_t *g, int64_t n, int degree, int *bad) {
  const int lane = threadIdx.x & 31;
  const int64_t v = ((int64_t)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  if (v >= n) return;
  const int32_t *row = g + v * degree;
  int out_of_range = 0, repeat = 0;
  for (int e = lane; e < degree; e += 32) {
    const int32_t id = row[e];
    if (id < -1 || id >= n) out_of_range = 1;
    if (id < 0) continue;
    for (int f = 0; f < e && !repeat; ++f) repeat = row[f] == id;
  }
  out_of_range = __any_sync(GR_FULL, out_of_range);
  repeat = __any_sync(GR_FULL, repeat);
  if (lane == 0 && out_of_range) atomicOr(bad, 1);
  if (lane == 0 && repeat) atomicOr(bad + 1, 1);
}

int gs_adopt(vick_call *call, vick_env *env, int64_t n, int32_t d, float *d_x, int32_t *d_g, int32_t degree,
             uint8_t *d_occl, int32_t max_entries, vick_gsearch **out) {
  *out = NULL;
  const cudaStream_t st = env->stream;
  vick_gsearch *g = (vick_gsearch *)calloc(1, sizeof *g);
  if (!g) {
    vick_free_kept(d_x);
    vick_free_kept(d_g);
    vick_free_kept(d_occl);
    return vick_fail(call, VICK_NOMEM, "graph search: no host memory");
  }
  g->device = call->device;
  g->n = n;
  g->d = d;
  g->degree = degree;
  g->x = d_x;
  g->g = d_g;
  g->occl = d_occl;
  g->bytes = (size_t)n * d * 4 + (size_t)n * degree * (4 + (d_occl ? 1 : 0));
  vick_buf fb = {};
  int bad[2] = {0, 0};
  int rc = VICK_OK;
  cudaError_t e = cudaSuccess;
#define GA_STEP(expr)                                                       \
  if (rc == VICK_OK && (e = (expr)) != cudaSuccess) rc = vick_cuda_fail(call, e, #expr, __FILE__, __LINE__)
  GA_STEP(cudaDeviceGetAttribute(&g->sms, cudaDevAttrMultiProcessorCount, call->device));
  if (rc == VICK_OK) rc = vick_buf_alloc(call, env, &fb, 2 * sizeof(int), "graph search row checks");
  int *flags = (int *)fb.p;
  GA_STEP(cudaMemsetAsync(flags, 0, 2 * sizeof(int), st));
  if (rc == VICK_OK) {
    gs_rows_check_kernel<<<vick_blocks(n * 32, 256), 256, 0, st>>>(d_g, n, degree, flags);
    GA_STEP(cudaGetLastError());
  }
  GA_STEP(cudaMemcpyAsync(bad, flags, 2 * sizeof(int), cudaMemcpyDeviceToHost, st));
  GA_STEP(cudaStreamSynchronize(st)); /* the build's kernels too: gs_finish reads the graph on another stream */
#undef GA_STEP
  vick_buf_free(env, &fb);
  if (rc == VICK_OK && bad[0])
    rc = vick_fail(call, VICK_ARGUMENT, "graph search: the built graph has an edge outside 0..%lld", (long long)(n - 1));
  g->unique_rows = !bad[1];
  if (rc == VICK_OK) rc = gs_finish(call, env, g, max_entries);
  if (rc != VICK_OK) {
    vick_gsearch_free(g);
    return rc;
  }
  *out = g;
  return VICK_OK;
}

int vick_gsearch_graph(vick_call *call, const vick_gsearch *g, int32_t *ids, uint8_t *occl) {
  if (!call) return VICK_ARGUMENT;
  if (!g || !ids) return vick_fail(call, VICK_ARGUMENT, "graph search: no graph or no output for its edges");
  const double t0 = vick_now();
  const size_t cells = (size_t)g->n * (size_t)g->degree;
  VICK_CUDA(call, cudaSetDevice(g->device));
  VICK_CUDA(call, cudaMemcpy(ids, g->g, cells * sizeof(int32_t), cudaMemcpyDeviceToHost));
  if (occl && g->occl) VICK_CUDA(call, cudaMemcpy(occl, g->occl, cells, cudaMemcpyDeviceToHost));
  if (occl && !g->occl) memset(occl, 0, cells);
  call->seconds_transfer += vick_now() - t0;
  return VICK_OK;
}
