/* TSDG two-stage diversification (Wang, Wang, Zhao, Sec. 3) of a kNN graph,
 * one thread block per node, all nodes in parallel:
 *  stage 1 (relaxed, Eq. 2): walking v's list in ascending order, x_j is
 *    dropped when a kept nearer x_i has alpha d(v,x_i) < d(v,x_j) and
 *    alpha d(x_i,x_j) < d(v,x_j); the warps of the block test the kept
 *    edges in parallel;
 *  reverse edges: every kept edge v->u appends v to u's list (an atomic
 *    counter per node, at most k reverse edges, the first ones to arrive);
 *  stage 2 (soft, Eq. 1): over the union of kept and reverse edges sorted
 *    by distance, the occlusion factor of x_j counts the x_i with
 *    d(v,x_i) < d(v,x_j) and d(x_i,x_j) < d(v,x_j) (one warp per pair);
 *    edges sorted by (factor, distance), those above lambda0 cut, the first
 *    `degree` stored with their factors.
 * Distances in the rules are Euclidean (square roots of the squared ones). */
#include "gnnd_internal.h"
#include "graph_search.cuh"
#include "vic_kernels_grnnd.h"

#include <string.h>

#define TS_THREADS 128
#define TS_WARPS (TS_THREADS / 32)
#define TS_KMAX 128             /* kNN list length at most */
#define TS_MMAX (2 * TS_KMAX)   /* kept + reverse */

__global__ void ts_stage1_kernel(const float *x, int64_t n, int d, const int32_t *knn, int k, float alpha,
                                 int32_t *kept, float *kept_d, int *nkept) {
  __shared__ int32_t id[TS_KMAX];
  __shared__ float d0[TS_KMAX];
  __shared__ int kidx[TS_KMAX];
  __shared__ int occluded;
  const int64_t v = blockIdx.x;
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const float *xv = x + v * d;
  for (int j = threadIdx.x; j < k; j += TS_THREADS) {
    int32_t u = knn[v * k + j];
    id[j] = (u >= 0 && u < n && u != v) ? u : -1;
  }
  __syncthreads();
  for (int j = w; j < k; j += TS_WARPS) {
    float s = id[j] >= 0 ? gr_warp_l2(xv, x + (int64_t)id[j] * d, d, lane) : 0.f;
    if (lane == 0) d0[j] = id[j] >= 0 ? sqrtf(s) : __int_as_float(0x7f800000);
  }
  __syncthreads();
  /* the count of kept edges is block-uniform and lives in a register of
   * every thread: a shared counter that thread 0 bumps while the others read
   * it (the compiler may load it speculatively) was a read/write race */
  int nk = 0;
  for (int j = 0; j < k; ++j) {
    if (id[j] < 0) continue; /* block-uniform */
    bool dup = false;
    for (int i = 0; i < j; ++i) dup |= id[i] == id[j];
    if (dup) continue;
    if (threadIdx.x == 0) occluded = 0;
    __syncthreads();
    const float dj = d0[j];
    const float *xj = x + (int64_t)id[j] * d;
    for (int t = w; t < nk; t += TS_WARPS) {
      const int i = kidx[t];
      if (alpha * d0[i] < dj) {
        float dij = sqrtf(gr_warp_l2(x + (int64_t)id[i] * d, xj, d, lane));
        if (lane == 0 && alpha * dij < dj) occluded = 1;
      }
    }
    __syncthreads();
    const bool keep = !occluded;
    /* every thread has read the flag before thread 0 clears it again */
    __syncthreads();
    if (keep) {
      if (threadIdx.x == 0) kidx[nk] = j;
      ++nk;
    }
  }
  __syncthreads();
  for (int t = threadIdx.x; t < k; t += TS_THREADS) {
    kept[v * k + t] = t < nk ? id[kidx[t]] : -1;
    kept_d[v * k + t] = t < nk ? d0[kidx[t]] : 0.f;
  }
  if (threadIdx.x == 0) nkept[v] = nk;
}

__global__ void ts_reverse_kernel(int64_t n, int k, const int32_t *kept, int32_t *rev, int *nrev) {
  const int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= n * k) return;
  const int32_t u = kept[e];
  if (u < 0) return;
  const int pos = atomicAdd(nrev + u, 1);
  if (pos < k) rev[(int64_t)u * k + pos] = (int32_t)(e / k);
}

