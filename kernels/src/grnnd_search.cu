/* Graph search on a flat graph (GRNND's, TSDG's, any kNN graph), the two
 * procedures of TSDG (Wang, Wang, Zhao, Sec. 4):
 *
 *  small batch (Alg. 1): every query runs t0 independent cheap greedy
 *    searches on t0 thread blocks.  A search starts from the best of 32
 *    random nodes and the query's nearest component representatives, then
 *    hops: the warps of the block compare the current node's neighbours
 *    (edges under the occlusion limit) with the query, the ranking R (32 or
 *    128 keys, shared memory) takes them in a warp merge sort, and the
 *    nearest neighbour that entered R becomes the next node; a hop that
 *    improves nothing ends the search.  A second kernel merges the t0
 *    rankings of a query (block radix sort, repeats dropped).
 *
 *  large batch (Alg. 2): one warp-sized block per query keeps a sorted list
 *    (R and the expansion queue C in one array: unexpanded entries carry no
 *    flag), a visited hash table in shared memory and the probe threshold
 *    Delta: the nearest unexpanded entry u is expanded unless
 *    d(u) > (1 + Delta) d(k-th found); its unvisited neighbours' distances
 *    come one per lane (32 at a time, float4 loads in flight together),
 *    merged into the list by a warp merge sort.
 *
 * Entry points: the graph's weakly connected components are labelled at
 * upload (union-find on the host) and one representative of each is kept;
 * a first kernel finds each query's nearest representatives, which every
 * search of the query also starts from (disconnected data: islands). */
#include "grnnd_common.cuh"
#include "vic_kernels_grnnd.h"

#include <cub/block/block_radix_sort.cuh>

#include <stdlib.h>
#include <string.h>

#define GS_EMAX 8          /* nearest representatives handed to each search */
#define GS_SEEDS 32        /* random seeds per search (Alg. 1 line 2, Alg. 2 line 1) */
#define GS_SMALL_WARPS 16 /* warps per greedy search: 4 neighbour distances each per 64-edge chunk */
#define GS_CHUNK 64        /* neighbours compared per merge in the small procedure */
#define GS_HASH 2048       /* visited table slots of the large procedure */
#define GS_MERGE_THREADS 256
#define GS_MERGE_IPT 8     /* t0 * ranking <= 2048 */

struct vick_gsearch {
  int device;
  int64_t n;
  int32_t d, degree;
  int64_t components;
  int32_t entries;
  int32_t sms;
  int has_occl;
  float *x;        /* device n x d */
  int32_t *g;      /* device n x degree */
  uint8_t *occl;   /* device n x degree or NULL */
  int32_t *entry;  /* device representatives (entries) */
  int32_t *members;/* device: the nodes of the kept components, grouped by component */
  int32_t *coff;   /* device: entries + 1 offsets into members */
  size_t bytes;
};

struct gs_graph {
  const float *x;
  const int32_t *g;
  const uint8_t *occl;
  const int32_t *entry, *members, *coff;
  int64_t n;
  int d, degree, limit, ne;
};

/* Random seed s of a search: a random member of one of the query's nearest
 * components (best: entry indices, GS_EMAX per query, -1 = none): three in
 * four from the nearest, the rest spread over the next ones.  With one
 * component this is a uniformly random node. */
__device__ __forceinline__ int64_t gs_seed(const gs_graph &G, const int32_t *best, int64_t qi, uint64_t r, int s) {
  int slot = 0;
  if ((s & 3) == 3 && G.ne > 1) slot = 1 + (s >> 2) % min(G.ne - 1, GS_EMAX - 1);
  int e = best[qi * GS_EMAX + slot];
  if (e < 0) e = best[qi * GS_EMAX];
  if (e < 0) return (int64_t)(r % (uint64_t)G.n);
  const int a = G.coff[e], b = G.coff[e + 1];
  return G.members[a + (int)(r % (uint64_t)(b - a))];
}

__device__ __forceinline__ bool gs_edge_ok(const gs_graph &G, int64_t u, int e, int32_t *id) {
  if (e >= G.degree) return false;
  const int32_t v = G.g[u * G.degree + e];
  *id = v;
  return v >= 0 && (!G.occl || G.limit <= 0 || G.occl[u * G.degree + e] < G.limit);
}

