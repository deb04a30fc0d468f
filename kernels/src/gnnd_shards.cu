/* Out-of-GPU-memory GNND (Sec. 5): the rows are cut into shards small
 * enough that two of them (plus a third being prefetched) fit the memory
 * budget.  Each shard's own graph is built by GNND and kept in host
 * memory; then every pair of shards is merged once by GGM and each
 * point's final list is the best k over all its pair results.  Rows of the
 * next shard travel on a copy stream while the current pair is merged. */
#include "gnnd_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int fail(vick_call *call, int code, const char *msg) {
  if (call) snprintf(call->message, sizeof call->message, "%s", msg);
  return code;
}

/* Device bytes of the pair workspace for shards of m rows. */
static size_t pair_bytes(int64_t m, int32_t d, const vick_gnnd_params *p) {
  return vick_gnnd_bytes(2 * m, d, p, 1) + (size_t)m * d * sizeof(float);
}

/* Merge list b (k entries, sorted, ids global) into list a in place: the
 * best k distinct ids of both. */
static void merge_lists(int32_t *a_ids, float *a_d, const int32_t *b_ids, const float *b_d, int32_t k) {
  int32_t tid[256];
  float td[256];
  int32_t n = 0, i = 0, j = 0;
  while (n < k && (i < k || j < k)) {
    int take_a;
    if (i >= k || a_ids[i] < 0) take_a = 0;
    else if (j >= k || b_ids[j] < 0) take_a = 1;
    else take_a = a_d[i] < b_d[j] || (a_d[i] == b_d[j] && a_ids[i] <= b_ids[j]);
    if (!take_a && (j >= k || b_ids[j] < 0)) break; /* both exhausted */
    int32_t id = take_a ? a_ids[i] : b_ids[j];
    float d = take_a ? a_d[i] : b_d[j];
    if (take_a) i++; else j++;
    int seen = 0;
    for (int32_t t = 0; t < n && !seen; ++t) seen = tid[t] == id;
    if (!seen) { tid[n] = id; td[n] = d; n++; }
  }
  for (int32_t t = 0; t < k; ++t) {
    a_ids[t] = t < n ? tid[t] : -1;
    a_d[t] = t < n ? td[t] : INFINITY;
  }
}

typedef struct {
  vick_env env;          /* the call's budget, errors and clock; env.stream is cs */
  vick_buf b_slot[3], b_ids, b_dist;
  cudaStream_t cs, xs;   /* compute, copy */
  cudaEvent_t loaded[2], done[2];
  float *slot[3];        /* shard rows: 0 = the pair's first shard, 1/2 alternate */
  int32_t *d_ids;        /* pair result, 2m*K */
  float *d_dist;
  int32_t *h_ids;        /* pinned pair result */
  float *h_dist;
  int32_t *H_ids;        /* every shard's own graph, n*K, pinned */
  float *H_dist;
  int registered;
} shard_ctx;

static int copy_rows(vick_call *call, shard_ctx *s, float *dst, const float *rows, int64_t lo, int64_t cnt, int32_t d,
                     cudaStream_t st) {
  return GNND_CK(call, cudaMemcpyAsync(dst, rows + (size_t)lo * d, (size_t)cnt * d * 4, cudaMemcpyHostToDevice, st));
}

