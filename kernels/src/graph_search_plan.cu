/* The host side of a graph search (graph_search_small.cu,
 * graph_search_large.cu): the parameters, the plan of one call (procedure,
 * launch shape, buffer layout) and the call itself on the index's
 * workspace (graph_search_workspace.cu) or on resources of its own. */
#include "graph_search.cuh"

#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

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

static int gs_plan_make(vick_call *call, const vick_gsearch *g, int64_t m, int k, const vick_gsearch_params *p,
                        gs_plan *P) {
  memset(P, 0, sizeof *P);
  P->small = p->procedure == VICK_GSEARCH_SMALL;
  P->qbytes = ((size_t)g->d * 4 + 15) / 16 * 16;
  P->ne = p->entries > 0 ? (p->entries < GS_EMAX ? p->entries : GS_EMAX) : GS_EMAX;
  P->RS = (k <= 32 && p->list <= 32) ? 32 : 128;
  P->t0 = p->searches;
  P->kk = k < P->RS ? k : P->RS;
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
  /* pivot candidate lists per query: one per slice the pivot kernel scans */
  const size_t bq = gs_align((size_t)m * g->d * 4), bn = gs_align((size_t)m * P->slices * GS_EMAX * 8),
               bres = gs_align((size_t)m * k * 12), br = P->small ? gs_align((size_t)m * P->t0 * P->RS * 8) : 0;
  P->off_near = bq;
  P->off_res = bq + bn;
  P->off_rank = bq + bn + bres;
  P->dev_bytes = bq + bn + bres + br;
  P->host_res = bq;
  P->host_clk = bq + bres;
  P->host_bytes = bq + bres + 256;
  return VICK_OK;
}

/* ------------------------------------------------------------- staging */
/* The call's host threads (0: OpenMP's default, as vick_copy_wide). */
static int gs_threads(const vick_call *call) {
#ifdef _OPENMP
  return call->threads > 0 ? call->threads : omp_get_max_threads();
#else
  (void)call;
  return 1;
#endif
}

/* The end of a threaded staging: the first failed copy's error, or the
 * refusal of a piece once the copies already started have finished. */
static int gs_stage_end(vick_call *call, cudaStream_t stream, cudaError_t err, int stopped) {
  if (err != cudaSuccess) {
    cudaStreamSynchronize(stream);
    return vick_cuda_fail(call, err, "cudaMemcpyAsync (staged queries)", __FILE__, __LINE__);
  }
  if (stopped) {
    /* nothing may still read the staging when the caller leaves */
    VICK_CUDA(call, cudaStreamSynchronize(stream));
    return vick_fail(call, VICK_ARGUMENT, "graph search: the queries were refused");
  }
  return VICK_OK;
}

int gs_stage_rows(vick_call *call, cudaStream_t stream, void *dst, void *pinned, int64_t rows, size_t row_bytes,
                  gs_fill_fn fill, void *ctx) {
  if (rows <= 0) return VICK_OK;
  char *pd = (char *)dst, *pp = (char *)pinned;
  int threads = gs_threads(call);
  if ((size_t)rows * row_bytes < VICK_WIDE_MIN) threads = 1;
  if (threads == 1) {
    if (fill(ctx, 0, pp, 0, rows)) return vick_fail(call, VICK_ARGUMENT, "graph search: the queries were refused");
    VICK_CUDA(call, cudaMemcpyAsync(pd, pp, (size_t)rows * row_bytes, cudaMemcpyHostToDevice, stream));
    return VICK_OK;
  }
  const int64_t per = GS_STAGE_PIECE / row_bytes > 0 ? (int64_t)(GS_STAGE_PIECE / row_bytes) : 1;
  const int64_t pieces = (rows + per - 1) / per;
  /* a flag per piece: written before the piece's barrier, read after it */
  unsigned char *refused = (unsigned char *)calloc((size_t)pieces, 1);
  if (!refused) return vick_fail(call, VICK_NOMEM, "graph search: no host memory for the staging");
  cudaError_t err = cudaSuccess;
  int stopped = 0;
#pragma omp parallel num_threads(threads)
  {
    int t = 0, nt = 1;
#ifdef _OPENMP
    t = omp_get_thread_num();
    nt = omp_get_num_threads();
#endif
    for (int64_t p = 0; p < pieces; ++p) {
      const int64_t a = p * per, len = rows - a < per ? rows - a : per;
      const int64_t r0 = a + len * t / nt, r1 = a + len * (t + 1) / nt;
      if (r0 < r1 && fill(ctx, t, pp + (size_t)r0 * row_bytes, r0, r1 - r0)) {
#pragma omp atomic write
        refused[p] = 1;
      }
#pragma omp barrier
      if (refused[p]) {
        if (t == 0) stopped = 1;
        break;
      }
      if (t == 0) {
        const cudaError_t e = cudaMemcpyAsync(pd + (size_t)a * row_bytes, pp + (size_t)a * row_bytes,
                                              (size_t)len * row_bytes, cudaMemcpyHostToDevice, stream);
        if (e != cudaSuccess && err == cudaSuccess) err = e;
      }
    }
  }
  free(refused);
  return gs_stage_end(call, stream, err, stopped);
}

