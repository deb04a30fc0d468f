/* Graph search on a flat graph (GRNND's, TSDG's, any kNN graph), the two
 * procedures of TSDG (Wang, Wang, Zhao, Sec. 4), after a first kernel that
 * finds each query's nearest pivots (grnnd_entry.cu):
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
 * Both kernels stop reading a row at the first chunk with a missing edge:
 * rows keep their edges first (-1 after them) and TSDG's in ascending
 * occlusion factor, so nothing under the limit follows. */
#include "grnnd_search.cuh"

#include <string.h>

#define GS_SEEDS 32          /* random seeds per search (Alg. 1 line 2, Alg. 2 line 1) */
#define GS_GROUP 8           /* lanes per distance in the small procedure */
#define GS_SMALL_THREADS 512
#define GS_CHUNK (GS_SMALL_THREADS / GS_GROUP) /* neighbours compared per pass */
#define GS_HASH 2048         /* visited table slots of the large procedure */
#define GS_MERGE_MAX 2048    /* t0 x min(k, ranking) keys merged per query */

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
                                               unsigned long long *s, int64_t *ids, float *dist, int t, int nt) {
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
      ids[out] = (int64_t)(uint32_t)m;
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

/* Ascending sort of one key per lane across a warp (a bitonic network). */
__device__ __forceinline__ unsigned long long gs_warp_sort32(unsigned long long key, int lane) {
#pragma unroll
  for (int k = 2; k <= 32; k <<= 1)
#pragma unroll
    for (int j = k >> 1; j > 0; j >>= 1) {
      const unsigned long long o = __shfl_xor_sync(GR_FULL, key, j);
      const bool low = (lane & j) == 0, up = (lane & k) == 0;
      key = low == up ? (o < key ? o : key) : (o > key ? o : key);
    }
  return key;
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

template <int RS, bool FUSED>
__global__ void __launch_bounds__(GS_SMALL_THREADS, 2)
    gs_small_kernel(gs_graph G, const float *q, int t0, int hops, int ne_want, unsigned long long *pnear,
                    int nlists, gs_pivots PV, uint64_t seed, int k, unsigned long long *out /* m * t0 * RS */,
                    int *count, int64_t *ids, float *dist) {
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
  if (!sm.last) return;
  __threadfence();
  /* every block of the query has counted itself: zero for the next call on
   * the same buffers (the index's workspace clears it only after a
   * reallocation or a failure) */
  if (t == 0) count[qi] = 0;
  gs_merge_query(out + qi * t0 * RS, t0, RS, kk, k, mk, ids + qi * k, dist + qi * k, t, blockDim.x);
  GS_STAMP(6);
}

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
  key = gs_warp_sort32(key, lane);
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

__device__ __forceinline__ bool gs_hash_insert(uint32_t *h, uint32_t id) {
  uint32_t slot = (uint32_t)(gr_mix(id) & (GS_HASH - 1));
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
                    const unsigned long long *pnear, uint64_t seed, int64_t *ids, float *dist) {
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
    if (pass == 0) v = gs_seed(G, sm.near, ne, gr_rand(seed, (uint64_t)qi, 0, (uint64_t)lane), lane);
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
    ids[qi * k + i] = key == VICK_KEY_NONE ? -1 : (int64_t)(uint32_t)gr_plain(key);
    dist[qi * k + i] = key == VICK_KEY_NONE ? __int_as_float(0x7f800000) : vick_float_unorder((uint32_t)(key >> 32));
  }
}

/* ------------------------------------------------------------ host side */
void vick_gsearch_params_init(vick_gsearch_params *p) {
  memset(p, 0, sizeof *p);
  p->procedure = VICK_GSEARCH_LARGE;
  p->occlusion_limit = 0;
  p->searches = 32;
  p->hops = 0;
  p->list = 0;
  p->delta = 0.1f;
  p->entries = 0;
  p->pivots = 0;
}

/* What one call runs: the procedure and the byte layout of its device
 * buffers (after the counters) and of its pinned staging. */
typedef struct {
  int small, fused, RS, t0, kk, ne, parts, L, hops;
  int grouped; /* large: eight lanes per distance (a batch that fills the device) */
  int slices;  /* pivot slices the pivot kernel scans (a prefix of the pivots) */
  size_t qbytes;                                  /* one query in shared memory */
  size_t off_near, off_res, off_rank, dev_bytes;  /* the queries at offset 0 */
  size_t host_res, host_bytes;                    /* pinned: queries, then ids and distances */
} gs_plan;

static size_t gs_align(size_t b) { return (b + 255) / 256 * 256; }

static int gs_plan_make(vick_call *call, const vick_gsearch *g, int64_t m, int k, const vick_gsearch_params *p,
                        gs_plan *P) {
  memset(P, 0, sizeof *P);
  P->small = p->procedure == VICK_GSEARCH_SMALL;
  P->qbytes = ((size_t)g->d * 4 + 15) / 16 * 16;
  P->ne = p->entries > 0 ? (p->entries < GS_EMAX ? p->entries : GS_EMAX) : GS_EMAX;
  P->RS = (k <= 32 && p->list <= 32) ? 32 : 128;
  P->t0 = p->searches;
  P->kk = k < P->RS ? k : P->RS;
  const int slices = gs_slices(g->pivots);
  int nl = slices; /* pivot candidate lists per query */
  /* The pivot kernel's share: on a connected graph any start leads to the
   * query, so a few pivots are enough to start close, and comparing every
   * query with all of them would take a large share of a big batch.  A
   * disconnected graph needs them all: its searches must start on the
   * query's island. */
  {
    int want = p->pivots > 0 ? p->pivots : (g->components == 1 ? GS_PIVOTS_CONNECTED : g->pivots);
    P->slices = gs_slices(want < g->pivots ? want : g->pivots);
  }
  if (P->small) {
    if (P->t0 < 1 || P->t0 > 64 || P->t0 * P->kk > GS_MERGE_MAX)
      return vick_fail(call, VICK_ARGUMENT, "small-batch search: t0 = %d must be 1..%d for k = %d", P->t0,
                       GS_MERGE_MAX / P->kk < 64 ? GS_MERGE_MAX / P->kk : 64, k);
    /* A connected graph and one wave of blocks: each block finds the nearest
     * of its own share of the pivots and starts there (no pivot kernel, no
     * exchange).  Several components: every search starts from the query's
     * nearest pivots overall, or most of a query's searches would start on
     * the wrong islands and miss the query's own.  Larger batches:
     * the pivot kernel serves all queries first (a pivot row read once for
     * 8 queries). */
    P->fused = g->components == 1 && m * P->t0 <= g->wave_blocks[P->RS == 128];
    P->parts = P->t0 < GS_SLICES_MAX ? P->t0 : GS_SLICES_MAX;
    P->hops = p->hops > 0 ? p->hops : 64;
  } else {
    P->L = p->list > 0 ? p->list : (k <= 32 ? 64 : 128);
    if (P->L < k) P->L = k;
    if (P->L > 256) return vick_fail(call, VICK_ARGUMENT, "large-batch search: list %d above 256", P->L);
    P->hops = p->hops > 0 ? p->hops : 2 * P->L;
    /* one warp per query: from 8 per multiprocessor on, the load units, not
     * each query's memory latency, bound the time, and grouping pays; below
     * that it only adds work per query */
    P->grouped = m >= 8 * (int64_t)g->sms;
  }
  const size_t bq = gs_align((size_t)m * g->d * 4), bn = gs_align((size_t)m * nl * GS_EMAX * 8),
               bres = gs_align((size_t)m * k * 12), br = P->small ? gs_align((size_t)m * P->t0 * P->RS * 8) : 0;
  P->off_near = bq;
  P->off_res = bq + bn;
  P->off_rank = bq + bn + bres;
  P->dev_bytes = bq + bn + bres + br;
  P->host_res = bq;
  P->host_bytes = bq + bres;
  return VICK_OK;
}

/* The small-batch kernel; fused: each block finds the nearest pivots of its
 * share itself (no pivot kernel). */
template <int RS>
static int gs_small_launch(vick_call *call, const vick_gsearch *g, const gs_io *io, const gs_plan *P, gs_graph G,
                           const float *dq, int64_t m, int k, int fused, int64_t *dids, float *ddist) {
  const size_t smem = P->qbytes + (size_t)P->t0 * P->kk * 8;
  unsigned long long *near = (unsigned long long *)(io->dev + P->off_near);
  unsigned long long *rank = (unsigned long long *)(io->dev + P->off_rank);
  const int nlists = P->slices;
  const gs_pivots PV = {(const float4 *)g->pt, g->pivots, P->parts};
  if (fused) {
    gs_small_kernel<RS, true><<<(unsigned)(m * P->t0), GS_SMALL_THREADS, smem, io->stream>>>(
        G, dq, P->t0, P->hops, P->ne, near, nlists, PV, call->seed, k, rank, io->count, dids, ddist);
    VICK_LAUNCH(call, "gs_small_kernel (pivots inside)");
  } else {
    gs_small_kernel<RS, false><<<(unsigned)(m * P->t0), GS_SMALL_THREADS, smem, io->stream>>>(
        G, dq, P->t0, P->hops, P->ne, near, nlists, PV, call->seed, k, rank, io->count, dids, ddist);
    VICK_LAUNCH(call, "gs_small_kernel");
  }
  return VICK_OK;
}

template <int LS>
static int gs_large_launch(vick_call *call, const gs_io *io, const gs_plan *P, gs_graph G, const float *dq, int64_t m,
                           int k, float delta, int64_t *dids, float *ddist) {
  const unsigned long long *near = (const unsigned long long *)(io->dev + P->off_near);
  if (P->grouped)
    gs_large_kernel<LS, true><<<(unsigned)m, 32, P->qbytes, io->stream>>>(G, dq, k, P->L, P->hops, delta, P->ne, near,
                                                                          call->seed, dids, ddist);
  else
    gs_large_kernel<LS, false><<<(unsigned)m, 32, P->qbytes, io->stream>>>(G, dq, k, P->L, P->hops, delta, P->ne,
                                                                           near, call->seed, dids, ddist);
  VICK_LAUNCH(call, "gs_large_kernel");
  return VICK_OK;
}

int gs_small_wave_capacity(vick_call *call, vick_gsearch *g) {
  /* the most shared memory any call asks for: the bound holds for all */
  const size_t smem = ((size_t)g->d * 4 + 15) / 16 * 16 + (size_t)GS_MERGE_MAX * 8;
  int b32 = 0, b128 = 0;
  VICK_CUDA(call, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b32, gs_small_kernel<32, true>, GS_SMALL_THREADS,
                                                                 smem));
  VICK_CUDA(call, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b128, gs_small_kernel<128, true>, GS_SMALL_THREADS,
                                                                 smem));
  g->wave_blocks[0] = b32 * g->sms;
  g->wave_blocks[1] = b128 * g->sms;
  return VICK_OK;
}

