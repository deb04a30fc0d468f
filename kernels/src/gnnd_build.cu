/* GNND drivers: workspace, the iteration loop (Alg. 1), one build and one
 * GGM merge on device-resident rows, and the public in-memory entry
 * points.  Policy (parameters, fallbacks, wording) belongs to the core. */
#include "gnnd_internal.h"
#include "staged_copy.cuh"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int fail(vick_call *call, int code, const char *msg) {
  if (call) snprintf(call->message, sizeof call->message, "%s", msg);
  return code;
}

int gnnd__check_params(vick_call *call, int64_t n, int32_t d, const vick_gnnd_params *p, int32_t k) {
  if (!p || n < 2 || d < 1) return fail(call, VICK_ARGUMENT, "gnnd: needs n >= 2, d >= 1 and parameters");
  if (n > 0x7ffffffeLL) return fail(call, VICK_ARGUMENT, "gnnd: n must stay below 2^31 (32-bit ids)");
  if (p->k_build < 32 || p->k_build > 256 || p->k_build % GNND_SEG)
    return fail(call, VICK_ARGUMENT, "gnnd: k_build must be a multiple of 32 in 32..256");
  if (p->samples < 1 || p->samples > 32) return fail(call, VICK_ARGUMENT, "gnnd: samples p must be in 1..32");
  if (p->iterations < 1) return fail(call, VICK_ARGUMENT, "gnnd: iterations must be >= 1");
  if (p->merge_iterations < 0) return fail(call, VICK_ARGUMENT, "gnnd: merge_iterations must be >= 0");
  if (k < 1 || k > p->k_build) return fail(call, VICK_ARGUMENT, "gnnd: k must be in 1..k_build");
  return VICK_OK;
}

void gnnd__setup(gnnd_dev *g, int32_t d, const vick_gnnd_params *p, uint64_t seed) {
  memset(g, 0, sizeof *g);
  g->d = d;
  g->K = p->k_build;
  g->nseg = p->k_build / GNND_SEG;
  g->p = p->samples;
  g->M = 2 * p->samples;
  g->seed = seed;
}

size_t vick_gnnd_bytes(int64_t n, int32_t d, const vick_gnnd_params *p, int merge) {
  size_t K = (size_t)p->k_build, M = 2 * (size_t)p->samples, un = (size_t)n;
  size_t b = un * (size_t)d * 4            /* rows */
             + un * K * 9                  /* ids, dist, flags */
             + un * (K / GNND_SEG) * 4     /* locks */
             + un * M * 8                  /* G_new, G_old */
             + un * 16                     /* sample counts */
             + un * K * 8;                 /* flat output */
  if (merge) b += un * K * 16;             /* set-aside halves and the flat input */
  return b + (1u << 20);
}

/* Through the common layer: within g->env's budget when the caller has
 * one; g->env NULL: no budget of its own (the caller sized capacity). */
#define ALLOC(ptr, bytes)                                                                     \
  do {                                                                                        \
    if ((rc = vick_alloc_kept(call, g->env, (void **)&(ptr), (bytes), "GNND lists"))) goto fail; \
  } while (0)

int gnnd__alloc(vick_call *call, gnnd_dev *g, int64_t capacity, int merge, cudaStream_t st) {
  int rc;
  size_t n = (size_t)capacity, K = (size_t)g->K, M = (size_t)g->M;
  g->capacity = capacity;
  ALLOC(g->ids, n * K * 4);
  ALLOC(g->dist, n * K * 4);
  ALLOC(g->flags, n * K);
  ALLOC(g->locks, n * (size_t)g->nseg * 4);
  ALLOC(g->gnew, n * M * 4);
  ALLOC(g->gold, n * M * 4);
  ALLOC(g->cnt_new, n * 4);
  ALLOC(g->cnt_old, n * 4);
  ALLOC(g->fwd_new, n * 4);
  ALLOC(g->fwd_old, n * 4);
  ALLOC(g->counter, sizeof(unsigned long long));
  if (merge) {
    ALLOC(g->extra, n * K * 4);
    ALLOC(g->extra_dist, n * K * 4);
    ALLOC(g->flat_ids, n * K * 4);
    ALLOC(g->flat_dist, n * K * 4);
  }
  /* on the build's stream: its kernels find the locks clear without a device-wide wait */
  if ((rc = GNND_CK(call, cudaMemsetAsync(g->locks, 0, n * (size_t)g->nseg * 4, st)))) goto fail;
  return VICK_OK;
fail:
  gnnd__free(g);
  return rc;
}

