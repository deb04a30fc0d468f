/* A hooked large batch in chunks: the host threads fill the pinned staging
 * in claimed pieces (as gs_stage_hooked) while the calling thread sends
 * each chunk whose pieces are all filled with one copy and launches its
 * pivot and search kernels, the chunks alternating between the
 * workspace's two streams; each chunk's results come back on its stream,
 * and the same team hands them to the hooks chunk by chunk.
 *
 * Why: one copy in and one launch for the whole batch leave the device
 * idle while the host fills the staging and the host idle while the
 * device searches; in chunks the filling of the next chunk, the copies
 * and the results of the last chunk run under the kernels.  Two streams
 * let a chunk's blocks start while the chunk before it drains, so the
 * chunks do not each pay a kernel's tail.  Every query's search is the
 * batch's (qbase keeps its random seeds; the launch shape is the whole
 * batch's plan), so the results are those of one launch. */
#include "graph_search.cuh"

#include <sched.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Chunks of at least this many queries: below, a chunk's kernels would not
 * fill the device while the next one is filled. */
#define GS_PIPE_MIN_ROWS 1024

int gs_pipe_chunks(const gs_io *io, const gs_plan *P, int64_t m, int32_t d) {
  const size_t row_bytes = (size_t)d * 4;
  if (P->small || !io->stream2 || !io->host || (size_t)m * row_bytes < VICK_WIDE_MIN) return 0;
  const int64_t per = GS_CLAIM_PIECE / row_bytes > 0 ? (int64_t)(GS_CLAIM_PIECE / row_bytes) : 1;
  int64_t c = m / GS_PIPE_MIN_ROWS, pieces = (m + per - 1) / per;
  if (c > GS_PIPE_CHUNKS) c = GS_PIPE_CHUNKS;
  if (c > pieces) c = pieces;
  /* whole pieces a chunk: the chunks the pieces make (at least two) */
  const int64_t ppc = (pieces + c - 1) / (c > 0 ? c : 1);
  return c >= 2 && (pieces + ppc - 1) / ppc >= 2 ? (int)c : 0;
}

typedef struct {
  vick_call *call;
  const vick_gsearch *g;
  const gs_io *io;
  const gs_plan *P;
  const gs_graph *G;
  int64_t m, per, pieces, ppc; /* rows a piece, pieces, pieces a chunk */
  int k, chunks;
  float delta;
} gs_pipe;

static int64_t pipe_row(const gs_pipe *s, int64_t chunk) {
  const int64_t r = chunk * s->ppc * s->per;
  return r < s->m ? r : s->m;
}

/* Chunk c: one copy in, the pivot and search kernels, the results back,
 * an event when they are on the host (calling thread only). */
static int pipe_launch(const gs_pipe *s, int c) {
  vick_call *call = s->call;
  const gs_io *io = s->io;
  const int64_t a = pipe_row(s, c), rows = pipe_row(s, c + 1) - a, d = s->g->d;
  const cudaStream_t st = (c & 1) ? io->stream2 : io->stream;
  float *dq = (float *)io->dev + a * d;
  unsigned long long *near = (unsigned long long *)(io->dev + s->P->off_near) + a * s->P->slices * GS_EMAX;
  int64_t *dids = (int64_t *)(io->dev + s->P->off_res);
  float *ddist = (float *)(dids + s->m * s->k);
  char *hres = io->host + s->P->host_res;
  VICK_CUDA(call, cudaMemcpyAsync(dq, io->host + (size_t)a * d * 4, (size_t)rows * d * 4, cudaMemcpyHostToDevice, st));
  if (c == 0) VICK_CUDA(call, cudaEventRecord(io->ev_start, st));
  VICK_TRY(gs_pivot_launch(call, s->g, dq, rows, s->P->slices, near, NULL, st));
  VICK_TRY(gs_large_launch(call, st, s->P, *s->G, dq, near, rows, a, s->k, s->delta, dids + a * s->k,
                           ddist + a * s->k));
  VICK_CUDA(call, cudaEventRecord((c & 1) ? io->ev_stop2 : io->ev_stop, st));
  VICK_CUDA(call, cudaMemcpyAsync(hres + (size_t)a * s->k * 8, dids + a * s->k, (size_t)rows * s->k * 8,
                                  cudaMemcpyDeviceToHost, st));
  VICK_CUDA(call, cudaMemcpyAsync(hres + (size_t)s->m * s->k * 8 + (size_t)a * s->k * 4, ddist + a * s->k,
                                  (size_t)rows * s->k * 4, cudaMemcpyDeviceToHost, st));
  VICK_CUDA(call, cudaEventRecord(io->ev_done[c], st));
  return VICK_OK;
}