/* ---------------------------------------------------------- entry points */
/* Block per query: distances to every representative (a warp each), the
 * nearest ne of them (repeated warp arg-min) into best[q * GS_EMAX ..]. */
__global__ void gs_entry_kernel(const float *x, int d, const int32_t *entry, int nentry, const float *q, int64_t m,
                                int ne, int32_t *best) {
  extern __shared__ float ed[]; /* nentry distances */
  const int64_t qi = blockIdx.x;
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5, nw = blockDim.x >> 5;
  const float *xq = q + qi * d;
  for (int e = w; e < nentry; e += nw) {
    float s = gr_warp_l2(xq, x + (int64_t)entry[e] * d, d, lane);
    if (lane == 0) ed[e] = s;
  }
  __syncthreads();
  if (w != 0) return;
  for (int r = 0; r < GS_EMAX; ++r) {
    float bd = __int_as_float(0x7f800000);
    int bi = -1;
    if (r < ne)
      for (int e = lane; e < nentry; e += 32)
        if (ed[e] < bd) { bd = ed[e]; bi = e; }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      float d2 = __shfl_xor_sync(GR_FULL, bd, o);
      int i2 = __shfl_xor_sync(GR_FULL, bi, o);
      if (d2 < bd || (d2 == bd && i2 >= 0 && (bi < 0 || i2 < bi))) { bd = d2; bi = i2; }
    }
    if (lane == 0) {
      best[qi * GS_EMAX + r] = bi; /* entry index, -1 = none */
      if (bi >= 0) ed[bi] = __int_as_float(0x7f800000);
    }
    __syncwarp();
  }
}

/* ----------------------------------------------------- small batch: Alg. 1 */
template <int RS>
struct gs_small_smem {
  static const int IPT = (RS + GS_CHUNK) / 32;
  unsigned long long keys[RS + GS_CHUNK]; /* R, then the chunk's candidates */
  typename cub::WarpMergeSort<unsigned long long, IPT, 32>::TempStorage tmp;
  int64_t u;
  int improved;
};