/* The call on io: one copy in, the kernels (pivots and search, or the
 * fused search alone), one copy out (two straight into the caller's arrays
 * without pinned staging), one wait. */
static int gs_run(vick_call *call, const vick_gsearch *g, const gs_io *io, const gs_plan *P, const float *q,
                  int64_t m, int k, const vick_gsearch_params *p, int64_t *ids, float *dist) {
  const size_t qb = (size_t)m * g->d * 4, ib = (size_t)m * k * 8, db = (size_t)m * k * 4;
  float *dq = (float *)io->dev;
  int64_t *dids = (int64_t *)(io->dev + P->off_res);
  float *ddist = (float *)(dids + m * k);
  char *hres = io->host ? io->host + P->host_res : NULL;
  if (io->host) {
    memcpy(io->host, q, qb);
    VICK_CUDA(call, cudaMemcpyAsync(dq, io->host, qb, cudaMemcpyHostToDevice, io->stream));
  } else {
    VICK_CUDA(call, cudaMemcpyAsync(dq, q, qb, cudaMemcpyHostToDevice, io->stream));
  }
  gs_graph G = {g->x, g->g,      g->occl,           g->pid,   g->pcomp, g->members,           g->coff,
                g->n, g->d,      g->degree,         p->occlusion_limit, P->slices, g->components == 1,
                g->unique_rows};
  VICK_CUDA(call, cudaEventRecord(io->ev_start, io->stream));
  const int fused = P->fused;
  if (!fused) {
    VICK_TRY(gs_pivot_launch(call, g, dq, m, P->slices, (unsigned long long *)(io->dev + P->off_near),
                             P->small ? io->count : NULL, io->stream));
    VICK_CUDA(call, cudaEventRecord(io->ev_pivots, io->stream));
  }
  if (P->small) {
    if (P->RS == 32) VICK_TRY(gs_small_launch<32>(call, g, io, P, G, dq, m, k, fused, dids, ddist));
    else VICK_TRY(gs_small_launch<128>(call, g, io, P, G, dq, m, k, fused, dids, ddist));
  } else if (P->L <= 64) {
    VICK_TRY(gs_large_launch<64>(call, io, P, G, dq, m, k, p->delta, dids, ddist));
  } else if (P->L <= 128) {
    VICK_TRY(gs_large_launch<128>(call, io, P, G, dq, m, k, p->delta, dids, ddist));
  } else {
    VICK_TRY(gs_large_launch<256>(call, io, P, G, dq, m, k, p->delta, dids, ddist));
  }
  VICK_CUDA(call, cudaEventRecord(io->ev_stop, io->stream));
  if (hres) {
    VICK_CUDA(call, cudaMemcpyAsync(hres, dids, ib + db, cudaMemcpyDeviceToHost, io->stream));
  } else {
    VICK_CUDA(call, cudaMemcpyAsync(ids, dids, ib, cudaMemcpyDeviceToHost, io->stream));
    VICK_CUDA(call, cudaMemcpyAsync(dist, ddist, db, cudaMemcpyDeviceToHost, io->stream));
  }
  VICK_CUDA(call, cudaStreamSynchronize(io->stream));
  if (hres) {
    memcpy(ids, hres, ib);
    memcpy(dist, hres + ib, db);
  }
  float ms = 0.f, pivot_ms = 0.f;
  VICK_CUDA(call, cudaEventElapsedTime(&ms, io->ev_start, io->ev_stop));
  if (!fused) VICK_CUDA(call, cudaEventElapsedTime(&pivot_ms, io->ev_start, io->ev_pivots));
  call->seconds_kernel = 1e-3 * ms;
  if (!fused) vick_stage_add(call, "pivots", 1e-3 * pivot_ms);
  vick_stage_add(call, fused ? "search (pivots inside)" : "search", 1e-3 * (ms - pivot_ms));
  return VICK_OK;
}

