/* The workspace of a graph-search index: a stream, timing events,
 * per-query counters, one device buffer and one pinned host buffer, made
 * once and kept by the index (no global state), so that a call of any
 * batch size pays its copies, its launches and one wait, not the creation
 * of streams and events, allocations and pageable copies, which would cost
 * a single query more host time than its search and a large batch a
 * sizeable share of its time.
 *
 * The buffers only grow, to the largest batch seen.  The device ones are
 * kept buffers of the common layer without a budget of their own: a call
 * whose buffers would pass GS_WS_MAX_BYTES runs on resources of its own
 * (graph_search_plan.cu).  The counters of the small procedure are left at
 * zero by the search kernel for the next call; they are cleared on the
 * stream after a reallocation or a failed call.  A lock makes it one call
 * at a time; another thread's call meanwhile runs on resources of its own. */
#include "graph_search.cuh"

#include <mutex>
#include <new>

struct gs_small_ws {
  std::mutex mu;
  gs_io io;
  vick_pipe pipe;
  int *count;
  int64_t count_cap; /* queries */
  size_t dev_cap, host_cap;
  int dirty; /* counters to clear before the next kernel */
};

int gs_ws_create(vick_call *call, vick_gsearch *g) {
  gs_small_ws *w = new (std::nothrow) gs_small_ws();
  if (!w) return vick_fail(call, VICK_NOMEM, "graph search: no host memory for the workspace");
  g->ws = w; /* from here on gs_ws_destroy releases what was made */
  w->dirty = 1;
  VICK_CUDA(call, cudaStreamCreateWithFlags(&w->io.stream, cudaStreamNonBlocking));
  VICK_CUDA(call, cudaEventCreate(&w->io.ev_start));
  VICK_CUDA(call, cudaEventCreate(&w->io.ev_pivots));
  VICK_CUDA(call, cudaEventCreate(&w->io.ev_stop));
  /* hooked large batches in chunks (staged_pipeline.cuh) */
  VICK_TRY(vick_pipe_create(call, &w->pipe, w->io.stream));
  w->io.pipe = &w->pipe;
  return VICK_OK;
}

void gs_ws_destroy(vick_gsearch *g) {
  gs_small_ws *w = g->ws;
  if (!w) return;
  if (w->io.stream) cudaStreamSynchronize(w->io.stream);
  vick_pipe_destroy(&w->pipe); /* leaves w->io.stream to the lines below */
  vick_free_kept(w->count);
  vick_free_kept(w->io.dev);
  vick_pinned_free(w->io.host);
  cudaEvent_t *evs[] = {&w->io.ev_start, &w->io.ev_pivots, &w->io.ev_stop};
  for (cudaEvent_t *e : evs)
    if (*e) cudaEventDestroy(*e);
  if (w->io.stream) cudaStreamDestroy(w->io.stream);
  cudaGetLastError();
  delete w;
  g->ws = NULL;
}

int gs_ws_acquire(const vick_gsearch *g) { return g->ws && g->ws->mu.try_lock(); }

/* The counters of cap queries and, after them (8-byte aligned), the
 * small kernel's clock words: one allocation, zeroed together. */
static size_t gs_count_bytes(int64_t cap) { return ((size_t)cap * sizeof(int) + 7) / 8 * 8 + GS_CLOCK_WORDS * 8; }

/* Every stream idle (the pipe's first is the workspace's): a call's
 * buffers may be freed or regrown. */
static int gs_ws_drain(vick_call *call, gs_small_ws *w) { return vick_pipe_drain(call, &w->pipe); }

/* Room for at least `need`, grown by half again so that a slowly rising
 * batch size does not reallocate on every call. */
static size_t gs_grow(size_t need) { return need + need / 2; }

int gs_ws_reserve(vick_call *call, const vick_gsearch *g, int64_t m, size_t dev_bytes, size_t host_bytes, gs_io *io) {
  gs_small_ws *w = g->ws;
  if (m > w->count_cap) {
    /* the old counters may still be read by a kernel of the last call */
    VICK_TRY(gs_ws_drain(call, w));
    vick_free_kept(w->count);
    w->count = NULL;
    w->count_cap = 0;
    const int64_t cap = m < 1024 ? 1024 : (int64_t)gs_grow((size_t)m);
    VICK_TRY(vick_alloc_kept(call, NULL, (void **)&w->count, gs_count_bytes(cap), "graph search query counters"));
    w->count_cap = cap;
    w->dirty = 1;
  }
  if (dev_bytes > w->dev_cap) {
    VICK_TRY(gs_ws_drain(call, w));
    vick_free_kept(w->io.dev);
    w->io.dev = NULL;
    w->dev_cap = 0;
    const size_t cap = gs_grow(dev_bytes);
    VICK_TRY(vick_alloc_kept(call, NULL, (void **)&w->io.dev, cap, "graph search buffers"));
    w->dev_cap = cap;
  }
  if (host_bytes > w->host_cap) {
    VICK_TRY(gs_ws_drain(call, w));
    vick_pinned_free(w->io.host);
    w->io.host = NULL;
    w->host_cap = 0;
    const size_t cap = gs_grow(host_bytes);
    w->io.host_dev = NULL;
    VICK_TRY(vick_pinned_alloc(call, (void **)&w->io.host, cap, cudaHostAllocMapped, "graph search staging"));
    w->host_cap = cap;
    /* the kernels may read and write it in place (small batches) */
    VICK_CUDA(call, cudaHostGetDevicePointer((void **)&w->io.host_dev, w->io.host, 0));
  }
  if (w->dirty && w->count) {
    VICK_CUDA(call, cudaMemsetAsync(w->count, 0, gs_count_bytes(w->count_cap), w->io.stream));
    w->dirty = 0;
  }
  *io = w->io;
  io->count = w->count;
  io->clk = w->count ? (unsigned long long *)((char *)w->count + gs_count_bytes(w->count_cap)) - GS_CLOCK_WORDS : NULL;
  io->dev_bytes = dev_bytes;
  io->host_bytes = host_bytes;
  return VICK_OK;
}

/* Warm the workspace for batches of up to m queries of k results (the
 * index's first call then allocates nothing). */
int gs_ws_prepare(vick_call *call, const vick_gsearch *g, int64_t m, size_t dev_bytes, size_t host_bytes) {
  if (!gs_ws_acquire(g)) return VICK_OK;
  gs_io io;
  const int rc = gs_ws_reserve(call, g, m, dev_bytes, host_bytes, &io);
  if (rc == VICK_OK) cudaStreamSynchronize(io.stream);
  gs_ws_release(g, rc != VICK_OK);
  return rc;
}

void gs_ws_release(const vick_gsearch *g, int failed) {
  gs_small_ws *w = g->ws;
  if (failed) {
    /* nothing may still use the buffers when the next call regrows them */
    for (int s = 0; s < VICK_PIPE_STREAMS; ++s) /* stream[0] is w->io.stream */
      if (w->pipe.stream[s]) cudaStreamSynchronize(w->pipe.stream[s]);
    cudaGetLastError();
    w->dirty = 1;
  }
  w->mu.unlock();
}
