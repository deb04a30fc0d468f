// GGNN construction driver (Alg. 3 and 6): plan the hierarchy, allocate,
// then for each new top layer select, brute-force merge and sym it and
// merge + sym every layer below; refinements repeat the lower merges.
#include "common.cuh"
#include "ggnn_steps.cuh"
#include "staged_copy.cuh"

#include <cub/cub.cuh>
#include <math.h>
#include <string.h>

// Iteration cap of a construction query per layer.  256 made the merges
// explore until the lists were all but exact (for-all C@10 0.9999 on
// manifold 1M, 14 s); the cap bounds the visited ring and so the cost of
// each fetch's duplicate check as well.
#define GGNN_DEFAULT_MERGE_ITER 64

extern "C" void vick_ggnn_params_init(vick_ggnn_params *p) {
  memset(p, 0, sizeof *p);
  p->k = 24;
  p->segment = 32;
  p->layers = 4;
  p->refinements = 2;
  p->tau_build = 0.5f;
  p->merge_iterations = GGNN_DEFAULT_MERGE_ITER;
  p->cover_components = 1;
  p->max_entry_components = 4096;
}

static int64_t ipow(int64_t b, int e) {
  int64_t r = 1;
  while (e-- > 0) r *= b;
  return r;
}

// g = (n/s)^(1/(L-1)) rounded, lowered until the bottom segments hold more
// than k points (appendix C.1.1); L raised while one selection pool (g
// segments below) would not fit a block.  L = 1: one exact segment.
static int ggnn_plan(int64_t n, int k, int s, int L_req, int *L_out, int *g_out, int *s_up, char *msg, size_t msz) {
  int L = L_req < 1 ? 1 : L_req;
  for (;;) {
    int g = 1;
    if (L > 1) {
      g = (int)lround(pow((double)n / (double)s, 1.0 / (double)(L - 1)));
      if (g < 1) g = 1;
      while (g > 1 && n / ipow(g, L - 1) < k + 1) g--;
    }
    if (g == 1) {
      if (n > GGNN_MAX_SEGMENT_POOL) {
        snprintf(msg, msz, "GGNN: %lld points cannot be split into segments of more than k = %d points",
                 (long long)n, k);
        return VICK_ARGUMENT;
      }
      *L_out = 1;
      *g_out = 1;
      *s_up = s;
      return VICK_OK;
    }
    int64_t s0min = n / ipow(g, L - 1), s0max = (n + ipow(g, L - 1) - 1) / ipow(g, L - 1);
    int64_t up = s < g * s0min ? s : g * s0min;
    if ((g * (s0max > up ? s0max : up) > GGNN_MAX_SEGMENT_POOL || s0max > GGNN_MAX_SEGMENT_POOL) &&
        L < GGNN_MAX_LAYERS) {
      L++;
      continue;
    }
    if (g * (s0max > up ? s0max : up) > GGNN_MAX_SEGMENT_POOL) {
      snprintf(msg, msz, "GGNN: %lld points need more than %d layers of segment size %d", (long long)n,
               GGNN_MAX_LAYERS, s);
      return VICK_ARGUMENT;
    }
    *L_out = L;
    *g_out = g;
    *s_up = (int)up;
    return VICK_OK;
  }
}

// Wait for the step, attribute its time, poll for cancellation.  GGNN's
// steps run on the legacy default stream (its helpers launch there), so
// the host clock around a device synchronisation times them.
static int ggnn_step_done(vick_call *call, const char *name, double *t, double frac) {
  VICK_CUDA(call, cudaDeviceSynchronize());
  double now = vick_now();
  vick_stage_add(call, name, now - *t);
  call->seconds_kernel += now - *t;
  *t = now;
  return vick_poll(call, "ggnn", frac);
}