__global__ void ts_stage2_kernel(const float *x, int64_t n, int d, int k, const int32_t *kept, const float *kept_d,
                                 const int32_t *rev, const int *nrev, int lambda0, int degree, int32_t *out_ids,
                                 uint8_t *out_occ) {
  __shared__ int32_t cid[TS_MMAX], sid[TS_MMAX];
  __shared__ float cd[TS_MMAX], sd[TS_MMAX];
  __shared__ int occ[TS_MMAX], okey[TS_MMAX];
  __shared__ int m;
  const int64_t v = blockIdx.x;
  const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
  const float *xv = x + v * d;
  const int nr = min(nrev[v], k);
  for (int t = threadIdx.x; t < 2 * k; t += TS_THREADS) {
    cid[t] = t < k ? kept[v * k + t] : (t - k < nr ? rev[v * k + t - k] : -1);
    cd[t] = t < k ? kept_d[v * k + t] : 0.f;
  }
  __syncthreads();
  /* reverse edges: their distance, or -1 when kept already holds the id.
   * A repeat is marked in cd (-1) and dropped from cid only after the
   * barrier: other warps are still scanning cid[0..t) for their own
   * repeats (that scan racing with the drop was the reported hazard). */
  for (int t = k + w; t < 2 * k; t += TS_WARPS) {
    const int32_t u = cid[t];
    if (u < 0) continue;
    bool dup = false;
    for (int i = lane; i < t; i += 32) dup |= cid[i] == u;
    dup = __any_sync(GR_FULL, dup);
    float s = dup ? 0.f : gr_warp_l2(xv, x + (int64_t)u * d, d, lane);
    if (lane == 0) cd[t] = dup ? -1.f : sqrtf(s);
  }
  __syncthreads();
  for (int t = k + threadIdx.x; t < 2 * k; t += TS_THREADS)
    if (cd[t] < 0.f) cid[t] = -1;
  __syncthreads();
  /* sort the candidates by (distance, id): rank of each */
  for (int t = threadIdx.x; t < 2 * k; t += TS_THREADS) {
    if (cid[t] < 0) continue;
    int r = 0;
    for (int i = 0; i < 2 * k; ++i)
      if (cid[i] >= 0 && (cd[i] < cd[t] || (cd[i] == cd[t] && cid[i] < cid[t]))) ++r;
    sid[r] = cid[t];
    sd[r] = cd[t];
  }
  if (threadIdx.x == 0) {
    int c = 0;
    for (int t = 0; t < 2 * k; ++t) c += cid[t] >= 0;
    m = c;
  }
  for (int t = threadIdx.x; t < TS_MMAX; t += TS_THREADS) occ[t] = 0;
  __syncthreads();
  /* occlusion factors: one warp per pair (i < j) */
  const int mm = m;
  const int64_t pairs = (int64_t)mm * (mm - 1) / 2;
  for (int64_t p = w; p < pairs; p += TS_WARPS) {
    /* p -> (i, j), j > i: row j holds pairs j(j-1)/2 .. */
    int j = (int)((1.0 + sqrt(1.0 + 8.0 * (double)p)) * 0.5);
    while ((int64_t)j * (j - 1) / 2 > p) --j;
    while ((int64_t)(j + 1) * j / 2 <= p) ++j;
    const int i = (int)(p - (int64_t)j * (j - 1) / 2);
    if (!(sd[i] < sd[j])) continue; /* warp-uniform */
    float dij = sqrtf(gr_warp_l2(x + (int64_t)sid[i] * d, x + (int64_t)sid[j] * d, d, lane));
    if (lane == 0 && dij < sd[j]) atomicAdd(&occ[j], 1);
  }
  __syncthreads();
  /* order by (factor, distance): the sorted position breaks factor ties */
  for (int t = threadIdx.x; t < mm; t += TS_THREADS) okey[t] = min(occ[t], 255) * TS_MMAX + t;
  __syncthreads();
  for (int t = threadIdx.x; t < degree; t += TS_THREADS) {
    out_ids[v * degree + t] = -1;
    out_occ[v * degree + t] = 255;
  }
  __syncthreads();
  for (int t = threadIdx.x; t < mm; t += TS_THREADS) {
    if (occ[t] > lambda0) continue;
    int r = 0;
    for (int i = 0; i < mm; ++i) r += okey[i] < okey[t];
    if (r < degree) {
      out_ids[v * degree + r] = sid[t];
      out_occ[v * degree + r] = (uint8_t)min(occ[t], 254);
    }
  }
}

void vick_tsdg_params_init(vick_tsdg_params *p) {
  p->alpha = 1.2f;
  p->lambda0 = 10;
  p->degree = 64;
}

typedef struct {
  vick_env env;
  vick_buf x, knn, kept, kept_d, nkept, rev, nrev, ids, occ, edges;
} ts_ws;

/* Edges stored (ids >= 0) summed into *edges. */
__global__ void ts_count_kernel(const int32_t *ids, int64_t cells, unsigned long long *edges) {
  const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  const unsigned ok = __ballot_sync(GR_FULL, i < cells && ids[i] >= 0);
  if ((threadIdx.x & 31) == 0 && ok) atomicAdd(edges, (unsigned long long)__popc(ok));
}

