/* Graph search on a flat graph (GRNND's, TSDG's, GGNN's bottom layer, any
 * kNN graph), small-batch procedure of TSDG (Wang, Wang, Zhao, Sec. 4,
 * Alg. 1); the plan and the host side are in graph_search_plan.cu, the
 * large-batch procedure in graph_search_large.cu, the pivots and the
 * upload in graph_search_entry.cu.
 *
 *  small batch (Alg. 1): every query runs t0 independent cheap greedy
 *    searches on t0 thread blocks.  Search j starts from the best of 32
 *    random nodes (of the nearest pivots' components) and the query's j-th
 *    nearest pivot, so that the searches of one query start apart.  A hop
 *    compares the current node's neighbours (edges under the occlusion
 *    limit) with the query, eight lanes per distance so that one pass of
 *    the block has all 64 rows in flight at once, and merges them into the
 *    ranking R (32 or 128 keys, shared memory) by ranks: each key's place
 *    is counted in one parallel step instead of a warp sort.  The nearest
 *    neighbour that entered R is the next node; a hop that adds nothing to
 *    R ends the search.  The last of a query's t0 blocks to finish merges
 *    the first k of their rankings (one warp's t0-way merge, repeats
 *    dropped; no merge launch).  On a connected graph, when all blocks of
 *    the batch fit on the device at once, each block finds the nearest
 *    pivots of its 1/t0 share of them itself and starts from the nearest:
 *    a single query pays one launch and no exchange between its blocks
 *    (a separate pivot launch and a cooperative exchange were measurable
 *    parts of a single-query call).
 *
 * The kernel stops reading a row at the first chunk with a missing edge:
 * rows keep their edges first (-1 after them) and TSDG's in ascending
 * occlusion factor, so nothing under the limit follows. */
#include "graph_search.cuh"

#define GS_GROUP 8           /* lanes per distance in the small procedure */
#define GS_CHUNK (GS_SMALL_THREADS / GS_GROUP) /* neighbours compared per pass */

#ifdef VICK_GS_TRACE
/* Development build only (-DVIC_GS_TRACE=ON): the global timer at the
 * stages of each of the first GS_TRACE_BLOCKS blocks of the last small-batch
 * call, read by vick_gsearch_trace (grnnd_bench "trace"). */
__device__ unsigned long long gs_trace_buf[GS_TRACE_BLOCKS * GS_TRACE_STAGES];
#define GS_STAMP(j)                                                                 \
  do {                                                                              \
    if (t == 0 && blockIdx.x < GS_TRACE_BLOCKS) {                                   \
      unsigned long long g_;                                                        \
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g_));                        \
      gs_trace_buf[blockIdx.x * GS_TRACE_STAGES + (j)] = g_;                        \
      /* the multiprocessor's clock beside it at the start and after the hops */   \
      if ((j) == 0 || (j) == 4)                                                     \
        gs_trace_buf[blockIdx.x * GS_TRACE_STAGES + ((j) == 0 ? 7 : 8)] = clock64(); \
    }                                                                               \
  } while (0)
extern "C" int vick_gsearch_trace(unsigned long long *out) {
  unsigned long long *dev = NULL;
  if (cudaMemcpyFromSymbol(out, gs_trace_buf, sizeof gs_trace_buf) != cudaSuccess ||
      cudaGetSymbolAddress((void **)&dev, gs_trace_buf) != cudaSuccess)
    return 1;
  return cudaMemset(dev, 0, sizeof gs_trace_buf) == cudaSuccess ? 0 : 1;
}
#else
#define GS_STAMP(j) do { } while (0)
#endif

/* ----------------------------------------------------- small batch: Alg. 1 */
/* Squared distance by a group of GS_GROUP lanes (all lanes of the warp call
 * it; ok = false gives 0); the value of the group's first lane is the one
 * used, so that every block gets the same key for the same node. */
