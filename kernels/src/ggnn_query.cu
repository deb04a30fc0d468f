// Queries of a finished GGNN graph (Alg. 1, Sec. 5.4): one warp per query
// fetches the entry points (top layer + component representatives), then
// searches the bottom layer directly with the slack criterion of Eq. 2
// using d_nn1+ = max d_nn1 (Eq. 3).  Also the for-all lists and d_nn1
// read-outs, which only map layer-0 ids back to input rows.
#include "ggnn_cache.cuh"
#include "ggnn_steps.cuh"

#include <mutex>
#include <new>
#include <stdlib.h>
#include <string.h>

#include "graph_search.cuh"
#include "staged_pipeline.cuh"

// Points popped and fetched together per step of a query (ggnn_search):
// 2 balances a wider fetch against the registers it costs (1 and 4 were
// slower; BENCHMARKS.md's GGNN section has the sweep).
#ifndef GGNN_QUERY_WIDTH
#define GGNN_QUERY_WIDTH 2
#endif

struct ggnn_query_args {
  const float *x, *q;
  int d, k, kq;
  const int32_t *graph, *entry, *perm;
  int n_entry;
  int64_t m;
  float tau, dnn1;
  ggnn_dims dims;
  int max_iter;
  size_t slab;
  int64_t *out_ids; // the caller's ids (perm applied), written straight into the result layout
  float *out_d;
};

__global__ void ggnn_k_query(ggnn_query_args a) {
  extern __shared__ __align__(16) char smem[];
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const int64_t qi = (int64_t)blockIdx.x * (blockDim.x >> 5) + w;
  if (qi >= a.m) return;
  ggnn_cache c;
  ggnn_cache_init(c, smem + (size_t)w * a.slab, a.d, false, a.dims);
  ggnn_load_vec(c.qv, a.q + qi * a.d, a.d);
  for (int o = 0; o < a.n_entry; o += c.fcap) {
    int len = min(c.fcap, a.n_entry - o);
    ggnn_load_cand(c, a.entry + o, len);
    ggnn_fetch(c, len, -1, nullptr, a.x, a.d, a.tau, a.dnn1);
  }
  ggnn_search<GGNN_QUERY_WIDTH>(c, a.graph, a.k, nullptr, a.x, a.d, a.tau, a.dnn1, a.max_iter, -1);
  for (int j = lane; j < a.kq; j += 32) {
    bool have = j < c.bcount;
    a.out_ids[qi * a.kq + j] = have ? (int64_t)a.perm[c.best_id[j]] : -1;
    a.out_d[qi * a.kq + j] = have ? c.best_d[j] : __int_as_float(0x7f800000);
  }
}

// For-all row i (layer-0 order) becomes the row of input row perm[i].
__global__ void ggnn_k_forall(const int32_t *__restrict__ forall, const float *__restrict__ dist,
                              const int32_t *__restrict__ perm, int64_t n, int k, int kk, int32_t *ids, float *dd) {
  int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n * kk) return;
  int64_t i = t / kk;
  int j = (int)(t - i * kk);
  int32_t v = forall[i * k + j];
  int64_t o = (int64_t)perm[i] * kk + j;
  ids[o] = v < 0 ? -1 : perm[v];
  dd[o] = v < 0 ? __int_as_float(0x7f800000) : dist[i * k + j];
}

// Bottom-layer row i (layer-0 order) becomes the row of input row perm[i]:
// its edges (kNN part and inverse links) first, input ids, -1 after them.
__global__ void ggnn_k_bottom(const int32_t *__restrict__ graph, const int32_t *__restrict__ perm, int64_t n, int k,
                              int32_t *ids) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int32_t *o = ids + (int64_t)perm[i] * k;
  int c = 0;
  for (int j = 0; j < k; ++j) {
    const int32_t v = graph[i * k + j];
    if (v >= 0) o[c++] = perm[v];
  }
  for (; c < k; ++c) o[c] = -1;
}

__global__ void ggnn_k_unpermute(const float *__restrict__ v, const int32_t *__restrict__ perm, int64_t n, float *out) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[perm[i]] = v[i];
}

static int ggnn_round_pow2(int v) {
  int p = 1;
  while (p < v) p <<= 1;
  return p;
}

