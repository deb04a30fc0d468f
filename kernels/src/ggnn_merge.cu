// merge(l_top, l_m) of the GGNN construction (Alg. 3-4): every point z of
// layer l_m queries for its k nearest neighbours, starting from the s
// points of the top-layer segment above it and descending layer by layer;
// on each switch the best list is translated into the lower layer's ids,
// re-queued and the visited list forgotten (the neighbourhoods differ).
// The layers above l_m only steer the search towards z's neighbourhood, so
// their searches stop after up_iter pops; l_m's gets max_iter.
//
// Addition to the paper: on the last layer the query also fetches z's
// current neighbour list, so a merge never loses neighbours it had; this
// matters where the hierarchy's few entry points miss a whole cluster
// (disconnected data such as `islands`).
#include "ggnn_cache.cuh"
#include "ggnn_steps.cuh"

// Rows popped and fetched together (ggnn_search's WIDTH).  Two pay the
// graph-row and distance waits of two pops once and build faster, but a
// build at width 2 read a graph row out of bounds under compute-sanitizer
// twice (cause not found; BENCHMARKS.md, GGNN build width), so the
// default is one pop per step until that is understood.
#ifndef GGNN_BUILD_WIDTH
#define GGNN_BUILD_WIDTH 1
#endif
// Blocks per SM the merge kernel is compiled for (0: the compiler's
// choice).  8 forces 64 registers and a spill and was slower than the
// compiler's 72; kept as a knob for other cards.
#ifndef GGNN_MERGE_MIN_BLOCKS
#define GGNN_MERGE_MIN_BLOCKS 0
#endif
#if GGNN_MERGE_MIN_BLOCKS > 0
#define GGNN_MERGE_BOUNDS __launch_bounds__(GGNN_WARPS_PER_BLOCK * 32, GGNN_MERGE_MIN_BLOCKS)
#else
#define GGNN_MERGE_BOUNDS
#endif

struct ggnn_merge_args {
  const float *x;
  int d, k, g, s_up, nseg0;
  int64_t n0;
  int ltop, lm;
  float tau, dnn1;
  ggnn_dims dims;
  int max_iter, up_iter;
  size_t slab;
  const int32_t *base[GGNN_MAX_LAYERS];
  const int32_t *down[GGNN_MAX_LAYERS];
  const int32_t *graph[GGNN_MAX_LAYERS];
  int32_t n_lm;
  int32_t *out_g;
  float *out_d;
};

__global__ void GGNN_MERGE_BOUNDS ggnn_k_merge(ggnn_merge_args a) {
  extern __shared__ __align__(16) char smem[];
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int64_t z = (int64_t)blockIdx.x * (blockDim.x >> 5) + w;
  if (z >= a.n_lm) return;  // uniform per warp
  ggnn_cache c;
  ggnn_cache_init(c, smem + (size_t)w * a.slab, a.d, false, a.dims);
  const int64_t bz = a.base[a.lm] ? a.base[a.lm][z] : z;
  ggnn_load_vec(c.qv, a.x + bz * a.d, a.d);

  // getTopSegment: the segment of z's layer divided by g per layer up.
  int64_t seg = a.lm == 0 ? ggnn_seg0_of(z, a.n0, a.nseg0) : z / a.s_up;
  for (int l = a.lm; l < a.ltop; ++l) seg /= a.g;
  const int32_t top0 = (int32_t)(seg * a.s_up);
  for (int o = 0; o < a.s_up; o += c.fcap) {
    int len = min(c.fcap, a.s_up - o);
    for (int j = lane; j < len; j += 32) c.cand[j] = top0 + o + j;
    __syncwarp();
    ggnn_fetch(c, len, -1, a.base[a.ltop], a.x, a.d, a.tau, a.dnn1);
  }
  ggnn_search<GGNN_BUILD_WIDTH>(c, a.graph[a.ltop], a.k, a.base[a.ltop], a.x, a.d, a.tau, a.dnn1, a.up_iter, -1);

  for (int l = a.ltop - 1; l >= a.lm; --l) {
    // transform: ids of layer l+1 into ids of layer l
    const int32_t *dn = a.down[l + 1];
    for (int j = lane; j < c.bcount; j += 32) c.best_id[j] = dn[c.best_id[j]];
    __syncwarp();
    ggnn_cache_reset_queues(c);
    const int32_t self = l == a.lm ? (int32_t)z : -1;
    if (self >= 0) ggnn_list_remove(c.best_id, c.best_d, c.bcount, self);
    int nq = min(c.bcount, c.pcap);
    for (int j = lane; j < nq; j += 32) { c.pq_id[j] = c.best_id[j]; c.pq_d[j] = c.best_d[j]; }
    __syncwarp();
    c.pcount = nq;
    ggnn_hash_rebuild(c);
    if (self >= 0) {
      ggnn_load_cand(c, a.graph[l] + z * a.k, a.k);
      ggnn_fetch(c, a.k, self, a.base[l], a.x, a.d, a.tau, a.dnn1);
    }
    ggnn_search<GGNN_BUILD_WIDTH>(c, a.graph[l], a.k, a.base[l], a.x, a.d, a.tau, a.dnn1,
                                  l == a.lm ? a.max_iter : a.up_iter, self);
  }
  for (int j = lane; j < a.k; j += 32) {
    bool have = j < c.bcount;
    a.out_g[z * a.k + j] = have ? c.best_id[j] : -1;
    a.out_d[z * a.k + j] = have ? c.best_d[j] : __int_as_float(0x7f800000);
  }
}