__device__ __forceinline__ float gs_group_l2(const float *q, const float *row, int d, int gl, bool ok) {
  float s0 = 0.f, s1 = 0.f;
  if (ok) {
    if ((d & 3) == 0) {
      const float4 *a = (const float4 *)q, *b = (const float4 *)row;
#pragma unroll 4
      for (int j = gl; j < (d >> 2); j += GS_GROUP) {
        const float4 x = a[j], y = __ldg(b + j);
        const float t0 = x.x - y.x, t1 = x.y - y.y, t2 = x.z - y.z, t3 = x.w - y.w;
        s0 = fmaf(t0, t0, s0);
        s1 = fmaf(t1, t1, s1);
        s0 = fmaf(t2, t2, s0);
        s1 = fmaf(t3, t3, s1);
      }
    } else {
      for (int j = gl; j < d; j += GS_GROUP) {
        const float t = q[j] - __ldg(row + j);
        s0 = fmaf(t, t, s0);
      }
    }
  }
  float s = s0 + s1;
#pragma unroll
  for (int o = GS_GROUP / 2; o > 0; o >>= 1) s += __shfl_xor_sync(GR_FULL, s, o);
  return s;
}

template <int RS>
struct gs_small_smem {
  unsigned long long r[2][RS];        /* R, double-buffered: each merge writes the other */
  unsigned long long c[GS_CHUNK];     /* this pass's candidates */
  unsigned long long best[2];         /* nearest new entry of R, per hop parity */
  unsigned long long kmin[2];         /* nearest kept candidate of each of the first two warps */
  unsigned long long ck[GS_CHUNK];    /* the candidates kept (VICK_KEY_NONE: dropped) */
  union { /* the fused pivot stage is over before the pivot candidates are read */
    unsigned long long sk[GS_SLICES_MAX * GS_EMAX];
    struct {
      float part[2][GS_SLICE];                         /* half-row distances of a chunk of pivots */
      unsigned long long lists[GS_SLICE / 32 + 1][GS_EMAX]; /* each warp's nearest; the last: the block's */
    } pv;
  };
  int32_t near[GS_EMAX];
  int last;
};

/* Merge the candidates c into R by ranks (block-wide; keys are distinct
 * per node, and a node's key is the same in every pass): a candidate is
 * kept unless R or an earlier candidate holds it; its place is the number
 * of smaller R entries and kept candidates, an R entry's its index plus the
 * smaller kept candidates.  The nearest kept candidate, if it lands in
 * R, updates best[slot]. */
template <int RS>
__device__ __forceinline__ void gs_small_merge(gs_small_smem<RS> &sm, int &cur, int slot, int t, bool may_repeat) {
  const unsigned long long *r = sm.r[cur];
  unsigned long long *rn = sm.r[cur ^ 1];
  int lo = RS; /* the candidate's place among R's entries */
  if (t < GS_CHUNK) {
    const unsigned long long key = sm.c[t];
    bool keep = key != VICK_KEY_NONE;
    if (keep) {
      lo = vick_lower_bound(r, 0, RS, key);
      keep = !(lo < RS && r[lo] == key);
    }
    /* candidates repeat only among the seeds or on a graph whose rows
     * repeat ids; no early exit: the loads go out together */
    bool dup = false;
    if (may_repeat) {
#pragma unroll 16
      for (int j = 0; j < GS_CHUNK; ++j) dup |= j < t && sm.c[j] == key;
    }
    const unsigned long long kept = keep && !dup ? key : VICK_KEY_NONE;
    sm.ck[t] = kept;
    /* the nearest kept candidate of each of the two warps: the nearest
     * new entry of R (the next node) comes from one thread's atomic, not
     * from every entering candidate's (64-bit shared atomics contend) */
    unsigned long long m = kept;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      const unsigned long long x = __shfl_xor_sync(GR_FULL, m, o);
      m = x < m ? x : m;
    }
    if ((t & 31) == 0) sm.kmin[t >> 5] = m;
  } else if (t < GS_CHUNK + RS) {
    rn[t - GS_CHUNK] = VICK_KEY_NONE;
  }
  __syncthreads();
  if (t < GS_CHUNK) {
    const unsigned long long key = sm.ck[t];
    if (key != VICK_KEY_NONE) {
      int pos = lo;
#pragma unroll 16
      for (int j = 0; j < GS_CHUNK; ++j) pos += sm.ck[j] < key;
      if (pos < RS) {
        rn[pos] = key;
        /* keys are distinct: one thread holds the smallest, and its one
         * atomic (not contended) keeps the least over a hop's passes */
        const unsigned long long m = sm.kmin[0] < sm.kmin[1] ? sm.kmin[0] : sm.kmin[1];
        if (key == m) atomicMin(&sm.best[slot], key);
      }
    }
  } else if (t < GS_CHUNK + RS) {
    const int i = t - GS_CHUNK;
    const unsigned long long key = r[i];
    if (key != VICK_KEY_NONE) {
      int pos = i;
#pragma unroll 16
      for (int j = 0; j < GS_CHUNK; ++j) pos += sm.ck[j] < key;
      if (pos < RS) rn[pos] = key;
    }
  }
  __syncthreads();
  cur ^= 1;
}

