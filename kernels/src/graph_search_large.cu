/* Graph search on a flat graph, large-batch procedure of TSDG (Wang, Wang,
 * Zhao, Sec. 4, Alg. 2); see graph_search_small.cu for the small one and
 * graph_search_plan.cu for the choice between them.
 *
 *  large batch (Alg. 2): one warp-sized block per query keeps a sorted list
 *    (R and the expansion queue C in one array: unexpanded entries carry no
 *    flag), a visited hash table in shared memory and the probe threshold
 *    Delta: the nearest unexpanded entry u is expanded unless
 *    d(u) > (1 + Delta) d(k-th found); its unvisited neighbours' distances
 *    come eight lanes per row when the batch fills the device (whole
 *    128-byte pieces per load: many queries share each multiprocessor's
 *    load units), one lane per row when it does not (all of a row's loads
 *    in flight at once), then are sorted across the warp and merged into
 *    the list by ranks.
 *
 * The kernel stops reading a row at the first chunk with a missing edge:
 * rows keep their edges first (-1 after them) and TSDG's in ascending
 * occlusion factor, so nothing under the limit follows. */
#include "graph_search.cuh"

#define GS_HASH 2048         /* visited table slots of the large procedure */

/* ----------------------------------------------------- large batch: Alg. 2 */
template <int LS>
struct gs_large_smem {
  unsigned long long keys[LS];  /* the sorted list: expanded entries flagged, VICK_KEY_NONE after the last */
  unsigned long long batch[32]; /* one insertion's new keys, ascending */
  int32_t cand[32];             /* one pass's new rows, compacted (grouped distances) */
  union { /* the pivot candidates are read before the visited table is used */
    uint32_t hash[GS_HASH];
    unsigned long long sk[GS_SLICES_MAX * GS_EMAX];
  };
  int32_t near[GS_EMAX];
};

/* Insert one candidate key per lane (VICK_KEY_NONE: none; unflagged) into
 * the sorted list keys[0..L): the batch is sorted across the warp (bitonic),
 * keys repeated in it or already in the list (flagged or not) are dropped,
 * then every list entry and every new key finds its final slot by one
 * binary search in the other sorted sequence and all move at once: a
 * constant number of steps per 32 candidates instead of a merge sort of
 * the whole list.  Keys are distinct 64-bit values (a node's key is the
 * same in every pass), so both searches agree on one merged order; what
 * falls past L is dropped. */
__device__ __forceinline__ void gs_list_insert(unsigned long long *keys, int L, unsigned long long key,
                                               unsigned long long *batch, int lane) {
  key = vick_warp_sort_key(key, lane);
  const unsigned long long below = __shfl_up_sync(GR_FULL, key, 1);
  bool keep = key != VICK_KEY_NONE && !(lane > 0 && below == key);
  int lo = 0;
  if (keep) {
    lo = vick_lower_bound(keys, 0, L, key);
    /* the node's entry, flagged, sorts just after it (or after others of
     * exactly the same distance) */
    for (int j = lo; j < L && (keys[j] >> 32) == (key >> 32); ++j) keep &= gr_plain(keys[j]) != key;
    keep &= lo < L;
  }
  const unsigned m = __ballot_sync(GR_FULL, keep);
  if (!m) return;
  const int nb = __popc(m), r = __popc(m & ((1u << lane) - 1u));
  if (keep) batch[r] = key;
  __syncwarp();
  /* existing entries only move right: chunks of 32 from the end, each read
   * whole before it is written */
  for (int c0 = (L - 1) & ~31; c0 >= 0; c0 -= 32) {
    const int j = c0 + lane;
    unsigned long long e = VICK_KEY_NONE;
    int to = L;
    if (j < L) {
      e = keys[j];
      if (e != VICK_KEY_NONE) to = j + vick_lower_bound(batch, 0, nb, e);
    }
    __syncwarp();
    if (to < L) keys[to] = e;
    __syncwarp();
  }
  if (keep && lo + r < L) keys[lo + r] = key;
  __syncwarp();
}