static int ts_alloc(vick_call *call, ts_ws *w, int64_t n, int d, int k, int D) {
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->x, (size_t)n * d * 4, "TSDG rows"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->knn, (size_t)n * k * 4, "TSDG kNN graph"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->kept, (size_t)n * k * 4, "TSDG stage-1 edges"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->kept_d, (size_t)n * k * 4, "TSDG stage-1 distances"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->nkept, (size_t)n * 4, "TSDG stage-1 counts"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->rev, (size_t)n * k * 4, "TSDG reverse edges"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->nrev, (size_t)n * 4, "TSDG reverse counts"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->ids, (size_t)n * D * 4, "TSDG graph"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->occ, (size_t)n * D, "TSDG occlusion factors"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->edges, 8, "TSDG edge count"));
  return VICK_OK;
}

/* Both stages on w->x and the lists in w->knn, into w->ids / w->occ; the
 * stored edges counted into w->edges. */
static int ts_stages(vick_call *call, ts_ws *w, int64_t n, int d, int k, const vick_tsdg_params *p) {
  const int D = p->degree;
  double kt = 0;
  const float *x = (const float *)w->x.p;
  VICK_TRY(vick_timer_start(call, &w->env));
  ts_stage1_kernel<<<(unsigned)n, TS_THREADS, 0, w->env.stream>>>(x, n, d, (const int32_t *)w->knn.p, k, p->alpha,
                                                                   (int32_t *)w->kept.p, (float *)w->kept_d.p,
                                                                   (int *)w->nkept.p);
  VICK_LAUNCH(call, "ts_stage1_kernel");
  VICK_TRY(vick_timer_stop(call, &w->env, &kt, "stage1"));
  VICK_TRY(vick_timer_start(call, &w->env));
  VICK_CUDA(call, cudaMemsetAsync(w->nrev.p, 0, (size_t)n * 4, w->env.stream));
  ts_reverse_kernel<<<vick_blocks(n * k, 256), 256, 0, w->env.stream>>>(n, k, (const int32_t *)w->kept.p,
                                                                        (int32_t *)w->rev.p, (int *)w->nrev.p);
  VICK_LAUNCH(call, "ts_reverse_kernel");
  VICK_TRY(vick_timer_stop(call, &w->env, &kt, "reverse"));
  VICK_TRY(vick_timer_start(call, &w->env));
  ts_stage2_kernel<<<(unsigned)n, TS_THREADS, 0, w->env.stream>>>(
      x, n, d, k, (const int32_t *)w->kept.p, (const float *)w->kept_d.p, (const int32_t *)w->rev.p,
      (const int *)w->nrev.p, p->lambda0, D, (int32_t *)w->ids.p, (uint8_t *)w->occ.p);
  VICK_LAUNCH(call, "ts_stage2_kernel");
  VICK_CUDA(call, cudaMemsetAsync(w->edges.p, 0, 8, w->env.stream));
  ts_count_kernel<<<vick_blocks(n * D, 256), 256, 0, w->env.stream>>>((const int32_t *)w->ids.p, n * D,
                                                                       (unsigned long long *)w->edges.p);
  VICK_LAUNCH(call, "ts_count_kernel");
  VICK_TRY(vick_timer_stop(call, &w->env, &kt, "stage2"));
  call->seconds_kernel += kt;
  return VICK_OK;
}

static int ts_run(vick_call *call, ts_ws *w, const float *rows, int64_t n, int d, const int32_t *knn, int k,
                  const vick_tsdg_params *p, int32_t *ids, uint8_t *occl, double *mean_degree) {
  const int D = p->degree;
  VICK_TRY(ts_alloc(call, w, n, d, k, D));
  VICK_TRY(vick_copy_to_device(call, &w->env, w->x.p, rows, (size_t)n * d * 4));
  VICK_TRY(vick_copy_to_device(call, &w->env, w->knn.p, knn, (size_t)n * k * 4));
  VICK_TRY(ts_stages(call, w, n, d, k, p));
  VICK_TRY(vick_copy_to_host(call, &w->env, ids, w->ids.p, (size_t)n * D * 4));
  VICK_TRY(vick_copy_to_host(call, &w->env, occl, w->occ.p, (size_t)n * D));
  return gr_mean_degree(call, &w->env, w->edges.p, n, mean_degree);
}

static void ts_free(ts_ws *w) {
  vick_buf *b[] = {&w->x, &w->knn, &w->kept, &w->kept_d, &w->nkept, &w->rev, &w->nrev, &w->ids, &w->occ, &w->edges};
  for (size_t i = 0; i < sizeof b / sizeof *b; ++i) vick_buf_free(&w->env, b[i]);
}