/* The first kk keys of each of a query's t0 rankings (in: global, written
 * by the other blocks of the query, each ascending) into its k best
 * distinct keys by one warp's t0-way merge: lane l holds the heads of
 * rankings l and l + 32; each step takes the warp's minimum, writes it once
 * and advances every ranking whose head it is (a node that several
 * searches found).  k steps of a few shuffles, where ranking every key
 * against all the others cost t0 * kk steps per thread.  s: shared scratch
 * of t0 * kk keys. */
__device__ __forceinline__ void gs_merge_query(const unsigned long long *in, int t0, int rs, int kk, int k,
                                               unsigned long long *s, const int32_t *perm, int64_t *ids, float *dist,
                                               int t, int nt) {
  const int n = t0 * kk;
  for (int i = t; i < n; i += nt) s[i] = __ldcg(in + (i / kk) * rs + i % kk);
  __syncthreads();
  if (t >= 32) return; /* no barrier follows */
  const unsigned long long *ra = s + t * kk, *rb = s + (t + 32) * kk;
  const bool ha = t < t0, hb = t + 32 < t0;
  int pa = 0, pb = 0, out = 0;
  while (out < k) {
    const unsigned long long a = ha && pa < kk ? ra[pa] : VICK_KEY_NONE;
    const unsigned long long b = hb && pb < kk ? rb[pb] : VICK_KEY_NONE;
    unsigned long long m = a < b ? a : b;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      const unsigned long long x = __shfl_xor_sync(GR_FULL, m, o);
      m = x < m ? x : m;
    }
    if (m == VICK_KEY_NONE) break;
    if (t == 0) {
      ids[out] = gs_out_id(perm, (uint32_t)m);
      dist[out] = vick_float_unorder((uint32_t)(m >> 32));
    }
    ++out;
    pa += a == m;
    pb += b == m;
  }
  for (int i = out + t; i < k; i += 32) {
    ids[i] = -1;
    dist[i] = __int_as_float(0x7f800000);
  }
}

/* float4 loads in flight per thread: 8 keeps the fused kernel within 64
 * registers, two blocks of 512 threads per multiprocessor (16 needed 114,
 * one block: a batch of 10 queries x 16 searches would not fit at once) */
#define GS_PIVOT_BATCH 8
#define GS_PV_LISTS (GS_SLICE / 32 + 1)

/* The fused pivot stage of one block: the GS_EMAX nearest pivots of its
 * range [P part / parts, P (part + 1) / parts), in chunks of GS_SLICE
 * pivots, two threads per pivot (half of the dimensions each, 8 loads in
 * flight: d = 128 is two rounds of memory latency).
 * Each warp sorts its 32 keys; the block's list is the first GS_EMAX by
 * rank over the warps' and its own earlier list (binary searches, keys
 * are distinct: they carry the pivot index).  sq4: the query, zero beyond
 * d; sm.pv.lists[GS_PV_LISTS - 1] must be VICK_KEY_NONE and visible. */
