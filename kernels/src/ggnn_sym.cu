// sym(l) of the GGNN construction (Alg. 5, Sec. 5.2-5.2.1): for each point
// z and each of its k_nn = k - k_sym nearest neighbours x_i, search from
// x_i for a path back to z through the nearest-neighbour part and the
// inverse links inserted so far, inside the sphere around the worst-case
// query q_m = z + 0.4 (x_i - z) of radius |x_i - q_m|.  Without a path, z
// is linked from the point nearest to z met on the way that still has a
// free inverse-link slot (atomics on the slot counters).  A second kernel
// writes the collected links into the last slots of each row.
//
// Deterministic variant (ggnn_sym_det.cu): the searches see the kNN part
// only, not the links other warps insert meanwhile, and write their
// candidate lists to `req`; slots are then given in a fixed order.
#include "ggnn_cache.cuh"
#include "ggnn_steps.cuh"

#define GGNN_SYM_BEST 16
#define GGNN_SYM_PRIOQ 32
#define GGNN_SYM_VISITED 64
// Blocks per SM the sym kernel is compiled for (0: the compiler's choice):
// 8 (64 registers instead of 80) lets two more blocks in beside each
// other, and the latency-bound searches gain more than the spill costs.
#ifndef GGNN_SYM_MIN_BLOCKS
#define GGNN_SYM_MIN_BLOCKS 8
#endif
#if GGNN_SYM_MIN_BLOCKS > 0
#define GGNN_SYM_BOUNDS __launch_bounds__(GGNN_WARPS_PER_BLOCK * 32, GGNN_SYM_MIN_BLOCKS)
#else
#define GGNN_SYM_BOUNDS
#endif

__global__ void ggnn_k_sym_reset(int32_t *symcnt, int32_t *sym, int64_t n, int ksym) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) symcnt[i] = 0;
  if (i < n * ksym) sym[i] = -1;
}

__global__ void GGNN_SYM_BOUNDS ggnn_k_sym(const float *__restrict__ x, int d, int k, int knn, int ksym,
                           const int32_t *__restrict__ base, const int32_t *__restrict__ graph,
                           const float *__restrict__ dist, int32_t n_l, ggnn_dims dims, size_t slab, int32_t *symcnt,
                           int32_t *sym, int32_t *req, int rcap) {
  extern __shared__ __align__(16) char smem[];
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int64_t z = (int64_t)blockIdx.x * (blockDim.x >> 5) + w;
  if (z >= n_l) return;
  ggnn_cache c;
  ggnn_cache_init(c, smem + (size_t)w * slab, d, true, dims);
  const int64_t bz = base ? base[z] : z;
  ggnn_load_vec(c.qv, x + bz * d, d);
  volatile const int32_t *vsym = sym;
  volatile const int32_t *vcnt = symcnt;
  for (int i = 0; i < knn; ++i) {
    const int32_t xi = graph[z * k + i];
    if (xi < 0) continue;
    const float dzx = dist[z * k + i];
    const int64_t bxi = base ? base[xi] : xi;
    for (int j = lane; j < d; j += 32) c.ev[j] = x[bxi * d + j] - c.qv[j];
    __syncwarp();
    const float e2 = dzx * dzx;
    const float rlim = 0.6f * dzx * (1.0f + 1e-4f) + 1e-30f;
    c.bcount = 0;
    ggnn_cache_reset_queues(c);
    ggnn_list_insert(c.best_id, c.best_d, c.bcap, c.bcount, xi, dzx);
    ggnn_ring_insert(c.pq_id, c.pq_d, c.pcap, c.phead, c.pcount, xi, 0.6f * dzx);
    ggnn_hash_rebuild(c);
    bool found = false;
    for (int it = 0; it < GGNN_SYM_VISITED; ++it) {
      int32_t a = ggnn_pop(c, rlim);
      if (a < 0) break;
      // proposals: N^nn_a and the inverse links of a so far
      int cnt = req ? 0 : min(vcnt[a], ksym);
      bool hit = false;
      for (int j = lane; j < knn + ksym; j += 32) {
        int32_t v = j < knn ? graph[(int64_t)a * k + j] : (j - knn < cnt ? vsym[(int64_t)a * ksym + (j - knn)] : -1);
        c.cand[j] = v;
        hit |= v == (int32_t)z;
      }
      if (__any_sync(GGNN_FULL, hit)) { found = true; break; }
      __syncwarp();
      int nt = ggnn_filter(c, knn + ksym, (int32_t)z, base);
      if (nt == 0) continue;
      ggnn_distances<true>(c, nt, x, d, e2);
      for (int t = 0; t < nt; ++t) {
        float dq = c.td2[t];
        if (!(dq <= rlim)) continue;
        ggnn_ring_insert(c.pq_id, c.pq_d, c.pcap, c.phead, c.pcount, c.tid[t], dq);
        ggnn_list_insert(c.best_id, c.best_d, c.bcap, c.bcount, c.tid[t], c.td[t]);
      }
    }
    if (!found && req && lane == 0) {
      int32_t *r = req + ((int64_t)z * knn + i) * rcap;
      for (int j = 0; j < rcap; ++j) r[j] = j < c.bcount ? c.best_id[j] : -1;
    } else if (!found && lane == 0) {
      for (int j = 0; j < c.bcount; ++j) {
        int32_t p = c.best_id[j];
        int pos = atomicAdd(&symcnt[p], 1);
        if (pos < ksym) {
          sym[(int64_t)p * ksym + pos] = (int32_t)z;
          break;
        }
      }
    }
    __syncwarp();
  }
}

