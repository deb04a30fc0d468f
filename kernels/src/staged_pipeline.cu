/* See staged_pipeline.cuh. */
#include "staged_copy.cuh"
#include "staged_pipeline.cuh"

#include <sched.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Rows a claimed piece holds: small enough that a late thread holds up
 * little, large enough that each costs one copy's turn at most. */
#define VICK_PIPE_PIECE ((size_t)256 << 10)
/* Chunks of at least this many queries: below, a chunk's kernels would not
 * fill the device while the next one is filled. */
#define VICK_PIPE_MIN_ROWS 1024

int vick_pipe_create(vick_call *call, vick_pipe *p, cudaStream_t first) {
  p->own_first = first == NULL;
  if (first) p->stream[0] = first;
  else VICK_CUDA(call, cudaStreamCreateWithFlags(&p->stream[0], cudaStreamNonBlocking));
  for (int s = 1; s < VICK_PIPE_STREAMS; ++s)
    VICK_CUDA(call, cudaStreamCreateWithFlags(&p->stream[s], cudaStreamNonBlocking));
  VICK_CUDA(call, cudaEventCreate(&p->ev_start));
  for (int s = 0; s < VICK_PIPE_STREAMS; ++s) VICK_CUDA(call, cudaEventCreate(&p->ev_stop[s]));
  for (int c = 0; c < VICK_PIPE_CHUNKS; ++c)
    VICK_CUDA(call, cudaEventCreateWithFlags(&p->ev_done[c], cudaEventDisableTiming));
  return VICK_OK;
}

void vick_pipe_destroy(vick_pipe *p) {
  for (int s = 0; s < VICK_PIPE_STREAMS; ++s)
    if (p->stream[s]) cudaStreamSynchronize(p->stream[s]);
  if (p->ev_start) cudaEventDestroy(p->ev_start);
  for (int s = 0; s < VICK_PIPE_STREAMS; ++s)
    if (p->ev_stop[s]) cudaEventDestroy(p->ev_stop[s]);
  for (int c = 0; c < VICK_PIPE_CHUNKS; ++c)
    if (p->ev_done[c]) cudaEventDestroy(p->ev_done[c]);
  for (int s = p->own_first ? 0 : 1; s < VICK_PIPE_STREAMS; ++s)
    if (p->stream[s]) cudaStreamDestroy(p->stream[s]);
  memset(p, 0, sizeof *p);
}

int vick_pipe_drain(vick_call *call, const vick_pipe *p) {
  for (int s = 0; s < VICK_PIPE_STREAMS; ++s)
    if (p->stream[s]) VICK_CUDA(call, cudaStreamSynchronize(p->stream[s]));
  return VICK_OK;
}

static int64_t pipe_per(int32_t d) {
  const size_t row = (size_t)d * 4;
  return VICK_PIPE_PIECE / row > 0 ? (int64_t)(VICK_PIPE_PIECE / row) : 1;
}

int vick_pipe_chunks(int64_t m, int32_t d) {
  if ((size_t)m * (size_t)d * 4 < VICK_WIDE_MIN) return 0;
  const int64_t per = pipe_per(d), pieces = (m + per - 1) / per;
  int64_t c = m / VICK_PIPE_MIN_ROWS;
  if (c > VICK_PIPE_CHUNKS) c = VICK_PIPE_CHUNKS;
  if (c > pieces) c = pieces;
  if (c < 2) return 0;
  /* whole pieces a chunk: at least two chunks must come of them */
  const int64_t ppc = (pieces + c - 1) / c;
  return (pieces + ppc - 1) / ppc >= 2 ? (int)c : 0;
}

typedef struct {
  const vick_pipe *p;
  const vick_pipe_job *j;
  int64_t per, pieces, ppc; /* rows a piece, pieces, pieces a chunk */
  int chunks;
} pipe_plan;

static int64_t plan_row(const pipe_plan *s, int64_t chunk) {
  const int64_t r = chunk * s->ppc * s->per;
  return r < s->j->m ? r : s->j->m;
}

/* Chunk c (calling thread only): its copy in, its kernels, its results
 * back, an event when they are on the host. */
static int pipe_launch(vick_call *call, const pipe_plan *s, int c) {
  const vick_pipe *p = s->p;
  const vick_pipe_job *j = s->j;
  const int64_t a = plan_row(s, c), rows = plan_row(s, c + 1) - a;
  const cudaStream_t st = p->stream[c % VICK_PIPE_STREAMS];
  const size_t row = (size_t)j->d * 4;
  VICK_CUDA(call, cudaMemcpyAsync(j->dq + a * j->d, j->hq + (size_t)a * row, (size_t)rows * row,
                                  cudaMemcpyHostToDevice, st));
  if (c == 0) VICK_CUDA(call, cudaEventRecord(p->ev_start, st));
  VICK_TRY(j->launch(j->ctx, call, st, a, rows));
  VICK_CUDA(call, cudaEventRecord(p->ev_stop[c % VICK_PIPE_STREAMS], st));
  VICK_CUDA(call, cudaMemcpyAsync(j->hids + a * j->k, j->dids + a * j->k, (size_t)rows * j->k * 8,
                                  cudaMemcpyDeviceToHost, st));
  VICK_CUDA(call, cudaMemcpyAsync(j->hdist + a * j->k, j->ddist + a * j->k, (size_t)rows * j->k * 4,
                                  cudaMemcpyDeviceToHost, st));
  VICK_CUDA(call, cudaEventRecord(p->ev_done[c], st));
  return VICK_OK;
}