/* A call on resources of its own (a large batch, or the workspace busy). */
static int gs_query_own(vick_call *call, const vick_gsearch *g, const gs_plan *P, const float *q, int64_t m, int k,
                        const vick_gsearch_params *p, int64_t *ids, float *dist) {
  vick_env env;
  vick_buf all = {NULL, 0};
  gs_io io;
  memset(&io, 0, sizeof io);
  int rc = vick_begin(call, &env);
  if (rc == VICK_OK) {
    const cudaError_t e = cudaEventCreate(&io.ev_pivots);
    if (e != cudaSuccess) {
      io.ev_pivots = NULL;
      rc = vick_cuda_fail(call, e, "cudaEventCreate", __FILE__, __LINE__);
    }
  }
  const size_t cb = P->small ? gs_align((size_t)m * 4) : 0;
  if (rc == VICK_OK)
    rc = vick_buf_alloc(call, &env, &all, cb + P->dev_bytes, "queries, pivot candidates, results and rankings");
  if (rc == VICK_OK && cb) {
    const cudaError_t e = cudaMemsetAsync(all.p, 0, cb, env.stream);
    if (e != cudaSuccess) rc = vick_cuda_fail(call, e, "cudaMemsetAsync", __FILE__, __LINE__);
  }
  if (rc == VICK_OK) {
    io.stream = env.stream;
    io.ev_start = env.ev_a;
    io.ev_stop = env.ev_b;
    io.count = cb ? (int *)all.p : NULL;
    io.dev = (char *)all.p + cb;
    io.dev_bytes = P->dev_bytes;
    rc = gs_run(call, g, &io, P, q, m, k, p, ids, dist);
  }
  vick_buf_free(&env, &all);
  if (io.ev_pivots) cudaEventDestroy(io.ev_pivots);
  return vick_end(call, &env, rc);
}

