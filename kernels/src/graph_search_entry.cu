/* Entry points of the graph search (graph_search_*.cu): a flat graph is
 * uploaded with its weakly connected components (labelled on the device,
 * graph_components.cu, grouped on the host)
 * and a set of pivots, random nodes spread over the components in
 * proportion to their sizes, at least one in each (the largest first, up to
 * GS_PIVOTS_MAX).  Every search first finds the query's nearest pivots (a
 * few thousand distances, read from a transposed copy that stays in L2) and
 * starts from them and from random nodes of their components.
 *
 * One representative per component is not enough: components of a
 * diversified graph often join several far-apart islands by a few edges,
 * so the representative nearest a query can lie in another island than the
 * query's, and the search cannot cross over by a greedy walk. */
#include "graph_components.cuh"
#include "graph_search.cuh"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------- pivot distances */
/* Block (query tile, slice): thread t holds pivot slice*GS_SLICE + t and the
 * distances of GS_PQT queries to it (the pivot's values read once, for all
 * of them).  The pivots are stored four dimensions to a float4, pivot
 * fastest (pt4[j4 * P + p]), so a warp's loads are coalesced, and each
 * thread has 16 of them in flight: a single query waits for two rounds of
 * memory latency, not d.  Warp w then picks query w's nearest GS_EMAX of
 * the slice by repeated arg-min. */
#define GS_PIVOT_BATCH 16
__global__ void __launch_bounds__(GS_SLICE)
    gs_pivot_kernel(const float4 *pt4, int P, int d, const float *q, int64_t m, unsigned long long *near, int *count) {
  extern __shared__ float4 sq4[]; /* GS_PQT x dp, zero beyond d */
  __shared__ float sd[GS_PQT][GS_SLICE];
  const int dp = (d + 3) >> 2;
  const int64_t q0 = (int64_t)blockIdx.x * GS_PQT;
  const int slice = blockIdx.y, slices = gridDim.y;
  const int t = threadIdx.x, p = slice * GS_SLICE + t;
  if (count && slice == 0 && t < GS_PQT && q0 + t < m) count[q0 + t] = 0;
  float *sqf = (float *)sq4;
  for (int i = t; i < GS_PQT * dp * 4; i += GS_SLICE) {
    const int64_t qi = q0 + i / (dp * 4);
    const int j = i % (dp * 4);
    sqf[i] = qi < m && j < d ? q[qi * d + j] : 0.f;
  }
  __syncthreads();
  float acc[GS_PQT];
#pragma unroll
  for (int i = 0; i < GS_PQT; ++i) acc[i] = 0.f;
  if (p < P) {
    for (int j0 = 0; j0 < dp; j0 += GS_PIVOT_BATCH) {
      float4 v[GS_PIVOT_BATCH];
#pragma unroll
      for (int u = 0; u < GS_PIVOT_BATCH; ++u)
        v[u] = j0 + u < dp ? __ldg(pt4 + (int64_t)(j0 + u) * P + p) : make_float4(0.f, 0.f, 0.f, 0.f);
#pragma unroll
      for (int u = 0; u < GS_PIVOT_BATCH; ++u) {
        if (j0 + u >= dp) break;
#pragma unroll
        for (int i = 0; i < GS_PQT; ++i) {
          const float4 a = sq4[i * dp + j0 + u];
          const float x = a.x - v[u].x, y = a.y - v[u].y, z = a.z - v[u].z, w = a.w - v[u].w;
          acc[i] = fmaf(x, x, fmaf(y, y, fmaf(z, z, fmaf(w, w, acc[i]))));
        }
      }
    }
  }
#pragma unroll
  for (int i = 0; i < GS_PQT; ++i) sd[i][t] = p < P ? acc[i] : __int_as_float(0x7f800000);
  __syncthreads();
  const int w = t >> 5, lane = t & 31;
  const int64_t qi = q0 + w;
  if (w >= GS_PQT || qi >= m) return;
  unsigned long long *out = near + (qi * slices + slice) * GS_EMAX;
  for (int r = 0; r < GS_EMAX; ++r) {
    float bd = __int_as_float(0x7f800000);
    int bi = -1;
    for (int e = lane; e < GS_SLICE; e += 32)
      if (sd[w][e] < bd) { bd = sd[w][e]; bi = e; }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
      const float d2 = __shfl_xor_sync(GR_FULL, bd, o);
      const int i2 = __shfl_xor_sync(GR_FULL, bi, o);
      if (i2 >= 0 && (bi < 0 || d2 < bd || (d2 == bd && i2 < bi))) { bd = d2; bi = i2; }
    }
    if (lane == 0) out[r] = bi >= 0 ? vick_key(bd, (uint32_t)(slice * GS_SLICE + bi)) : VICK_KEY_NONE;
    /* the lane that scans entry bi clears it: no lane writes what another
     * reads, so the rounds need no ordering between lanes */
    if (bi >= 0 && (bi & 31) == lane) sd[w][bi] = __int_as_float(0x7f800000);
  }
}

