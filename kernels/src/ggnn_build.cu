// GGNN construction driver (Alg. 3 and 6): plan the hierarchy, allocate,
// then for each new top layer select, brute-force merge and sym it and
// merge + sym every layer below; refinements repeat the lower merges.
#include "ggnn_steps.cuh"

#include <cub/cub.cuh>
#include <math.h>
#include <string.h>
#include <time.h>

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

static double ggnn_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
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

static void ggnn_stage(vick_call *call, const char *name, double sec) {
  for (int i = 0; i < call->n_stages; ++i)
    if (strcmp(call->stages[i].name, name) == 0) { call->stages[i].seconds += sec; return; }
  if (call->n_stages >= 8) return;
  snprintf(call->stages[call->n_stages].name, sizeof call->stages[0].name, "%s", name);
  call->stages[call->n_stages++].seconds = sec;
}

// Wait for the step, attribute its time, poll for cancellation.
static int ggnn_step_done(vick_call *call, const char *name, double *t, double frac) {
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    snprintf(call->message, sizeof call->message, "GGNN %s: %s", name, cudaGetErrorString(e));
    return e == cudaErrorMemoryAllocation ? VICK_NOMEM : VICK_DEVICE;
  }
  double now = ggnn_now();
  ggnn_stage(call, name, now - *t);
  call->seconds_kernel += now - *t;
  *t = now;
  if (call->progress && call->progress(call->user, "ggnn", frac)) {
    snprintf(call->message, sizeof call->message, "GGNN construction cancelled");
    return VICK_CANCELLED;
  }
  return VICK_OK;
}

// d_nn1 mean and max of the bottom layer (Eq. 3-4) with CUB reductions.
static cudaError_t ggnn_stats(vick_ggnn *g, void **tmp, size_t *tmp_bytes, float *dev2) {
  cudaError_t e = ggnn_extract_dnn1(g);
  if (e != cudaSuccess) return e;
  size_t a = 0, b = 0;
  if ((e = cub::DeviceReduce::Sum(nullptr, a, g->dnn1, dev2, (int)g->n)) != cudaSuccess) return e;
  if ((e = cub::DeviceReduce::Max(nullptr, b, g->dnn1, dev2 + 1, (int)g->n)) != cudaSuccess) return e;
  if (a < b) a = b;
  if (a > *tmp_bytes) {
    cudaFree(*tmp);
    *tmp = nullptr;
    if ((e = cudaMalloc(tmp, a)) != cudaSuccess) return e;
    *tmp_bytes = a;
  }
  size_t t1 = *tmp_bytes, t2 = *tmp_bytes;
  if ((e = cub::DeviceReduce::Sum(*tmp, t1, g->dnn1, dev2, (int)g->n)) != cudaSuccess) return e;
  if ((e = cub::DeviceReduce::Max(*tmp, t2, g->dnn1, dev2 + 1, (int)g->n)) != cudaSuccess) return e;
  float h[2];
  if ((e = cudaMemcpy(h, dev2, sizeof h, cudaMemcpyDeviceToHost)) != cudaSuccess) return e;
  g->dnn1_mean = (double)h[0] / (double)g->n;
  g->dnn1_max = h[1];
  return cudaSuccess;
}