// d_nn1 mean and max of the bottom layer (Eq. 3-4) with CUB reductions.
static int ggnn_stats(vick_call *call, vick_env *env, vick_ggnn *g, vick_buf *tmp, float *dev2) {
  VICK_CUDA(call, ggnn_extract_dnn1(g));
  size_t a = 0, b = 0;
  VICK_CUDA(call, cub::DeviceReduce::Sum(nullptr, a, g->dnn1, dev2, (int)g->n));
  VICK_CUDA(call, cub::DeviceReduce::Max(nullptr, b, g->dnn1, dev2 + 1, (int)g->n));
  VICK_TRY(vick_buf_reserve(call, env, tmp, a > b ? a : b, "GGNN reduction temporaries"));
  size_t t1 = tmp->bytes, t2 = tmp->bytes;
  VICK_CUDA(call, cub::DeviceReduce::Sum(tmp->p, t1, g->dnn1, dev2, (int)g->n));
  VICK_CUDA(call, cub::DeviceReduce::Max(tmp->p, t2, g->dnn1, dev2 + 1, (int)g->n));
  float h[2];
  VICK_CUDA(call, cudaMemcpy(h, dev2, sizeof h, cudaMemcpyDeviceToHost));
  g->dnn1_mean = (double)h[0] / (double)g->n;
  g->dnn1_max = h[1];
  return VICK_OK;
}

extern "C" void vick_ggnn_free(vick_ggnn *g) {
  if (!g) return;
  int prev = 0;
  cudaGetDevice(&prev);
  cudaSetDevice(g->device);
  vick_free_kept(g->x);
  vick_free_kept(g->perm);
  for (int l = 0; l < GGNN_MAX_LAYERS; ++l) {
    vick_free_kept(g->layer[l].base);
    vick_free_kept(g->layer[l].down);
    vick_free_kept(g->layer[l].graph);
    vick_free_kept(g->layer[l].dist);
  }
  vick_free_kept(g->forall);
  vick_free_kept(g->dnn1);
  vick_free_kept(g->entry);
  cudaSetDevice(prev);
  free(g);
}

// merge(l_top, l_m) into the scratch lists, then copied over the layer's.
static cudaError_t ggnn_merge_layer(vick_ggnn *g, int ltop, int lm, float tau, int32_t *tg, float *td) {
  ggnn_layer *ly = &g->layer[lm];
  cudaError_t e = ltop == lm ? ggnn_brute_segments(g, lm, tg, td)
                             : ggnn_merge(g, ltop, lm, tau, (float)g->dnn1_mean, tg, td);
  if (e != cudaSuccess) return e;
  size_t cnt = (size_t)ly->n * g->k;
  if ((e = cudaMemcpyAsync(ly->graph, tg, cnt * sizeof(int32_t), cudaMemcpyDeviceToDevice)) != cudaSuccess) return e;
  if ((e = cudaMemcpyAsync(ly->dist, td, cnt * sizeof(float), cudaMemcpyDeviceToDevice)) != cudaSuccess) return e;
  if (lm == 0)  // the for-all lists are the last bottom merge's, before inverse links replace slots
    e = cudaMemcpyAsync(g->forall, tg, cnt * sizeof(int32_t), cudaMemcpyDeviceToDevice);
  return e;
}

// Bytes of each of the two pinned slots of the rows' upload.
#define GGNN_UPLOAD_SLOT ((size_t)8 << 20)

// Scratch of one build, released in one place (ggnn_ws_free).
struct ggnn_build_ws {
  vick_env env;
  vick_buf x_in, scratch_g, scratch_d, symcnt, sym, links, dev2;
  vick_buf cub_tmp;  // CUB temporaries, grown by ggnn_permute and ggnn_stats
};

static void ggnn_ws_free(ggnn_build_ws *w) {
  vick_buf *b[] = {&w->x_in, &w->scratch_g, &w->scratch_d, &w->symcnt, &w->sym, &w->links, &w->dev2, &w->cub_tmp};
  for (size_t i = 0; i < sizeof b / sizeof b[0]; ++i) vick_buf_free(&w->env, b[i]);
}