const void *gs_pivot_kernel_ptr(void) { return (const void *)gs_pivot_kernel; }

int gs_pivot_launch(vick_call *call, const vick_gsearch *g, const float *q, int64_t m, int slices,
                    unsigned long long *near, int *count, cudaStream_t stream) {
  /* the first `slices` slices (a prefix of the pivots: they are drawn at
   * random, largest components first) */
  const dim3 grid((unsigned)((m + GS_PQT - 1) / GS_PQT), (unsigned)slices);
  const size_t smem = (size_t)GS_PQT * ((g->d + 3) / 4) * 16;
  gs_pivot_kernel<<<grid, GS_SLICE, smem, stream>>>((const float4 *)g->pt, g->pivots, g->d, q, m, near, count);
  VICK_LAUNCH(call, "gs_pivot_kernel");
  return VICK_OK;
}

/* ------------------------------------------------------------ host side */
/* Whether no row of the graph repeats an id (one pass with a stamp per
 * node); 0 when the stamps cannot be allocated (the search then checks). */
static int gs_rows_unique(const int32_t *graph, int64_t n, int32_t degree) {
  int32_t *seen = (int32_t *)malloc((size_t)n * sizeof(int32_t)); /* n < 2^31 - 1 */
  if (!seen) return 0;
  for (int64_t i = 0; i < n; ++i) seen[i] = -1;
  int unique = 1;
  for (int64_t i = 0; i < n && unique; ++i)
    for (int32_t e = 0; e < degree; ++e) {
      const int32_t v = graph[i * degree + e];
      if (v < 0) continue;
      if (seen[v] == (int32_t)i) {
        unique = 0;
        break;
      }
      seen[v] = (int32_t)i;
    }
  free(seen);
  return unique;
}

/* Whether some row repeats an id (one thread per row). */
__global__ void gs_rows_repeat(const int32_t *__restrict__ graph, int degree, int64_t n, int *repeat) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int32_t *r = graph + i * degree;
  for (int e = 1; e < degree; ++e) {
    const int32_t v = r[e];
    if (v < 0) continue;
    for (int f = 0; f < e; ++f)
      if (r[f] == v) {
        *repeat = 1;
        return;
      }
  }
}

/* The pivots' rows in the transposed float4 layout (zeros beyond d). */
__global__ void gs_pivot_rows(const float *__restrict__ x, int d, const int32_t *__restrict__ pid, int P, float *pt) {
  const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const int dp4 = (d + 3) / 4 * 4;
  if (t >= (int64_t)P * dp4) return;
  const int p = (int)(t / dp4), j = (int)(t % dp4);
  pt[((size_t)(j / 4) * P + p) * 4 + j % 4] = j < d ? x[(size_t)pid[p] * d + j] : 0.f;
}

static unsigned gs_blocks(int64_t n) { return (unsigned)((n + 255) / 256); }

/* Labels of the graph on the device (dgraph) into labels (host, n): each
 * node's smallest component member (graph_components.cu). */
