/* GGM (Alg. 3) as public entry points: merging two k-NN graphs,
 * incremental growth (build the new rows' graph, then merge it in), and a
 * workspace kept across the pair merges of a sharded build. */
#include "gnnd_internal.h"
#include "staged_copy.cuh"
#include "vic_kernels_ggm_pairs.h"

#include <stdlib.h>
#include <string.h>

static int fail(vick_call *call, int code, const char *msg) {
  if (call) snprintf(call->message, sizeof call->message, "%s", msg);
  return code;
}

/* Upload a host flat graph (k == K) into the workspace's flat input at
 * row `at`, shifting its ids by `offset`. */
static int upload_graph(vick_call *call, gnnd_dev *g, const vick_gnnd_graph *h, int64_t at, int32_t offset,
                        cudaStream_t st) {
  int rc;
  size_t cnt = (size_t)h->n * g->K;
  if ((rc = GNND_CK(call, cudaMemcpyAsync(g->flat_ids + at * g->K, h->ids, cnt * 4, cudaMemcpyHostToDevice, st))))
    return rc;
  if ((rc = GNND_CK(call, cudaMemcpyAsync(g->flat_dist + at * g->K, h->dist, cnt * 4, cudaMemcpyHostToDevice, st))))
    return rc;
  return gnnd__launch_offset_ids(call, g->flat_ids + at * g->K, (int64_t)cnt, offset, st);
}

/* Runs GGM over the rows and the flat input already in g, result to host
 * out; b: the result ids and distances (released by the caller). */
static int merge_to_host(vick_call *call, vick_env *env, gnnd_dev *g, const float *d_rows, int64_t n1, int64_t n2,
                         int32_t d, const vick_gnnd_params *p, vick_gnnd_graph *out, vick_buf b[2], cudaStream_t st) {
  const size_t cells = (size_t)(n1 + n2) * out->k;
  double tk = gnnd__now();
  VICK_TRY(vick_buf_alloc(call, env, &b[0], cells * 4, "GGM result ids"));
  VICK_TRY(vick_buf_alloc(call, env, &b[1], cells * 4, "GGM result distances"));
  VICK_TRY(gnnd__merge_run(call, g, d_rows, n1, d_rows + (size_t)n1 * d, n2, g->flat_ids, g->flat_dist, p, out->k,
                           (int32_t *)b[0].p, (float *)b[1].p, st));
  VICK_CUDA(call, cudaStreamSynchronize(st));
  call->seconds_kernel += gnnd__now() - tk;
  gnnd__stage(call, "ggm merge", gnnd__now() - tk);
  double tt = gnnd__now();
  VICK_TRY(vick_copy_to_host(call, env, out->ids, b[0].p, cells * 4));
  VICK_TRY(vick_copy_to_host(call, env, out->dist, b[1].p, cells * 4));
  gnnd__stage(call, "pair download", gnnd__now() - tt);
  return VICK_OK;
}

/* Device rows of both blocks (rows1: n1 rows, then rows2: n - n1 rows)
 * in one buffer, and the merge workspace for n rows, within env's budget. */
static int prepare(vick_call *call, vick_env *env, const float *rows1, int64_t n1, const float *rows2, int64_t n,
                   int32_t d, gnnd_dev *g, vick_buf *d_rows) {
  VICK_TRY(vick_buf_alloc(call, env, d_rows, (size_t)n * d * 4, "GGM rows"));
  float *r = (float *)d_rows->p;
  VICK_TRY(vick_copy_to_device(call, env, r, rows1, (size_t)n1 * d * 4));
  if (n > n1) VICK_TRY(vick_copy_to_device(call, env, r + (size_t)n1 * d, rows2, (size_t)(n - n1) * d * 4));
  return gnnd__alloc(call, g, n, 1, env->stream);
}

/* What a merge and a growth share: the checks, the call's environment and
 * budget, and the release of everything in one place. */
typedef struct {
  vick_env env;
  gnnd_dev g;
  vick_buf rows, out[2];
} ggm_call;