/* Keys (distance, id) of the warp's candidate rows (one row id per lane,
 * -1: none), grouped: the rows are first compacted (cand: 32 ids of shared
 * scratch), then eight lanes per row, two rows per group in flight, four
 * groups: each load instruction of the warp reads whole 128-byte pieces of
 * eight rows instead of 32 scattered 16-byte pieces (one lane per row),
 * which the load units of a multiprocessor serve far faster when many
 * queries run at once, and only ceil(n / 8) rounds for n rows.  Lane i
 * gets the key of the i-th row (VICK_KEY_NONE past the last): the keys
 * come in another order than the lanes', which the insertion (it sorts)
 * does not mind. */
__device__ __forceinline__ unsigned long long gs_warp_rows_keys(const float *q, const float *x, int d, int64_t row,
                                                               int lane, int32_t *cand) {
  const unsigned has = __ballot_sync(GR_FULL, row >= 0);
  const int nt = __popc(has);
  if (row >= 0) cand[__popc(has & ((1u << lane) - 1u))] = (int32_t)row;
  __syncwarp();
  const int grp = (lane >> 3) & 3, gl = lane & 7;
  float mine = 0.f;
  for (int r = 0; r < nt; r += 8) {
    const int c0 = r + grp, c1 = r + 4 + grp; /* this group's two rows */
    const bool ok0 = c0 < nt, ok1 = c1 < nt;
    const float *p0 = x + (int64_t)(ok0 ? cand[c0] : 0) * d, *p1 = x + (int64_t)(ok1 ? cand[c1] : 0) * d;
    float a0 = 0.f, a1 = 0.f;
    if ((d & 3) == 0) {
      const float4 *q4 = (const float4 *)q, *r0 = (const float4 *)p0, *r1 = (const float4 *)p1;
#pragma unroll 4
      for (int j = gl; j < (d >> 2); j += 8) {
        const float4 b = q4[j];
        const float4 v0 = ok0 ? __ldg(r0 + j) : b, v1 = ok1 ? __ldg(r1 + j) : b;
        float t0 = v0.x - b.x, t1 = v0.y - b.y, t2 = v0.z - b.z, t3 = v0.w - b.w;
        a0 = fmaf(t0, t0, fmaf(t1, t1, fmaf(t2, t2, fmaf(t3, t3, a0))));
        t0 = v1.x - b.x, t1 = v1.y - b.y, t2 = v1.z - b.z, t3 = v1.w - b.w;
        a1 = fmaf(t0, t0, fmaf(t1, t1, fmaf(t2, t2, fmaf(t3, t3, a1))));
      }
    } else {
      for (int j = gl; j < d; j += 8) {
        const float t0 = ok0 ? __ldg(p0 + j) - q[j] : 0.f, t1 = ok1 ? __ldg(p1 + j) - q[j] : 0.f;
        a0 = fmaf(t0, t0, a0);
        a1 = fmaf(t1, t1, a1);
      }
    }
#pragma unroll
    for (int o = 4; o > 0; o >>= 1) {
      a0 += __shfl_xor_sync(GR_FULL, a0, o);
      a1 += __shfl_xor_sync(GR_FULL, a1, o);
    }
    /* row r + i (i < 8) is row (i >> 2) of group (i & 3): lane r + i takes it */
    const float g0 = __shfl_sync(GR_FULL, a0, (lane & 3) * 8), g1 = __shfl_sync(GR_FULL, a1, (lane & 3) * 8);
    if ((lane & ~7) == r) mine = (lane & 4) ? g1 : g0;
  }
  const unsigned long long key = lane < nt ? vick_key(mine, (uint32_t)cand[lane]) : VICK_KEY_NONE;
  __syncwarp(); /* cand is read before the next call writes it */
  return key;
}