cudaError_t ggnn_merge(const vick_ggnn *g, int ltop, int lm, float tau, float dnn1, int32_t *out_g, float *out_d) {
  ggnn_merge_args a;
  a.x = g->x;
  a.d = g->d;
  a.k = g->k;
  a.g = g->g;
  a.s_up = g->s_up;
  a.nseg0 = g->layer[0].nseg;
  a.n0 = g->n;
  a.ltop = ltop;
  a.lm = lm;
  a.tau = tau;
  a.dnn1 = dnn1;
  // Construction cache: the best list is the graph degree; the visited ring
  // holds every point one layer's search may visit (max_iter pops, up to
  // 256), and the hash set is large enough that a rebuild keeps the whole
  // ring, so the search never cycles; 2^10 ids at least.
  a.dims.bcap = g->k;
  a.dims.pcap = 64;
  a.dims.vcap = g->merge_iter < 32 ? 32 : (g->merge_iter > 256 ? 256 : g->merge_iter);
  a.dims.fcap = (GGNN_BUILD_WIDTH * g->k + 31) / 32 * 32;
  a.dims.hbits = ggnn_hash_bits(a.dims, 10);
  while ((1 << a.dims.hbits) / 4 - a.dims.bcap - a.dims.pcap < a.dims.vcap) a.dims.hbits++;
  a.max_iter = g->merge_iter;
  a.up_iter = g->upper_iter;
  a.slab = ggnn_slab_bytes(g->d, false, a.dims);
  for (int l = 0; l < GGNN_MAX_LAYERS; ++l) {
    a.base[l] = l < g->L ? g->layer[l].base : nullptr;
    a.down[l] = l < g->L ? g->layer[l].down : nullptr;
    a.graph[l] = l < g->L ? g->layer[l].graph : nullptr;
  }
  a.n_lm = g->layer[lm].n;
  a.out_g = out_g;
  a.out_d = out_d;
  size_t bytes = a.slab * GGNN_WARPS_PER_BLOCK;
  cudaError_t e = cudaFuncSetAttribute(ggnn_k_merge, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes);
  if (e != cudaSuccess) return e;
  unsigned blocks = (unsigned)((a.n_lm + GGNN_WARPS_PER_BLOCK - 1) / GGNN_WARPS_PER_BLOCK);
  ggnn_k_merge<<<blocks, GGNN_WARPS_PER_BLOCK * 32, bytes>>>(a);
  return cudaGetLastError();
}