/* The queries of a hooked call (h->in: validation fused into the copy)
 * into the pinned staging and on to dst: the threads claim pieces in turn,
 * fill them and start each piece's copy themselves, with no barrier: a
 * thread that a busy or sleeping CPU starts late finds the pieces taken
 * instead of holding the others at a barrier per piece.  A refused piece
 * stops the claims; the pieces before it were all claimed and filled, so
 * the hooks' first bad row is the first of the queries. */
static int gs_stage_hooked(vick_call *call, cudaStream_t stream, char *pd, char *pp, int64_t rows,
                           size_t row_bytes, const vick_gsearch_hooks *h, int threads) {
  const int64_t per = GS_CLAIM_PIECE / row_bytes > 0 ? (int64_t)(GS_CLAIM_PIECE / row_bytes) : 1;
  const int64_t pieces = (rows + per - 1) / per;
  if ((size_t)rows * row_bytes < VICK_WIDE_MIN || threads < 1) threads = 1;
  if (threads > pieces) threads = (int)pieces;
  int64_t next = 0;
  int stopped = 0;
  cudaError_t err = cudaSuccess;
#pragma omp parallel num_threads(threads)
  {
    int t = 0;
#ifdef _OPENMP
    t = omp_get_thread_num();
#endif
    for (;;) {
      int stop;
#pragma omp atomic read
      stop = stopped;
      if (stop) break;
      int64_t p;
#pragma omp atomic capture
      p = next++;
      if (p >= pieces) break;
      const int64_t a = p * per, len = rows - a < per ? rows - a : per;
      if (h->in(h->ctx, t, (float *)(pp + (size_t)a * row_bytes), a, len)) {
#pragma omp atomic write
        stopped = 1;
        break;
      }
      const cudaError_t e = cudaMemcpyAsync(pd + (size_t)a * row_bytes, pp + (size_t)a * row_bytes,
                                            (size_t)len * row_bytes, cudaMemcpyHostToDevice, stream);
      if (e != cudaSuccess) {
#pragma omp critical(gs_stage_hooked_err)
        if (err == cudaSuccess) err = e;
      }
    }
  }
  return gs_stage_end(call, stream, err, stopped);
}

/* The team of a hooked call's staging and results: the call's threads, at
 * most GS_HOOKED_TEAM.  Each region waits for its last thread to start;
 * on a host whose idle CPUs are slow to wake, the more threads a region
 * wakes the likelier one of them starts milliseconds late; this many
 * still fill a 10,000-query staging well within the kernels' time.  Both
 * regions of the call use the same size, so OpenMP keeps its pool threads
 * between them. */
static int gs_hooked_team(const vick_call *call) {
  const int t = gs_threads(call);
  return t > GS_HOOKED_TEAM ? GS_HOOKED_TEAM : t;
}

static int gs_fill_copy(void *ctx, int thread, void *dst, int64_t row0, int64_t rows) {
  (void)thread;
  memcpy(dst, (const char *)ctx + row0, (size_t)rows);
  return 0;
}