/* The large procedure's keys: grouped (above) when many queries share the
 * device, one lane per row when few do and each query's latency is the
 * cost: all of a lane's loads of its row are in flight at once, where the
 * grouped form walks the rows in rounds. */
template <bool GROUPED>
__device__ __forceinline__ unsigned long long gs_rows_keys(const float *q, const float *x, int d, int64_t row,
                                                          int lane, int32_t *cand) {
  if (GROUPED) return gs_warp_rows_keys(q, x, d, row, lane, cand);
  return row >= 0 ? vick_key(gr_lane_l2(q, x + row * d, d), (uint32_t)row) : VICK_KEY_NONE;
}

/* Not prims/visited.cuh's set: a bounded probe that gives up on a crowded
 * table (the candidate is computed again and the merge drops the repeat)
 * instead of a rebuild, so which candidates are computed twice depends on
 * this hash; the searches' results were fixed with it. */
__device__ __forceinline__ bool gs_hash_insert(uint32_t *h, uint32_t id) {
  uint32_t slot = (uint32_t)(vick_mix64(id) & (GS_HASH - 1));
  for (int p = 0; p < 8; ++p) {
    uint32_t old = atomicCAS(h + slot, 0xffffffffu, id);
    if (old == 0xffffffffu) return true;
    if (old == id) return false;
    slot = (slot + 1) & (GS_HASH - 1);
  }
  return true; /* table crowded: compute again; the merge drops the repeat */
}

template <int LS, bool GROUPED>
__global__ void __launch_bounds__(32)
    gs_large_kernel(gs_graph G, const float *q, int k, int L, int hops, float delta, int ne_want,
                    const unsigned long long *pnear, uint64_t seed, int64_t qbase, int64_t *ids, float *dist) {
  extern __shared__ float4 sql4[]; /* float4: the grouped distance reads the query four floats at a time */
  float *sq = (float *)sql4;
  __shared__ gs_large_smem<LS> sm;
  const int64_t qi = blockIdx.x;
  const int lane = threadIdx.x;
  const int d = G.d;
  for (int j = lane; j < d; j += 32) sq[j] = q[qi * d + j];
  for (int i = lane; i < LS; i += 32) sm.keys[i] = VICK_KEY_NONE;
  if (lane < GS_EMAX) sm.near[lane] = -1;
  __syncthreads();
  gs_pick_near(pnear + qi * G.slices * GS_EMAX, G.slices, sm.sk, sm.near, lane, 32);
  int ne = 0;
  while (ne < ne_want && sm.near[ne] >= 0) ++ne;
  for (int i = lane; i < GS_HASH; i += 32) sm.hash[i] = 0xffffffffu;
  __syncwarp();
  /* seeds: 32 random nodes and the nearest pivots */
  for (int pass = 0; pass < 2; ++pass) {
    int64_t v = -1;
    if (pass == 0) v = gs_seed(G, sm.near, ne, vick_rand3(seed, (uint64_t)(qbase + qi), 0, (uint64_t)lane), lane);
    else if (lane < ne) v = G.pid[sm.near[lane]];
    bool fresh = v >= 0 && gs_hash_insert(sm.hash, (uint32_t)v);
    const unsigned long long key = gs_rows_keys<GROUPED>(sq, G.x, d, fresh ? v : -1, lane, sm.cand);
    gs_list_insert(sm.keys, L, key, sm.batch, lane);
  }
  const float slack = (1.f + delta) * (1.f + delta);
  for (int t = 0; t < hops; ++t) {
    int p = -1;
    for (int base = 0; base < L; base += 32) {
      unsigned long long key = base + lane < L ? sm.keys[base + lane] : VICK_KEY_NONE;
      unsigned b = __ballot_sync(GR_FULL, key != VICK_KEY_NONE && !(key & GR_FLAG));
      if (b) { p = base + __ffs(b) - 1; break; }
    }
    if (p < 0) break;
    const unsigned long long ku = sm.keys[p];
    const unsigned long long kk = sm.keys[k - 1];
    if (kk != VICK_KEY_NONE &&
        vick_float_unorder((uint32_t)(ku >> 32)) > slack * vick_float_unorder((uint32_t)(kk >> 32)))
      break;
    __syncwarp();
    if (lane == 0) sm.keys[p] = ku | GR_FLAG;
    __syncwarp();
    const int64_t u = (int64_t)(uint32_t)gr_plain(ku);
    for (int base = 0; base < G.degree; base += 32) {
      int32_t v = -1;
      bool ok = gs_edge_ok(G, u, base + lane, &v);
      if (!__any_sync(GR_FULL, ok)) break; /* padding / occlusion limit reached */
      bool fresh = ok && gs_hash_insert(sm.hash, (uint32_t)v);
      const unsigned long long key = gs_rows_keys<GROUPED>(sq, G.x, d, fresh ? (int64_t)v : -1, lane, sm.cand);
      gs_list_insert(sm.keys, L, key, sm.batch, lane);
    }
  }
  for (int i = lane; i < k; i += 32) {
    unsigned long long key = sm.keys[i];
    ids[qi * k + i] = key == VICK_KEY_NONE ? -1 : gs_out_id(G.perm, (uint32_t)gr_plain(key));
    dist[qi * k + i] = key == VICK_KEY_NONE ? __int_as_float(0x7f800000) : vick_float_unorder((uint32_t)(key >> 32));
  }
}