template <typename SM>
__device__ __forceinline__ void gs_part_pivots(const gs_pivots &PV, const float4 *sq4, int dp, int part, SM &sm,
                                               int t) {
  const int p0 = (int)((int64_t)PV.P * part / PV.parts), p1 = (int)((int64_t)PV.P * (part + 1) / PV.parts);
  const int h = t / GS_SLICE, i = t % GS_SLICE, lane = t & 31;
  const int half = (dp + 1) >> 1, ja = h ? half : 0, jb = h ? dp : half;
  unsigned long long *best = sm.pv.lists[GS_PV_LISTS - 1];
  for (int c0 = p0; c0 < p1; c0 += GS_SLICE) {
    const int p = c0 + i;
    float acc = 0.f;
    if (p < p1) {
      for (int j0 = ja; j0 < jb; j0 += GS_PIVOT_BATCH) {
        float4 v[GS_PIVOT_BATCH];
#pragma unroll
        for (int u = 0; u < GS_PIVOT_BATCH; ++u)
          v[u] = j0 + u < jb ? __ldg(PV.pt4 + (int64_t)(j0 + u) * PV.P + p) : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
        for (int u = 0; u < GS_PIVOT_BATCH; ++u) {
          if (j0 + u >= jb) break;
          const float4 a = sq4[j0 + u];
          const float x = a.x - v[u].x, y = a.y - v[u].y, z = a.z - v[u].z, w = a.w - v[u].w;
          acc = fmaf(x, x, fmaf(y, y, fmaf(z, z, fmaf(w, w, acc))));
        }
      }
    }
    sm.pv.part[h][i] = acc;
    __syncthreads();
    if (t < GS_SLICE) {
      const int q = c0 + t;
      unsigned long long key = q < p1 ? vick_key(sm.pv.part[0][t] + sm.pv.part[1][t], (uint32_t)q) : VICK_KEY_NONE;
      key = gs_warp_sort32(key, lane);
      if (lane < GS_EMAX) sm.pv.lists[t >> 5][lane] = key;
    }
    __syncthreads();
    unsigned long long key = VICK_KEY_NONE;
    int r = 0;
    if (t < GS_PV_LISTS * GS_EMAX) {
      key = sm.pv.lists[t / GS_EMAX][t % GS_EMAX];
      if (key != VICK_KEY_NONE)
        for (int l = 0; l < GS_PV_LISTS; ++l) r += vick_lower_bound(sm.pv.lists[l], 0, GS_EMAX, key);
    }
    __syncthreads(); /* every rank counted before the block's list is rewritten */
    if (t < GS_EMAX) best[t] = VICK_KEY_NONE;
    __syncthreads();
    if (key != VICK_KEY_NONE && r < GS_EMAX) best[r] = key;
    __syncthreads();
  }
}

__device__ __forceinline__ unsigned long long gs_globaltimer(void) {
  unsigned long long g;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g));
  return g;
}

/* A block's end on the call's clock (GS_CLOCK_WORDS in clk, one thread
 * per block): the last block of the launch writes the span from the
 * earliest start to the latest end (ns) to *hclk and leaves the words
 * zero for the next launch.  Each block's end is fenced before it counts
 * itself, so the last one counted sees every end. */
__device__ __forceinline__ void gs_clock_end(unsigned long long *clk, unsigned long long *hclk) {
  atomicMax(clk + 1, gs_globaltimer());
  __threadfence();
  if (atomicAdd(clk + 2, 1ull) != (unsigned long long)gridDim.x - 1) return;
  __threadfence();
  const unsigned long long start = ~atomicExch(clk, 0ull), end = atomicExch(clk + 1, 0ull);
  atomicExch(clk + 2, 0ull);
  *(volatile unsigned long long *)hclk = end > start ? end - start : 0ull;
}