static int ts_check(vick_call *call, int64_t n, int32_t d, int32_t k, const vick_tsdg_params *p) {
  if (!p || n < 2 || d < 1 || n >= ((int64_t)1 << 31) - 1)
    return vick_fail(call, VICK_ARGUMENT, "TSDG: needs rows, a kNN graph, outputs and 2 <= n < 2^31 - 1");
  if (k < 1 || k > TS_KMAX || p->degree < 8 || p->degree > 256 || !(p->alpha >= 1.f) || p->lambda0 < 0 ||
      p->lambda0 > 254)
    return vick_fail(call, VICK_ARGUMENT,
                     "TSDG: k = %d must be 1..%d, degree = %d 8..256, alpha = %g >= 1, lambda0 = %d 0..254", (int)k,
                     TS_KMAX, (int)p->degree, (double)p->alpha, (int)p->lambda0);
  return VICK_OK;
}

int vick_tsdg_build(vick_call *call, const float *rows, int64_t n, int32_t d, const int32_t *knn, int32_t k,
                    const vick_tsdg_params *p, int32_t *ids, uint8_t *occl, double *mean_degree) {
  if (!call) return VICK_ARGUMENT;
  if (!rows || !knn || !ids || !occl)
    return vick_fail(call, VICK_ARGUMENT, "TSDG: needs rows, a kNN graph, outputs and 2 <= n < 2^31 - 1");
  VICK_TRY(ts_check(call, n, d, k, p));
  ts_ws w;
  memset(&w, 0, sizeof w);
  int rc = vick_begin(call, &w.env);
  if (rc == VICK_OK) rc = ts_run(call, &w, rows, n, d, knn, k, p, ids, occl, mean_degree);
  ts_free(&w);
  return vick_end(call, &w.env, rc);
}

int vick_tsdg_index(vick_call *call, const float *rows, int64_t n, int32_t d, const vick_gnnd_params *gp, int32_t k,
                    const vick_tsdg_params *p, int32_t max_entries, vick_gsearch **out, double *mean_degree) {
  if (!call) return VICK_ARGUMENT;
  if (!rows || !gp || !out) return vick_fail(call, VICK_ARGUMENT, "TSDG: needs rows, GNND parameters and an output");
  *out = NULL;
  VICK_TRY(ts_check(call, n, d, k, p));
  VICK_TRY(gnnd__check_params(call, n, d, gp, k));
  if (max_entries < 0 || max_entries > GS_PIVOTS_MAX)
    return vick_fail(call, VICK_ARGUMENT, "TSDG: %d entry points asked, 0..%d allowed", (int)max_entries,
                     GS_PIVOTS_MAX);
  ts_ws w;
  memset(&w, 0, sizeof w);
  int rc = vick_begin(call, &w.env);
  double th = vick_now();
  if (rc == VICK_OK) rc = ts_alloc(call, &w, n, d, k, p->degree);
  if (rc == VICK_OK) rc = vick_copy_to_device(call, &w.env, w.x.p, rows, (size_t)n * d * 4);
  if (rc == VICK_OK) vick_stage_add(call, "upload", vick_now() - th);
  if (rc == VICK_OK) {
    /* stage 1 writes its distances later: their buffer holds GNND's meanwhile */
    vick_call gc = *call;
    th = vick_now();
    rc = gnnd__knn_device(&gc, (const float *)w.x.p, n, d, k, gp, (int32_t *)w.knn.p, (float *)w.kept_d.p,
                          w.env.stream);
    if (rc != VICK_OK) memcpy(call->message, gc.message, sizeof call->message);
    call->seconds_kernel += gc.seconds_kernel;
    if (rc == VICK_OK) vick_stage_add(call, "gnnd", vick_now() - th);
  }
  if (rc == VICK_OK) rc = ts_stages(call, &w, n, d, k, p);
  if (rc == VICK_OK) rc = gr_mean_degree(call, &w.env, w.edges.p, n, mean_degree);
  vick_buf *tmp[] = {&w.knn, &w.kept, &w.kept_d, &w.nkept, &w.rev, &w.nrev, &w.edges};
  for (size_t i = 0; i < sizeof tmp / sizeof *tmp; ++i) vick_buf_free(&w.env, tmp[i]);
  if (rc == VICK_OK) {
    const double ta = vick_now();
    rc = gs_adopt(call, &w.env, n, d, (float *)w.x.p, (int32_t *)w.ids.p, p->degree, (uint8_t *)w.occ.p,
                  max_entries, out);
    w.x.p = NULL; /* the search graph owns (or has freed) them now */
    w.ids.p = NULL;
    w.occ.p = NULL;
    if (rc == VICK_OK) vick_stage_add(call, "search graph", vick_now() - ta);
  }
  ts_free(&w);
  return vick_end(call, &w.env, rc);
}