static void pipe_wait_all(const vick_pipe *p) {
  for (int st = 0; st < VICK_PIPE_STREAMS; ++st) cudaStreamSynchronize(p->stream[st]);
}

int vick_pipe_run(vick_call *call, const vick_pipe *p, const vick_pipe_job *j, const vick_gsearch_hooks *h,
                  int chunks, int threads, const char *stage) {
  pipe_plan s;
  s.p = p;
  s.j = j;
  s.per = pipe_per(j->d);
  s.pieces = (j->m + s.per - 1) / s.per;
  if (chunks < 1) chunks = 1;
  if (chunks > VICK_PIPE_CHUNKS) chunks = VICK_PIPE_CHUNKS;
  s.ppc = (s.pieces + chunks - 1) / chunks;
  s.chunks = (int)((s.pieces + s.ppc - 1) / s.ppc);
  if (threads > s.pieces) threads = (int)s.pieces;
  if (threads < 1) threads = 1;
  const size_t row = (size_t)j->d * 4;
  int filled[VICK_PIPE_CHUNKS] = {0}; /* pieces filled, per chunk */
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
          const int64_t want = (plan_row(&s, launched + 1) - plan_row(&s, launched) + s.per - 1) / s.per;
          int have;
#pragma omp atomic read
          have = filled[launched];
          if (have < want) break;
          if ((rc = pipe_launch(call, &s, launched)) != VICK_OK) {
#pragma omp atomic write
            failed = 1;
            break;
          }
          ++launched;
        }
        if (rc != VICK_OK || launched == s.chunks) break;
      }
      int64_t q;
#pragma omp atomic capture
      q = next++;
      if (q >= s.pieces) {
        if (t != 0) break;
        sched_yield(); /* the calling thread waits for the last pieces to launch them */
        continue;
      }
      const int64_t a = q * s.per, len = j->m - a < s.per ? j->m - a : s.per;
      if (h->in(h->ctx, t, (float *)(j->hq + (size_t)a * row), a, len)) {
#pragma omp atomic write
        refused = 1;
        break;
      }
#pragma omp atomic update
      filled[q / s.ppc]++;
    }
  }
  if (refused || failed) {
    /* nothing may still read the staging or write the results when the
     * caller leaves */
    pipe_wait_all(p);
    return refused ? vick_fail(call, VICK_ARGUMENT, "the queries were refused") : rc;
  }
  /* the results, chunk by chunk as they arrive, each thread a share */
  cudaError_t err = cudaSuccess;
#pragma omp parallel num_threads(threads)
  {
    int t = 0, nt = 1;
#ifdef _OPENMP
    t = omp_get_thread_num();
    nt = omp_get_num_threads();
#endif
    for (int c = 0; c < s.chunks; ++c) {
      const cudaError_t e = cudaEventSynchronize(p->ev_done[c]);
      if (e != cudaSuccess) {
#pragma omp critical(vick_pipe_err)
        if (err == cudaSuccess) err = e;
        break;
      }
      const int64_t a = plan_row(&s, c), len = plan_row(&s, c + 1) - a;
      const int64_t r0 = a + len * t / nt, r1 = a + len * (t + 1) / nt;
      if (r0 >= r1) continue;
      if (j->square)
        for (int64_t i = r0 * j->k; i < r1 * j->k; ++i) j->hdist[i] *= j->hdist[i];
      h->out(h->ctx, t, j->hids + r0 * j->k, j->hdist + r0 * j->k, r0, r1 - r0);
    }
  }
  if (err != cudaSuccess) {
    pipe_wait_all(p);
    return vick_cuda_fail(call, err, "cudaEventSynchronize (pipelined results)", __FILE__, __LINE__);
  }
  float ms = 0.f;
  for (int st = 0; st < VICK_PIPE_STREAMS && st < s.chunks; ++st) {
    float t = 0.f;
    VICK_CUDA(call, cudaEventElapsedTime(&t, p->ev_start, p->ev_stop[st]));
    if (t > ms) ms = t;
  }
  call->seconds_kernel = 1e-3 * ms;
  vick_stage_add(call, stage, 1e-3 * ms);
  return VICK_OK;
}