template <int RS, bool FUSED>
__global__ void __launch_bounds__(GS_SMALL_THREADS, 2)
    gs_small_kernel(gs_graph G, const float *q, int t0, int hops, int ne_want, unsigned long long *pnear,
                    int nlists, gs_pivots PV, uint64_t seed, int k, unsigned long long *out /* m * t0 * RS */,
                    int *count, int64_t *ids, float *dist, unsigned long long *clk, unsigned long long *hclk) {
  /* clk: the launch times itself (gs_clock_end); the start of the block */
  if (clk && threadIdx.x == 0) atomicMax(clk, ~gs_globaltimer());
  /* dynamic: the query, then the merge's keys (t0 * min(k, RS)) */
  extern __shared__ float4 sq4[];
  float *sq = (float *)sq4;
  const int kk = k < RS ? k : RS;
  const int dp = (G.d + 3) / 4;
  unsigned long long *mk = (unsigned long long *)(sq4 + dp);
  __shared__ gs_small_smem<RS> sm;
  const int64_t qi = blockIdx.x / t0;
  const int sj = blockIdx.x % t0;
  const int t = threadIdx.x, g = t / GS_GROUP, gl = t % GS_GROUP;
  const int d = G.d;
  for (int j = t; j < dp * 4; j += blockDim.x) sq[j] = j < d ? q[qi * d + j] : 0.f;
  for (int i = t; i < RS; i += blockDim.x) sm.r[0][i] = VICK_KEY_NONE;
  if (t < GS_EMAX) sm.near[t] = -1;
  if (t < 2) sm.best[t] = VICK_KEY_NONE;
  if (FUSED && t < GS_EMAX) sm.pv.lists[GS_PV_LISTS - 1][t] = VICK_KEY_NONE;
  GS_STAMP(0);
  __syncthreads();
  if (FUSED) {
    /* the nearest pivots of this block's share of them, its own entry
     * points: the query's t0 searches start from t0 disjoint pivot sets,
     * with nothing to exchange or wait for between blocks */
    gs_part_pivots(PV, sq4, dp, sj % PV.parts, sm, t);
    GS_STAMP(1);
    if (t < GS_EMAX) {
      const unsigned long long key = sm.pv.lists[GS_PV_LISTS - 1][t];
      sm.near[t] = key == VICK_KEY_NONE ? -1 : (int32_t)(uint32_t)key;
    }
    __syncthreads();
  } else {
    gs_pick_near(pnear + qi * nlists * GS_EMAX, nlists, sm.sk, sm.near, t, blockDim.x);
  }
  GS_STAMP(2);
  int ne = 0;
  while (ne < ne_want && sm.near[ne] >= 0) ++ne;
  {
    int64_t v = -1;
    if (g < GS_SEEDS) v = gs_seed(G, sm.near, ne, gr_rand(seed, (uint64_t)qi, (uint64_t)sj, (uint64_t)g), g);
    else if (g == GS_SEEDS && ne > 0) v = G.pid[sm.near[FUSED ? 0 : sj % ne]];
    const float s = gs_group_l2(sq, G.x + (v < 0 ? 0 : v) * d, d, gl, v >= 0);
    if (gl == 0) sm.c[g] = v >= 0 ? vick_key(s, (uint32_t)v) : VICK_KEY_NONE;
  }
  __syncthreads();
  int cur = 0;
  gs_small_merge<RS>(sm, cur, 0, t, true);
  GS_STAMP(3);
  for (int h = 0;; ++h) {
    /* the nearest entry that came in during the last hop, if still in R */
    const unsigned long long b = sm.best[h & 1];
    if (b == VICK_KEY_NONE || b > sm.r[cur][RS - 1] || h >= hops) break;
    if (t == 0) sm.best[(h + 1) & 1] = VICK_KEY_NONE;
    const int64_t u = (int64_t)(uint32_t)b;
    for (int base = 0; base < G.degree; base += GS_CHUNK) {
      int32_t v = -1;
      const bool ok = gs_edge_ok(G, u, base + g, &v);
      /* the next node is one of these: its edge list (and factors) on the
       * way to L2 now saves a memory round trip at the start of the next
       * hop, the hop's first dependent load */
      if (ok && gl >= 1 && gl <= 3) {
        const char *a = gl == 3 ? (G.occl && G.limit > 0 ? (const char *)(G.occl + (int64_t)v * G.degree) : NULL)
                                : (const char *)(G.g + (int64_t)v * G.degree) + (gl - 1) * 128;
        if (a && (gl != 2 || G.degree > 32)) asm volatile("prefetch.global.L2 [%0];" ::"l"(a));
      }
      const float s = gs_group_l2(sq, G.x + (ok ? (int64_t)v : 0) * d, d, gl, ok);
      if (gl == 0) sm.c[g] = ok ? vick_key(s, (uint32_t)v) : VICK_KEY_NONE;
      const int full = __syncthreads_and(ok);
      gs_small_merge<RS>(sm, cur, (h + 1) & 1, t, !G.unique_rows);
      if (!full) break;
    }
  }
  GS_STAMP(4);
  unsigned long long *o = out + (qi * t0 + sj) * RS;
  for (int i = t; i < RS; i += blockDim.x) o[i] = sm.r[cur][i];
  /* the last search of the query to finish merges all t0 rankings (no
   * second launch): its writes made visible before it counts itself */
  __threadfence();
  __syncthreads();
  if (t == 0) sm.last = atomicAdd(count + qi, 1) == t0 - 1;
  __syncthreads();
  GS_STAMP(5);
  if (sm.last) {
    __threadfence();
    /* every block of the query has counted itself: zero for the next call
     * on the same buffers (the index's workspace clears it only after a
     * reallocation or a failure) */
    if (t == 0) count[qi] = 0;
    gs_merge_query(out + qi * t0 * RS, t0, RS, kk, k, mk, G.perm, ids + qi * k, dist + qi * k, t, blockDim.x);
    GS_STAMP(6);
  }
  if (clk && t == 0) gs_clock_end(clk, hclk);
}