int vick_gsearch_query(vick_call *call, const vick_gsearch *g, const float *q, int64_t m, int32_t k,
                       const vick_gsearch_params *p, int64_t *ids, float *dist) {
  if (!call) return VICK_ARGUMENT;
  if (!g || !q || !p || !ids || !dist || m < 1 || k < 1 || k > 128)
    return vick_fail(call, VICK_ARGUMENT, "graph search: needs a graph, queries (m >= 1), 1 <= k <= 128, outputs");
  if (p->procedure != VICK_GSEARCH_SMALL && p->procedure != VICK_GSEARCH_LARGE)
    return vick_fail(call, VICK_ARGUMENT, "graph search: unknown procedure %d", p->procedure);
  if (!(p->delta >= 0.f) || p->hops < 0 || p->occlusion_limit < 0 || p->pivots < 0)
    return vick_fail(call, VICK_ARGUMENT, "graph search: delta, hops, occlusion_limit and pivots must be >= 0");
  if (m > 0x7fffffffLL / 64) return vick_fail(call, VICK_ARGUMENT, "graph search: m = %lld too large", (long long)m);
  if (call->device != g->device)
    return vick_fail(call, VICK_ARGUMENT, "graph search: the graph lives on device %d, the call names %d", g->device,
                     call->device);
  gs_plan P;
  VICK_TRY(gs_plan_make(call, g, m, k, p, &P));
  if (!P.small || m > GS_WS_QUERIES || !gs_ws_acquire(g)) return gs_query_own(call, g, &P, q, m, k, p, ids, dist);
  /* the index's workspace: no stream, event or buffer made, no device
   * memory query (vick_begin's) on the way */
  const double t_start = vick_now();
  call->seconds_transfer = call->seconds_kernel = call->seconds_total = 0;
  call->n_stages = 0;
  call->message[0] = '\0';
  gs_io io;
  cudaError_t e = cudaSetDevice(call->device);
  int rc = e == cudaSuccess ? VICK_OK : vick_cuda_fail(call, e, "cudaSetDevice", __FILE__, __LINE__);
  if (rc == VICK_OK) rc = gs_ws_reserve(call, g, P.dev_bytes, P.host_bytes, &io);
  if (rc == VICK_OK) rc = gs_run(call, g, &io, &P, q, m, k, p, ids, dist);
  gs_ws_release(g, rc != VICK_OK);
  call->seconds_total = vick_now() - t_start;
  return rc;
}
