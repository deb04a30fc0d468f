/* GNND in memory with the rows in half precision (a compact build): the
 * descent reads half the row bytes and its rows take half the device
 * memory, so about twice the rows fit one device in one piece; then every
 * row's K candidates are re-ranked by fp32 distances on the rows as given,
 * so the lists carry the order and the distances of the fp32 rows (the
 * half rows' rounding only decides which candidates the descent keeps). */
#include "gnnd_internal.h"
#include "prims/key.cuh"
#include "staged_copy.cuh"

#include <math.h>
#include <stdint.h>
#include <string.h>

#define RR_WARPS 4                       /* rows per block of the re-ranking */
#define HALF_CHUNK_BYTES ((size_t)64 << 20) /* fp32 rows converted to half per step, at most */

/* Rows per conversion step (at least one, at most n). */
static int64_t half_chunk_rows(int64_t n, int32_t d) {
  int64_t per = (int64_t)(HALF_CHUNK_BYTES / ((size_t)d * 4));
  if (per < 1) per = 1;
  return per < n ? per : n;
}

static size_t gnnd_lists_bytes(int64_t n, const vick_gnnd_params *p) {
  size_t un = (size_t)n, K = (size_t)p->k_build, M = 2 * (size_t)p->samples;
  return un * K * 9 + un * (K / GNND_SEG) * 4 + un * M * 8 + un * 16;
}

size_t vick_gnnd_compact_bytes(int64_t n, int32_t d, int32_t k, const vick_gnnd_params *p) {
  size_t un = (size_t)n, K = (size_t)p->k_build;
  size_t descent = un * (size_t)d * 2 + gnnd_lists_bytes(n, p) + (size_t)half_chunk_rows(n, d) * (size_t)d * 4;
  size_t rerank = un * K * 4 + un * (size_t)d * 4 + un * (size_t)k * 8;
  return (descent > rerank ? descent : rerank) + (1u << 20);
}

__global__ void to_half_kernel(const float *src, __half *dst, int64_t count) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) dst[i] = __float2half_rn(src[i]);
}

/* One warp per row: the fp32 distance to each of its K candidates (the
 * descent's segments: distinct ids, GNND_EMPTY in free slots), one lane a
 * candidate, then the best k by (distance, id) with -1 / +inf padding. */
__global__ void rerank_kernel(const int32_t *cand, int32_t K, const float *rows, int64_t n, int32_t d, int32_t k,
                              int32_t *out_ids, float *out_dist) {
  __shared__ float s_d[RR_WARPS][256];
  __shared__ int32_t s_id[RR_WARPS][256];
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int64_t u = (int64_t)blockIdx.x * RR_WARPS + warp;
  if (u >= n) return; /* whole warp; no block barrier below */
  const float *a = rows + u * d;
  for (int t = lane; t < K; t += 32) {
    int32_t v = cand[u * K + t];
    float dv = INFINITY;
    if (v != GNND_EMPTY && v >= 0 && (int64_t)v != u) {
      const float *b = rows + (int64_t)v * d;
      float s = 0.f;
      for (int j = 0; j < d; ++j) {
        float q = a[j] - b[j];
        s = fmaf(q, q, s);
      }
      dv = s;
    } else {
      v = GNND_EMPTY;
    }
    s_d[warp][t] = dv;
    s_id[warp][t] = v;
  }
  __syncwarp();
  int valid = 0;
  for (int j = 0; j < K; ++j) valid += s_id[warp][j] != GNND_EMPTY;
  for (int t = lane; t < K; t += 32) {
    const int32_t id = s_id[warp][t];
    const float dd = s_d[warp][t];
    if (id == GNND_EMPTY) continue;
    int rank = 0;
    for (int j = 0; j < K; ++j) rank += s_id[warp][j] != GNND_EMPTY && vick_before(s_d[warp][j], s_id[warp][j], dd, id);
    if (rank < k) {
      out_ids[u * k + rank] = id;
      out_dist[u * k + rank] = dd;
    }
  }
  for (int t = valid + lane; t < k; t += 32) {
    out_ids[u * k + t] = -1;
    out_dist[u * k + t] = INFINITY;
  }
}

/* Rows to half precision on the device, HALF_CHUNK_BYTES of fp32 at a time
 * through one device buffer. */
static int upload_half(vick_call *call, vick_env *env, vick_stage *stage, const float *rows, int64_t n, int32_t d,
                       __half *dst) {
  vick_buf tmp = {};
  const int64_t per = half_chunk_rows(n, d);
  int rc = vick_buf_alloc(call, env, &tmp, (size_t)per * d * 4, "GNND row conversion");
  for (int64_t a = 0; rc == VICK_OK && a < n; a += per) {
    const int64_t m = n - a < per ? n - a : per, count = m * d;
    rc = vick_staged_to_device(call, env, stage, tmp.p, rows + (size_t)a * d, (size_t)count * 4);
    if (rc) break;
    to_half_kernel<<<(unsigned)((count + 255) / 256), 256, 0, env->stream>>>((const float *)tmp.p, dst + (size_t)a * d,
                                                                            count);
    rc = GNND_LAUNCHED(call, "gnnd rows to half");
  }
  if (rc == VICK_OK) rc = GNND_CK(call, cudaStreamSynchronize(env->stream));
  vick_buf_free(env, &tmp);
  return rc;
}