template <int RS>
__global__ void __launch_bounds__(GS_SMALL_WARPS * 32)
    gs_small_kernel(gs_graph G, const float *q, int64_t m, int t0, int hops, const int32_t *best, uint64_t seed,
                    unsigned long long *out /* m * t0 * RS */) {
  extern __shared__ float sq[];
  __shared__ gs_small_smem<RS> sm;
  const int64_t qi = blockIdx.x / t0;
  const int sj = blockIdx.x % t0;
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int d = G.d;
  for (int j = threadIdx.x; j < d; j += blockDim.x) sq[j] = q[qi * d + j];
  for (int i = threadIdx.x; i < RS + GS_CHUNK; i += blockDim.x) sm.keys[i] = VICK_KEY_NONE;
  __syncthreads();
  /* seeds: 32 random nodes of this search and the query's nearest representatives */
  for (int s = w; s < GS_SEEDS + GS_EMAX; s += GS_SMALL_WARPS) {
    int64_t v;
    if (s < GS_SEEDS) v = gs_seed(G, best, qi, gr_rand(seed, (uint64_t)qi, (uint64_t)sj, (uint64_t)s), s);
    else {
      const int e = best[qi * GS_EMAX + (s - GS_SEEDS)];
      v = e >= 0 ? G.entry[e] : -1;
    }
    if (v < 0) continue;
    float dist = gr_warp_l2(sq, G.x + v * d, d, lane);
    if (lane == 0) sm.keys[RS + s] = vick_key(dist, (uint32_t)v);
  }
  __syncthreads();
  for (int t = 0;; ++t) {
    /* merge the candidates into R: R's entries carry the flag, so the new
     * ones that entered R during this hop (its earlier chunks included) are
     * the unflagged keys after the merge; the nearest is the next node */
    if (w == 0) {
      gr_warp_sort_unique<gs_small_smem<RS>::IPT>(sm.keys, sm.tmp, lane);
      int first = RS;
      for (int base = 0; base < RS; base += 32) {
        unsigned long long k = sm.keys[base + lane];
        unsigned b = __ballot_sync(GR_FULL, k != VICK_KEY_NONE && !(k & GR_FLAG));
        if (b) { first = base + __ffs(b) - 1; break; }
      }
      if (lane == 0) {
        sm.improved = first < RS;
        sm.u = first < RS ? (int64_t)(uint32_t)gr_plain(sm.keys[first]) : -1;
      }
      __syncwarp();
      for (int i = lane; i < RS; i += 32) /* from now on these are old entries */
        if (sm.keys[i] != VICK_KEY_NONE) sm.keys[i] |= GR_FLAG;
      for (int i = RS + lane; i < RS + GS_CHUNK; i += 32) sm.keys[i] = VICK_KEY_NONE;
    }
    __syncthreads();
    if (!sm.improved || t >= hops) break;
    const int64_t u = sm.u;
    /* the neighbours of u, GS_CHUNK at a time; every chunk merged */
    int last = 0;
    for (int base = 0; base < G.degree && !last; base += GS_CHUNK) {
      for (int e = w; e < GS_CHUNK; e += GS_SMALL_WARPS) {
        int32_t v = -1;
        if (gs_edge_ok(G, u, base + e, &v)) {
          float dist = gr_warp_l2(sq, G.x + (int64_t)v * d, d, lane);
          if (lane == 0) sm.keys[RS + e] = vick_key(dist, (uint32_t)v);
        }
      }
      __syncthreads();
      if (base + GS_CHUNK < G.degree) { /* more neighbours: merge this chunk, keep the new-entry marks */
        if (w == 0) {
          gr_warp_sort_unique<gs_small_smem<RS>::IPT>(sm.keys, sm.tmp, lane);
          for (int i = RS + lane; i < RS + GS_CHUNK; i += 32) sm.keys[i] = VICK_KEY_NONE;
        }
        __syncthreads();
      } else {
        last = 1;
      }
    }
  }
  unsigned long long *o = out + (qi * t0 + sj) * RS;
  for (int i = threadIdx.x; i < RS; i += blockDim.x) {
    unsigned long long k = sm.keys[i];
    o[i] = k == VICK_KEY_NONE ? k : gr_plain(k);
  }
}

/* t0 rankings of each query into its k best distinct keys (IPT keys per
 * thread: the smallest sort that holds t0 * ranking). */
template <int IPT>
__global__ void gs_merge_kernel(const unsigned long long *in, int per_query, int k, int64_t *ids, float *dist) {
  typedef cub::BlockRadixSort<unsigned long long, GS_MERGE_THREADS, IPT> sort_t;
  __shared__ typename sort_t::TempStorage tmp;
  __shared__ unsigned long long s[GS_MERGE_THREADS * IPT];
  const int64_t qi = blockIdx.x;
  unsigned long long it[IPT];
#pragma unroll
  for (int i = 0; i < IPT; ++i) {
    int slot = threadIdx.x * IPT + i;
    it[i] = slot < per_query ? in[qi * per_query + slot] : VICK_KEY_NONE;
  }
  sort_t(tmp).Sort(it);
#pragma unroll
  for (int i = 0; i < IPT; ++i) s[threadIdx.x * IPT + i] = it[i];
  __syncthreads();
  if (threadIdx.x == 0) {
    int c = 0;
    unsigned long long prev = VICK_KEY_NONE;
    for (int i = 0; i < per_query && c < k; ++i) {
      unsigned long long key = s[i];
      if (key == VICK_KEY_NONE) break;
      if (key == prev) continue;
      prev = key;
      ids[qi * k + c] = (int64_t)(uint32_t)key;
      dist[qi * k + c] = vick_float_unorder((uint32_t)(key >> 32));
      ++c;
    }
    for (; c < k; ++c) {
      ids[qi * k + c] = -1;
      dist[qi * k + c] = __int_as_float(0x7f800000);
    }
  }
}