extern "C" void vick_ggnn_free(vick_ggnn *g) {
  if (!g) return;
  int prev = 0;
  cudaGetDevice(&prev);
  cudaSetDevice(g->device);
  cudaFree(g->x);
  cudaFree(g->perm);
  for (int l = 0; l < GGNN_MAX_LAYERS; ++l) {
    cudaFree(g->layer[l].base);
    cudaFree(g->layer[l].down);
    cudaFree(g->layer[l].graph);
    cudaFree(g->layer[l].dist);
  }
  cudaFree(g->forall);
  cudaFree(g->dnn1);
  cudaFree(g->entry);
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

extern "C" int vick_ggnn_build(vick_call *call, const float *x, int64_t n, int32_t d, const vick_ggnn_params *p,
                               vick_ggnn **out) {
  int rc = VICK_OK;
  double t_start = ggnn_now(), t;
  vick_ggnn *g = nullptr;
  float *x_in = nullptr, *scratch_d = nullptr, *dev2 = nullptr;
  int32_t *scratch_g = nullptr, *symcnt = nullptr, *sym = nullptr;
  unsigned long long *links = nullptr, links_h = 0;
  void *cub_tmp = nullptr;
  size_t cub_bytes = 0;
  int L = 1, gg = 1, s_up = 32, steps = 0, done_steps = 0;
  call->message[0] = '\0';
  call->n_stages = 0;
  call->seconds_kernel = call->seconds_transfer = 0;
  *out = nullptr;
  if (!x || n < 2 || d < 1 || !p || p->k < 2 || p->k > 96 || p->segment < 2 || p->segment > 1024 ||
      n > 0x7fffffffLL || p->refinements < 0 || !(p->tau_build >= 0) || p->merge_iterations < 0 ||
      p->upper_iterations < 0) {
    snprintf(call->message, sizeof call->message,
             "GGNN needs n >= 2 (< 2^31), d >= 1, 2 <= k <= 96, 2 <= s <= 1024, refinements >= 0, tau_build >= 0, "
             "merge_iterations >= 0, upper_iterations >= 0 "
             "(n = %lld, d = %d, k = %d, s = %d)", (long long)n, (int)d, p ? (int)p->k : 0, p ? (int)p->segment : 0);
    return VICK_ARGUMENT;
  }
  int k = p->k < n - 1 ? p->k : (int)(n - 1);
  if ((rc = ggnn_plan(n, k, p->segment, p->layers, &L, &gg, &s_up, call->message, sizeof call->message)) != VICK_OK)
    return rc;
  g = (vick_ggnn *)calloc(1, sizeof *g);
  if (!g) { snprintf(call->message, sizeof call->message, "GGNN: no host memory"); return VICK_NOMEM; }
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
  GGNN_CUDA(call, cudaSetDevice(call->device));
  t = ggnn_now();
  {
    size_t rows = (size_t)n * d * sizeof(float), nk = (size_t)n * k;
    GGNN_CUDA(call, cudaMalloc(&x_in, rows));
    GGNN_CUDA(call, cudaMemcpy(x_in, x, rows, cudaMemcpyHostToDevice));
    double tt = ggnn_now();
    call->seconds_transfer += tt - t;
    t = tt;
    GGNN_CUDA(call, cudaMalloc(&g->x, rows));
    GGNN_CUDA(call, cudaMalloc(&g->perm, n * sizeof(int32_t)));
    GGNN_CUDA(call, ggnn_permute(g, x_in, call->seed, &cub_tmp, &cub_bytes));
    GGNN_CUDA(call, cudaDeviceSynchronize());
    cudaFree(x_in);
    x_in = nullptr;
    g->device_bytes = rows + n * sizeof(int32_t);
    for (int l = 0; l < L; ++l) {
      ggnn_layer *ly = &g->layer[l];
      ly->nseg = (int32_t)ipow(gg, L - 1 - l);
      ly->n = l == 0 ? (int32_t)n : ly->nseg * s_up;
      size_t ln = (size_t)ly->n;
      if (l > 0) {
        GGNN_CUDA(call, cudaMalloc(&ly->base, ln * sizeof(int32_t)));
        GGNN_CUDA(call, cudaMalloc(&ly->down, ln * sizeof(int32_t)));
      }
      GGNN_CUDA(call, cudaMalloc(&ly->graph, ln * k * sizeof(int32_t)));
      GGNN_CUDA(call, cudaMalloc(&ly->dist, ln * k * sizeof(float)));
      g->device_bytes += ln * k * 8 + (l > 0 ? ln * 8 : 0);
    }
    GGNN_CUDA(call, cudaMalloc(&g->forall, nk * sizeof(int32_t)));
    GGNN_CUDA(call, cudaMalloc(&g->dnn1, n * sizeof(float)));
    g->device_bytes += nk * 4 + n * 4;
    GGNN_CUDA(call, cudaMalloc(&scratch_g, nk * sizeof(int32_t)));
    GGNN_CUDA(call, cudaMalloc(&scratch_d, nk * sizeof(float)));
    GGNN_CUDA(call, cudaMalloc(&symcnt, n * sizeof(int32_t)));
    GGNN_CUDA(call, cudaMalloc(&sym, (size_t)n * (g->ksym > 0 ? g->ksym : 1) * sizeof(int32_t)));
    GGNN_CUDA(call, cudaMalloc(&links, sizeof *links));
    GGNN_CUDA(call, cudaMalloc(&dev2, 2 * sizeof(float)));
  }
  if ((rc = ggnn_step_done(call, "permute", &t, 0.0)) != VICK_OK) goto fail;

  // Alg. 3: for each new top layer, select it, then merge + sym from it down.
  steps = L * (L + 1) / 2 + p->refinements * (L - 1);
  for (int ltop = 0; ltop < L; ++ltop) {
    if (ltop > 0) {
      GGNN_CUDA(call, ggnn_select(g, ltop, call->seed + 0x5e1ec7ull * (uint64_t)ltop));
      if ((rc = ggnn_step_done(call, "select", &t, (double)done_steps / steps)) != VICK_OK) goto fail;
    }
    for (int lm = ltop; lm >= 0; --lm) {
      GGNN_CUDA(call, ggnn_merge_layer(g, ltop, lm, p->tau_build, scratch_g, scratch_d));
      if (lm == 0) GGNN_CUDA(call, ggnn_stats(g, &cub_tmp, &cub_bytes, dev2));
      if ((rc = ggnn_step_done(call, "merge", &t, (double)done_steps / steps)) != VICK_OK) goto fail;
      if (g->ksym > 0) {
        GGNN_CUDA(call, cudaMemset(links, 0, sizeof *links));
        GGNN_CUDA(call, ggnn_sym(g, lm, symcnt, sym, links, p->deterministic));
        if ((rc = ggnn_step_done(call, "sym", &t, (double)done_steps / steps)) != VICK_OK) goto fail;
      }
      done_steps++;
    }
  }
  // Alg. 6: refinement repeats merge + sym below the top layer.
  for (int r = 0; r < p->refinements && L > 1; ++r) {
    for (int lm = L - 2; lm >= 0; --lm) {
      GGNN_CUDA(call, ggnn_merge_layer(g, L - 1, lm, p->tau_build, scratch_g, scratch_d));
      if (lm == 0) GGNN_CUDA(call, ggnn_stats(g, &cub_tmp, &cub_bytes, dev2));
      if ((rc = ggnn_step_done(call, "refine", &t, (double)done_steps / steps)) != VICK_OK) goto fail;
      if (g->ksym > 0) {
        GGNN_CUDA(call, cudaMemset(links, 0, sizeof *links));
        GGNN_CUDA(call, ggnn_sym(g, lm, symcnt, sym, links, p->deterministic));
        if ((rc = ggnn_step_done(call, "sym", &t, (double)done_steps / steps)) != VICK_OK) goto fail;
      }
      done_steps++;
    }
  }
  GGNN_CUDA(call, cudaMemcpy(&links_h, links, sizeof links_h, cudaMemcpyDeviceToHost));
  g->mean_inverse_links = (double)links_h / (double)n;
  if (ggnn_entries(g, p->cover_components, p->max_entry_components > 0 ? p->max_entry_components : 4096,
                   call->message, sizeof call->message) != cudaSuccess) {
    rc = VICK_DEVICE;
    goto fail;
  }
  if ((rc = ggnn_step_done(call, "entries", &t, 1.0)) != VICK_OK) goto fail;
  cudaFree(scratch_g);
  cudaFree(scratch_d);
  cudaFree(symcnt);
  cudaFree(sym);
  cudaFree(links);
  cudaFree(dev2);
  cudaFree(cub_tmp);
  call->seconds_total = ggnn_now() - t_start;
  *out = g;
  return VICK_OK;

fail:
  cudaFree(x_in);
  cudaFree(scratch_g);
  cudaFree(scratch_d);
  cudaFree(symcnt);
  cudaFree(sym);
  cudaFree(links);
  cudaFree(dev2);
  cudaFree(cub_tmp);
  vick_ggnn_free(g);
  call->seconds_total = ggnn_now() - t_start;
  return rc;
}