int gs_stage_in(vick_call *call, cudaStream_t stream, void *dst, void *pinned, const void *src, size_t bytes) {
  return gs_stage_rows(call, stream, dst, pinned, (int64_t)bytes, 1, gs_fill_copy, (void *)src);
}

void gs_hooked_out(const vick_call *call, const int64_t *ids, float *dist, int64_t m, int k, int square,
                   const vick_gsearch_hooks *h) {
  int threads = gs_hooked_team(call);
  if ((size_t)m * (size_t)k * 12 < VICK_WIDE_MIN) threads = 1;
#pragma omp parallel num_threads(threads) if (threads > 1)
  {
    int t = 0, nt = 1;
#ifdef _OPENMP
    t = omp_get_thread_num();
    nt = omp_get_num_threads();
#endif
    const int64_t r0 = m * t / nt, r1 = m * (t + 1) / nt;
    if (square)
      for (int64_t i = r0 * k; i < r1 * k; ++i) dist[i] *= dist[i];
    if (r0 < r1) h->out(h->ctx, t, ids + r0 * k, dist + r0 * k, r0, r1 - r0);
  }
}

/* A hooked large batch in chunks under its kernels (staged_pipeline.cuh):
 * each chunk's pivots and search.  Every query's search is the one-launch
 * batch's (qbase keeps its random seeds, the launch shape is the whole
 * batch's plan), so the results are too. */
typedef struct {
  const vick_gsearch *g;
  const gs_plan *P;
  const gs_graph *G;
  float *dq;
  unsigned long long *near;
  int64_t *dids;
  float *ddist;
  int k;
  float delta;
} gs_chunk_ctx;

static int gs_chunk_launch(void *ctx, vick_call *call, cudaStream_t stream, int64_t a, int64_t rows) {
  const gs_chunk_ctx *x = (const gs_chunk_ctx *)ctx;
  const float *dq = x->dq + a * x->g->d;
  unsigned long long *near = x->near + a * x->P->slices * GS_EMAX;
  VICK_TRY(gs_pivot_launch(call, x->g, dq, rows, x->P->slices, near, NULL, stream));
  return gs_large_launch(call, stream, x->P, *x->G, dq, near, rows, a, x->k, x->delta, x->dids + a * x->k,
                         x->ddist + a * x->k);
}

static int gs_run_chunked(vick_call *call, const vick_gsearch *g, const gs_io *io, const gs_plan *P,
                          const gs_graph *G, int64_t m, int k, float delta, const vick_gsearch_hooks *h, int chunks) {
  int64_t *dids = (int64_t *)(io->dev + P->off_res), *hids = (int64_t *)(io->host + P->host_res);
  gs_chunk_ctx x = {g, P, G, (float *)io->dev, (unsigned long long *)(io->dev + P->off_near), dids,
                    (float *)(dids + m * k), k, delta};
  vick_pipe_job j = {m, g->d, k, io->host, (float *)io->dev, dids, (const float *)(dids + m * k), hids,
                     (float *)(hids + m * k), 0, gs_chunk_launch, &x};
  const int team = gs_hooked_team(call) < VICK_PIPE_TEAM ? gs_hooked_team(call) : VICK_PIPE_TEAM;
  const int rc = vick_pipe_run(call, io->pipe, &j, h, chunks, team,
                               "pivots and search (chunks under the copies)");
  return rc == VICK_ARGUMENT ? vick_fail(call, VICK_ARGUMENT, "graph search: the queries were refused") : rc;
}

/* The call on io: one copy in (through the pinned staging in pieces, so
 * that the host fills one while the device copies the last), the kernels
 * (pivots and search, or the fused search alone) as one launch each over
 * the whole batch, one copy out (two straight into the caller's arrays
 * without pinned staging), one wait.  A small batch in one fused launch is
 * one launch and one wait: its kernel reads the queries from the pinned
 * staging where few blocks read them (GS_MAPPED_IN_BLOCKS), writes its
 * results there and times itself on the device's global timer: each copy
 * or event on the stream would add a turn of the stream to such a call. */