/* The descent on half rows; its K candidates per row stay in *cand (n*K,
 * the segments' layout; the caller frees it with vick_free_kept). */
static int descend(vick_call *call, vick_env *env, vick_stage *stage, const float *rows, int64_t n, int32_t d,
                   const vick_gnnd_params *p, int32_t **cand) {
  vick_buf half = {};
  gnnd_dev g;
  gnnd__setup(&g, d, p, call->seed); /* g.env NULL: vick_gnnd_compact_bytes planned the bytes */
  double t = gnnd__now();
  int rc = vick_buf_alloc(call, env, &half, (size_t)n * d * 2, "GNND half rows");
  if (!rc) rc = upload_half(call, env, stage, rows, n, d, (__half *)half.p);
  if (!rc) gnnd__stage(call, "upload (half rows)", gnnd__now() - t);
  if (!rc) rc = gnnd__alloc(call, &g, n, 0, env->stream);
  if (!rc) {
    t = gnnd__now();
    gnnd_dev b = g;
    b.hrowsA = b.hrowsB = (const __half *)half.p;
    b.nA = b.n = n;
    int iters = 0;
    rc = gnnd__launch_random_init(call, &b, env->stream);
    if (!rc) rc = gnnd__refine(call, &b, p, env->stream, &iters);
    if (!rc) rc = GNND_CK(call, cudaStreamSynchronize(env->stream));
    if (!rc) {
      call->seconds_kernel += gnnd__now() - t;
      gnnd__stage(call, "gnnd build (half rows)", gnnd__now() - t);
    }
  }
  if (!rc) {
    *cand = g.ids;
    g.ids = NULL;
  }
  gnnd__free(&g);
  vick_buf_free(env, &half);
  return rc;
}

int gnnd__knn_compact(vick_call *call, const float *rows, int64_t n, int32_t d, int32_t k, const vick_gnnd_params *p,
                      int64_t *ids, float *dist) {
  vick_env env;
  vick_stage stage;
  memset(&stage, 0, sizeof stage);
  vick_buf b_rows = {}, b_ids = {}, b_dist = {};
  int32_t *cand = NULL;
  const size_t cells = (size_t)n * (size_t)k;
  int rc = vick_begin(call, &env);
  if (!rc && vick_gnnd_compact_bytes(n, d, k, p) > env.budget)
    rc = vick_fail(call, VICK_NOMEM, "gnnd: the half-precision build of %lld rows needs %.0f MiB, over the budget of %.0f MiB",
                   (long long)n, vick_gnnd_compact_bytes(n, d, k, p) / 1048576.0, env.budget / 1048576.0);
  if (!rc) rc = vick_stage_init(call, &stage, (size_t)32 << 20);
  if (!rc) rc = descend(call, &env, &stage, rows, n, d, p, &cand);
  double t = gnnd__now();
  if (!rc) rc = vick_buf_alloc(call, &env, &b_rows, (size_t)n * d * 4, "GNND rows");
  if (!rc) rc = vick_buf_alloc(call, &env, &b_ids, cells * 4, "GNND result ids");
  if (!rc) rc = vick_buf_alloc(call, &env, &b_dist, cells * 4, "GNND result distances");
  if (!rc) rc = vick_staged_to_device(call, &env, &stage, b_rows.p, rows, (size_t)n * d * 4);
  if (!rc) gnnd__stage(call, "upload (fp32 rows)", gnnd__now() - t);
  if (!rc) {
    t = gnnd__now();
    rerank_kernel<<<(unsigned)((n + RR_WARPS - 1) / RR_WARPS), RR_WARPS * 32, 0, env.stream>>>(
        cand, p->k_build, (const float *)b_rows.p, n, d, k, (int32_t *)b_ids.p, (float *)b_dist.p);
    rc = GNND_LAUNCHED(call, "gnnd fp32 re-rank");
    if (!rc) rc = GNND_CK(call, cudaStreamSynchronize(env.stream));
    if (!rc) {
      call->seconds_kernel += gnnd__now() - t;
      gnnd__stage(call, "fp32 re-rank", gnnd__now() - t);
    }
  }
  if (!rc) {
    t = gnnd__now();
    rc = vick_staged_to_host_wide(call, &env, &stage, ids, (const int32_t *)b_ids.p, (int64_t)cells);
    if (!rc) rc = vick_staged_to_host(call, &env, &stage, dist, b_dist.p, cells * 4);
    if (!rc) gnnd__stage(call, "download", gnnd__now() - t);
  }
  vick_free_kept(cand);
  vick_buf_free(&env, &b_rows);
  vick_buf_free(&env, &b_ids);
  vick_buf_free(&env, &b_dist);
  vick_stage_free(&stage);
  return vick_end(call, &env, rc);
}