void gnnd__free(gnnd_dev *g) {
  void *bufs[] = {g->ids, g->dist, g->flags, g->locks, g->gnew, g->gold, g->cnt_new, g->cnt_old,
                  g->fwd_new, g->fwd_old, g->counter, g->extra, g->extra_dist, g->flat_ids, g->flat_dist};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; ++i)
    vick_free_kept(bufs[i]);
  g->ids = NULL; g->dist = NULL; g->flags = NULL; g->locks = NULL; g->gnew = g->gold = NULL;
  g->cnt_new = g->cnt_old = g->fwd_new = g->fwd_old = NULL; g->counter = NULL;
  g->extra = g->flat_ids = NULL; g->extra_dist = g->flat_dist = NULL;
}

int gnnd__refine(vick_call *call, gnnd_dev *g, const vick_gnnd_params *p, cudaStream_t st, int *iterations_run) {
  int rc;
  double stop_below = (double)p->converge * (double)g->n * (double)g->K;
  *iterations_run = 0;
  for (int it = 0; it < p->iterations; ++it) {
    unsigned long long inserted = 0;
    if ((rc = GNND_CK(call, cudaMemsetAsync(g->counter, 0, sizeof inserted, st)))) return rc;
    if ((rc = gnnd__launch_iteration(call, g, it, st))) return rc;
    if ((rc = GNND_CK(call, cudaMemcpyAsync(&inserted, g->counter, sizeof inserted, cudaMemcpyDeviceToHost, st))))
      return rc;
    if ((rc = GNND_CK(call, cudaStreamSynchronize(st)))) return rc;
    *iterations_run = it + 1;
    if (call && call->progress && call->progress(call->user, "gnnd", (double)(it + 1) / p->iterations))
      return fail(call, VICK_CANCELLED, "gnnd: cancelled");
    if ((double)inserted < stop_below) break;
  }
  return VICK_OK;
}

int gnnd__build_run(vick_call *call, gnnd_dev *g, const float *d_rows, int64_t n, const vick_gnnd_params *p,
                    int32_t k, int32_t *d_out_ids, float *d_out_dist, cudaStream_t st) {
  int rc, iters;
  gnnd_dev b = *g;
  b.rowsA = b.rowsB = d_rows;
  b.nA = b.n = n;
  b.split = 0;
  b.extra = NULL; /* a plain build sets nothing aside */
  b.extra_dist = NULL;
  if ((rc = gnnd__launch_random_init(call, &b, st))) return rc;
  if ((rc = gnnd__refine(call, &b, p, st, &iters))) return rc;
  return gnnd__launch_finalize(call, &b, k, d_out_ids, d_out_dist, st);
}

int gnnd__merge_run(vick_call *call, gnnd_dev *g, const float *d_rows1, int64_t n1, const float *d_rows2,
                    int64_t n2, const int32_t *d_flat_ids, const float *d_flat_dist, const vick_gnnd_params *p,
                    int32_t k, int32_t *d_out_ids, float *d_out_dist, cudaStream_t st) {
  int rc, iters;
  gnnd_dev m = *g;
  m.rowsA = d_rows1;
  m.rowsB = d_rows2;
  m.nA = n1;
  m.n = n1 + n2;
  m.split = (int32_t)n1;
  m.seed = g->seed ^ 0x6767u; /* the refill draws differ from the build's */
  vick_gnnd_params q = *p;
  if (p->merge_iterations > 0) q.iterations = p->merge_iterations;
  if ((rc = gnnd__launch_merge_init(call, &m, d_flat_ids, d_flat_dist, st))) return rc;
  if ((rc = gnnd__refine(call, &m, &q, st, &iters))) return rc;
  return gnnd__launch_finalize(call, &m, k, d_out_ids, d_out_dist, st);
}