static int gs_run(vick_call *call, const vick_gsearch *g, const gs_io *io, const gs_plan *P, const float *q,
                  int64_t m, int k, const vick_gsearch_params *p, int64_t *ids, float *dist,
                  const vick_gsearch_hooks *h) {
  const size_t qb = (size_t)m * g->d * 4, ib = (size_t)m * k * 8, db = (size_t)m * k * 4;
  const int fused = P->fused;
  const int mapped = P->small && io->host && io->host_dev;
  const int mapped_in = mapped && fused && m * P->t0 <= GS_MAPPED_IN_BLOCKS;
  const int clocked = mapped && fused && io->clk;
  float *dq = mapped_in ? (float *)io->host_dev : (float *)io->dev;
  int64_t *dids = mapped ? (int64_t *)(io->host_dev + P->host_res) : (int64_t *)(io->dev + P->off_res);
  float *ddist = (float *)(dids + m * k);
  char *hres = io->host ? io->host + P->host_res : NULL;
  volatile unsigned long long *hclk = clocked ? (volatile unsigned long long *)(io->host + P->host_clk) : NULL;
  gs_graph G = {g->x, g->g,      g->occl,           g->pid,   g->pcomp, g->members,           g->coff,
                g->n, g->d,      g->degree,         p->occlusion_limit, P->slices, g->components == 1,
                g->unique_rows,  g->perm};
  if (h && !io->host) return vick_fail(call, VICK_ARGUMENT, "graph search: hooks need the pinned staging");
  if (h && !P->small && io->pipe) {
    const int chunks = vick_pipe_chunks(m, g->d);
    if (chunks) return gs_run_chunked(call, g, io, P, &G, m, k, p->delta, h, chunks);
  }
  if (mapped_in) {
    if (!h) memcpy(io->host, q, qb);
    else if (h->in(h->ctx, 0, (float *)io->host, 0, m))
      return vick_fail(call, VICK_ARGUMENT, "graph search: the queries were refused");
  } else if (io->host) {
    if (!h) VICK_TRY(gs_stage_in(call, io->stream, dq, io->host, q, qb));
    else
      VICK_TRY(gs_stage_hooked(call, io->stream, (char *)dq, io->host, m, (size_t)g->d * 4, h, gs_hooked_team(call)));
  } else {
    VICK_CUDA(call, cudaMemcpyAsync(dq, q, qb, cudaMemcpyHostToDevice, io->stream));
  }
  if (hclk) *hclk = 0;
  else VICK_CUDA(call, cudaEventRecord(io->ev_start, io->stream));
  unsigned long long *near = (unsigned long long *)(io->dev + P->off_near);
  if (!fused) {
    VICK_TRY(gs_pivot_launch(call, g, dq, m, P->slices, near, P->small ? io->count : NULL, io->stream));
    VICK_CUDA(call, cudaEventRecord(io->ev_pivots, io->stream));
  }
  if (P->small)
    VICK_TRY(gs_small_launch(call, g, io, P, G, dq, m, k, dids, ddist,
                             hclk ? (unsigned long long *)(io->host_dev + P->host_clk) : NULL));
  else VICK_TRY(gs_large_launch(call, io->stream, P, G, dq, near, m, 0, k, p->delta, dids, ddist));
  if (!hclk) VICK_CUDA(call, cudaEventRecord(io->ev_stop, io->stream));
  if (!mapped) {
    if (hres) {
      VICK_CUDA(call, cudaMemcpyAsync(hres, dids, ib + db, cudaMemcpyDeviceToHost, io->stream));
    } else {
      VICK_CUDA(call, cudaMemcpyAsync(ids, dids, ib, cudaMemcpyDeviceToHost, io->stream));
      VICK_CUDA(call, cudaMemcpyAsync(dist, ddist, db, cudaMemcpyDeviceToHost, io->stream));
    }
  }
  VICK_CUDA(call, cudaStreamSynchronize(io->stream));
  if (h) gs_hooked_out(call, (const int64_t *)hres, (float *)(hres + ib), m, k, 0, h);
  else if (hres) vick_copy_wide2(ids, hres, ib, dist, hres + ib, db, call->threads);
  float ms = 0.f, pivot_ms = 0.f;
  if (hclk) ms = (float)(1e-6 * (double)*hclk);
  else VICK_CUDA(call, cudaEventElapsedTime(&ms, io->ev_start, io->ev_stop));
  if (!fused) VICK_CUDA(call, cudaEventElapsedTime(&pivot_ms, io->ev_start, io->ev_pivots));
  call->seconds_kernel = 1e-3 * ms;
  if (!fused) vick_stage_add(call, "pivots", 1e-3 * pivot_ms);
  vick_stage_add(call, fused ? "search (pivots inside)" : "search", 1e-3 * (ms - pivot_ms));
  return VICK_OK;
}