int gnnd__sharded_knn(vick_call *call, const float *rows, int64_t n, int32_t d, int32_t k,
                      const vick_gnnd_params *p, size_t budget, int64_t *ids, float *dist) {
  /* largest shard whose pair workspace fits, then balanced */
  int64_t lo = 0, hi = n;
  while (lo < hi) {
    int64_t mid = (lo + hi + 1) / 2;
    if (pair_bytes(mid, d, p) <= budget) lo = mid; else hi = mid - 1;
  }
  if (p->shard_rows > 0 && p->shard_rows < lo) lo = p->shard_rows;
  if (lo < 4 * (int64_t)p->k_build) return fail(call, VICK_NOMEM, "gnnd: memory budget too small for two shards");
  int64_t nsh = (n + lo - 1) / lo, m = (n + nsh - 1) / nsh;
  int rc = VICK_OK, K = p->k_build;
  shard_ctx s;
  memset(&s, 0, sizeof s);
  gnnd_dev g;
  gnnd__setup(&g, d, p, call->seed);
  int32_t *R_ids = (int32_t *)malloc((size_t)n * k * 4);
  if (!R_ids) return fail(call, VICK_NOMEM, "gnnd: host memory for the result lists");

  if ((rc = vick_begin(call, &s.env))) goto out;
  if (budget < s.env.budget) s.env.budget = budget; /* the shard size was planned for it */
  g.env = &s.env;
  s.cs = s.env.stream;
  if (cudaHostRegister((void *)rows, (size_t)n * d * 4, cudaHostRegisterReadOnly) == cudaSuccess) s.registered = 1;
  else cudaGetLastError(); /* pageable copies still work, without overlap */
  if ((rc = GNND_CK(call, cudaStreamCreateWithFlags(&s.xs, cudaStreamNonBlocking)))) goto out;
  for (int i = 0; i < 2; ++i) {
    if ((rc = GNND_CK(call, cudaEventCreateWithFlags(&s.loaded[i], cudaEventDisableTiming)))) goto out;
    if ((rc = GNND_CK(call, cudaEventCreateWithFlags(&s.done[i], cudaEventDisableTiming)))) goto out;
  }
  for (int i = 0; i < 3; ++i) {
    if ((rc = vick_buf_alloc(call, &s.env, &s.b_slot[i], (size_t)m * d * 4, "GNND shard rows"))) goto out;
    s.slot[i] = (float *)s.b_slot[i].p;
  }
  if ((rc = vick_buf_alloc(call, &s.env, &s.b_ids, (size_t)2 * m * K * 4, "GNND pair ids"))) goto out;
  if ((rc = vick_buf_alloc(call, &s.env, &s.b_dist, (size_t)2 * m * K * 4, "GNND pair distances"))) goto out;
  s.d_ids = (int32_t *)s.b_ids.p;
  s.d_dist = (float *)s.b_dist.p;
  if ((rc = gnnd__alloc(call, &g, 2 * m, 1, s.cs))) goto out;
  if ((rc = vick_pinned_alloc(call, (void **)&s.h_ids, (size_t)2 * m * k * 4, cudaHostAllocDefault,
                              "GNND pair result ids")))
    goto out;
  if ((rc = vick_pinned_alloc(call, (void **)&s.h_dist, (size_t)2 * m * k * 4, cudaHostAllocDefault,
                              "GNND pair result distances")))
    goto out;
  if ((rc = vick_pinned_alloc(call, (void **)&s.H_ids, (size_t)n * K * 4, cudaHostAllocDefault, "GNND shard lists")))
    goto out;
  if ((rc = vick_pinned_alloc(call, (void **)&s.H_dist, (size_t)n * K * 4, cudaHostAllocDefault,
                              "GNND shard distances")))
    goto out;

  /* Phase 1: every shard's own graph; shard i+1's rows load meanwhile. */
  {
    double tb = gnnd__now();
    if ((rc = copy_rows(call, &s, s.slot[1], rows, 0, m < n ? m : n, d, s.xs))) goto out;
    if ((rc = GNND_CK(call, cudaEventRecord(s.loaded[0], s.xs)))) goto out;
    for (int64_t i = 0; i < nsh; ++i) {
      int64_t a = i * m, cnt = (a + m < n ? m : n - a);
      int cur = 1 + (int)(i & 1), nxt = 1 + (int)((i + 1) & 1);
      if ((rc = GNND_CK(call, cudaStreamWaitEvent(s.cs, s.loaded[cur - 1], 0)))) goto out;
      if (i + 1 < nsh) {
        int64_t b = (i + 1) * m, cb = (b + m < n ? m : n - b);
        if (i >= 1 && (rc = GNND_CK(call, cudaStreamWaitEvent(s.xs, s.done[nxt - 1], 0)))) goto out;
        if ((rc = copy_rows(call, &s, s.slot[nxt], rows, b, cb, d, s.xs))) goto out;
        if ((rc = GNND_CK(call, cudaEventRecord(s.loaded[nxt - 1], s.xs)))) goto out;
      }
      if ((rc = gnnd__build_run(call, &g, s.slot[cur], cnt, p, K, s.d_ids, s.d_dist, s.cs))) goto out;
      if ((rc = GNND_CK(call, cudaEventRecord(s.done[cur - 1], s.cs)))) goto out;
      if ((rc = GNND_CK(call, cudaMemcpyAsync(s.H_ids + a * K, s.d_ids, (size_t)cnt * K * 4, cudaMemcpyDeviceToHost,
                                              s.cs))))
        goto out;
      if ((rc = GNND_CK(call, cudaMemcpyAsync(s.H_dist + a * K, s.d_dist, (size_t)cnt * K * 4,
                                              cudaMemcpyDeviceToHost, s.cs))))
        goto out;
      if ((rc = GNND_CK(call, cudaStreamSynchronize(s.cs)))) goto out;
      for (int64_t u = 0; u < cnt; ++u)
        for (int32_t t = 0; t < k; ++t) {
          int32_t v = s.H_ids[(a + u) * K + t];
          R_ids[(a + u) * k + t] = v < 0 ? -1 : (int32_t)(v + a);
          dist[(a + u) * k + t] = s.H_dist[(a + u) * K + t];
        }
    }
    gnnd__stage(call, "gnnd shard builds", gnnd__now() - tb);
  }

  /* Phase 2: GGM of every pair (i, j), i < j; shard j+1 loads while (i, j) merges. */
  {
    double tm = gnnd__now();
    int64_t pair = 0;
    for (int64_t i = 0; i + 1 < nsh; ++i) {
      int64_t a = i * m, ca = (a + m < n ? m : n - a);
      if ((rc = GNND_CK(call, cudaStreamSynchronize(s.cs)))) goto out;
      if ((rc = GNND_CK(call, cudaStreamSynchronize(s.xs)))) goto out;
      if ((rc = copy_rows(call, &s, s.slot[0], rows, a, ca, d, s.xs))) goto out;
      int64_t b0 = (i + 1) * m;
      if ((rc = copy_rows(call, &s, s.slot[1], rows, b0, (b0 + m < n ? m : n - b0), d, s.xs))) goto out;
      if ((rc = GNND_CK(call, cudaEventRecord(s.loaded[0], s.xs)))) goto out;
      for (int64_t j = i + 1; j < nsh; ++j, ++pair) {
        int64_t b = j * m, cb = (b + m < n ? m : n - b);
        int cur = 1 + (int)((j - i - 1) & 1), nxt = 1 + (int)((j - i) & 1);
        if ((rc = GNND_CK(call, cudaStreamWaitEvent(s.cs, s.loaded[cur - 1], 0)))) goto out;
        if (j + 1 < nsh) {
          int64_t c = (j + 1) * m;
          if (j > i + 1 && (rc = GNND_CK(call, cudaStreamWaitEvent(s.xs, s.done[nxt - 1], 0)))) goto out;
          if ((rc = copy_rows(call, &s, s.slot[nxt], rows, c, (c + m < n ? m : n - c), d, s.xs))) goto out;
          if ((rc = GNND_CK(call, cudaEventRecord(s.loaded[nxt - 1], s.xs)))) goto out;
        }
        /* both shards' own graphs as the merge input, ids local to the pair */
        if ((rc = GNND_CK(call, cudaMemcpyAsync(g.flat_ids, s.H_ids + a * K, (size_t)ca * K * 4,
                                                cudaMemcpyHostToDevice, s.cs))))
          goto out;
        if ((rc = GNND_CK(call, cudaMemcpyAsync(g.flat_dist, s.H_dist + a * K, (size_t)ca * K * 4,
                                                cudaMemcpyHostToDevice, s.cs))))
          goto out;
        if ((rc = GNND_CK(call, cudaMemcpyAsync(g.flat_ids + ca * K, s.H_ids + b * K, (size_t)cb * K * 4,
                                                cudaMemcpyHostToDevice, s.cs))))
          goto out;
        if ((rc = GNND_CK(call, cudaMemcpyAsync(g.flat_dist + ca * K, s.H_dist + b * K, (size_t)cb * K * 4,
                                                cudaMemcpyHostToDevice, s.cs))))
          goto out;
        if ((rc = gnnd__launch_offset_ids(call, g.flat_ids + ca * K, cb * K, (int32_t)ca, s.cs))) goto out;
        g.seed = call->seed + 0x9E3779B9ull * (uint64_t)(pair + 1);
        if ((rc = gnnd__merge_run(call, &g, s.slot[0], ca, s.slot[cur], cb, g.flat_ids, g.flat_dist, p, k, s.d_ids,
                                  s.d_dist, s.cs)))
          goto out;
        if ((rc = GNND_CK(call, cudaEventRecord(s.done[cur - 1], s.cs)))) goto out;
        if ((rc = GNND_CK(call, cudaMemcpyAsync(s.h_ids, s.d_ids, (size_t)(ca + cb) * k * 4, cudaMemcpyDeviceToHost,
                                                s.cs))))
          goto out;
        if ((rc = GNND_CK(call, cudaMemcpyAsync(s.h_dist, s.d_dist, (size_t)(ca + cb) * k * 4,
                                                cudaMemcpyDeviceToHost, s.cs))))
          goto out;
        if ((rc = GNND_CK(call, cudaStreamSynchronize(s.cs)))) goto out;
        for (int64_t u = 0; u < ca + cb; ++u) {
          int32_t *l = s.h_ids + u * k;
          for (int32_t t = 0; t < k; ++t)
            if (l[t] >= 0) l[t] = (int32_t)(l[t] < ca ? a + l[t] : b + (l[t] - ca));
          int64_t gu = u < ca ? a + u : b + (u - ca);
          merge_lists(R_ids + gu * k, dist + gu * k, l, s.h_dist + u * k, k);
        }
        if (call->progress && call->progress(call->user, "gnnd shards", (double)(pair + 1) / (nsh * (nsh - 1) / 2))) {
          rc = fail(call, VICK_CANCELLED, "gnnd: cancelled");
          goto out;
        }
      }
    }
    gnnd__stage(call, "ggm shard pairs", gnnd__now() - tm);
  }
  for (int64_t i = 0; i < n * k; ++i) ids[i] = R_ids[i];
  snprintf(call->message, sizeof call->message, "gnnd: %lld shards of %lld rows", (long long)nsh, (long long)m);

out:
  if (s.cs) cudaStreamSynchronize(s.cs);
  if (s.xs) cudaStreamSynchronize(s.xs);
  gnnd__free(&g);
  for (int i = 0; i < 3; ++i) vick_buf_free(&s.env, &s.b_slot[i]);
  vick_buf_free(&s.env, &s.b_ids);
  vick_buf_free(&s.env, &s.b_dist);
  vick_pinned_free(s.h_ids);
  vick_pinned_free(s.h_dist);
  vick_pinned_free(s.H_ids);
  vick_pinned_free(s.H_dist);
  for (int i = 0; i < 2; ++i) {
    if (s.loaded[i]) cudaEventDestroy(s.loaded[i]);
    if (s.done[i]) cudaEventDestroy(s.done[i]);
  }
  if (s.xs) cudaStreamDestroy(s.xs);
  if (s.registered) cudaHostUnregister((void *)rows);
  free(R_ids);
  return vick_end(call, &s.env, rc);
}