static int ggm_begin(vick_call *call, ggm_call *c, const float *rows1, int64_t n1, const float *rows2, int64_t n,
                     int32_t d, const vick_gnnd_params *p, const vick_gnnd_graph *out) {
  int rc;
  memset(c, 0, sizeof *c);
  c->env.t_start = gnnd__now(); /* ggm_end's total when the checks fail */
  if ((rc = gnnd__check_params(call, n, d, p, out ? out->k : 0))) return rc;
  if (!rows1 || (n > n1 && !rows2) || !out->ids || !out->dist || out->n != n)
    return fail(call, VICK_ARGUMENT, "ggm: bad output graph");
  gnnd__setup(&c->g, d, p, call->seed);
  VICK_TRY(vick_begin(call, &c->env));
  c->g.env = &c->env;
  return prepare(call, &c->env, rows1, n1, rows2, n, d, &c->g, &c->rows);
}

static int ggm_end(vick_call *call, ggm_call *c, int rc) {
  gnnd__free(&c->g);
  vick_buf_free(&c->env, &c->rows);
  for (int i = 0; i < 2; ++i) vick_buf_free(&c->env, &c->out[i]);
  return vick_end(call, &c->env, rc);
}

int vick_gnnd_merge(vick_call *call, const float *rows, int64_t n1, int64_t n2, int32_t d,
                    const vick_gnnd_params *p, const vick_gnnd_graph *g1, const vick_gnnd_graph *g2,
                    vick_gnnd_graph *out) {
  return vick_gnnd_merge_blocks(call, rows, n1, rows ? rows + (size_t)n1 * d : NULL, n2, d, p, g1, g2, out);
}

static int merge_blocks_run(vick_call *call, ggm_call *c, int64_t n1, int64_t n2, int32_t d,
                            const vick_gnnd_params *p, const vick_gnnd_graph *g1, const vick_gnnd_graph *g2,
                            vick_gnnd_graph *out) {
  const cudaStream_t st = c->env.stream;
  VICK_TRY(upload_graph(call, &c->g, g1, 0, 0, st));
  VICK_TRY(upload_graph(call, &c->g, g2, n1, (int32_t)n1, st));
  VICK_CUDA(call, cudaStreamSynchronize(st));
  gnnd__stage(call, "pair upload", gnnd__now() - c->env.t_start);
  return merge_to_host(call, &c->env, &c->g, (const float *)c->rows.p, n1, n2, d, p, out, c->out, st);
}

int vick_gnnd_merge_blocks(vick_call *call, const float *rows1, int64_t n1, const float *rows2, int64_t n2,
                           int32_t d, const vick_gnnd_params *p, const vick_gnnd_graph *g1,
                           const vick_gnnd_graph *g2, vick_gnnd_graph *out) {
  if (!g1 || !g2 || g1->n != n1 || g2->n != n2 || !p || g1->k != p->k_build || g2->k != p->k_build || n1 < 1 ||
      n2 < 1)
    return fail(call, VICK_ARGUMENT, "ggm: both graphs must list their rows with k == k_build");
  ggm_call c;
  int rc = ggm_begin(call, &c, rows1, n1, rows2, n1 + n2, d, p, out);
  if (rc == VICK_OK) rc = merge_blocks_run(call, &c, n1, n2, d, p, g1, g2, out);
  return ggm_end(call, &c, rc);
}

static int add_run(vick_call *call, ggm_call *c, int64_t n_old, int64_t n_new, int32_t d, const vick_gnnd_params *p,
                   const vick_gnnd_graph *g_old, vick_gnnd_graph *out) {
  const cudaStream_t st = c->env.stream;
  gnnd_dev *g = &c->g;
  const float *d_rows = (const float *)c->rows.p;
  VICK_TRY(upload_graph(call, g, g_old, 0, 0, st));
  /* the new rows' own graph goes straight into the merge input */
  double tb = gnnd__now();
  int32_t *new_ids = g->flat_ids + n_old * g->K;
  VICK_TRY(gnnd__build_run(call, g, d_rows + (size_t)n_old * d, n_new, p, g->K, new_ids, g->flat_dist + n_old * g->K,
                           st));
  VICK_TRY(gnnd__launch_offset_ids(call, new_ids, n_new * g->K, (int32_t)n_old, st));
  VICK_CUDA(call, cudaStreamSynchronize(st));
  call->seconds_kernel += gnnd__now() - tb;
  gnnd__stage(call, "gnnd build new", gnnd__now() - tb);
  return merge_to_host(call, &c->env, g, d_rows, n_old, n_new, d, p, out, c->out, st);
}