// Cache sizes after appendix C, Table 6: best = max(k, 10); short prioqs
// suffice; the visited ring decides accuracy and caps the iterations.
// SIFT-like d (<= 128-ish), k <= 32: prioq 64, visited 384, 400 iterations;
// long result lists: prioq 32, visited 896, 1000; high-d data: prioq 32,
// visited 2048, 2000.  An explicit visit budget widens the ring to match.
// A fetch holds GGNN_QUERY_WIDTH graph rows.  The visited ring keeps no
// more than a hash-set rebuild reads back (ggnn_hash_rebuild), so the hash
// size is the real visited memory: 2^10 ids where searches are short (more
// would cost occupancy), 2^11 where they are wide (high d: with 2^10 wide
// searches forget visited points and revisit them until the iteration cap).
static ggnn_dims ggnn_query_config(int d, int kq, int kg, int max_visits, int *iters) {
  ggnn_dims m;
  int min_bits = 11;
  m.bcap = kq > 10 ? kq : 10;
  if (d >= 200) { m.pcap = 32; m.vcap = 2048; *iters = 2000; }
  else if (m.bcap > 32) { m.pcap = 32; m.vcap = 896; *iters = 1000; }
  else { m.pcap = 64; m.vcap = 384; *iters = 400; min_bits = 10; }
  if (max_visits > 0) {
    *iters = max_visits;
    int v = (max_visits + 31) / 32 * 32;
    if (v > m.vcap) m.vcap = v;
  }
  m.pcap = ggnn_round_pow2(m.pcap);
  m.fcap = (GGNN_QUERY_WIDTH * kg + 31) / 32 * 32;
  m.hbits = ggnn_hash_bits(m, min_bits);
  // the visited ring only refills the hash set, which takes this many of it
  int room = (1 << m.hbits) / 4 - m.bcap - m.pcap;
  if (m.vcap > room) m.vcap = room > 32 ? room : 32;
  return m;
}

// The kernel's arguments but for the query and output pointers.
static void ggnn_query_setup(const vick_ggnn *g, int64_t m, int32_t k, float tau, int32_t max_visits,
                             ggnn_query_args *a) {
  memset(a, 0, sizeof *a);
  a->dims = ggnn_query_config(g->d, k, g->k, max_visits, &a->max_iter);
  a->x = g->x;
  a->d = g->d;
  a->k = g->k;
  a->kq = k;
  a->graph = g->layer[0].graph;
  a->entry = g->entry;
  a->perm = g->perm;
  a->n_entry = g->n_entry;
  a->m = m;
  a->tau = tau;
  a->dnn1 = (float)g->dnn1_max;
  a->slab = ggnn_slab_bytes(g->d, false, a->dims);
}

// The frame of the one-off query and of the read-outs: the call's
// environment on the graph's device, up to three buffers of its budget
// for run(env, b), all released in one place.
template <typename Run> static int ggnn_call_on(vick_call *call, const vick_ggnn *g, Run run) {
  vick_env env;
  vick_buf b[3] = {};
  int rc = vick_begin_on(call, &env, g->device);
  if (rc == VICK_OK) rc = run(&env, b);
  for (int i = 0; i < 3; ++i) vick_buf_free(&env, &b[i]);
  return vick_end(call, &env, rc);
}

