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
 *    the first k of their rankings by ranks, repeats dropped (no second
 *    launch: a single query pays two launches, pivots and search).
 *
 *  large batch (Alg. 2): one warp-sized block per query keeps a sorted list
 *    (R and the expansion queue C in one array: unexpanded entries carry no
 *    flag), a visited hash table in shared memory and the probe threshold
 *    Delta: the nearest unexpanded entry u is expanded unless
 *    d(u) > (1 + Delta) d(k-th found); its unvisited neighbours' distances
 *    come one per lane (32 at a time, float4 loads in flight together),
 *    merged into the list by a warp merge sort.
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
  unsigned long long ck[GS_CHUNK];    /* the candidates kept (VICK_KEY_NONE: dropped) */
  unsigned long long sk[GS_SLICES_MAX * GS_EMAX];
  int32_t near[GS_EMAX];
  int last, distinct;
};

/* first index of sorted a[0..n) not below key */
__device__ __forceinline__ int gs_lower(const unsigned long long *a, int n, unsigned long long key) {
  int lo = 0, hi = n;
  while (lo < hi) {
    const int mid = (lo + hi) >> 1;
    if (a[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Merge the candidates c into R by ranks (block-wide; keys are distinct
 * per node, and a node's key is the same in every pass): a candidate is
 * kept unless R or an earlier candidate holds it; its place is the number
 * of smaller R entries and kept candidates, an R entry's its index plus the
 * smaller kept candidates.  Kept candidates that land in R update
 * best[slot]. */
template <int RS>
__device__ __forceinline__ void gs_small_merge(gs_small_smem<RS> &sm, int &cur, int slot, int t) {
  const unsigned long long *r = sm.r[cur];
  unsigned long long *rn = sm.r[cur ^ 1];
  if (t < GS_CHUNK) {
    const unsigned long long key = sm.c[t];
    bool keep = key != VICK_KEY_NONE;
    if (keep) {
      const int lo = gs_lower(r, RS, key);
      keep = !(lo < RS && r[lo] == key);
    }
    /* no early exit: the loads go out together */
    bool dup = false;
#pragma unroll 16
    for (int j = 0; j < GS_CHUNK; ++j) dup |= j < t && sm.c[j] == key;
    sm.ck[t] = keep && !dup ? key : VICK_KEY_NONE;
  } else if (t < GS_CHUNK + RS) {
    rn[t - GS_CHUNK] = VICK_KEY_NONE;
  }
  __syncthreads();
  if (t < GS_CHUNK) {
    const unsigned long long key = sm.ck[t];
    if (key != VICK_KEY_NONE) {
      int pos = gs_lower(r, RS, key);
#pragma unroll 16
      for (int j = 0; j < GS_CHUNK; ++j) pos += sm.ck[j] < key;
      if (pos < RS) {
        rn[pos] = key;
        atomicMin(&sm.best[slot], key);
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
 * by the other blocks of the query) into its k best distinct ones: a key
 * is counted once (its first copy), and its place is the number of smaller
 * counted keys.  s, first: shared scratch of t0 * kk entries. */
__device__ __forceinline__ void gs_merge_query(const unsigned long long *in, int t0, int rs, int kk, int k,
                                               unsigned long long *s, unsigned char *first, int *distinct,
                                               int64_t *ids, float *dist, int t, int nt) {
  const int n = t0 * kk;
  if (t == 0) *distinct = 0;
  for (int i = t; i < n; i += nt) s[i] = __ldcg(in + (i / kk) * rs + i % kk);
  __syncthreads();
  int mine = 0;
  for (int i = t; i < n; i += nt) {
    const unsigned long long key = s[i];
    bool f = key != VICK_KEY_NONE;
    /* no early exit: the loads go out together */
#pragma unroll 8
    for (int j = 0; j < n; ++j) f &= !(j < i && s[j] == key);
    first[i] = f;
    mine += f;
  }
  atomicAdd(distinct, mine);
  __syncthreads();
  for (int i = t; i < n; i += nt) {
    if (!first[i]) continue;
    const unsigned long long key = s[i];
    int pos = 0;
    for (int j = 0; j < n; ++j) pos += first[j] && s[j] < key;
    if (pos < k) {
      ids[pos] = (int64_t)(uint32_t)key;
      dist[pos] = vick_float_unorder((uint32_t)(key >> 32));
    }
  }
  for (int i = *distinct + t; i < k; i += nt) {
    ids[i] = -1;
    dist[i] = __int_as_float(0x7f800000);
  }
}

template <int RS>
__global__ void __launch_bounds__(GS_SMALL_THREADS)
    gs_small_kernel(gs_graph G, const float *q, int t0, int hops, int ne_want, const unsigned long long *pnear,
                    uint64_t seed, int k, unsigned long long *out /* m * t0 * RS */, int *count, int64_t *ids,
                    float *dist) {
  /* dynamic: the query, then the merge's keys and flags (t0 * min(k, RS)) */
  extern __shared__ float4 sq4[];
  float *sq = (float *)sq4;
  const int kk = k < RS ? k : RS;
  unsigned long long *mk = (unsigned long long *)(sq4 + (G.d + 3) / 4);
  unsigned char *mf = (unsigned char *)(mk + t0 * kk);
  __shared__ gs_small_smem<RS> sm;
  const int64_t qi = blockIdx.x / t0;
  const int sj = blockIdx.x % t0;
  const int t = threadIdx.x, g = t / GS_GROUP, gl = t % GS_GROUP;
  const int d = G.d;
  for (int j = t; j < d; j += blockDim.x) sq[j] = q[qi * d + j];
  for (int i = t; i < RS; i += blockDim.x) sm.r[0][i] = VICK_KEY_NONE;
  if (t < GS_EMAX) sm.near[t] = -1;
  if (t < 2) sm.best[t] = VICK_KEY_NONE;
  __syncthreads();
  gs_pick_near(pnear + qi * G.slices * GS_EMAX, G.slices, sm.sk, sm.near, t, blockDim.x);
  int ne = 0;
  while (ne < ne_want && sm.near[ne] >= 0) ++ne;
  {
    int64_t v = -1;
    if (g < GS_SEEDS) v = gs_seed(G, sm.near, ne, gr_rand(seed, (uint64_t)qi, (uint64_t)sj, (uint64_t)g), g);
    else if (g == GS_SEEDS && ne > 0) v = G.pid[sm.near[sj % ne]];
    const float s = gs_group_l2(sq, G.x + (v < 0 ? 0 : v) * d, d, gl, v >= 0);
    if (gl == 0) sm.c[g] = v >= 0 ? vick_key(s, (uint32_t)v) : VICK_KEY_NONE;
  }
  __syncthreads();
  int cur = 0;
  gs_small_merge<RS>(sm, cur, 0, t);
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
      gs_small_merge<RS>(sm, cur, (h + 1) & 1, t);
      if (!full) break;
    }
  }
  unsigned long long *o = out + (qi * t0 + sj) * RS;
  for (int i = t; i < RS; i += blockDim.x) o[i] = sm.r[cur][i];
  /* the last search of the query to finish merges all t0 rankings (no
   * second launch): its writes made visible before it counts itself */
  __threadfence();
  __syncthreads();
  if (t == 0) sm.last = atomicAdd(count + qi, 1) == t0 - 1;
  __syncthreads();
  if (!sm.last) return;
  __threadfence();
  gs_merge_query(out + qi * t0 * RS, t0, RS, kk, k, mk, mf, &sm.distinct, ids + qi * k, dist + qi * k, t,
                 blockDim.x);
}

/* ----------------------------------------------------- large batch: Alg. 2 */
template <int LS>
struct gs_large_smem {
  static const int IPT = LS / 32 + 1;
  unsigned long long keys[LS + 32];
  typename cub::WarpMergeSort<unsigned long long, IPT, 32>::TempStorage tmp;
  union { /* the pivot candidates are read before the visited table is used */
    uint32_t hash[GS_HASH];
    unsigned long long sk[GS_SLICES_MAX * GS_EMAX];
  };
  int32_t near[GS_EMAX];
};

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

template <int LS>
__global__ void __launch_bounds__(32)
    gs_large_kernel(gs_graph G, const float *q, int k, int L, int hops, float delta, int ne_want,
                    const unsigned long long *pnear, uint64_t seed, int64_t *ids, float *dist) {
  extern __shared__ float sq[];
  __shared__ gs_large_smem<LS> sm;
  const int64_t qi = blockIdx.x;
  const int lane = threadIdx.x;
  const int d = G.d;
  for (int j = lane; j < d; j += 32) sq[j] = q[qi * d + j];
  for (int i = lane; i < LS + 32; i += 32) sm.keys[i] = VICK_KEY_NONE;
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
    /* one distance per lane, all lanes at once */
    sm.keys[LS + lane] = fresh ? vick_key(gr_lane_l2(sq, G.x + v * d, d), (uint32_t)v) : VICK_KEY_NONE;
    __syncwarp();
    gr_warp_sort_unique<gs_large_smem<LS>::IPT>(sm.keys, sm.tmp, lane);
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
      sm.keys[LS + lane] = fresh ? vick_key(gr_lane_l2(sq, G.x + (int64_t)v * d, d), (uint32_t)v) : VICK_KEY_NONE;
      __syncwarp();
      gr_warp_sort_unique<gs_large_smem<LS>::IPT>(sm.keys, sm.tmp, lane);
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
}

/* One device allocation per call, cut into these (a single cudaMalloc and
 * cudaFree: each costs microseconds that a single query feels). */
typedef struct {
  vick_env env;
  cudaEvent_t ev_pivots; /* between the pivot kernel and the search: the stages' split */
  vick_buf all;
  void *q, *near, *ids, *dist, *rank, *count;
} gs_ws;

static size_t gs_align(size_t b) { return (b + 255) / 256 * 256; }

template <int RS>
static int gs_small_launch(vick_call *call, gs_ws *w, gs_graph G, int64_t m, int k, int t0, int hops, int ne,
                           size_t qbytes) {
  const int kk = k < RS ? k : RS;
  const size_t smem = qbytes + (size_t)t0 * kk * 9;
  gs_small_kernel<RS><<<(unsigned)(m * t0), GS_SMALL_THREADS, smem, w->env.stream>>>(
      G, (const float *)w->q, t0, hops, ne, (const unsigned long long *)w->near, call->seed, k,
      (unsigned long long *)w->rank, (int *)w->count, (int64_t *)w->ids, (float *)w->dist);
  VICK_LAUNCH(call, "gs_small_kernel");
  return VICK_OK;
}

template <int LS>
static int gs_large_launch(vick_call *call, gs_ws *w, gs_graph G, int64_t m, int k, int L, int hops, float delta,
                           int ne, size_t qbytes) {
  gs_large_kernel<LS><<<(unsigned)m, 32, qbytes, w->env.stream>>>(G, (const float *)w->q, k, L, hops, delta, ne,
                                                                  (const unsigned long long *)w->near, call->seed,
                                                                  (int64_t *)w->ids, (float *)w->dist);
  VICK_LAUNCH(call, "gs_large_kernel");
  return VICK_OK;
}

static int gs_run(vick_call *call, gs_ws *w, const vick_gsearch *g, const float *q, int64_t m, int k,
                  const vick_gsearch_params *p, int64_t *ids, float *dist) {
  const size_t qbytes = ((size_t)g->d * 4 + 15) / 16 * 16;
  const int slices = gs_slices(g->pivots);
  const int ne = p->entries > 0 ? (p->entries < GS_EMAX ? p->entries : GS_EMAX) : GS_EMAX;
  const int RS = (k <= 32 && p->list <= 32) ? 32 : 128;
  const int t0 = p->searches, kk = k < RS ? k : RS;
  if (p->procedure == VICK_GSEARCH_SMALL && (t0 < 1 || t0 > 64 || t0 * kk > GS_MERGE_MAX))
    return vick_fail(call, VICK_ARGUMENT, "small-batch search: t0 = %d must be 1..%d for k = %d", t0,
                     GS_MERGE_MAX / kk < 64 ? GS_MERGE_MAX / kk : 64, k);
  const size_t bq = gs_align((size_t)m * g->d * 4), bn = gs_align((size_t)m * slices * GS_EMAX * 8),
               bi = gs_align((size_t)m * k * 8), bd = gs_align((size_t)m * k * 4),
               br = p->procedure == VICK_GSEARCH_SMALL ? gs_align((size_t)m * t0 * RS * 8) : 0,
               bc = p->procedure == VICK_GSEARCH_SMALL ? (size_t)m * 4 : 0;
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->all, bq + bn + bi + bd + br + bc,
                          "queries, pivot candidates, results and rankings"));
  char *base = (char *)w->all.p;
  w->q = base;
  w->near = base + bq;
  w->ids = base + bq + bn;
  w->dist = base + bq + bn + bi;
  w->rank = base + bq + bn + bi + bd;
  w->count = p->procedure == VICK_GSEARCH_SMALL ? base + bq + bn + bi + bd + br : NULL;
  /* stream-ordered: no host wait between the copy and the kernels */
  VICK_CUDA(call, cudaMemcpyAsync(w->q, q, (size_t)m * g->d * 4, cudaMemcpyHostToDevice, w->env.stream));
  gs_graph G = {g->x,        g->g, g->occl,   g->pid,   g->pcomp, g->members, g->coff,
                g->n,        g->d, g->degree, p->occlusion_limit, slices, g->components == 1};
  double kt = 0;
  VICK_TRY(vick_timer_start(call, &w->env));
  VICK_TRY(gs_pivot_launch(call, g, (const float *)w->q, m, (unsigned long long *)w->near, (int *)w->count,
                           w->env.stream));
  VICK_CUDA(call, cudaEventRecord(w->ev_pivots, w->env.stream));
  if (p->procedure == VICK_GSEARCH_SMALL) {
    const int hops = p->hops > 0 ? p->hops : 64;
    if (RS == 32) VICK_TRY(gs_small_launch<32>(call, w, G, m, k, t0, hops, ne, qbytes));
    else VICK_TRY(gs_small_launch<128>(call, w, G, m, k, t0, hops, ne, qbytes));
  } else {
    int L = p->list > 0 ? p->list : (k <= 32 ? 64 : 128);
    if (L < k) L = k;
    if (L > 256) return vick_fail(call, VICK_ARGUMENT, "large-batch search: list %d above 256", L);
    const int hops = p->hops > 0 ? p->hops : 2 * L;
    if (L <= 64) VICK_TRY(gs_large_launch<64>(call, w, G, m, k, L, hops, p->delta, ne, qbytes));
    else if (L <= 128) VICK_TRY(gs_large_launch<128>(call, w, G, m, k, L, hops, p->delta, ne, qbytes));
    else VICK_TRY(gs_large_launch<256>(call, w, G, m, k, L, hops, p->delta, ne, qbytes));
  }
  VICK_TRY(vick_timer_stop(call, &w->env, &kt, NULL));
  call->seconds_kernel += kt;
  float pivot_ms = 0.f;
  VICK_CUDA(call, cudaEventElapsedTime(&pivot_ms, w->env.ev_a, w->ev_pivots));
  vick_stage_add(call, "pivots", 1e-3 * pivot_ms);
  vick_stage_add(call, "search", kt - 1e-3 * pivot_ms);
  const double t_copy = vick_now();
  VICK_CUDA(call, cudaMemcpyAsync(ids, w->ids, (size_t)m * k * 8, cudaMemcpyDeviceToHost, w->env.stream));
  VICK_CUDA(call, cudaMemcpyAsync(dist, w->dist, (size_t)m * k * 4, cudaMemcpyDeviceToHost, w->env.stream));
  VICK_CUDA(call, cudaStreamSynchronize(w->env.stream));
  call->seconds_transfer += vick_now() - t_copy;
  return VICK_OK;
}

int vick_gsearch_query(vick_call *call, const vick_gsearch *g, const float *q, int64_t m, int32_t k,
                       const vick_gsearch_params *p, int64_t *ids, float *dist) {
  if (!call) return VICK_ARGUMENT;
  if (!g || !q || !p || !ids || !dist || m < 1 || k < 1 || k > 128)
    return vick_fail(call, VICK_ARGUMENT, "graph search: needs a graph, queries (m >= 1), 1 <= k <= 128, outputs");
  if (p->procedure != VICK_GSEARCH_SMALL && p->procedure != VICK_GSEARCH_LARGE)
    return vick_fail(call, VICK_ARGUMENT, "graph search: unknown procedure %d", p->procedure);
  if (!(p->delta >= 0.f) || p->hops < 0 || p->occlusion_limit < 0)
    return vick_fail(call, VICK_ARGUMENT, "graph search: delta, hops and occlusion_limit must be >= 0");
  if (m > 0x7fffffffLL / 64) return vick_fail(call, VICK_ARGUMENT, "graph search: m = %lld too large", (long long)m);
  if (call->device != g->device)
    return vick_fail(call, VICK_ARGUMENT, "graph search: the graph lives on device %d, the call names %d", g->device,
                     call->device);
  gs_ws w;
  memset(&w, 0, sizeof w);
  int rc = vick_begin(call, &w.env);
  if (rc == VICK_OK) {
    const cudaError_t e = cudaEventCreate(&w.ev_pivots);
    if (e != cudaSuccess) {
      w.ev_pivots = NULL;
      rc = vick_cuda_fail(call, e, "cudaEventCreate", __FILE__, __LINE__);
    }
  }
  if (rc == VICK_OK) rc = gs_run(call, &w, g, q, m, k, p, ids, dist);
  vick_buf_free(&w.env, &w.all);
  if (w.ev_pivots) cudaEventDestroy(w.ev_pivots);
  return vick_end(call, &w.env, rc);
}