/* ------------------------------------------------------------ launches */
template <int LS>
static int gs_large_launch_ls(vick_call *call, cudaStream_t stream, const gs_plan *P, const gs_graph &G,
                              const float *dq, const unsigned long long *near, int64_t m, int64_t qbase, int k,
                              float delta, int64_t *dids, float *ddist) {
  if (P->grouped)
    gs_large_kernel<LS, true><<<(unsigned)m, 32, P->qbytes, stream>>>(G, dq, k, P->L, P->hops, delta, P->ne, near,
                                                                      call->seed, qbase, dids, ddist);
  else
    gs_large_kernel<LS, false><<<(unsigned)m, 32, P->qbytes, stream>>>(G, dq, k, P->L, P->hops, delta, P->ne, near,
                                                                       call->seed, qbase, dids, ddist);
  VICK_LAUNCH(call, "gs_large_kernel");
  return VICK_OK;
}

int gs_large_launch(vick_call *call, cudaStream_t stream, const gs_plan *P, const gs_graph &G, const float *dq,
                    const unsigned long long *near, int64_t m, int64_t qbase, int k, float delta, int64_t *dids,
                    float *ddist) {
  if (P->L <= 64) return gs_large_launch_ls<64>(call, stream, P, G, dq, near, m, qbase, k, delta, dids, ddist);
  if (P->L <= 128) return gs_large_launch_ls<128>(call, stream, P, G, dq, near, m, qbase, k, delta, dids, ddist);
  return gs_large_launch_ls<256>(call, stream, P, G, dq, near, m, qbase, k, delta, dids, ddist);
}

int gs_large_load(vick_call *call) {
  cudaFuncAttributes a;
  VICK_CUDA(call, cudaFuncGetAttributes(&a, gs_large_kernel<64, true>));
  VICK_CUDA(call, cudaFuncGetAttributes(&a, gs_large_kernel<64, false>));
  VICK_CUDA(call, cudaFuncGetAttributes(&a, gs_large_kernel<128, true>));
  VICK_CUDA(call, cudaFuncGetAttributes(&a, gs_large_kernel<128, false>));
  VICK_CUDA(call, cudaFuncGetAttributes(&a, gs_large_kernel<256, true>));
  VICK_CUDA(call, cudaFuncGetAttributes(&a, gs_large_kernel<256, false>));
  return VICK_OK;
}