/* A call on resources of its own (the workspace busy with another thread's call). */
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
    rc = gs_run(call, g, &io, P, q, m, k, p, ids, dist, NULL);
  }
  vick_buf_free(&env, &all);
  if (io.ev_pivots) cudaEventDestroy(io.ev_pivots);
  return vick_end(call, &env, rc);
}

/* The hooks' way on resources of its own (another thread's call holds the
 * workspace, or a batch above it): host buffers of the call's own between
 * the hooks and the plain call. */
static int gs_query_own_hooked(vick_call *call, const vick_gsearch *g, const gs_plan *P, int64_t m, int k,
                               const vick_gsearch_params *p, const vick_gsearch_hooks *h) {
  float *q = (float *)malloc((size_t)m * g->d * 4);
  int64_t *ids = (int64_t *)malloc((size_t)m * k * 8);
  float *dist = (float *)malloc((size_t)m * k * 4);
  int rc = VICK_OK;
  if (!q || !ids || !dist) rc = vick_fail(call, VICK_NOMEM, "graph search: no host memory for the queries");
  if (rc == VICK_OK && h->in(h->ctx, 0, q, 0, m))
    rc = vick_fail(call, VICK_ARGUMENT, "graph search: the queries were refused");
  if (rc == VICK_OK) rc = gs_query_own(call, g, P, q, m, k, p, ids, dist);
  if (rc == VICK_OK) h->out(h->ctx, 0, ids, dist, 0, m);
  free(q);
  free(ids);
  free(dist);
  return rc;
}

static int gs_query(vick_call *call, const vick_gsearch *g, const float *q, int64_t m, int32_t k,
                    const vick_gsearch_params *p, int64_t *ids, float *dist, const vick_gsearch_hooks *h) {
  if (!call) return VICK_ARGUMENT;
  if (!g || (!h && (!q || !ids || !dist)) || !p || m < 1 || k < 1 || k > 128)
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
  /* a batch far above the usual (the for-all lists of an index's every
   * point) runs on resources of its own, not kept by the index after it */
  if (P.dev_bytes > GS_WS_MAX_BYTES || !gs_ws_acquire(g))
    return h ? gs_query_own_hooked(call, g, &P, m, k, p, h) : gs_query_own(call, g, &P, q, m, k, p, ids, dist);
  /* the index's workspace: no stream, event or buffer made, no device
   * memory query (vick_begin's) on the way */
  const double t_start = vick_now();
  call->seconds_transfer = call->seconds_kernel = call->seconds_total = 0;
  call->n_stages = 0;
  call->message[0] = '\0';
  gs_io io;
  cudaError_t e = cudaSetDevice(call->device);
  int rc = e == cudaSuccess ? VICK_OK : vick_cuda_fail(call, e, "cudaSetDevice", __FILE__, __LINE__);
  if (rc == VICK_OK) rc = gs_ws_reserve(call, g, P.small ? m : 0, P.dev_bytes, P.host_bytes, &io);
  if (rc == VICK_OK) rc = gs_run(call, g, &io, &P, q, m, k, p, ids, dist, h);
  gs_ws_release(g, rc != VICK_OK);
  call->seconds_total = vick_now() - t_start;
  return rc;
}

int vick_gsearch_query(vick_call *call, const vick_gsearch *g, const float *q, int64_t m, int32_t k,
                       const vick_gsearch_params *p, int64_t *ids, float *dist) {
  return gs_query(call, g, q, m, k, p, ids, dist, NULL);
}