int vick_gnnd_add(vick_call *call, const float *rows, int64_t n_old, int64_t n_new, int32_t d,
                  const vick_gnnd_params *p, const vick_gnnd_graph *g_old, vick_gnnd_graph *out) {
  if (!g_old || !p || g_old->n != n_old || g_old->k != p->k_build || n_old < 1 || n_new < 2)
    return fail(call, VICK_ARGUMENT, "gnnd add: the old graph must list its rows with k == k_build, n_new >= 2");
  ggm_call c;
  int rc = ggm_begin(call, &c, rows, n_old + n_new, NULL, n_old + n_new, d, p, out);
  if (rc == VICK_OK) rc = add_run(call, &c, n_old, n_new, d, p, g_old, out);
  return ggm_end(call, &c, rc);
}

/* ------------------------------------------- workspace across pair merges */

struct vick_ggm_pairs {
  int device;
  int32_t d, k;
  int64_t m;
  vick_gnnd_params p;
  uint64_t seed;
  gnnd_dev g;                /* 2m rows; extra also receives the flat input */
  float *d_rows;             /* two slots of m rows */
  int32_t *d_ids;            /* 2m x k results */
  float *d_dist;
  vick_env env;              /* its stream only */
  vick_stage stage;
  const float *held[2];      /* host rows each slot holds (NULL: none) */
  int64_t held_n[2];
};

size_t vick_ggm_pairs_bytes(int64_t m, int32_t d, const vick_gnnd_params *p, int32_t k) {
  /* an in-memory build's bytes of 2m rows, its flat output's share
   * spent on the set-aside halves instead, plus the k-wide results */
  return vick_gnnd_bytes(2 * m, d, p, 0) + (size_t)(2 * m) * (size_t)k * 8;
}

void vick_ggm_pairs_close(vick_ggm_pairs *s) {
  if (!s) return;
  cudaSetDevice(s->device);
  if (s->env.stream) cudaStreamSynchronize(s->env.stream);
  gnnd__free(&s->g);
  vick_free_kept(s->d_rows);
  vick_free_kept(s->d_ids);
  vick_free_kept(s->d_dist);
  vick_stage_free(&s->stage);
  if (s->env.stream) cudaStreamDestroy(s->env.stream);
  free(s);
}

int vick_ggm_pairs_open(vick_call *call, int64_t m, int32_t d, const vick_gnnd_params *p, int32_t k,
                        vick_ggm_pairs **out) {
  *out = NULL;
  int rc;
  if ((rc = gnnd__check_params(call, 2 * m, d, p, k))) return rc;
  vick_ggm_pairs *s = (vick_ggm_pairs *)calloc(1, sizeof *s);
  if (!s) return fail(call, VICK_NOMEM, "ggm: host memory for the pair workspace");
  s->device = call->device;
  s->d = d;
  s->k = k;
  s->m = m;
  s->p = *p;
  s->seed = call->seed;
  const size_t n = (size_t)(2 * m);
  if ((rc = GNND_CK(call, cudaSetDevice(call->device)))) goto fail;
  if ((rc = GNND_CK(call, cudaStreamCreateWithFlags(&s->env.stream, cudaStreamNonBlocking)))) goto fail;
  if ((rc = vick_stage_init(call, &s->stage, (size_t)32 << 20))) goto fail;
  gnnd__setup(&s->g, d, p, call->seed);
  if ((rc = gnnd__alloc(call, &s->g, (int64_t)n, 0, s->env.stream))) goto fail;
  /* kept buffers without a budget of their own: the core sized m with
   * vick_ggm_pairs_bytes */
  if ((rc = vick_alloc_kept(call, NULL, (void **)&s->g.extra, n * s->g.K * 4, "GGM set-aside lists"))) goto fail;
  if ((rc = vick_alloc_kept(call, NULL, (void **)&s->g.extra_dist, n * s->g.K * 4, "GGM set-aside distances")))
    goto fail;
  if ((rc = vick_alloc_kept(call, NULL, (void **)&s->d_rows, n * d * 4, "GGM pair rows"))) goto fail;
  if ((rc = vick_alloc_kept(call, NULL, (void **)&s->d_ids, n * k * 4, "GGM pair result ids"))) goto fail;
  if ((rc = vick_alloc_kept(call, NULL, (void **)&s->d_dist, n * k * 4, "GGM pair result distances"))) goto fail;
  *out = s;
  return VICK_OK;
fail:
  vick_ggm_pairs_close(s);
  return rc;
}