// The one-off query: buffers of its own within the call's budget, the
// queries up, one launch, the results back (the kept resources of a
// searcher are below).
static int ggnn_query_run(vick_call *call, vick_env *env, const vick_ggnn *g, const float *q, int64_t m, int32_t k,
                          float tau, int32_t max_visits, vick_buf b[3], int64_t *ids, float *dist) {
  ggnn_query_args a;
  ggnn_query_setup(g, m, k, tau, max_visits, &a);
  const size_t smem = a.slab * GGNN_WARPS_PER_BLOCK;
  VICK_TRY(vick_buf_alloc(call, env, &b[0], (size_t)m * g->d * sizeof(float), "GGNN queries"));
  VICK_TRY(vick_buf_alloc(call, env, &b[1], (size_t)m * k * sizeof(int64_t), "GGNN result ids"));
  VICK_TRY(vick_buf_alloc(call, env, &b[2], (size_t)m * k * sizeof(float), "GGNN result distances"));
  VICK_TRY(vick_copy_to_device(call, env, b[0].p, q, (size_t)m * g->d * sizeof(float)));
  a.q = (const float *)b[0].p;
  a.out_ids = (int64_t *)b[1].p;
  a.out_d = (float *)b[2].p;
  VICK_CUDA(call, cudaFuncSetAttribute(ggnn_k_query, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  VICK_TRY(vick_timer_start(call, env));
  ggnn_k_query<<<(unsigned)((m + GGNN_WARPS_PER_BLOCK - 1) / GGNN_WARPS_PER_BLOCK), GGNN_WARPS_PER_BLOCK * 32, smem,
                 env->stream>>>(a);
  VICK_LAUNCH(call, "ggnn_k_query");
  VICK_TRY(vick_timer_stop(call, env, &call->seconds_kernel, NULL));
  VICK_TRY(vick_copy_to_host(call, env, ids, b[1].p, (size_t)m * k * sizeof(int64_t)));
  return vick_copy_to_host(call, env, dist, b[2].p, (size_t)m * k * sizeof(float));
}

extern "C" int vick_ggnn_query(vick_call *call, const vick_ggnn *g, const float *q, int64_t m, int32_t k, float tau,
                               int32_t max_visits, int64_t *ids, float *dist) {
  if (!g || !q || m < 1 || k < 1 || k > 256 || !(tau >= 0) || max_visits < 0)
    return vick_fail(call, VICK_ARGUMENT, "GGNN query needs m >= 1 queries, 1 <= k <= 256, tau >= 0 (m = %lld, k = %d)",
                     (long long)m, (int)k);
  return ggnn_call_on(call, g, [&](vick_env *env, vick_buf *b) {
    return ggnn_query_run(call, env, g, q, m, k, tau, max_visits, b, ids, dist);
  });
}

// The read-outs of a built graph: one kernel into a device buffer of the
// call's budget, then the copy to the caller.
static int ggnn_forall_run(vick_call *call, vick_env *env, const vick_ggnn *g, int32_t kk, vick_buf b[2],
                           int32_t *hi, int64_t *ids, float *dist) {
  const size_t cnt = (size_t)g->n * kk;
  VICK_TRY(vick_buf_alloc(call, env, &b[0], cnt * sizeof(int32_t), "GGNN for-all ids"));
  VICK_TRY(vick_buf_alloc(call, env, &b[1], cnt * sizeof(float), "GGNN for-all distances"));
  ggnn_k_forall<<<(unsigned)((cnt + 255) / 256), 256, 0, env->stream>>>(g->forall, g->layer[0].dist, g->perm, g->n,
                                                                        g->k, kk, (int32_t *)b[0].p, (float *)b[1].p);
  VICK_LAUNCH(call, "ggnn_k_forall");
  VICK_TRY(vick_copy_to_host(call, env, hi, b[0].p, cnt * sizeof(int32_t)));
  VICK_TRY(vick_copy_to_host(call, env, dist, b[1].p, cnt * sizeof(float)));
  for (size_t i = 0; i < cnt; ++i) ids[i] = hi[i];
  return VICK_OK;
}

extern "C" int vick_ggnn_forall(vick_call *call, const vick_ggnn *g, int32_t kk, int64_t *ids, float *dist) {
  if (!g || kk < 1 || kk > g->k)
    return vick_fail(call, VICK_ARGUMENT, "GGNN for-all lists hold at most k = %d neighbours (asked %d)", g ? g->k : 0,
                     (int)kk);
  int32_t *hi = (int32_t *)malloc((size_t)g->n * kk * sizeof(int32_t));
  if (!hi) return vick_fail(call, VICK_NOMEM, "GGNN for-all: no host memory");
  const int rc = ggnn_call_on(call, g, [&](vick_env *env, vick_buf *b) {
    return ggnn_forall_run(call, env, g, kk, b, hi, ids, dist);
  });
  free(hi);
  return rc;
}

static int ggnn_bottom_run(vick_call *call, vick_env *env, const vick_ggnn *g, vick_buf *b, int32_t *ids) {
  const size_t bytes = (size_t)g->n * g->k * sizeof(int32_t);
  VICK_TRY(vick_buf_alloc(call, env, b, bytes, "GGNN bottom graph"));
  ggnn_k_bottom<<<(unsigned)((g->n + 255) / 256), 256, 0, env->stream>>>(g->layer[0].graph, g->perm, g->n, g->k,
                                                                         (int32_t *)b->p);
  VICK_LAUNCH(call, "ggnn_k_bottom");
  return vick_copy_to_host(call, env, ids, b->p, bytes);
}

extern "C" int vick_ggnn_bottom_graph(vick_call *call, const vick_ggnn *g, int32_t *ids) {
  if (!g || !ids) return vick_fail(call, VICK_ARGUMENT, "GGNN bottom graph: no graph or no output");
  return ggnn_call_on(call, g, [&](vick_env *env, vick_buf *b) { return ggnn_bottom_run(call, env, g, b, ids); });
}

static int ggnn_dnn1_run(vick_call *call, vick_env *env, const vick_ggnn *g, vick_buf *b, float *dnn1) {
  VICK_TRY(vick_buf_alloc(call, env, b, (size_t)g->n * sizeof(float), "GGNN nearest distances"));
  ggnn_k_unpermute<<<(unsigned)((g->n + 255) / 256), 256, 0, env->stream>>>(g->dnn1, g->perm, g->n, (float *)b->p);
  VICK_LAUNCH(call, "ggnn_k_unpermute");
  return vick_copy_to_host(call, env, dnn1, b->p, (size_t)g->n * sizeof(float));
}

extern "C" int vick_ggnn_dnn1(vick_call *call, const vick_ggnn *g, float *dnn1, double *mean, double *max) {
  call->message[0] = '\0';
  if (!g) return vick_fail(call, VICK_ARGUMENT, "GGNN d_nn1: no graph");
  if (mean) *mean = g->dnn1_mean;
  if (max) *max = g->dnn1_max;
  if (!dnn1) return VICK_OK;
  return ggnn_call_on(call, g, [&](vick_env *env, vick_buf *b) { return ggnn_dnn1_run(call, env, g, b, dnn1); });
}

extern "C" int vick_ggnn_info_get(const vick_ggnn *g, vick_ggnn_info *info) {
  if (!g || !info) return VICK_ARGUMENT;
  memset(info, 0, sizeof *info);
  info->n = g->n;
  info->d = g->d;
  info->k = g->k;
  info->layers = g->L;
  info->growth = g->g;
  info->segment = g->s_up;
  info->segment0 = (int32_t)(g->n / g->layer[0].nseg);
  for (int l = 1; l < g->L; ++l) info->upper_points += g->layer[l].n;
  info->components = g->components;
  info->entry_points = g->n_entry;
  info->dnn1_mean = g->dnn1_mean;
  info->dnn1_max = g->dnn1_max;
  info->mean_inverse_links = g->mean_inverse_links;
  info->device_bytes = g->device_bytes;
  return VICK_OK;
}

// ------------------------------------------------------------- searcher
// What an index keeps for its GGNN queries between calls: a stream,
// events, device buffers and pinned staging grown to the
// largest batch seen, the kernel's shared-memory attribute set for the
// largest cache yet (not on every call), and the bottom layer as a graph
// search index (graph_search_*.cu, borrowing the graph's rows and edges)
// for the small-batch procedure.  One call at a time uses it (a lock);
// vick_ggnn_search falls back to vick_ggnn_query's own resources meanwhile.
struct vick_ggnn_searcher {
  const vick_ggnn *g;
  std::mutex mu;
  cudaStream_t stream;
  cudaEvent_t ev_start, ev_stop;
  vick_pipe pipe; // a hooked large batch in chunks under its kernels (stream[0] = stream)
  char *dev, *host;
  size_t dev_cap, host_cap;
  int smem_set; // dynamic shared memory the kernel may take so far
  vick_gsearch *small;
};

// Byte offsets of a call's ids and distances after its queries (both in
// the device buffer and in the pinned staging), and the bytes in all.
static void ggnn_search_layout(int64_t m, int d, int32_t k, size_t *off_ids, size_t *off_dist, size_t *bytes) {
  *off_ids = ((size_t)m * d * 4 + 255) / 256 * 256;
  *off_dist = *off_ids + ((size_t)m * k * 8 + 255) / 256 * 256;
  *bytes = *off_dist + (size_t)m * k * 4;
}

// env: the budget the buffers count against (NULL on a search call: its
// bytes stay under GS_WS_MAX_BYTES, larger batches run on their own).
static int ggnn_searcher_reserve(vick_call *call, vick_env *env, vick_ggnn_searcher *s, int64_t m, int32_t k,
                                 size_t smem) {
  size_t oi, od, dev;
  ggnn_search_layout(m, s->g->d, k, &oi, &od, &dev);
  const size_t host = dev;
  if (dev > s->dev_cap) {
    VICK_CUDA(call, cudaStreamSynchronize(s->stream));
    vick_free_kept(s->dev);
    s->dev = nullptr;
    s->dev_cap = 0;
    VICK_TRY(vick_alloc_kept(call, env, (void **)&s->dev, dev + dev / 2, "GGNN search buffers"));
    s->dev_cap = dev + dev / 2;
  }
  if (host > s->host_cap) {
    VICK_CUDA(call, cudaStreamSynchronize(s->stream));
    vick_pinned_free(s->host);
    s->host = nullptr;
    s->host_cap = 0;
    VICK_TRY(
        vick_pinned_alloc(call, (void **)&s->host, host + host / 2, cudaHostAllocDefault, "GGNN search staging"));
    s->host_cap = host + host / 2;
  }
  if ((int)smem > s->smem_set) {
    VICK_CUDA(call, cudaFuncSetAttribute(ggnn_k_query, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    s->smem_set = (int)smem;
  }
  return VICK_OK;
}

extern "C" void vick_ggnn_searcher_free(vick_ggnn_searcher *s) {
  if (!s) return;
  int prev = -1;
  cudaGetDevice(&prev);
  cudaSetDevice(s->g->device);
  if (s->stream) cudaStreamSynchronize(s->stream);
  vick_gsearch_free(s->small);
  vick_pipe_destroy(&s->pipe);
  vick_free_kept(s->dev);
  vick_pinned_free(s->host);
  if (s->ev_start) cudaEventDestroy(s->ev_start);
  if (s->ev_stop) cudaEventDestroy(s->ev_stop);
  if (s->stream) cudaStreamDestroy(s->stream);
  cudaGetLastError();
  if (prev >= 0) cudaSetDevice(prev);
  delete s;
}

static int ggnn_searcher_make(vick_call *call, vick_env *env, vick_ggnn_searcher *s, int64_t m, int32_t k,
                              int small) {
  const vick_ggnn *g = s->g;
  VICK_CUDA(call, cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
  VICK_CUDA(call, cudaEventCreate(&s->ev_start));
  VICK_CUDA(call, cudaEventCreate(&s->ev_stop));
  VICK_TRY(vick_pipe_create(call, &s->pipe, s->stream));
  ggnn_query_args a;
  ggnn_query_setup(g, m, k, 0.f, 0, &a);
  VICK_TRY(ggnn_searcher_reserve(call, env, s, m, k, a.slab * GGNN_WARPS_PER_BLOCK));
  if (small) {
    const double t0 = vick_now();
    VICK_TRY(gs_create_borrowed(call, env, g->x, g->n, g->d, g->layer[0].graph, g->k, g->perm, 0, &s->small));
    VICK_TRY(vick_gsearch_reserve(call, s->small, m < 1024 ? m : 1024, k < 128 ? k : 128));
    vick_stage_add(call, "small index", vick_now() - t0);
  }
  return VICK_OK;
}

extern "C" int vick_ggnn_searcher_create(vick_call *call, const vick_ggnn *g, int64_t m, int32_t k, int small,
                                         vick_ggnn_searcher **out) {
  if (!call) return VICK_ARGUMENT;
  if (!g || !out || m < 1 || k < 1 || k > 256)
    return vick_fail(call, VICK_ARGUMENT, "GGNN searcher: needs a graph, m >= 1 and 1 <= k <= 256");
  *out = nullptr;
  call->message[0] = '\0';
  vick_ggnn_searcher *s = new (std::nothrow) vick_ggnn_searcher();
  if (!s) return vick_fail(call, VICK_NOMEM, "GGNN searcher: no host memory");
  s->g = g;
  /* the kept buffers within this call's budget */
  vick_env env;
  int rc = vick_begin_on(call, &env, g->device);
  if (rc == VICK_OK) rc = ggnn_searcher_make(call, &env, s, m, k, small);
  if (rc != VICK_OK) vick_ggnn_searcher_free(s);
  else *out = s;
  return vick_end(call, &env, rc);
}

extern "C" const vick_gsearch *vick_ggnn_searcher_graph(const vick_ggnn_searcher *s) { return s ? s->small : nullptr; }

// The hooks' in as a staging fill.
static int ggnn_fill_hooked(void *ctx, int thread, void *dst, int64_t row0, int64_t rows) {
  const vick_gsearch_hooks *h = (const vick_gsearch_hooks *)ctx;
  return h->in(h->ctx, thread, (float *)dst, row0, rows);
}

// Rows [a, a + rows) of a hooked batch: the batch's kernel over them alone
// (one warp a query, nothing shared between queries, so the results are
// those of one launch over the whole batch).
struct ggnn_chunk_ctx {
  ggnn_query_args a; // the whole batch's
  size_t smem;
};

static int ggnn_chunk_launch(void *ctx, vick_call *call, cudaStream_t stream, int64_t a0, int64_t rows) {
  const ggnn_chunk_ctx *x = (const ggnn_chunk_ctx *)ctx;
  ggnn_query_args a = x->a;
  a.q += a0 * a.d;
  a.out_ids += a0 * a.kq;
  a.out_d += a0 * a.kq;
  a.m = rows;
  ggnn_k_query<<<(unsigned)((rows + GGNN_WARPS_PER_BLOCK - 1) / GGNN_WARPS_PER_BLOCK), GGNN_WARPS_PER_BLOCK * 32,
                 x->smem, stream>>>(a);
  VICK_LAUNCH(call, "ggnn_k_query (chunk)");
  return VICK_OK;
}

// A hooked batch large enough to gain, in chunks: the filling of the next
// chunk's queries, the copies and the last chunk's results under the
// kernels (staged_pipeline.cuh), as the graph search's large batches.
static int ggnn_search_chunked(vick_call *call, vick_ggnn_searcher *s, const ggnn_query_args *a, size_t smem,
                               int64_t m, int32_t k, size_t oi, size_t od, const vick_gsearch_hooks *h, int chunks) {
  ggnn_chunk_ctx x = {*a, smem};
  vick_pipe_job j = {m, a->d, k, s->host, (float *)s->dev, a->out_ids, a->out_d, (int64_t *)(s->host + oi),
                     (float *)(s->host + od), 1, ggnn_chunk_launch, &x};
  int team = call->threads > 0 ? call->threads : 1;
  if (team > VICK_PIPE_TEAM) team = VICK_PIPE_TEAM;
  const int rc = vick_pipe_run(call, &s->pipe, &j, h, chunks, team, "GGNN search (chunks under the copies)");
  return rc == VICK_ARGUMENT ? vick_fail(call, VICK_ARGUMENT, "GGNN search: the queries were refused") : rc;
}

// The call on the searcher's resources: the queries up through the pinned
// staging in pieces (gs_stage_rows: the caller's rows, or the hooks' in,
// which validates them on the way), one launch, the results back, one
// wait, then out to the caller's arrays or through the hooks' out.
static int ggnn_search_on(vick_call *call, vick_ggnn_searcher *s, const float *q, int64_t m, int32_t k, float tau,
                          int32_t max_visits, int64_t *ids, float *dist, const vick_gsearch_hooks *h) {
  const vick_ggnn *g = s->g;
  const int d = g->d;
  ggnn_query_args a;
  ggnn_query_setup(g, m, k, tau, max_visits, &a);
  const size_t smem = a.slab * GGNN_WARPS_PER_BLOCK;
  VICK_CUDA(call, cudaSetDevice(g->device));
  VICK_TRY(ggnn_searcher_reserve(call, NULL, s, m, k, smem));
  size_t oi, od, bytes;
  ggnn_search_layout(m, d, k, &oi, &od, &bytes);
  float *dq = (float *)s->dev;
  a.q = dq;
  a.out_ids = (int64_t *)(s->dev + oi);
  a.out_d = (float *)(s->dev + od);
  const int chunks = h ? vick_pipe_chunks(m, d) : 0;
  if (chunks) return ggnn_search_chunked(call, s, &a, smem, m, k, oi, od, h, chunks);
  if (h) VICK_TRY(gs_stage_rows(call, s->stream, dq, s->host, m, (size_t)d * 4, ggnn_fill_hooked, (void *)h));
  else VICK_TRY(gs_stage_in(call, s->stream, dq, s->host, q, (size_t)m * d * 4));
  VICK_CUDA(call, cudaEventRecord(s->ev_start, s->stream));
  ggnn_k_query<<<(unsigned)((m + GGNN_WARPS_PER_BLOCK - 1) / GGNN_WARPS_PER_BLOCK), GGNN_WARPS_PER_BLOCK * 32, smem,
                 s->stream>>>(a);
  VICK_LAUNCH(call, "ggnn_k_query");
  VICK_CUDA(call, cudaEventRecord(s->ev_stop, s->stream));
  /* ids and distances lie one after the other (od - oi >= m * k * 8) */
  VICK_CUDA(call, cudaMemcpyAsync(s->host + oi, s->dev + oi, bytes - oi, cudaMemcpyDeviceToHost, s->stream));
  VICK_CUDA(call, cudaStreamSynchronize(s->stream));
  if (h) gs_hooked_out(call, (const int64_t *)(s->host + oi), (float *)(s->host + od), m, k, 1, h);
  else vick_copy_wide2(ids, s->host + oi, (size_t)m * k * 8, dist, s->host + od, (size_t)m * k * 4, call->threads);
  float ms = 0.f;
  VICK_CUDA(call, cudaEventElapsedTime(&ms, s->ev_start, s->ev_stop));
  call->seconds_kernel = 1e-3 * ms;
  return VICK_OK;
}

// The call on the searcher's resources (one call at a time), or where
// another thread's call holds them or the batch is above the workspace,
// as vick_ggnn_query: with hooks, through host buffers of its own.
static int ggnn_search_any(vick_call *call, vick_ggnn_searcher *s, const float *q, int64_t m, int32_t k, float tau,
                           int32_t max_visits, int64_t *ids, float *dist, const vick_gsearch_hooks *h) {
  size_t oi, od, bytes;
  ggnn_search_layout(m, s->g->d, k, &oi, &od, &bytes);
  if (bytes > GS_WS_MAX_BYTES || !s->mu.try_lock()) {
    if (!h) return vick_ggnn_query(call, s->g, q, m, k, tau, max_visits, ids, dist);
    float *hq = (float *)malloc((size_t)m * s->g->d * 4), *hd = (float *)malloc((size_t)m * k * 4);
    int64_t *hi = (int64_t *)malloc((size_t)m * k * 8);
    int rc = VICK_OK;
    if (!hq || !hi || !hd) rc = vick_fail(call, VICK_NOMEM, "GGNN search: no host memory for the queries");
    if (rc == VICK_OK && h->in(h->ctx, 0, hq, 0, m)) rc = vick_fail(call, VICK_ARGUMENT, "the queries were refused");
    if (rc == VICK_OK) rc = vick_ggnn_query(call, s->g, hq, m, k, tau, max_visits, hi, hd);
    if (rc == VICK_OK) {
      for (int64_t i = 0; i < m * k; ++i) hd[i] *= hd[i];
      h->out(h->ctx, 0, hi, hd, 0, m);
    }
    free(hq);
    free(hi);
    free(hd);
    return rc;
  }
  const double t0 = vick_now();
  call->message[0] = '\0';
  call->n_stages = 0;
  call->seconds_kernel = call->seconds_transfer = 0;
  const int rc = ggnn_search_on(call, s, q, m, k, tau, max_visits, ids, dist, h);
  if (rc != VICK_OK) {
    cudaStreamSynchronize(s->stream);
    cudaGetLastError();
  }
  s->mu.unlock();
  call->seconds_total = vick_now() - t0;
  return rc;
}

extern "C" int vick_ggnn_search_hooked(vick_call *call, vick_ggnn_searcher *s, int64_t m, int32_t k, float tau,
                                       int32_t max_visits, const vick_gsearch_hooks *h) {
  if (!call) return VICK_ARGUMENT;
  if (!s || !h || !h->in || !h->out || call->threads < 1 || m < 1 || k < 1 || k > 256 || !(tau >= 0) ||
      max_visits < 0)
    return vick_fail(call, VICK_ARGUMENT, "GGNN search needs hooks, call->threads >= 1, m >= 1 queries, 1 <= k <= "
                     "256, tau >= 0 (m = %lld, k = %d)", (long long)m, (int)k);
  return ggnn_search_any(call, s, NULL, m, k, tau, max_visits, NULL, NULL, h);
}

extern "C" int vick_ggnn_search(vick_call *call, vick_ggnn_searcher *s, const float *q, int64_t m, int32_t k,
                                float tau, int32_t max_visits, int64_t *ids, float *dist) {
  if (!call) return VICK_ARGUMENT;
  if (!s || !q || !ids || !dist || m < 1 || k < 1 || k > 256 || !(tau >= 0) || max_visits < 0)
    return vick_fail(call, VICK_ARGUMENT, "GGNN search needs m >= 1 queries, 1 <= k <= 256, tau >= 0 (m = %lld, "
                     "k = %d)", (long long)m, (int)k);
  return ggnn_search_any(call, s, q, m, k, tau, max_visits, ids, dist, NULL);
}