static int gs_labels(vick_call *call, vick_env *env, const int32_t *dgraph, int64_t n, int32_t degree,
                     int32_t *labels) {
  vick_buf dl = {}, dflag = {};
  int rounds = 0;
  int rc = vick_buf_alloc(call, env, &dl, (size_t)n * 4, "graph search component labels");
  if (rc == VICK_OK) rc = vick_buf_alloc(call, env, &dflag, sizeof(int), "graph search component flag");
  if (rc == VICK_OK) {
    cudaError_t e = vick_label_components(dgraph, degree, n, (int32_t *)dl.p, (int *)dflag.p, 0, &rounds);
    if (e != cudaSuccess) rc = vick_cuda_fail(call, e, "component labels", __FILE__, __LINE__);
  }
  if (rc == VICK_OK) {
    cudaError_t e = cudaMemcpy(labels, dl.p, (size_t)n * 4, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) rc = vick_cuda_fail(call, e, "cudaMemcpy (component labels)", __FILE__, __LINE__);
  }
  vick_buf_free(env, &dflag);
  vick_buf_free(env, &dl);
  return rc;
}

typedef struct {
  int64_t root, size;
} gs_comp;

static int cmp_comp(const void *a, const void *b) {
  const gs_comp *x = (const gs_comp *)a, *y = (const gs_comp *)b;
  if (x->size != y->size) return x->size > y->size ? -1 : 1;
  return (x->root > y->root) - (x->root < y->root);
}

static uint64_t host_mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/* Host-side layout before the upload. */
typedef struct {
  int64_t ncomp;
  int32_t *members, *coff; /* n, ncomp + 1 */
  int32_t *pid, *pcomp;    /* P each */
  int32_t P;
} gs_layout;

static void layout_free(gs_layout *L) {
  free(L->members);
  free(L->coff);
  free(L->pid);
  free(L->pcomp);
}

/* Components (grouped members, offsets, largest first) from the labels
 * (each node's smallest component member) and the pivots: a quota of
 * max(1, target * size / n) random members of each component (a partial
 * shuffle of its members), until GS_PIVOTS_MAX. */
static int gs_layout_make(vick_call *call, const int32_t *label, int64_t n, int32_t target, gs_layout *L) {
  memset(L, 0, sizeof *L);
  int64_t *idx = (int64_t *)calloc((size_t)n, sizeof(int64_t));
  if (!idx) return vick_fail(call, VICK_NOMEM, "graph search: no host memory for the component sizes");
  int64_t ncomp = 0;
  for (int64_t i = 0; i < n; ++i)
    if (idx[label[i]]++ == 0) ++ncomp;
  gs_comp *comp = (gs_comp *)malloc((size_t)ncomp * sizeof(gs_comp));
  L->members = (int32_t *)malloc((size_t)n * sizeof(int32_t));
  L->coff = (int32_t *)calloc((size_t)ncomp + 1, sizeof(int32_t));
  L->pid = (int32_t *)malloc(GS_PIVOTS_MAX * sizeof(int32_t));
  L->pcomp = (int32_t *)malloc(GS_PIVOTS_MAX * sizeof(int32_t));
  if (!comp || !L->members || !L->coff || !L->pid || !L->pcomp) {
    free(idx);
    free(comp);
    layout_free(L);
    return vick_fail(call, VICK_NOMEM, "graph search: no host memory for the components");
  }
  int64_t c = 0;
  for (int64_t i = 0; i < n; ++i)
    if (label[i] == i) {
      comp[c].root = i;
      comp[c].size = idx[i];
      ++c;
    }
  qsort(comp, (size_t)ncomp, sizeof *comp, cmp_comp);
  /* idx reused: root -> fill position of its component */
  for (int64_t i = 0; i < ncomp; ++i) {
    L->coff[i + 1] = L->coff[i] + (int32_t)comp[i].size;
    idx[comp[i].root] = L->coff[i];
  }
  for (int64_t i = 0; i < n; ++i) L->members[idx[label[i]]++] = (int32_t)i;
  int32_t P = 0;
  for (int64_t ci = 0; ci < ncomp && P < GS_PIVOTS_MAX; ++ci) {
    const int64_t size = comp[ci].size;
    int64_t quota = (int64_t)((double)target * (double)size / (double)n);
    if (quota < 1) quota = 1;
    if (quota > size) quota = size;
    if (quota > GS_PIVOTS_MAX - P) quota = GS_PIVOTS_MAX - P;
    int32_t *mem = L->members + L->coff[ci];
    for (int64_t j = 0; j < quota; ++j) {
      const int64_t r = j + (int64_t)(host_mix(0x5eedull ^ ((uint64_t)ci << 32) ^ (uint64_t)j) % (uint64_t)(size - j));
      const int32_t t = mem[j];
      mem[j] = mem[r];
      mem[r] = t;
      L->pid[P] = mem[j];
      L->pcomp[P] = (int32_t)ci;
      ++P;
    }
  }
  L->ncomp = ncomp;
  L->P = P;
  free(idx);
  free(comp);
  return VICK_OK;
}