// The device arrays of g (kept by the index) and the build's scratch, all
// within the call's budget; the rows uploaded (transfer time) and permuted
// into layer-0 order (*t: the end of the upload, where kernel time starts).
static int ggnn_allocate(vick_call *call, ggnn_build_ws *w, vick_ggnn *g, const float *x, const vick_ggnn_params *p,
                         double *t) {
  vick_env *env = &w->env;
  const int64_t n = g->n;
  const int k = g->k;
  size_t rows = (size_t)n * g->d * sizeof(float), nk = (size_t)n * k;
  VICK_TRY(vick_buf_alloc(call, env, &w->x_in, rows, "GGNN input rows"));
  /* through pinned slots filled by all host threads: the driver's pageable
   * copy of the same rows runs at a fraction of the link's speed */
  vick_stage st;
  int rc = vick_stage_init(call, &st, GGNN_UPLOAD_SLOT);
  if (rc == VICK_OK)
    rc = p->rows_in ? vick_staged_rows_to_device(call, env, &st, w->x_in.p, n, (size_t)g->d * sizeof(float), p->rows_in,
                                                 p->rows_ctx)
                    : vick_staged_to_device(call, env, &st, w->x_in.p, x, rows);
  vick_stage_free(&st);
  if (rc != VICK_OK) return rc;
  *t = vick_now();
  VICK_TRY(vick_alloc_kept(call, env, (void **)&g->x, rows, "GGNN rows"));
  VICK_TRY(vick_alloc_kept(call, env, (void **)&g->perm, n * sizeof(int32_t), "GGNN permutation"));
  VICK_TRY(ggnn_permute(call, env, g, (const float *)w->x_in.p, call->seed, &w->cub_tmp));
  VICK_CUDA(call, cudaDeviceSynchronize());
  vick_buf_free(env, &w->x_in);
  g->device_bytes = rows + n * sizeof(int32_t);
  for (int l = 0; l < g->L; ++l) {
    ggnn_layer *ly = &g->layer[l];
    ly->nseg = (int32_t)ipow(g->g, g->L - 1 - l);
    ly->n = l == 0 ? (int32_t)n : ly->nseg * g->s_up;
    size_t ln = (size_t)ly->n;
    if (l > 0) {
      VICK_TRY(vick_alloc_kept(call, env, (void **)&ly->base, ln * sizeof(int32_t), "GGNN layer ids"));
      VICK_TRY(vick_alloc_kept(call, env, (void **)&ly->down, ln * sizeof(int32_t), "GGNN layer ids"));
    }
    VICK_TRY(vick_alloc_kept(call, env, (void **)&ly->graph, ln * k * sizeof(int32_t), "GGNN layer graph"));
    VICK_TRY(vick_alloc_kept(call, env, (void **)&ly->dist, ln * k * sizeof(float), "GGNN layer distances"));
    g->device_bytes += ln * k * 8 + (l > 0 ? ln * 8 : 0);
  }
  VICK_TRY(vick_alloc_kept(call, env, (void **)&g->forall, nk * sizeof(int32_t), "GGNN for-all lists"));
  VICK_TRY(vick_alloc_kept(call, env, (void **)&g->dnn1, n * sizeof(float), "GGNN nearest distances"));
  g->device_bytes += nk * 4 + n * 4;
  VICK_TRY(vick_buf_alloc(call, env, &w->scratch_g, nk * sizeof(int32_t), "GGNN merge lists"));
  VICK_TRY(vick_buf_alloc(call, env, &w->scratch_d, nk * sizeof(float), "GGNN merge distances"));
  VICK_TRY(vick_buf_alloc(call, env, &w->symcnt, n * sizeof(int32_t), "GGNN inverse-link counts"));
  VICK_TRY(vick_buf_alloc(call, env, &w->sym, (size_t)n * (g->ksym > 0 ? g->ksym : 1) * sizeof(int32_t),
                          "GGNN inverse links"));
  VICK_TRY(vick_buf_alloc(call, env, &w->links, sizeof(unsigned long long), "GGNN link counter"));
  VICK_TRY(vick_buf_alloc(call, env, &w->dev2, 2 * sizeof(float), "GGNN statistics"));
  return VICK_OK;
}

// merge + (when g has symmetric slots) sym of layer lm from layer ltop.
static int ggnn_merge_sym(vick_call *call, ggnn_build_ws *w, vick_ggnn *g, const vick_ggnn_params *p, int ltop, int lm,
                          const char *stage, double *t, double frac) {
  int32_t *tg = (int32_t *)w->scratch_g.p;
  float *td = (float *)w->scratch_d.p;
  VICK_CUDA(call, ggnn_merge_layer(g, ltop, lm, p->tau_build, tg, td));
  if (lm == 0) VICK_TRY(ggnn_stats(call, &w->env, g, &w->cub_tmp, (float *)w->dev2.p));
  VICK_TRY(ggnn_step_done(call, stage, t, frac));
  if (g->ksym > 0) {
    VICK_CUDA(call, cudaMemset(w->links.p, 0, sizeof(unsigned long long)));
    VICK_TRY(ggnn_sym(call, &w->env, g, lm, (int32_t *)w->symcnt.p, (int32_t *)w->sym.p,
                      (unsigned long long *)w->links.p, p->deterministic));
    VICK_TRY(ggnn_step_done(call, "sym", t, frac));
  }
  return VICK_OK;
}