int gnnd__knn_device(vick_call *call, const float *d_rows, int64_t n, int32_t d, int32_t k, const vick_gnnd_params *p,
                     int32_t *d_ids, float *d_dist, cudaStream_t st) {
  int rc;
  if ((rc = gnnd__check_params(call, n, d, p, k))) return rc;
  gnnd_dev g;
  gnnd__setup(&g, d, p, call->seed);
  if ((rc = gnnd__alloc(call, &g, n, 0, st))) return rc;
  double tk = gnnd__now();
  rc = gnnd__build_run(call, &g, d_rows, n, p, k, d_ids, d_dist, st);
  if (!rc) rc = GNND_CK(call, cudaStreamSynchronize(st));
  if (!rc) call->seconds_kernel += gnnd__now() - tk;
  gnnd__free(&g);
  return rc;
}

/* ---------------------------------------------------- public, in memory */

static int upload_rows(vick_call *call, vick_env *env, const float *rows, int64_t n, int32_t d, vick_buf *d_rows) {
  VICK_TRY(vick_buf_alloc(call, env, d_rows, (size_t)n * d * sizeof(float), "GNND rows"));
  return vick_copy_to_device(call, env, d_rows->p, rows, (size_t)n * d * sizeof(float));
}

/* b: rows, result ids, result distances (released by the caller). */
static int build_to_host(vick_call *call, vick_env *env, gnnd_dev *g, const float *rows, int64_t n, int32_t d,
                         const vick_gnnd_params *p, vick_gnnd_graph *out, vick_buf b[3]) {
  const size_t cells = (size_t)n * out->k;
  const cudaStream_t st = env->stream;
  VICK_TRY(upload_rows(call, env, rows, n, d, &b[0]));
  VICK_TRY(gnnd__alloc(call, g, n, 0, st));
  VICK_TRY(vick_buf_alloc(call, env, &b[1], cells * 4, "GNND result ids"));
  VICK_TRY(vick_buf_alloc(call, env, &b[2], cells * 4, "GNND result distances"));
  double tk = gnnd__now();
  VICK_TRY(gnnd__build_run(call, g, (const float *)b[0].p, n, p, out->k, (int32_t *)b[1].p, (float *)b[2].p, st));
  VICK_CUDA(call, cudaStreamSynchronize(st));
  call->seconds_kernel += gnnd__now() - tk;
  gnnd__stage(call, "gnnd build", gnnd__now() - tk);
  VICK_TRY(vick_copy_to_host(call, env, out->ids, b[1].p, cells * 4));
  return vick_copy_to_host(call, env, out->dist, b[2].p, cells * 4);
}

int vick_gnnd_build(vick_call *call, const float *rows, int64_t n, int32_t d, const vick_gnnd_params *p,
                    vick_gnnd_graph *out) {
  int rc;
  if ((rc = gnnd__check_params(call, n, d, p, out ? out->k : 0))) return rc;
  if (!rows || !out->ids || !out->dist || out->n != n) return fail(call, VICK_ARGUMENT, "gnnd: bad output graph");
  gnnd_dev g;
  gnnd__setup(&g, d, p, call->seed);
  vick_env env;
  vick_buf b[3] = {};
  rc = vick_begin(call, &env);
  g.env = &env;
  if (rc == VICK_OK) rc = build_to_host(call, &env, &g, rows, n, d, p, out, b);
  gnnd__free(&g);
  for (int i = 0; i < 3; ++i) vick_buf_free(&env, &b[i]);
  return vick_end(call, &env, rc);
}