static void gs_release(vick_gsearch *g) {
  if (!g) return;
  int prev = -1;
  cudaGetDevice(&prev);
  cudaSetDevice(g->device);
  gs_ws_destroy(g);
  if (!g->borrowed) {
    vick_free_kept(g->x);
    vick_free_kept(g->g);
  }
  vick_free_kept(g->occl);
  vick_free_kept(g->pt);
  vick_free_kept(g->pid);
  vick_free_kept(g->pcomp);
  vick_free_kept(g->members);
  vick_free_kept(g->coff);
  if (prev >= 0) cudaSetDevice(prev);
  free(g);
}

#define GS_STEP(expr)                                                       \
  if (rc == VICK_OK && (e = (expr)) != cudaSuccess) rc = vick_cuda_fail(call, e, #expr, __FILE__, __LINE__)
/* A kept array of the index (common.cuh), counted against env's budget. */
#define GS_KEEP(ptr, bytes, what) \
  if (rc == VICK_OK) rc = vick_alloc_kept(call, env, (void **)&(ptr), (bytes), (what))

/* The rest of an index whose rows and graph are on the device: the
 * components (labels on the device), the pivots and their rows, the
 * kernels' occupancy and the workspace.  target: pivots wanted (0 = the
 * default). */
int gs_finish(vick_call *call, vick_env *env, vick_gsearch *g, int32_t target) {
  const int64_t n = g->n;
  if (target == 0) target = n / 8 < GS_PIVOTS ? (int32_t)(n / 8 > 0 ? n / 8 : 1) : GS_PIVOTS;
  int32_t *label = (int32_t *)malloc((size_t)n * sizeof(int32_t));
  if (!label) return vick_fail(call, VICK_NOMEM, "graph search: no host memory for the component labels");
  int rc = gs_labels(call, env, g->g, n, g->degree, label);
  gs_layout L;
  memset(&L, 0, sizeof L);
  if (rc == VICK_OK) rc = gs_layout_make(call, label, n, target, &L);
  free(label);
  if (rc != VICK_OK) return rc;
  g->components = L.ncomp;
  g->pivots = L.P;
  const size_t P = (size_t)L.P, dp = ((size_t)g->d + 3) / 4, npt = P * dp * 4;
  cudaError_t e = cudaSuccess;
  GS_KEEP(g->pt, npt * 4, "graph search pivot rows");
  GS_KEEP(g->pid, P * 4, "graph search pivot ids");
  GS_KEEP(g->pcomp, P * 4, "graph search pivot components");
  GS_KEEP(g->members, (size_t)n * 4, "graph search component members");
  GS_KEEP(g->coff, ((size_t)L.ncomp + 1) * 4, "graph search component offsets");
  const double t0 = vick_now();
  GS_STEP(cudaMemcpy(g->pid, L.pid, P * 4, cudaMemcpyHostToDevice));
  GS_STEP(cudaMemcpy(g->pcomp, L.pcomp, P * 4, cudaMemcpyHostToDevice));
  GS_STEP(cudaMemcpy(g->members, L.members, (size_t)n * 4, cudaMemcpyHostToDevice));
  GS_STEP(cudaMemcpy(g->coff, L.coff, ((size_t)L.ncomp + 1) * 4, cudaMemcpyHostToDevice));
  call->seconds_transfer += vick_now() - t0;
  if (rc == VICK_OK) {
    gs_pivot_rows<<<gs_blocks((int64_t)P * dp * 4), 256>>>(g->x, g->d, g->pid, (int)P, g->pt);
    GS_STEP(cudaGetLastError());
    GS_STEP(cudaDeviceSynchronize());
  }
  g->bytes += npt * 4 + P * 8 + (size_t)n * 4 + ((size_t)L.ncomp + 1) * 4;
  layout_free(&L);
  if (rc == VICK_OK) rc = gs_small_wave_capacity(call, g);
  if (rc == VICK_OK) rc = gs_ws_create(call, g);
  return rc;
}

static int gs_upload(vick_call *call, vick_env *env, vick_gsearch *g, const float *rows, const int32_t *graph,
                     const uint8_t *occl) {
  const size_t nx = (size_t)g->n * g->d * 4, ng = (size_t)g->n * g->degree;
  /* pivots and their rows at most, labels and members */
  const size_t need = nx + ng * 4 + (occl ? ng : 0) + (size_t)GS_PIVOTS_MAX * (((size_t)g->d + 3) / 4 * 16 + 8) +
                      (size_t)g->n * 12;
  /* checked as a whole first: one message naming it all, nothing uploaded */
  const size_t budget = vick_budget_left(env);
  if (need > budget)
    return vick_fail(call, VICK_NOMEM, "graph search: %zu bytes of rows and graph exceed the device budget %zu", need,
                     budget);
  int rc = VICK_OK;
  cudaError_t e = cudaSuccess;
  GS_KEEP(g->x, nx, "graph search rows");
  GS_KEEP(g->g, ng * 4, "graph search graph");
  if (occl) GS_KEEP(g->occl, ng, "graph search occlusion factors");
  g->bytes = nx + ng * 4 + (occl ? ng : 0);
  const double t0 = vick_now();
  GS_STEP(cudaMemcpy(g->x, rows, nx, cudaMemcpyHostToDevice));
  GS_STEP(cudaMemcpy(g->g, graph, ng * 4, cudaMemcpyHostToDevice));
  if (occl) GS_STEP(cudaMemcpy(g->occl, occl, ng, cudaMemcpyHostToDevice));
  call->seconds_transfer += vick_now() - t0;
  return rc;
}

int vick_gsearch_create(vick_call *call, const float *rows, int64_t n, int32_t d, const int32_t *graph,
                        int32_t degree, const uint8_t *occl, int32_t max_entries, vick_gsearch **out) {
  if (!call) return VICK_ARGUMENT;
  if (!out || !rows || !graph || n < 1 || d < 1 || degree < 1 || n >= ((int64_t)1 << 31) - 1)
    return vick_fail(call, VICK_ARGUMENT, "graph search: needs rows, a graph (degree >= 1) and 1 <= n < 2^31 - 1");
  if (((size_t)d + 3) / 4 * 16 * GS_PQT > 40000)
    return vick_fail(call, VICK_ARGUMENT, "graph search: d = %d above %d", (int)d, 40000 / (4 * GS_PQT) - 3);
  if (max_entries < 0 || max_entries > GS_PIVOTS_MAX)
    return vick_fail(call, VICK_ARGUMENT, "graph search: %d entry points asked, 0..%d allowed", (int)max_entries,
                     GS_PIVOTS_MAX);
  *out = NULL;
  const double t_start = vick_now();
  call->seconds_transfer = call->seconds_kernel = 0;
  call->n_stages = 0;
  call->message[0] = '\0';
  for (int64_t i = 0; i < n * (int64_t)degree; ++i)
    if (graph[i] < -1 || graph[i] >= n)
      return vick_fail(call, VICK_ARGUMENT, "graph search: row %lld has edge %d outside 0..%lld",
                       (long long)(i / degree), (int)graph[i], (long long)(n - 1));
  vick_gsearch *g = (vick_gsearch *)calloc(1, sizeof *g);
  if (!g) return vick_fail(call, VICK_NOMEM, "graph search: no host memory");
  g->device = call->device;
  g->n = n;
  g->d = d;
  g->degree = degree;
  g->unique_rows = gs_rows_unique(graph, n, degree);
  /* the index's arrays are kept within this call's budget */
  vick_env env;
  int rc = vick_begin(call, &env);
  if (rc == VICK_OK) {
    cudaError_t e = cudaDeviceGetAttribute(&g->sms, cudaDevAttrMultiProcessorCount, call->device);
    if (e != cudaSuccess) rc = vick_cuda_fail(call, e, "cudaDeviceGetAttribute", __FILE__, __LINE__);
  }
  if (rc == VICK_OK) rc = gs_upload(call, &env, g, rows, graph, occl);
  if (rc == VICK_OK) rc = gs_finish(call, &env, g, max_entries);
  if (rc != VICK_OK) gs_release(g);
  else *out = g;
  rc = vick_end(call, &env, rc);
  call->seconds_total = vick_now() - t_start; /* the host checks above included */
  return rc;
}

int gs_create_borrowed(vick_call *call, vick_env *env, const float *dx, int64_t n, int32_t d, const int32_t *dgraph,
                       int32_t degree, const int32_t *dperm, int32_t pivots, vick_gsearch **out) {
  *out = NULL;
  if (n < 1 || d < 1 || degree < 1 || n >= ((int64_t)1 << 31) - 1 || ((size_t)d + 3) / 4 * 16 * GS_PQT > 40000)
    return vick_fail(call, VICK_ARGUMENT, "graph search: a borrowed graph of n = %lld, d = %d, degree %d is not "
                     "searchable", (long long)n, (int)d, (int)degree);
  vick_gsearch *g = (vick_gsearch *)calloc(1, sizeof *g);
  if (!g) return vick_fail(call, VICK_NOMEM, "graph search: no host memory");
  g->device = call->device;
  g->n = n;
  g->d = d;
  g->degree = degree;
  g->borrowed = 1;
  g->x = (float *)dx;
  g->g = (int32_t *)dgraph;
  g->perm = dperm;
  int rc = VICK_OK;
  cudaError_t e = cudaSuccess;
  vick_buf flag = {};
  int repeat = 1;
  GS_STEP(cudaSetDevice(call->device));
  GS_STEP(cudaDeviceGetAttribute(&g->sms, cudaDevAttrMultiProcessorCount, call->device));
  if (rc == VICK_OK) rc = vick_buf_alloc(call, env, &flag, sizeof(int), "graph search repeat check");
  int *dflag = (int *)flag.p;
  GS_STEP(cudaMemset(dflag, 0, sizeof(int)));
  if (rc == VICK_OK) {
    gs_rows_repeat<<<gs_blocks(n), 256>>>(dgraph, degree, n, dflag);
    GS_STEP(cudaGetLastError());
  }
  GS_STEP(cudaMemcpy(&repeat, dflag, sizeof(int), cudaMemcpyDeviceToHost));
  vick_buf_free(env, &flag);
  g->unique_rows = rc == VICK_OK && !repeat;
  if (rc == VICK_OK) rc = gs_finish(call, env, g, pivots);
  if (rc != VICK_OK) {
    gs_release(g);
    return rc;
  }
  *out = g;
  return VICK_OK;
}
#undef GS_STEP
#undef GS_KEEP

int vick_gsearch_info_get(const vick_gsearch *g, vick_gsearch_info *info) {
  if (!g || !info) return VICK_ARGUMENT;
  info->n = g->n;
  info->d = g->d;
  info->degree = g->degree;
  info->components = g->components;
  info->entry_points = g->pivots;
  info->sms = g->sms;
  info->small_wave_blocks = g->wave_blocks[0];
  info->device_bytes = g->bytes;
  return VICK_OK;
}

void vick_gsearch_free(vick_gsearch *g) { gs_release(g); }