static int ggnn_build_run(vick_call *call, ggnn_build_ws *w, vick_ggnn *g, const float *x, const vick_ggnn_params *p) {
  const int L = g->L;
  double t = 0;
  VICK_TRY(ggnn_allocate(call, w, g, x, p, &t));
  VICK_TRY(ggnn_step_done(call, "permute", &t, 0.0));
  // Alg. 3: for each new top layer, select it, then merge + sym from it down.
  const int steps = L * (L + 1) / 2 + p->refinements * (L - 1);
  int done_steps = 0;
  for (int ltop = 0; ltop < L; ++ltop) {
    if (ltop > 0) {
      VICK_CUDA(call, ggnn_select(g, ltop, call->seed + 0x5e1ec7ull * (uint64_t)ltop));
      VICK_TRY(ggnn_step_done(call, "select", &t, (double)done_steps / steps));
    }
    for (int lm = ltop; lm >= 0; --lm, ++done_steps)
      VICK_TRY(ggnn_merge_sym(call, w, g, p, ltop, lm, "merge", &t, (double)done_steps / steps));
  }
  // Alg. 6: refinement repeats merge + sym below the top layer.
  for (int r = 0; r < p->refinements && L > 1; ++r)
    for (int lm = L - 2; lm >= 0; --lm, ++done_steps)
      VICK_TRY(ggnn_merge_sym(call, w, g, p, L - 1, lm, "refine", &t, (double)done_steps / steps));
  unsigned long long links_h = 0;
  VICK_CUDA(call, cudaMemcpy(&links_h, w->links.p, sizeof links_h, cudaMemcpyDeviceToHost));
  g->mean_inverse_links = (double)links_h / (double)g->n;
  VICK_TRY(ggnn_entries(call, &w->env, g, p->cover_components,
                        p->max_entry_components > 0 ? p->max_entry_components : 4096));
  return ggnn_step_done(call, "entries", &t, 1.0);
}

extern "C" int vick_ggnn_build(vick_call *call, const float *x, int64_t n, int32_t d, const vick_ggnn_params *p,
                               vick_ggnn **out) {
  int L = 1, gg = 1, s_up = 32;
  call->message[0] = '\0';
  call->n_stages = 0;
  call->seconds_kernel = call->seconds_transfer = 0;
  *out = nullptr;
  if (!x || n < 2 || d < 1 || !p || p->k < 2 || p->k > GGNN_MAX_K || p->segment < 2 || p->segment > 1024 ||
      n > 0x7fffffffLL || p->refinements < 0 || !(p->tau_build >= 0) || p->merge_iterations < 0 ||
      p->upper_iterations < 0) {
    snprintf(call->message, sizeof call->message,
             "GGNN needs n >= 2 (< 2^31), d >= 1, 2 <= k <= 96, 2 <= s <= 1024, refinements >= 0, tau_build >= 0, "
             "merge_iterations >= 0, upper_iterations >= 0 "
             "(n = %lld, d = %d, k = %d, s = %d)", (long long)n, (int)d, p ? (int)p->k : 0, p ? (int)p->segment : 0);
    return VICK_ARGUMENT;
  }
  int k = p->k < n - 1 ? p->k : (int)(n - 1);
  int rc = ggnn_plan(n, k, p->segment, p->layers, &L, &gg, &s_up, call->message, sizeof call->message);
  if (rc != VICK_OK) return rc;
  vick_ggnn *g = (vick_ggnn *)calloc(1, sizeof *g);
  if (!g) return vick_fail(call, VICK_NOMEM, "GGNN: no host memory");
  g->device = call->device;
  g->n = n;
  g->d = d;
  g->k = k;
  g->ksym = k / 2;
  g->knn = k - k / 2;
  g->L = L;
  g->g = gg;
  g->s_up = s_up;
  g->merge_iter = p->merge_iterations > 0 ? p->merge_iterations : GGNN_DEFAULT_MERGE_ITER;
  g->upper_iter = p->upper_iterations > 0 ? p->upper_iterations : (g->merge_iter / 4 > 8 ? g->merge_iter / 4 : 8);
  ggnn_build_ws w = {};
  rc = vick_begin(call, &w.env);
  if (rc == VICK_OK) rc = ggnn_build_run(call, &w, g, x, p);
  ggnn_ws_free(&w);
  if (rc == VICK_OK) *out = g;
  else vick_ggnn_free(g);
  return vick_end(call, &w.env, rc);
}