/* ------------------------------------------------------------ launches */
/* The small-batch kernel; fused: each block finds the nearest pivots of its
 * share itself (no pivot kernel). */
template <int RS>
static int gs_small_launch_rs(vick_call *call, const vick_gsearch *g, const gs_io *io, const gs_plan *P,
                              const gs_graph &G, const float *dq, int64_t m, int k, int fused, int64_t *dids,
                              float *ddist, unsigned long long *hclk) {
  unsigned long long *clk = hclk ? io->clk : NULL;
  const size_t smem = P->qbytes + (size_t)P->t0 * P->kk * 8;
  unsigned long long *near = (unsigned long long *)(io->dev + P->off_near);
  unsigned long long *rank = (unsigned long long *)(io->dev + P->off_rank);
  const int nlists = P->slices;
  const gs_pivots PV = {(const float4 *)g->pt, g->pivots, P->parts};
  if (fused) {
    gs_small_kernel<RS, true><<<(unsigned)(m * P->t0), GS_SMALL_THREADS, smem, io->stream>>>(
        G, dq, P->t0, P->hops, P->ne, near, nlists, PV, call->seed, k, rank, io->count, dids, ddist, clk, hclk);
    VICK_LAUNCH(call, "gs_small_kernel (pivots inside)");
  } else {
    gs_small_kernel<RS, false><<<(unsigned)(m * P->t0), GS_SMALL_THREADS, smem, io->stream>>>(
        G, dq, P->t0, P->hops, P->ne, near, nlists, PV, call->seed, k, rank, io->count, dids, ddist, clk, hclk);
    VICK_LAUNCH(call, "gs_small_kernel");
  }
  return VICK_OK;
}

int gs_small_launch(vick_call *call, const vick_gsearch *g, const gs_io *io, const gs_plan *P, const gs_graph &G,
                    const float *dq, int64_t m, int k, int64_t *dids, float *ddist, unsigned long long *hclk) {
  if (P->RS == 32) return gs_small_launch_rs<32>(call, g, io, P, G, dq, m, k, P->fused, dids, ddist, hclk);
  return gs_small_launch_rs<128>(call, g, io, P, G, dq, m, k, P->fused, dids, ddist, hclk);
}

int gs_small_wave_capacity(vick_call *call, vick_gsearch *g) {
  /* the most shared memory any call asks for: the bound holds for all */
  const size_t smem = ((size_t)g->d * 4 + 15) / 16 * 16 + (size_t)GS_MERGE_MAX * 8;
  int b32 = 0, b128 = 0;
  VICK_CUDA(call, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b32, gs_small_kernel<32, true>, GS_SMALL_THREADS,
                                                                 smem));
  VICK_CUDA(call, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b128, gs_small_kernel<128, true>, GS_SMALL_THREADS,
                                                                 smem));
  cudaFuncAttributes a; /* the other instances loaded now, not in the first call */
  VICK_CUDA(call, cudaFuncGetAttributes(&a, gs_small_kernel<32, false>));
  VICK_CUDA(call, cudaFuncGetAttributes(&a, gs_small_kernel<128, false>));
  g->wave_blocks[0] = b32 * g->sms;
  g->wave_blocks[1] = b128 * g->sms;
  return VICK_OK;
}