/* The slot holding host rows r (n of them), or -1. */
static int held_slot(const vick_ggm_pairs *s, const float *r, int64_t n) {
  for (int i = 0; i < 2; ++i)
    if (s->held[i] == r && s->held_n[i] == n) return i;
  return -1;
}

int vick_ggm_pairs_merge(vick_call *call, vick_ggm_pairs *s, const float *rows1, int64_t n1, const float *rows2,
                         int64_t n2, const vick_gnnd_graph *g1, const vick_gnnd_graph *g2, vick_gnnd_graph *out) {
  const double t0 = gnnd__now();
  if (!s || !rows1 || !rows2 || rows1 == rows2 || n1 < 1 || n2 < 1 || n1 > s->m || n2 > s->m || !g1 || !g2 ||
      g1->n != n1 || g2->n != n2 || g1->k != s->g.K || g2->k != s->g.K || !out || out->n != n1 + n2 ||
      out->k != s->k || !out->ids || !out->dist)
    return fail(call, VICK_ARGUMENT, "ggm: pair does not fit the workspace (rows, k or K)");
  int rc;
  if ((rc = GNND_CK(call, cudaSetDevice(s->device)))) return rc;
  const int32_t K = s->g.K, d = s->d;
  const int64_t n = n1 + n2;
  cudaStream_t st = s->env.stream;
  /* rows: a shard still on the device stays, the other slot takes the rest */
  int a = held_slot(s, rows1, n1), b = held_slot(s, rows2, n2);
  if (a < 0) {
    a = b == 0 ? 1 : 0;
    s->held[a] = NULL;
    if ((rc = vick_staged_to_device(call, &s->env, &s->stage, s->d_rows + (size_t)a * s->m * d, rows1,
                                    (size_t)n1 * d * 4)))
      return rc;
    s->held[a] = rows1;
    s->held_n[a] = n1;
  }
  if (b < 0 || b == a) {
    b = 1 - a;
    s->held[b] = NULL;
    if ((rc = vick_staged_to_device(call, &s->env, &s->stage, s->d_rows + (size_t)b * s->m * d, rows2,
                                    (size_t)n2 * d * 4)))
      return rc;
    s->held[b] = rows2;
    s->held_n[b] = n2;
  }
  /* both own graphs as the flat input (in extra's memory), ids over the pair */
  gnnd_dev *g = &s->g;
  if ((rc = vick_staged_to_device(call, &s->env, &s->stage, g->extra, g1->ids, (size_t)n1 * K * 4))) return rc;
  if ((rc = vick_staged_to_device(call, &s->env, &s->stage, g->extra_dist, g1->dist, (size_t)n1 * K * 4))) return rc;
  if ((rc = vick_staged_to_device(call, &s->env, &s->stage, g->extra + (size_t)n1 * K, g2->ids, (size_t)n2 * K * 4)))
    return rc;
  if ((rc = vick_staged_to_device(call, &s->env, &s->stage, g->extra_dist + (size_t)n1 * K, g2->dist,
                                  (size_t)n2 * K * 4)))
    return rc;
  if ((rc = gnnd__launch_offset_ids(call, g->extra + (size_t)n1 * K, n2 * K, (int32_t)n1, st))) return rc;
  gnnd__stage(call, "pair upload", gnnd__now() - t0);

  double tk = gnnd__now();
  g->seed = s->seed;
  if ((rc = gnnd__merge_run(call, g, s->d_rows + (size_t)a * s->m * d, n1, s->d_rows + (size_t)b * s->m * d, n2,
                            g->extra, g->extra_dist, &s->p, s->k, s->d_ids, s->d_dist, st)))
    return rc;
  if ((rc = GNND_CK(call, cudaStreamSynchronize(st)))) return rc;
  call->seconds_kernel += gnnd__now() - tk;
  gnnd__stage(call, "ggm merge", gnnd__now() - tk);

  double tt = gnnd__now();
  if ((rc = vick_staged_to_host(call, &s->env, &s->stage, out->ids, s->d_ids, (size_t)n * s->k * 4))) return rc;
  if ((rc = vick_staged_to_host(call, &s->env, &s->stage, out->dist, s->d_dist, (size_t)n * s->k * 4))) return rc;
  gnnd__stage(call, "pair download", gnnd__now() - tt);
  call->seconds_total = gnnd__now() - t0;
  return VICK_OK;
}