/* ----------------------------------------------------- large batch: Alg. 2 */
template <int LS>
struct gs_large_smem {
  static const int IPT = LS / 32 + 1;
  unsigned long long keys[LS + 32];
  typename cub::WarpMergeSort<unsigned long long, IPT, 32>::TempStorage tmp;
  uint32_t hash[GS_HASH];
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
    gs_large_kernel(gs_graph G, const float *q, int64_t m, int k, int L, int hops, float delta, const int32_t *best,
                    uint64_t seed, int64_t *ids, float *dist) {
  extern __shared__ float sq[];
  __shared__ gs_large_smem<LS> sm;
  const int64_t qi = blockIdx.x;
  const int lane = threadIdx.x;
  const int d = G.d;
  for (int j = lane; j < d; j += 32) sq[j] = q[qi * d + j];
  for (int i = lane; i < LS + 32; i += 32) sm.keys[i] = VICK_KEY_NONE;
  for (int i = lane; i < GS_HASH; i += 32) sm.hash[i] = 0xffffffffu;
  __syncwarp();
  /* seeds: 32 random nodes and the nearest representatives */
  for (int pass = 0; pass < 2; ++pass) {
    int64_t v = -1;
    if (pass == 0) v = gs_seed(G, best, qi, gr_rand(seed, (uint64_t)qi, 0, (uint64_t)lane), lane);
    else if (lane < GS_EMAX) {
      const int e = best[qi * GS_EMAX + lane];
      v = e >= 0 ? G.entry[e] : -1;
    }
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
  p->entries = 4;
}

static int64_t uf_find(int64_t *par, int64_t a) {
  while (par[a] != a) {
    par[a] = par[par[a]];
    a = par[a];
  }
  return a;
}

typedef struct {
  int64_t root, size;
} gs_comp;

static int cmp_comp(const void *a, const void *b) {
  const gs_comp *x = (const gs_comp *)a, *y = (const gs_comp *)b;
  if (x->size != y->size) return x->size > y->size ? -1 : 1;
  return (x->root > y->root) - (x->root < y->root);
}

static void gs_release(vick_gsearch *g) {
  if (!g) return;
  int prev = -1;
  cudaGetDevice(&prev);
  cudaSetDevice(g->device);
  cudaFree(g->x);
  cudaFree(g->g);
  cudaFree(g->occl);
  cudaFree(g->entry);
  cudaFree(g->members);
  cudaFree(g->coff);
  if (prev >= 0) cudaSetDevice(prev);
  free(g);
}

static int gs_upload(vick_call *call, vick_gsearch *g, const float *rows, const int32_t *graph, const uint8_t *occl,
                     const int32_t *entry, const int32_t *members, int64_t nmembers, const int32_t *coff) {
  const size_t nx = (size_t)g->n * g->d * 4, ng = (size_t)g->n * g->degree;
  size_t need = nx + ng * 4 + (occl ? ng : 0) + (size_t)g->entries * 8 + 4 + (size_t)nmembers * 4;
  size_t fr = 0, tot = 0;
  VICK_CUDA(call, cudaMemGetInfo(&fr, &tot));
  size_t budget = call->memory_budget ? call->memory_budget : (size_t)(0.9 * (double)fr);
  if (need > budget)
    return vick_fail(call, VICK_NOMEM, "graph search: %zu bytes of rows and graph exceed the device budget %zu", need,
                     budget);
  VICK_CUDA(call, cudaMalloc((void **)&g->x, nx));
  VICK_CUDA(call, cudaMalloc((void **)&g->g, ng * 4));
  if (occl) VICK_CUDA(call, cudaMalloc((void **)&g->occl, ng));
  VICK_CUDA(call, cudaMalloc((void **)&g->entry, (size_t)g->entries * 4));
  VICK_CUDA(call, cudaMalloc((void **)&g->members, (size_t)nmembers * 4));
  VICK_CUDA(call, cudaMalloc((void **)&g->coff, ((size_t)g->entries + 1) * 4));
  g->bytes = need;
  double t0 = vick_now();
  VICK_CUDA(call, cudaMemcpy(g->x, rows, nx, cudaMemcpyHostToDevice));
  VICK_CUDA(call, cudaMemcpy(g->g, graph, ng * 4, cudaMemcpyHostToDevice));
  if (occl) VICK_CUDA(call, cudaMemcpy(g->occl, occl, ng, cudaMemcpyHostToDevice));
  VICK_CUDA(call, cudaMemcpy(g->entry, entry, (size_t)g->entries * 4, cudaMemcpyHostToDevice));
  VICK_CUDA(call, cudaMemcpy(g->members, members, (size_t)nmembers * 4, cudaMemcpyHostToDevice));
  VICK_CUDA(call, cudaMemcpy(g->coff, coff, ((size_t)g->entries + 1) * 4, cudaMemcpyHostToDevice));
  call->seconds_transfer += vick_now() - t0;
  return VICK_OK;
}

int vick_gsearch_create(vick_call *call, const float *rows, int64_t n, int32_t d, const int32_t *graph,
                        int32_t degree, const uint8_t *occl, int32_t max_entries, vick_gsearch **out) {
  if (!call) return VICK_ARGUMENT;
  if (!out || !rows || !graph || n < 1 || d < 1 || degree < 1 || n >= ((int64_t)1 << 31) - 1)
    return vick_fail(call, VICK_ARGUMENT, "graph search: needs rows, a graph (degree >= 1) and 1 <= n < 2^31 - 1");
  if ((size_t)d * 4 > 40000) return vick_fail(call, VICK_ARGUMENT, "graph search: d = %d above 10000", (int)d);
  *out = NULL;
  double t_start = vick_now();
  call->seconds_transfer = call->seconds_kernel = 0;
  call->n_stages = 0;
  call->message[0] = '\0';
  for (int64_t i = 0; i < n * (int64_t)degree; ++i)
    if (graph[i] < -1 || graph[i] >= n)
      return vick_fail(call, VICK_ARGUMENT, "graph search: row %lld has edge %d outside 0..%lld",
                       (long long)(i / degree), (int)graph[i], (long long)(n - 1));
  /* weakly connected components: union-find over every edge */
  int64_t *par = (int64_t *)malloc((size_t)n * sizeof(int64_t));
  if (!par) return vick_fail(call, VICK_NOMEM, "graph search: no host memory for the component labels");
  for (int64_t i = 0; i < n; ++i) par[i] = i;
  for (int64_t i = 0; i < n; ++i)
    for (int32_t e = 0; e < degree; ++e) {
      int32_t v = graph[i * degree + e];
      if (v < 0) continue;
      int64_t a = uf_find(par, i), b = uf_find(par, v);
      if (a != b) par[a > b ? a : b] = a < b ? a : b;
    }
  int64_t ncomp = 0;
  int64_t *size = (int64_t *)calloc((size_t)n, sizeof(int64_t));
  if (!size) { free(par); return vick_fail(call, VICK_NOMEM, "graph search: no host memory for component sizes"); }
  for (int64_t i = 0; i < n; ++i) {
    int64_t r = uf_find(par, i);
    if (size[r]++ == 0) ++ncomp;
  }
  gs_comp *comp = (gs_comp *)malloc((size_t)ncomp * sizeof(gs_comp));
  if (!comp) { free(par); free(size); return vick_fail(call, VICK_NOMEM, "graph search: no host memory"); }
  int64_t c = 0;
  for (int64_t i = 0; i < n; ++i)
    if (par[i] == i) { comp[c].root = i; comp[c].size = size[i]; ++c; }
  qsort(comp, (size_t)ncomp, sizeof *comp, cmp_comp);
  int32_t cap = max_entries > 0 ? max_entries : 4096;
  int32_t ne = ncomp < cap ? (int32_t)ncomp : cap;
  int32_t *entry = (int32_t *)malloc((size_t)ne * sizeof(int32_t));
  vick_gsearch *g = (vick_gsearch *)calloc(1, sizeof *g);
  if (!entry || !g) {
    free(par); free(size); free(comp); free(entry); free(g);
    return vick_fail(call, VICK_NOMEM, "graph search: no host memory");
  }
  /* the kept components' nodes grouped by component (counting sort) */
  int32_t *coff = (int32_t *)calloc((size_t)ne + 1, sizeof(int32_t));
  int32_t *members = (int32_t *)malloc((size_t)n * sizeof(int32_t));
  if (!coff || !members) {
    free(par); free(size); free(comp); free(entry); free(g); free(coff); free(members);
    return vick_fail(call, VICK_NOMEM, "graph search: no host memory");
  }
  for (int64_t i = 0; i < n; ++i) size[i] = -1; /* reused: root -> component index */
  for (int32_t i = 0; i < ne; ++i) {
    size[comp[i].root] = i;
    coff[i + 1] = coff[i] + (int32_t)comp[i].size;
  }
  int64_t nmembers = coff[ne];
  {
    int32_t *fill = (int32_t *)malloc((size_t)ne * sizeof(int32_t));
    if (!fill) {
      free(par); free(size); free(comp); free(entry); free(g); free(coff); free(members);
      return vick_fail(call, VICK_NOMEM, "graph search: no host memory");
    }
    memcpy(fill, coff, (size_t)ne * sizeof(int32_t));
    for (int64_t i = 0; i < n; ++i) {
      int64_t ci = size[uf_find(par, i)];
      if (ci >= 0) members[fill[ci]++] = (int32_t)i;
    }
    free(fill);
  }
  for (int32_t i = 0; i < ne; ++i) entry[i] = members[coff[i]];
  free(par); free(size); free(comp);
  g->device = call->device;
  g->n = n;
  g->d = d;
  g->degree = degree;
  g->components = ncomp;
  g->entries = ne;
  g->has_occl = occl != NULL;
  int rc = VICK_OK;
  cudaError_t e = cudaSetDevice(call->device);
  if (e != cudaSuccess) rc = vick_cuda_fail(call, e, "cudaSetDevice", __FILE__, __LINE__);
  if (rc == VICK_OK) {
    e = cudaDeviceGetAttribute(&g->sms, cudaDevAttrMultiProcessorCount, call->device);
    if (e != cudaSuccess) rc = vick_cuda_fail(call, e, "cudaDeviceGetAttribute", __FILE__, __LINE__);
  }
  if (rc == VICK_OK) rc = gs_upload(call, g, rows, graph, occl, entry, members, nmembers, coff);
  free(entry);
  free(members);
  free(coff);
  if (rc != VICK_OK) {
    gs_release(g);
    return rc;
  }
  call->seconds_total = vick_now() - t_start;
  *out = g;
  return VICK_OK;
}

typedef struct {
  vick_env env;
  vick_buf q, best, ids, dist, rank;
} gs_ws;

template <int RS>
static int gs_small_launch(vick_call *call, gs_ws *w, gs_graph G, int64_t m, int t0, int hops, size_t qbytes) {
  gs_small_kernel<RS><<<(unsigned)(m * t0), GS_SMALL_WARPS * 32, qbytes, w->env.stream>>>(
      G, (const float *)w->q.p, m, t0, hops, (const int32_t *)w->best.p, call->seed,
      (unsigned long long *)w->rank.p);
  VICK_LAUNCH(call, "gs_small_kernel");
  return VICK_OK;
}

template <int LS>
static int gs_large_launch(vick_call *call, gs_ws *w, gs_graph G, int64_t m, int k, int L, int hops, float delta,
                           size_t qbytes) {
  gs_large_kernel<LS><<<(unsigned)m, 32, qbytes, w->env.stream>>>(G, (const float *)w->q.p, m, k, L, hops, delta,
                                                                  (const int32_t *)w->best.p, call->seed,
                                                                  (int64_t *)w->ids.p, (float *)w->dist.p);
  VICK_LAUNCH(call, "gs_large_kernel");
  return VICK_OK;
}

static int gs_run(vick_call *call, gs_ws *w, const vick_gsearch *g, const float *q, int64_t m, int k,
                  const vick_gsearch_params *p, int64_t *ids, float *dist) {
  const size_t qbytes = (size_t)g->d * 4;
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->q, (size_t)m * qbytes, "queries"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->best, (size_t)m * GS_EMAX * 4, "query entry points"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->ids, (size_t)m * k * 8, "result ids"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->dist, (size_t)m * k * 4, "result distances"));
  VICK_TRY(vick_copy_to_device(call, &w->env, w->q.p, q, (size_t)m * qbytes));
  gs_graph G = {g->x, g->g, g->occl, g->entry, g->members, g->coff, g->n, g->d, g->degree, p->occlusion_limit,
                g->entries};
  double kt = 0;
  VICK_TRY(vick_timer_start(call, &w->env));
  int ne = p->entries > 0 ? (p->entries < GS_EMAX ? p->entries : GS_EMAX) : 4;
  gs_entry_kernel<<<(unsigned)m, 256, (size_t)g->entries * 4, w->env.stream>>>(
      g->x, g->d, g->entry, g->entries, (const float *)w->q.p, m, ne, (int32_t *)w->best.p);
  VICK_LAUNCH(call, "gs_entry_kernel");
  if (p->procedure == VICK_GSEARCH_SMALL) {
    const int RS = (k <= 32 && p->list <= 32) ? 32 : 128;
    const int t0 = p->searches;
    if (t0 < 1 || t0 * RS > GS_MERGE_THREADS * GS_MERGE_IPT)
      return vick_fail(call, VICK_ARGUMENT, "small-batch search: t0 = %d must be 1..%d for k = %d", t0,
                       GS_MERGE_THREADS * GS_MERGE_IPT / RS, k);
    const int hops = p->hops > 0 ? p->hops : 64;
    VICK_TRY(vick_buf_alloc(call, &w->env, &w->rank, (size_t)m * t0 * RS * 8, "search rankings"));
    if (RS == 32) VICK_TRY(gs_small_launch<32>(call, w, G, m, t0, hops, qbytes));
    else VICK_TRY(gs_small_launch<128>(call, w, G, m, t0, hops, qbytes));
    const unsigned long long *rank = (const unsigned long long *)w->rank.p;
    if (t0 * RS <= GS_MERGE_THREADS * 2)
      gs_merge_kernel<2><<<(unsigned)m, GS_MERGE_THREADS, 0, w->env.stream>>>(rank, t0 * RS, k, (int64_t *)w->ids.p,
                                                                              (float *)w->dist.p);
    else if (t0 * RS <= GS_MERGE_THREADS * 4)
      gs_merge_kernel<4><<<(unsigned)m, GS_MERGE_THREADS, 0, w->env.stream>>>(rank, t0 * RS, k, (int64_t *)w->ids.p,
                                                                              (float *)w->dist.p);
    else
      gs_merge_kernel<GS_MERGE_IPT><<<(unsigned)m, GS_MERGE_THREADS, 0, w->env.stream>>>(
          rank, t0 * RS, k, (int64_t *)w->ids.p, (float *)w->dist.p);
    VICK_LAUNCH(call, "gs_merge_kernel");
  } else {
    int L = p->list > 0 ? p->list : (k <= 32 ? 64 : 128);
    if (L < k) L = k;
    if (L > 256) return vick_fail(call, VICK_ARGUMENT, "large-batch search: list %d above 256", L);
    const int hops = p->hops > 0 ? p->hops : 2 * L;
    if (L <= 64) VICK_TRY(gs_large_launch<64>(call, w, G, m, k, L, hops, p->delta, qbytes));
    else if (L <= 128) VICK_TRY(gs_large_launch<128>(call, w, G, m, k, L, hops, p->delta, qbytes));
    else VICK_TRY(gs_large_launch<256>(call, w, G, m, k, L, hops, p->delta, qbytes));
  }
  VICK_TRY(vick_timer_stop(call, &w->env, &kt, "search"));
  call->seconds_kernel += kt;
  VICK_TRY(vick_copy_to_host(call, &w->env, ids, w->ids.p, (size_t)m * k * 8));
  VICK_TRY(vick_copy_to_host(call, &w->env, dist, w->dist.p, (size_t)m * k * 4));
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
  if (rc == VICK_OK) rc = gs_run(call, &w, g, q, m, k, p, ids, dist);
  vick_buf *b[] = {&w.q, &w.best, &w.ids, &w.dist, &w.rank};
  for (size_t i = 0; i < sizeof b / sizeof *b; ++i) vick_buf_free(&w.env, b[i]);
  return vick_end(call, &w.env, rc);
}

int vick_gsearch_info_get(const vick_gsearch *g, vick_gsearch_info *info) {
  if (!g || !info) return VICK_ARGUMENT;
  info->n = g->n;
  info->d = g->d;
  info->degree = g->degree;
  info->components = g->components;
  info->entry_points = g->entries;
  info->sms = g->sms;
  info->device_bytes = g->bytes;
  return VICK_OK;
}

void vick_gsearch_free(vick_gsearch *g) { gs_release(g); }
