/* The small-batch workspace of a graph-search index: a stream, three
 * timing events, one device buffer and one pinned host buffer, made once
 * and kept by the index (no global state), so that a single-query call
 * pays one copy in, one launch, one copy out and one wait, not the
 * creation of a stream and events, allocations and pageable copies (about
 * 55-60 us of host time per call on the H100 before).
 *
 * The buffers only grow (to the largest small batch seen, at most
 * GS_WS_QUERIES queries).  The device buffer starts with the per-query
 * counters of the small procedure; the search kernel leaves them at zero
 * for the next call, and they are cleared on the stream after a
 * reallocation or a failed call.  A lock makes it one call at a time;
 * another thread's call meanwhile runs on resources of its own. */
#include "graph_search.cuh"

#include <mutex>
#include <new>

struct gs_small_ws {
  std::mutex mu;
  gs_io io;
  size_t dev_cap, host_cap;
  int dirty; /* counters to clear before the next kernel */
};

static const size_t gs_counter_bytes = (size_t)GS_WS_QUERIES * sizeof(int);

int gs_ws_create(vick_call *call, vick_gsearch *g) {
  gs_small_ws *w = new (std::nothrow) gs_small_ws();
  if (!w) return vick_fail(call, VICK_NOMEM, "graph search: no host memory for the small-batch workspace");
  g->ws = w; /* from here on gs_ws_destroy releases what was made */
  w->dirty = 1;
  VICK_CUDA(call, cudaStreamCreateWithFlags(&w->io.stream, cudaStreamNonBlocking));
  VICK_CUDA(call, cudaEventCreate(&w->io.ev_start));
  VICK_CUDA(call, cudaEventCreate(&w->io.ev_pivots));
  VICK_CUDA(call, cudaEventCreate(&w->io.ev_stop));
  return VICK_OK;
}

void gs_ws_destroy(vick_gsearch *g) {
  gs_small_ws *w = g->ws;
  if (!w) return;
  if (w->io.stream) cudaStreamSynchronize(w->io.stream);
  cudaFree(w->io.dev);
  cudaFreeHost(w->io.host);
  if (w->io.ev_start) cudaEventDestroy(w->io.ev_start);
  if (w->io.ev_pivots) cudaEventDestroy(w->io.ev_pivots);
  if (w->io.ev_stop) cudaEventDestroy(w->io.ev_stop);
  if (w->io.stream) cudaStreamDestroy(w->io.stream);
  cudaGetLastError();
  delete w;
  g->ws = NULL;
}

int gs_ws_acquire(const vick_gsearch *g) { return g->ws && g->ws->mu.try_lock(); }

int gs_ws_reserve(vick_call *call, const vick_gsearch *g, size_t dev_bytes, size_t host_bytes, gs_io *io) {
  gs_small_ws *w = g->ws;
  const size_t dneed = gs_counter_bytes + dev_bytes;
  if (dneed > w->dev_cap) {
    cudaFree(w->io.dev);
    w->io.dev = NULL;
    w->dev_cap = 0;
    w->dirty = 1;
    VICK_CUDA(call, cudaMalloc((void **)&w->io.dev, dneed));
    w->dev_cap = dneed;
  }
  if (host_bytes > w->host_cap) {
    cudaFreeHost(w->io.host);
    w->io.host = NULL;
    w->host_cap = 0;
    VICK_CUDA(call, cudaMallocHost((void **)&w->io.host, host_bytes));
    w->host_cap = host_bytes;
  }
  if (w->dirty) {
    VICK_CUDA(call, cudaMemsetAsync(w->io.dev, 0, gs_counter_bytes, w->io.stream));
    w->dirty = 0;
  }
  *io = w->io;
  io->count = (int *)w->io.dev;
  io->dev = w->io.dev + gs_counter_bytes;
  io->dev_bytes = dev_bytes;
  io->host_bytes = host_bytes;
  return VICK_OK;
}

void gs_ws_release(const vick_gsearch *g, int failed) {
  gs_small_ws *w = g->ws;
  if (failed) {
    /* nothing may still use the buffers when the next call regrows them */
    cudaStreamSynchronize(w->io.stream);
    cudaGetLastError();
    w->dirty = 1;
  }
  w->mu.unlock();
}
