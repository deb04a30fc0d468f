/* A batch of queries in chunks under its kernels (staged_pipeline.cu):
 * host threads fill the pinned staging through a search's hooks in
 * claimed pieces while the calling thread sends each chunk whose pieces
 * are all filled with one copy and launches its kernels, the chunks
 * alternating between two streams; each chunk's results come back on its
 * stream and the same team hands them to the hooks chunk by chunk.
 *
 * One copy in and one launch for the whole batch leave the device idle
 * while the host fills the staging and the host idle while the device
 * searches; in chunks the filling of the next chunk, the copies and the
 * results of the last one run under the kernels.  Two streams let a
 * chunk's blocks start while the chunk before it drains, so the chunks do
 * not each pay a kernel's tail. */
#ifndef VICK_STAGED_PIPELINE_CUH
#define VICK_STAGED_PIPELINE_CUH

#include "common.cuh"
#include "vic_kernels_grnnd.h"

#define VICK_PIPE_CHUNKS 4
#define VICK_PIPE_STREAMS 2
/* Host threads of a call in chunks: every thread a region wakes may start
 * late on a host whose idle CPUs are slow to wake, and the filling of all
 * chunks but the first runs under the kernels, where a few threads keep up. */
#define VICK_PIPE_TEAM 4

/* The streams and events of a pipelined call, made once by the index that
 * runs them.  stream[0] may be the index's own stream (not destroyed here). */
typedef struct {
  cudaStream_t stream[VICK_PIPE_STREAMS];
  cudaEvent_t ev_start, ev_stop[VICK_PIPE_STREAMS], ev_done[VICK_PIPE_CHUNKS];
  int own_first;
} vick_pipe;

/* first: the stream to use as stream[0] (NULL: one made here). */
int vick_pipe_create(vick_call *call, vick_pipe *p, cudaStream_t first);
void vick_pipe_destroy(vick_pipe *p);
/* Every stream idle (before a call's buffers are freed or regrown). */
int vick_pipe_drain(vick_call *call, const vick_pipe *p);

/* The kernels of rows [a, a + rows) of the batch, on stream: their queries
 * are on the device when they run, their results (k a row) are to be
 * where the job's dids/ddist say. */
typedef int (*vick_pipe_launch)(void *ctx, vick_call *call, cudaStream_t stream, int64_t a, int64_t rows);

typedef struct {
  int64_t m;
  int32_t d, k;
  char *hq;              /* pinned: the queries, m x d floats */
  float *dq;             /* device: the queries */
  const int64_t *dids;   /* device: the results, m x k each */
  const float *ddist;
  int64_t *hids;         /* pinned: the results on the host */
  float *hdist;
  int square;            /* the kernels give Euclidean distances: squared for the hooks */
  vick_pipe_launch launch;
  void *ctx;
} vick_pipe_job;

/* Chunks for a batch of m rows of d floats (0: too small to gain). */
int vick_pipe_chunks(int64_t m, int32_t d);
/* The batch through hooks h by `threads` host threads (the hooks' slots),
 * in `chunks` chunks; call->seconds_kernel: the span from the first
 * chunk's kernels to the last ones', also added as stage `stage`.  A
 * refused query stops it (chunks launched before are waited for, nothing
 * reaches h->out) with VICK_ARGUMENT. */
int vick_pipe_run(vick_call *call, const vick_pipe *p, const vick_pipe_job *j, const vick_gsearch_hooks *h,
                  int chunks, int threads, const char *stage);

#endif