int vick_gsearch_query_hooked(vick_call *call, const vick_gsearch *g, int64_t m, int32_t k,
                              const vick_gsearch_params *p, const vick_gsearch_hooks *h) {
  if (!call) return VICK_ARGUMENT;
  if (!h || !h->in || !h->out || call->threads < 1)
    return vick_fail(call, VICK_ARGUMENT, "graph search: hooks need in, out and call->threads >= 1 (their slots)");
  return gs_query(call, g, NULL, m, k, p, NULL, NULL, h);
}

int gs_query_device(vick_call *call, vick_env *env, const vick_gsearch *g, const float *dq, int64_t m, int k,
                    const vick_gsearch_params *p, int64_t chunk, int64_t *dids, float *ddist) {
  if (!g || !dq || !dids || !ddist || !p || m < 1 || k < 1 || k > 128 || chunk < 1 ||
      p->procedure != VICK_GSEARCH_LARGE || !(p->delta >= 0.f))
    return vick_fail(call, VICK_ARGUMENT, "graph search on device queries: needs a graph, queries, 1 <= k <= 128, "
                     "the large procedure and delta >= 0");
  const int64_t per = chunk < m ? chunk : m;
  gs_plan P;
  VICK_TRY(gs_plan_make(call, g, per, k, p, &P));
  vick_buf near = {NULL, 0};
  VICK_TRY(vick_buf_alloc(call, env, &near, (size_t)per * P.slices * GS_EMAX * 8, "graph search pivot candidates"));
  gs_graph G = {g->x, g->g,      g->occl,           g->pid,   g->pcomp, g->members,           g->coff,
                g->n, g->d,      g->degree,         p->occlusion_limit, P.slices, g->components == 1,
                g->unique_rows,  g->perm};
  int rc = VICK_OK;
  for (int64_t a = 0; a < m && rc == VICK_OK; a += per) {
    const int64_t rows = m - a < per ? m - a : per;
    const float *q = dq + a * g->d;
    rc = gs_pivot_launch(call, g, q, rows, P.slices, (unsigned long long *)near.p, NULL, env->stream);
    if (rc == VICK_OK)
      rc = gs_large_launch(call, env->stream, &P, G, q, (const unsigned long long *)near.p, rows, a, k, p->delta,
                           dids + a * k, ddist + a * k);
  }
  if (rc == VICK_OK) {
    const cudaError_t e = cudaStreamSynchronize(env->stream);
    if (e != cudaSuccess) rc = vick_cuda_fail(call, e, "graph search on device queries", __FILE__, __LINE__);
  }
  vick_buf_free(env, &near);
  return rc;
}

#define GS_SMALL_RESERVE 1024

int vick_gsearch_reserve(vick_call *call, const vick_gsearch *g, int64_t m, int32_t k) {
  if (!call) return VICK_ARGUMENT;
  if (!g || m < 1 || k < 1 || k > 128 || m > 0x7fffffffLL / 64)
    return vick_fail(call, VICK_ARGUMENT, "graph search reserve: needs a graph, 1 <= m, 1 <= k <= 128");
  call->message[0] = '\0';
  VICK_CUDA(call, cudaSetDevice(g->device));
  VICK_TRY(gs_large_load(call));
  cudaFuncAttributes a;
  VICK_CUDA(call, cudaFuncGetAttributes(&a, gs_pivot_kernel_ptr()));
  /* the larger of the two procedures' layouts: the large one for m
   * queries, the small one (its rankings take t0 x 32 keys a query) for
   * the batches it serves, at most GS_SMALL_RESERVE */
  vick_gsearch_params p;
  vick_gsearch_params_init(&p);
  gs_plan large, small;
  VICK_TRY(gs_plan_make(call, g, m, k, &p, &large));
  p.procedure = VICK_GSEARCH_SMALL;
  p.searches = k <= 32 ? 32 : 16;
  const int64_t ms = m < GS_SMALL_RESERVE ? m : GS_SMALL_RESERVE;
  VICK_TRY(gs_plan_make(call, g, ms, k, &p, &small));
  const size_t dev = large.dev_bytes > small.dev_bytes ? large.dev_bytes : small.dev_bytes;
  const size_t host = large.host_bytes > small.host_bytes ? large.host_bytes : small.host_bytes;
  return gs_ws_prepare(call, g, ms, dev, host);
}