int gs_run_pipelined(vick_call *call, const vick_gsearch *g, const gs_io *io, const gs_plan *P, const gs_graph &G,
                     int64_t m, int k, float delta, const vick_gsearch_hooks *h, int chunks, int threads) {
  const size_t row_bytes = (size_t)g->d * 4;
  gs_pipe s;
  s.call = call;
  s.g = g;
  s.io = io;
  s.P = P;
  s.G = &G;
  s.m = m;
  s.k = k;
  s.delta = delta;
  s.per = GS_CLAIM_PIECE / row_bytes > 0 ? (int64_t)(GS_CLAIM_PIECE / row_bytes) : 1;
  s.pieces = (m + s.per - 1) / s.per;
  s.ppc = (s.pieces + chunks - 1) / chunks;
  s.chunks = (int)((s.pieces + s.ppc - 1) / s.ppc);
  if (threads > s.pieces) threads = (int)s.pieces;
  if (threads < 1) threads = 1;
  int filled[GS_PIPE_CHUNKS] = {0}; /* pieces filled, per chunk */
  int64_t next = 0;
  int refused = 0, failed = 0, launched = 0, rc = VICK_OK;
#pragma omp parallel num_threads(threads)
  {
    int t = 0;
#ifdef _OPENMP
    t = omp_get_thread_num();
#endif
    for (;;) {
      int stop, fail;
#pragma omp atomic read
      stop = refused;
#pragma omp atomic read
      fail = failed;
      if (stop || fail) break;
      if (t == 0) {
        /* every chunk whose pieces are all filled, in order */
        while (launched < s.chunks) {
          const int64_t want = (pipe_row(&s, launched + 1) - pipe_row(&s, launched) + s.per - 1) / s.per;
          int have;
#pragma omp atomic read
          have = filled[launched];
          if (have < want) break;
          if ((rc = pipe_launch(&s, launched)) != VICK_OK) {
#pragma omp atomic write
            failed = 1;
            break;
          }
          ++launched;
        }
        if (failed || launched == s.chunks) break;
      }
      int64_t p;
#pragma omp atomic capture
      p = next++;
      if (p >= s.pieces) {
        if (t != 0) break;
        sched_yield(); /* the calling thread waits for the last pieces to launch them */
        continue;
      }
      const int64_t a = p * s.per, len = m - a < s.per ? m - a : s.per;
      if (h->in(h->ctx, t, (float *)(io->host + (size_t)a * row_bytes), a, len)) {
#pragma omp atomic write
        refused = 1;
        break;
      }
#pragma omp atomic update
      filled[p / s.ppc]++;
    }
  }
  if (refused || failed) {
    /* nothing may still read the staging or write the results when the
     * caller leaves */
    cudaStreamSynchronize(io->stream);
    cudaStreamSynchronize(io->stream2);
    return refused ? vick_fail(call, VICK_ARGUMENT, "graph search: the queries were refused") : rc;
  }
  /* the results, chunk by chunk as they arrive, each thread a share */
  const int64_t *ids = (const int64_t *)(io->host + P->host_res);
  const float *dist = (const float *)(ids + m * k);
  cudaError_t err = cudaSuccess;
#pragma omp parallel num_threads(threads)
  {
    int t = 0, nt = 1;
#ifdef _OPENMP
    t = omp_get_thread_num();
    nt = omp_get_num_threads();
#endif
    for (int c = 0; c < s.chunks; ++c) {
      const cudaError_t e = cudaEventSynchronize(io->ev_done[c]);
      if (e != cudaSuccess) {
#pragma omp critical(gs_pipe_err)
        if (err == cudaSuccess) err = e;
        break;
      }
      const int64_t a = pipe_row(&s, c), len = pipe_row(&s, c + 1) - a;
      const int64_t r0 = a + len * t / nt, r1 = a + len * (t + 1) / nt;
      if (r0 < r1) h->out(h->ctx, t, ids + r0 * k, dist + r0 * k, r0, r1 - r0);
    }
  }
  if (err != cudaSuccess) {
    cudaStreamSynchronize(io->stream);
    cudaStreamSynchronize(io->stream2);
    return vick_cuda_fail(call, err, "cudaEventSynchronize (search results)", __FILE__, __LINE__);
  }
  /* the kernels' span: the first chunk's start to the later of the two
   * streams' last kernels */
  float ms = 0.f, ms2 = 0.f;
  VICK_CUDA(call, cudaEventElapsedTime(&ms, io->ev_start, io->ev_stop));
  VICK_CUDA(call, cudaEventElapsedTime(&ms2, io->ev_start, io->ev_stop2));
  if (ms2 > ms) ms = ms2;
  call->seconds_kernel = 1e-3 * ms;
  vick_stage_add(call, "pivots and search (chunks under the copies)", 1e-3 * ms);
  return VICK_OK;
}