/* The lists of rows that fit the device in one piece: rows in and lists
 * out through pinned slots (the ids widened on the way), so the copies run
 * at the link's speed and the host's page faults spread over its threads.
 * The slots are of the default size, which a context that holds them
 * (vick_pinned_keep) lends from call to call -- the out-of-core build
 * makes one such call per shard -- instead of pinning new ones. */
static int knn_in_memory(vick_call *call, const float *rows, int64_t n, int32_t d, int32_t k, const vick_gnnd_params *p,
                         int64_t *ids, float *dist) {
  vick_env env;
  vick_stage stage;
  memset(&stage, 0, sizeof stage);
  vick_buf b_rows = {}, b_ids = {}, b_dist = {};
  const size_t cells = (size_t)n * (size_t)k;
  int rc = vick_begin(call, &env);
  double t = gnnd__now();
  if (!rc) rc = vick_stage_init(call, &stage, 0);
  if (!rc) rc = vick_buf_alloc(call, &env, &b_rows, (size_t)n * d * sizeof(float), "GNND rows");
  if (!rc) rc = vick_buf_alloc(call, &env, &b_ids, cells * 4, "GNND result ids");
  if (!rc) rc = vick_buf_alloc(call, &env, &b_dist, cells * 4, "GNND result distances");
  float *d_rows = (float *)b_rows.p, *d_dist = (float *)b_dist.p;
  int32_t *d_ids = (int32_t *)b_ids.p;
  if (!rc) rc = vick_staged_to_device(call, &env, &stage, d_rows, rows, (size_t)n * d * sizeof(float));
  if (!rc) gnnd__stage(call, "upload", gnnd__now() - t);
  if (!rc) {
    t = gnnd__now();
    rc = gnnd__knn_device(call, d_rows, n, d, k, p, d_ids, d_dist, env.stream);
    if (!rc) gnnd__stage(call, "gnnd build", gnnd__now() - t);
  }
  if (!rc) {
    t = gnnd__now();
    rc = vick_staged_to_host_wide(call, &env, &stage, ids, d_ids, (int64_t)cells);
    if (!rc) rc = vick_staged_to_host(call, &env, &stage, dist, d_dist, cells * 4);
    if (!rc) gnnd__stage(call, "download", gnnd__now() - t);
  }
  vick_buf_free(&env, &b_rows);
  vick_buf_free(&env, &b_ids);
  vick_buf_free(&env, &b_dist);
  vick_stage_free(&stage);
  return vick_end(call, &env, rc);
}

int vick_gnnd_knn(vick_call *call, const float *rows, int64_t n, int32_t d, int32_t k, const vick_gnnd_params *p,
                  int64_t *ids, float *dist) {
  int rc;
  if ((rc = gnnd__check_params(call, n, d, p, k))) return rc;
  if (!rows || !ids || !dist) return fail(call, VICK_ARGUMENT, "gnnd: null pointer");
  if ((rc = GNND_CK(call, cudaSetDevice(call->device)))) return rc;
  size_t budget = call->memory_budget;
  if (!budget) {
    size_t free_b = 0, total_b = 0;
    if ((rc = GNND_CK(call, cudaMemGetInfo(&free_b, &total_b)))) return rc;
    budget = free_b / 10 * 9; /* headroom for the runtime and fragmentation */
  }
  if (p->half_rows) return gnnd__knn_compact(call, rows, n, d, k, p, ids, dist);
  if (vick_gnnd_bytes(n, d, p, 0) > budget || (p->shard_rows > 0 && p->shard_rows < n))
    return gnnd__sharded_knn(call, rows, n, d, k, p, budget, ids, dist);
  return knn_in_memory(call, rows, n, d, k, p, ids, dist);
}