// Inverse links go into the last slots, from the end; a link already among
// the k_nn nearest, or given twice, is not repeated, and a nearest beyond
// k_nn that a link repeats gives its place to the next one.  Rows so hold
// no id twice, which spares a search over them its repeat check
// (graph_search_small.cu).  One thread per row.
__global__ void ggnn_k_sym_apply(int32_t *graph, int k, int knn, int ksym, int32_t n_l,
                                 const int32_t *__restrict__ symcnt, const int32_t *__restrict__ sym,
                                 unsigned long long *links) {
  int64_t p = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= n_l) return;
  int32_t *row = graph + p * k;
  int32_t add[GGNN_MAX_K / 2];
  const int c = min(symcnt[p], ksym);
  int na = 0;
  for (int t = 0; t < c; ++t) {
    const int32_t v = sym[p * ksym + t];
    bool dup = v < 0;
    for (int j = 0; j < knn && !dup; ++j) dup = row[j] == v;
    for (int j = 0; j < na && !dup; ++j) dup = add[j] == v;
    if (!dup) add[na++] = v;
  }
  if (!na) return;
  // the nearest kept: row[0, k - na) less those a link repeats, refilled from behind
  int kept = knn;
  for (int j = knn; j < k && kept < k - na; ++j) {
    const int32_t v = row[j];
    bool dup = false;
    for (int a = 0; a < na && !dup; ++a) dup = add[a] == v;
    if (!dup) row[kept++] = v;
  }
  for (; kept < k - na; ++kept) row[kept] = -1;
  for (int a = 0; a < na; ++a) row[k - 1 - a] = add[a];
  atomicAdd(links, (unsigned long long)na);
}

int ggnn_sym(vick_call *call, vick_env *env, vick_ggnn *g, int l, int32_t *symcnt, int32_t *sym,
             unsigned long long *links_dev, int deterministic) {
  const ggnn_layer *ly = &g->layer[l];
  int64_t n = ly->n;
  ggnn_k_sym_reset<<<(unsigned)((n * g->ksym + 255) / 256), 256>>>(symcnt, sym, n, g->ksym);
  VICK_LAUNCH(call, "ggnn_k_sym_reset");
  ggnn_dims dims = {GGNN_SYM_BEST, GGNN_SYM_PRIOQ, GGNN_SYM_VISITED, 0, (g->k + 31) / 32 * 32};
  dims.hbits = ggnn_hash_bits(dims, 8);
  size_t slab = ggnn_slab_bytes(g->d, true, dims);
  size_t bytes = slab * GGNN_WARPS_PER_BLOCK;
  VICK_CUDA(call, cudaFuncSetAttribute(ggnn_k_sym, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
  unsigned blocks = (unsigned)((n + GGNN_WARPS_PER_BLOCK - 1) / GGNN_WARPS_PER_BLOCK);
  const int rcap = GGNN_SYM_DET_CANDIDATES;
  vick_buf req = {};
  int rc = VICK_OK;
  if (deterministic) {
    const size_t req_bytes = (size_t)n * g->knn * rcap * sizeof(int32_t);
    VICK_TRY(vick_buf_alloc(call, env, &req, req_bytes, "GGNN link requests"));
    cudaError_t e = cudaMemset(req.p, 0xff, req_bytes);
    if (e != cudaSuccess) rc = vick_cuda_fail(call, e, "cudaMemset(link requests)", __FILE__, __LINE__);
  }
  if (rc == VICK_OK) {
    ggnn_k_sym<<<blocks, GGNN_WARPS_PER_BLOCK * 32, bytes>>>(g->x, g->d, g->k, g->knn, g->ksym, ly->base, ly->graph,
                                                             ly->dist, ly->n, dims, slab, symcnt, sym,
                                                             (int32_t *)req.p, rcap);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) rc = vick_cuda_fail(call, e, "launch of ggnn_k_sym", __FILE__, __LINE__);
  }
  if (rc == VICK_OK && deterministic)
    rc = ggnn_sym_place(call, env, (const int32_t *)req.p, rcap, n, g->knn, g->ksym, symcnt, sym);
  vick_buf_free(env, &req);
  VICK_TRY(rc);
  ggnn_k_sym_apply<<<(unsigned)((n + 255) / 256), 256>>>(ly->graph, g->k, g->knn, g->ksym, ly->n, symcnt, sym,
                                                          links_dev);
  VICK_LAUNCH(call, "ggnn_k_sym_apply");
  return VICK_OK;
}
