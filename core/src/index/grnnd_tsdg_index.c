/* GRNND and TSDG index kinds (issue 7): build, search and the CPU side
 * (TSDG diversification and best-first search on the CPU).  See
 * flat_index.h.  The GPU parts call vic_kernels_grnnd.h; the build's
 * parameters are chosen here, a GPU search's (the small/large-batch
 * choice, the occlusion limits) in gsearch_policy.c. */
#include "backend_cuda.h"
#include "index_internal.h"
#include "gsearch_policy.h"
#include "list_dest.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif
#ifdef VIC_WITH_CUDA
#include "cuda_internal.h"
#include "gsearch_io.h"
#include "vic_kernels_grnnd.h"
#endif

#define TSDG_K_DEFAULT 32
#define TSDG_GNND_SAMPLES 16
#define TSDG_GNND_ITERATIONS 10
#define TSDG_GNND_CONVERGE 0.001f

void vic__flat_free(vic_flat_graph *g) {
#ifdef VIC_WITH_CUDA
  if (g->gpu) vick_gsearch_free((vick_gsearch *)g->gpu);
#endif
  free(g->ids);
  free(g->occl);
  memset(g, 0, sizeof *g);
}

int64_t vic__flat_bytes(const vic_flat_graph *g, int64_t n) {
#ifdef VIC_WITH_CUDA
  if (!g->ids && g->gpu) { /* built on the device: what it holds there */
    vick_gsearch_info info;
    vick_gsearch_info_get((const vick_gsearch *)g->gpu, &info);
    return (int64_t)info.device_bytes;
  }
#endif
  if (!g->ids) return 0;
  return n * (int64_t)g->degree * (int64_t)(4 + (g->occl ? 1 : 0));
}

int vic__flat_valid(const vic_flat_graph *g, int64_t n) {
  if (g->degree < 1 || !g->ids) return 0;
  for (int64_t i = 0; i < n; ++i) {
    const int32_t *r = g->ids + i * g->degree;
    for (int32_t e = 0; e < g->degree; ++e) {
      if (r[e] < -1 || r[e] >= n) return 0;
      if (e > 0 && r[e - 1] < 0 && r[e] >= 0) return 0;
      if (g->occl && e > 0 && r[e] >= 0 && g->occl[i * g->degree + e] < g->occl[i * g->degree + e - 1]) return 0;
    }
  }
  return 1;
}

vic_status vic__flat_edges(vic_ctx *c, const vic_flat_graph *g, int64_t n, int tsdg, const int32_t **ids,
                           const uint8_t **occl, void **owned) {
  *owned = NULL;
  *ids = g->ids;
  *occl = g->occl;
  if (g->ids || !g->gpu) return VIC_OK;
#ifdef VIC_WITH_CUDA
  const size_t cells = (size_t)n * (size_t)g->degree;
  char *buf = vic__malloc(c, cells * (sizeof(int32_t) + (tsdg ? 1 : 0)), "graph edges from the device");
  if (!buf) return VIC_E_NOMEM;
  vick_call call;
  vic__cuda_call_init(c, &call, c->opt.device, 0, 0);
  uint8_t *oc = tsdg ? (uint8_t *)(buf + cells * sizeof(int32_t)) : NULL;
  vic_status s = vic__kernel_status(c, vick_gsearch_graph(&call, (const vick_gsearch *)g->gpu, (int32_t *)buf, oc),
                                    &call, "graph download");
  if (s != VIC_OK) { free(buf); return s; }
  *ids = (const int32_t *)buf;
  *occl = oc;
  *owned = buf;
  return VIC_OK;
#else
  (void)n;
  (void)tsdg;
  return vic__fail(c, VIC_E_UNSUPPORTED, "a graph index without its edges");
#endif
}

static const float *row(const vic_data *x, int64_t i) { return x->rows + i * (x->stride ? x->stride : x->d); }
static float edist(const vic_data *x, int64_t a, int64_t b) { return sqrtf(vic__l2sq(row(x, a), row(x, b), x->d, NULL)); }

/* ------------------------------------------------------- CPU TSDG */
vic_status vic__tsdg_cpu(vic_ctx *c, const vic_data *x, const int32_t *knn, int32_t k, float alpha, int32_t lambda0,
                         int32_t degree, int32_t *ids, uint8_t *occl) {
  const int64_t n = x->n;
  int32_t *kept = vic__malloc(c, (size_t)n * k * sizeof(int32_t), "TSDG stage-1 edges");
  int32_t *rev = kept ? vic__malloc(c, (size_t)n * k * sizeof(int32_t), "TSDG reverse edges") : NULL;
  int32_t *nrev = rev ? vic__calloc(c, (size_t)n, sizeof(int32_t), "TSDG reverse counts") : NULL;
  if (!nrev) { free(kept); free(rev); return VIC_E_NOMEM; }
  /* stage 1: relaxed diversification (Eq. 2) */
#pragma omp parallel for num_threads(vic__threads(c)) schedule(dynamic, 256)
  for (int64_t v = 0; v < n; ++v) {
    float d0[256];
    int32_t *kv = kept + v * k;
    int nk = 0;
    for (int32_t j = 0; j < k; ++j) {
      int32_t u = knn[v * k + j];
      if (u < 0 || u >= n || u == v) continue;
      int dup = 0;
      for (int t = 0; t < nk && !dup; ++t) dup = kv[t] == u;
      if (dup) continue;
      float dj = edist(x, v, u);
      int occluded = 0;
      for (int t = 0; t < nk && !occluded; ++t)
        occluded = alpha * d0[t] < dj && alpha * edist(x, kv[t], u) < dj;
      if (!occluded) { d0[nk] = dj; kv[nk++] = u; }
    }
    for (int t = nk; t < k; ++t) kv[t] = -1;
  }
  /* reverse edges, at most k per node (in node order) */
  for (int64_t v = 0; v < n; ++v)
    for (int32_t t = 0; t < k; ++t) {
      int32_t u = kept[v * k + t];
      if (u < 0) break;
      if (nrev[u] < k) rev[(int64_t)u * k + nrev[u]++] = (int32_t)v;
    }
  /* stage 2: occlusion factors (Eq. 1), order by (factor, distance), cut */
#pragma omp parallel for num_threads(vic__threads(c)) schedule(dynamic, 256)
  for (int64_t v = 0; v < n; ++v) {
    int32_t cid[512];
    float cd[512];
    int occ[512], ord[512];
    int m = 0;
    for (int32_t t = 0; t < 2 * k; ++t) {
      int32_t u = t < k ? kept[v * k + t] : (t - k < nrev[v] ? rev[v * k + t - k] : -1);
      if (u < 0) continue;
      int dup = 0;
      for (int i = 0; i < m && !dup; ++i) dup = cid[i] == u;
      if (dup) continue;
      cid[m] = u;
      cd[m] = edist(x, v, u);
      ++m;
    }
    /* sort by (distance, id): insertion sort, m <= 2k */
    for (int i = 1; i < m; ++i) {
      int32_t a = cid[i];
      float b = cd[i];
      int j = i;
      while (j > 0 && (cd[j - 1] > b || (cd[j - 1] == b && cid[j - 1] > a))) { cid[j] = cid[j - 1]; cd[j] = cd[j - 1]; --j; }
      cid[j] = a;
      cd[j] = b;
    }
    for (int j = 0; j < m; ++j) {
      occ[j] = 0;
      for (int i = 0; i < j; ++i)
        if (cd[i] < cd[j] && edist(x, cid[i], cid[j]) < cd[j]) occ[j]++;
    }
    /* stable order by factor: distance order within a factor */
    int no = 0;
    for (int f = 0; f <= lambda0 && no < degree; ++f)
      for (int j = 0; j < m && no < degree; ++j)
        if (occ[j] == f) ord[no++] = j;
    for (int t = 0; t < degree; ++t) {
      ids[v * degree + t] = t < no ? cid[ord[t]] : -1;
      occl[v * degree + t] = t < no ? (uint8_t)occ[ord[t]] : 255;
    }
  }
  free(kept);
  free(rev);
  free(nrev);
  return VIC_OK;
}

/* ------------------------------------------------- CPU best-first search */
typedef struct {
  float d;
  int32_t id;
  int expanded;
} cand;

static vic_status cpu_search(vic_ctx *c, const vic_index *ix, const vic_flat_graph *g, const vic_data *q, int32_t k,
                             int32_t L, int32_t limit, int32_t entries, int64_t *ids, float *dist) {
  const vic_data *x = &ix->x;
  const int64_t n = x->n;
  const int nt = vic__threads(c); /* one scratch slice per thread of the region below */
  uint32_t *stamp = vic__calloc(c, (size_t)n * (size_t)nt, sizeof(uint32_t), "search visited marks");
  cand *lists = stamp ? vic__malloc(c, (size_t)(L + 1) * (size_t)nt * sizeof(cand), "search lists") : NULL;
  if (!lists) { free(stamp); return VIC_E_NOMEM; }
  const int qcos = q->metric == VIC_COSINE;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 16)
  for (int64_t qi = 0; qi < q->n; ++qi) {
    int t = 0;
#ifdef _OPENMP
    t = omp_get_thread_num();
#endif
    uint32_t *seen = stamp + (size_t)t * (size_t)n;
    const uint32_t mark = (uint32_t)(qi + 1);
    cand *lst = lists + (size_t)t * (size_t)(L + 1);
    float qn[4096];
    const float *qr = q->rows + qi * (q->stride ? q->stride : q->d);
    if (qcos && q->d <= 4096) { /* unit query row, as the index's rows */
      double s = 0;
      for (int j = 0; j < q->d; ++j) s += (double)qr[j] * qr[j];
      float inv = s > 0 ? (float)(1.0 / sqrt(s)) : 0.f;
      for (int j = 0; j < q->d; ++j) qn[j] = qr[j] * inv;
      qr = qn;
    }
    int size = 0;
    vic_rng r = vic__rng(c->opt.seed, (uint64_t)qi + 0x5eed);
#define OFFER(vid)                                                                                   \
  do {                                                                                               \
    int32_t v_ = (vid);                                                                              \
    if (seen[v_] == mark) break;                                                                     \
    seen[v_] = mark;                                                                                 \
    float dv_ = vic__l2sq(qr, row(x, v_), x->d, NULL);                                               \
    if (size == L && !(dv_ < lst[L - 1].d || (dv_ == lst[L - 1].d && v_ < lst[L - 1].id))) break;   \
    int p_ = size < L ? size++ : L - 1;                                                              \
    while (p_ > 0 && (lst[p_ - 1].d > dv_ || (lst[p_ - 1].d == dv_ && lst[p_ - 1].id > v_))) {       \
      lst[p_] = lst[p_ - 1];                                                                         \
      --p_;                                                                                          \
    }                                                                                                \
    lst[p_].d = dv_;                                                                                 \
    lst[p_].id = v_;                                                                                 \
    lst[p_].expanded = 0;                                                                            \
  } while (0)
    for (int32_t s = 0; s < entries; ++s) OFFER((int32_t)vic__rng_below(&r, (uint64_t)n));
    for (;;) {
      int p = 0;
      while (p < size && lst[p].expanded) ++p;
      if (p == size) break;
      lst[p].expanded = 1;
      const int32_t u = lst[p].id;
      const int32_t *e = g->ids + (int64_t)u * g->degree;
      for (int32_t j = 0; j < g->degree && e[j] >= 0; ++j) {
        if (g->occl && limit > 0 && g->occl[(int64_t)u * g->degree + j] >= limit) break;
        OFFER(e[j]);
      }
    }
#undef OFFER
    for (int32_t j = 0; j < k; ++j) {
      ids[qi * k + j] = j < size ? lst[j].id : -1;
      dist[qi * k + j] = j < size ? vic__true_dist(x->metric, lst[j].d) : INFINITY;
    }
  }
  free(stamp);
  free(lists);
  return VIC_OK;
}

/* ------------------------------------------------------------ GPU parts */
#ifdef VIC_WITH_CUDA
/* packed rows (vic__cuda_packed_rows), a failure worded in the context */
static const float *packed(vic_ctx *c, const vic_data *x, float **owned) {
  vick_call note;
  memset(&note, 0, sizeof note);
  const float *rows = vic__cuda_packed_rows(x, owned, &note);
  if (!rows) vic__fail(c, VIC_E_NOMEM, "%s", note.message);
  return rows;
}

static int gpu_usable(vic_ctx *c) {
  if (c->opt.backend == VIC_BACKEND_CPU) return 0;
  if (vic__cuda_probe(c) == VIC_OK) return 1;
  if (c->opt.backend != VIC_BACKEND_CUDA) c->error[0] = '\0';
  return 0;
}

/* The first search finds its buffers, pinned staging and kernels ready,
 * whether the graph was uploaded or built on the device. */
static vic_status reserve(vic_ctx *c, vick_gsearch *gs) {
  vick_call call;
  vic__cuda_call_init(c, &call, c->opt.device, 0, 0);
  return vic__kernel_status(c, vick_gsearch_reserve(&call, gs, VIC_GS_RESERVE_QUERIES, VIC_GS_RESERVE_K), &call,
                            "graph search buffers");
}

static vic_status attach(vic_ctx *c, vic_index *ix, const float *rows) {
  vick_call call;
  vic__cuda_call_init(c, &call, c->opt.device, 0, 0);
  vick_gsearch *gs = NULL;
  int rc = vick_gsearch_create(&call, rows, ix->x.n, ix->x.d, ix->flat.ids, ix->flat.degree, ix->flat.occl, 0, &gs);
  vic_status s = vic__kernel_status(c, rc, &call, "graph upload");
  if (s != VIC_OK) return s;
  ix->flat.gpu = gs;
  if ((s = reserve(c, gs)) != VIC_OK) return s;
  vick_gsearch_info info;
  vick_gsearch_info_get(gs, &info);
  vic__log(c, VIC_LOG_INFO, "%s graph on the device: degree %d, %lld weakly connected components (%d entry points)",
           vic_method_name(ix->report.method), (int)ix->flat.degree, (long long)info.components,
           (int)info.entry_points);
  return VIC_OK;
}
#endif

void vic__flat_attach_gpu(vic_ctx *c, vic_index *ix) {
#ifdef VIC_WITH_CUDA
  if (ix->flat.gpu || !gpu_usable(c)) return;
  float *owned = NULL;
  const float *rows = packed(c, &ix->x, &owned);
  if (rows && attach(c, ix, rows) != VIC_OK) {
    vic__log(c, VIC_LOG_WARNING, "the graph could not be put on the GPU (%s); searching on the CPU", c->error);
    c->error[0] = '\0';
  }
  free(owned);
#else
  (void)c;
  (void)ix;
#endif
}

/* TSDG's GNND lists: K 32, p 16, 10 iterations (the settings its graph was
 * measured with, BENCHMARKS.md), or the caller's gnnd options when it sets
 * gnnd.k_build. */
static void tsdg_gnnd_options(vic_build_options *so) {
  if (so->gnnd.k_build > 0) return;
  so->gnnd.k_build = TSDG_K_DEFAULT;
  so->gnnd.samples = TSDG_GNND_SAMPLES;
  so->gnnd.iterations = TSDG_GNND_ITERATIONS;
  so->gnnd.converge = TSDG_GNND_CONVERGE;
}

/* kNN lists (int32, n x k) for TSDG: GNND on the GPU, else the CPU's choice
 * (tsdg_input_lists.c) */
static vic_status knn_lists(vic_ctx *c, const vic_index *ix, const vic_build_options *o, int gpu, int32_t k,
                            int32_t **out, vic_report *rep) {
  vic_build_options so = *o;
  so.method = gpu ? VIC_METHOD_GNND : (ix->x.n <= o->brute_max_n ? VIC_METHOD_BRUTE : VIC_METHOD_NNDESCENT);
  so.k = k;
  so.recall_sample = 0;
  if (gpu) tsdg_gnnd_options(&so);
  int64_t *ids;
  float *dist;
  double seconds = 0;
  int warnings = c->warnings;
  vic_status s = vic__tsdg_input_lists(c, &ix->x, &so, gpu, k, &ids, &dist, &seconds);
  c->warnings += warnings;
  if (s != VIC_OK) return s;
  free(dist);
  int32_t *g = vic__malloc(c, (size_t)ix->x.n * (size_t)k * sizeof(int32_t), "kNN graph");
  if (!g) { free(ids); return VIC_E_NOMEM; }
  vic__ids_narrow(vic__threads(c), ids, g, ix->x.n * (int64_t)k);
  vic__report_stage(rep, so.method == VIC_METHOD_GNND ? "gnnd" : vic_method_name(so.method), seconds);
  free(ids);
  *out = g;
  return VIC_OK;
}

static vic_status flat_done(vic_ctx *c, vic_index *ix, int gpu, double t0) {
  (void)c;
  ix->report.backend = gpu ? VIC_BACKEND_CUDA : VIC_BACKEND_CPU;
  ix->report.k = ix->flat.degree;
  ix->graph.k_build = ix->flat.degree; /* the header's degree field */
  vic__report_stage(&ix->report, ix->kind == VIC_INDEX_GRNND ? "grnnd index" : "tsdg index", vic__now() - t0);
  return VIC_OK;
}

#ifdef VIC_WITH_CUDA
/* TSDG's GNND lists (tsdg_gnnd_options) as the kernels' parameters. */
static void tsdg_gnnd(const vic_build_options *o, int32_t k, vick_gnnd_params *q) {
  vic_build_options so = *o;
  tsdg_gnnd_options(&so);
  int32_t kb = so.gnnd.k_build;
  if (kb < k) kb = k;
  q->k_build = (kb + 31) / 32 * 32;
  q->samples = so.gnnd.samples;
  q->iterations = so.gnnd.iterations;
  q->converge = so.gnnd.converge;
  q->shard_rows = 0;
  q->merge_iterations = 0;
}

/* Lists, diversification and the search graph in one device call (nothing
 * of size n x k through the host); VIC_E_NOMEM when it does not fit, so the
 * caller can take the sharded path. */
static vic_status tsdg_on_device(vic_ctx *c, vic_index *ix, const vic_build_options *o, int32_t k, float alpha,
                                 int32_t lambda0, int32_t degree, float **owned) {
  const vic_data *x = &ix->x;
  const float *rows = packed(c, x, owned);
  if (!rows) return VIC_E_NOMEM;
  vick_gnnd_params gp;
  tsdg_gnnd(o, k, &gp);
  vick_tsdg_params tp = {alpha, lambda0, degree};
  vick_call call;
  vic__cuda_call_init(c, &call, c->opt.device, o->device_memory_budget, 0);
  vick_gsearch *gs = NULL;
  double deg = 0;
  int rc = vick_tsdg_index(&call, rows, x->n, x->d, &gp, k, &tp, 0, &gs, &deg);
  if (rc == VICK_NOMEM) { /* the caller tries the host path: noted, not logged as an error */
    snprintf(c->error, sizeof c->error, "%s", call.message);
    return VIC_E_NOMEM;
  }
  vic_status s = vic__kernel_status(c, rc, &call, "TSDG");
  if (s != VIC_OK) return s;
  ix->flat.gpu = gs;
  ix->flat.degree = degree;
  vic__cuda_copy_stages(&ix->report, &call);
  vick_gsearch_info info;
  vick_gsearch_info_get(gs, &info);
  if (o->method != VIC_METHOD_AUTO) /* AUTO's reason stands */
    vic__report_reason(&ix->report, "requested by the caller: TSDG (alpha %.2f, lambda0 %d) of GNND %d-NN lists (K %d, "
                                    "p %d, %d it.) on the GPU; degree %.1f, %lld components", (double)alpha,
                       (int)lambda0, (int)k, (int)gp.k_build, (int)gp.samples, (int)gp.iterations, deg,
                       (long long)info.components);
  return VIC_OK;
}
#endif

vic_status vic__flat_build(vic_ctx *c, vic_index *ix, const vic_build_options *o) {
  const vic_data *x = &ix->x;
  vic_flat_graph *g = &ix->flat;
  if (x->box) return vic__fail(c, VIC_E_UNSUPPORTED, "GRNND and TSDG indexes do not support periodic boxes");
  if (x->n >= INT32_MAX) return vic__fail(c, VIC_E_UNSUPPORTED, "GRNND and TSDG index up to 2^31 - 2 points");
  int gpu = 0;
#ifdef VIC_WITH_CUDA
  gpu = gpu_usable(c);
#endif
  if (!gpu && c->opt.backend == VIC_BACKEND_CUDA) {
    vic_status ps = vic__cuda_probe(c);
    return ps != VIC_OK ? ps : vic__fail(c, VIC_E_NODEVICE, "this build has no GPU");
  }
  double t0 = vic__now();
  vic_status s = VIC_OK;
  float *owned = NULL;
  if (ix->kind == VIC_INDEX_GRNND) {
    if (!gpu)
      return vic__fail(c, VIC_E_NODEVICE, "GRNND builds on the GPU only and no usable device is present (method "
                                          "tsdg or nndescent build on the CPU)");
#ifdef VIC_WITH_CUDA
    vick_grnnd_params p;
    vick_grnnd_params_init(&p);
    if (o->grnnd.s > 0) p.s = o->grnnd.s;
    if (o->grnnd.r > 0) p.r = o->grnnd.r;
    if (o->grnnd.t1 > 0) p.t1 = o->grnnd.t1;
    if (o->grnnd.t2 > 0) p.t2 = o->grnnd.t2;
    if (o->grnnd.rho > 0.f) p.rho = o->grnnd.rho;
    if (p.s > p.r) p.s = p.r;
    const float *rows = packed(c, x, &owned);
    if (!rows) return VIC_E_NOMEM;
    g->degree = p.r;
    vick_call call;
    vic__cuda_call_init(c, &call, c->opt.device, o->device_memory_budget, 0);
    double deg = 0;
    /* built, checked and searched on the device: no host copy of the graph */
    vick_gsearch *gs = NULL;
    s = vic__kernel_status(c, vick_grnnd_index(&call, rows, x->n, x->d, &p, 0, &gs, &deg), &call, "GRNND");
    g->gpu = gs;
    if (s == VIC_OK) {
      vic__cuda_copy_stages(&ix->report, &call);
      s = reserve(c, gs);
    }
    if (s == VIC_OK) {
      if (o->method != VIC_METHOD_AUTO) /* AUTO's reason stands */
        vic__report_reason(&ix->report, "requested by the caller: GRNND graph on the GPU (S %d, R %d, T1 %d, T2 %d, "
                                        "rho %.2f; mean degree %.1f)", p.s, p.r, p.t1, p.t2, (double)p.rho, deg);
    }
#endif
  } else {
    /* 0 = the default; the occlusion factors are stored in a byte (255 = no edge) */
    if (!(o->tsdg.alpha == 0.f || (o->tsdg.alpha >= 1.f && isfinite(o->tsdg.alpha))) || o->tsdg.lambda0 < 0 ||
        o->tsdg.lambda0 > 254)
      return vic__fail(c, VIC_E_ARGUMENT,
                       "TSDG: alpha = %g must be finite and >= 1 (0 = default 1.2) and lambda0 = %d in 0..254 "
                       "(0 = default 10)",
                       (double)o->tsdg.alpha, (int)o->tsdg.lambda0);
    const float alpha = o->tsdg.alpha > 0.f ? o->tsdg.alpha : 1.2f;
    const int32_t lambda0 = o->tsdg.lambda0 > 0 ? o->tsdg.lambda0 : 10;
    int32_t k = o->gnnd.k_build > 0 ? o->gnnd.k_build : TSDG_K_DEFAULT;
    if (k > 128) k = 128;
    if ((int64_t)k > x->n - 1) k = (int32_t)(x->n - 1);
    const int32_t degree = 2 * k < 8 ? 8 : (2 * k < 64 ? 2 * k : 64); /* kernels: 8..256 */
#ifdef VIC_WITH_CUDA
    if (gpu && (s = tsdg_on_device(c, ix, o, k, alpha, lambda0, degree, &owned)) != VIC_E_NOMEM) {
      free(owned);
      if (s != VIC_OK || (s = reserve(c, ix->flat.gpu)) != VIC_OK) return s;
      return flat_done(c, ix, gpu, t0);
    }
    if (gpu) { /* too large for the device in one piece: lists through the host (sharded GNND) */
      vic__log(c, VIC_LOG_INFO, "TSDG on the device alone ran out of memory (%s); building through the host", c->error);
      c->error[0] = '\0';
      free(owned);
      owned = NULL;
    }
#endif
    int32_t *knn = NULL;
    if ((s = knn_lists(c, ix, o, gpu, k, &knn, &ix->report)) != VIC_OK) return s;
    g->degree = degree;
    g->ids = vic__malloc(c, (size_t)x->n * (size_t)degree * sizeof(int32_t), "TSDG graph");
    g->occl = g->ids ? vic__malloc(c, (size_t)x->n * (size_t)degree, "TSDG occlusion factors") : NULL;
    if (!g->occl) { free(knn); return VIC_E_NOMEM; }
    double td = vic__now();
    if (gpu) {
#ifdef VIC_WITH_CUDA
      const float *rows = packed(c, x, &owned);
      if (!rows) { free(knn); return VIC_E_NOMEM; }
      vick_tsdg_params p = {alpha, lambda0, degree};
      vick_call call;
      vic__cuda_call_init(c, &call, c->opt.device, o->device_memory_budget, 0);
      s = vic__kernel_status(c, vick_tsdg_build(&call, rows, x->n, x->d, knn, k, &p, g->ids, g->occl, NULL), &call, "TSDG");
      if (s == VIC_OK) vic__cuda_copy_stages(&ix->report, &call);
#endif
    } else {
      s = vic__tsdg_cpu(c, x, knn, k, alpha, lambda0, degree, g->ids, g->occl);
      if (s == VIC_OK) vic__report_stage(&ix->report, "tsdg", vic__now() - td);
    }
    free(knn);
    if (s == VIC_OK && o->method != VIC_METHOD_AUTO)
      vic__report_reason(&ix->report, "requested by the caller: TSDG diversification (alpha %.2f, lambda0 %d) of %s "
                                      "%d-NN lists on the %s", (double)alpha, (int)lambda0, gpu ? "GNND" : "CPU",
                         (int)k, gpu ? "GPU" : "CPU");
  }
#ifdef VIC_WITH_CUDA
  if (s == VIC_OK && gpu && !g->gpu) {
    if (!owned && (ix->x.stride && ix->x.stride != ix->x.d)) {
      const float *rows = packed(c, x, &owned);
      if (!rows) s = VIC_E_NOMEM;
    }
    if (s == VIC_OK) s = attach(c, ix, owned ? owned : x->rows);
  }
#endif
  free(owned);
  if (s != VIC_OK) return s;
  return flat_done(c, ix, gpu, t0);
}

#ifdef VIC_WITH_CUDA
/* The search on the device: the queries staged and the results taken back
 * by the kernel layer (fused: through gsearch_io's hooks, which validate
 * the queries and check the results on the way). */
static vic_status gpu_search(vic_ctx *c, const vic_index *ix, const vic_data *q, const vic_search_options *o,
                             int32_t k, int64_t *ids, float *dist, vic_report *rep, int fused) {
  const vic_flat_graph *g = &ix->flat;
  const int tsdg = ix->kind == VIC_INDEX_TSDG;
  vick_gsearch_info info;
  vick_gsearch_info_get((const vick_gsearch *)g->gpu, &info);
  vick_gsearch_params p;
  double threshold;
  const int small = vic__gsearch_params(tsdg ? VIC_GS_TSDG : VIC_GS_GRNND, &info, q->n, k, o, &p, &threshold);
  vick_call call;
  vic__cuda_call_init(c, &call, c->opt.device, 0, 0);
  vic_status s;
  if (fused) {
    vic_gsearch_io io;
    vick_gsearch_hooks h;
    if ((s = vic__gsearch_io_begin(c, q, ix->x.metric, k, ids, dist, call.threads, &io, &h)) != VIC_OK) return s;
    const int rc = vick_gsearch_query_hooked(&call, (const vick_gsearch *)g->gpu, q->n, k, &p, &h);
    if ((s = vic__gsearch_io_end(c, &io, rc, &call, "graph search", "index search")) != VIC_OK) return s;
  } else {
    float *owned = NULL;
    const float *rows = packed(c, q, &owned);
    if (!rows) return VIC_E_NOMEM;
    s = vic__kernel_status(c, vick_gsearch_query(&call, (const vick_gsearch *)g->gpu, rows, q->n, k, &p, ids, dist),
                           &call, "graph search");
    free(owned);
    if (s != VIC_OK) return s;
    vic__true_dists(c, ix->x.metric, q->n * (int64_t)k, ids, dist);
  }
  vic__cuda_copy_stages(rep, &call);
  rep->backend = VIC_BACKEND_CUDA;
  char hl[32] = "no hop limit";
  if (p.hops) snprintf(hl, sizeof hl, "hop limit %d", (int)p.hops);
  if (small)
    vic__report_reason(rep, "%s graph, small-batch search on the GPU (%lld queries, threshold %.0f; t0 %d, %s), "
                            "occlusion limit %d", tsdg ? "TSDG" : "GRNND", (long long)q->n, threshold,
                       (int)p.searches, hl, (int)p.occlusion_limit);
  else
    vic__report_reason(rep, "%s graph, large-batch search on the GPU (%lld queries, threshold %.0f), occlusion "
                            "limit %d", tsdg ? "TSDG" : "GRNND", (long long)q->n, threshold, (int)p.occlusion_limit);
  return VIC_OK;
}

/* Whether a search for k neighbours runs on the device graph (its kernels
 * rank up to 128). */
static int on_device(const vic_ctx *c, const vic_index *ix, int32_t k) {
  return ix->flat.gpu && c->opt.backend != VIC_BACKEND_CPU && k <= 128;
}
#endif

int vic__flat_fused_io(const vic_ctx *c, const vic_index *ix, const vic_data *q, int32_t k) {
  (void)q;
#ifdef VIC_WITH_CUDA
  return on_device(c, ix, k) && ix->x.metric != VIC_COSINE;
#else
  (void)c;
  (void)ix;
  (void)k;
  return 0;
#endif
}

vic_status vic__flat_search_fused(vic_ctx *c, const vic_index *ix, const vic_data *q, const vic_search_options *o,
                                  int32_t k, int64_t *ids, float *dist, vic_report *rep) {
#ifdef VIC_WITH_CUDA
  if (vic__flat_fused_io(c, ix, q, k)) return gpu_search(c, ix, q, o, k, ids, dist, rep, 1);
#endif
  (void)o;
  (void)ids;
  (void)dist;
  (void)rep;
  return vic__fail(c, VIC_E_ARGUMENT, "internal: a fused search asked where vic__flat_fused_io says no");
}

vic_status vic__flat_search(vic_ctx *c, const vic_index *ix, const vic_data *q, const vic_search_options *o,
                            int32_t k, int64_t *ids, float *dist, vic_report *rep) {
  const vic_flat_graph *g = &ix->flat;
  const int tsdg = ix->kind == VIC_INDEX_TSDG; /* a graph built on the device keeps its factors there only */
#ifdef VIC_WITH_CUDA
  if (on_device(c, ix, k)) return gpu_search(c, ix, q, o, k, ids, dist, rep, 0);
#endif
  int32_t L = o->max_visits > 0 ? o->max_visits : 64;
  if (L < k) L = k;
  const int32_t limit = o->occlusion_limit > 0 ? o->occlusion_limit : tsdg ? VIC_TSDG_LIMIT_SMALL : 0;
  /* random entry rows: on graphs of separate clusters they are what reaches
   * a query's cluster, so the caller's count must be honoured */
  const int32_t entries = o->entry_points > 0 ? o->entry_points : 32;
  /* a graph built on the device has no host copy until one is needed */
  vic_flat_graph hg = *g;
  void *owned = NULL;
  vic_status s = vic__flat_edges(c, g, ix->x.n, tsdg, (const int32_t **)&hg.ids, (const uint8_t **)&hg.occl, &owned);
  if (s == VIC_OK) s = cpu_search(c, ix, &hg, q, k, L, limit, entries, ids, dist);
  free(owned);
  if (s == VIC_OK)
    vic__report_reason(rep, "%s graph, best-first search on the CPU (list %d, %d random entry points, occlusion limit %d)",
                       tsdg ? "TSDG" : "GRNND", (int)L, (int)entries, (int)limit);
  return s;
}

/* For-all kNN lists through a GRNND or TSDG index: every point searched
 * for k + 1 neighbours, itself dropped (or the last when the search missed
 * it).  x: prepared rows; ids/dist: n x k, true distances. */
vic_status vic__flat_knn(vic_ctx *c, const vic_data *x, const vic_build_options *o, vic_method m, int32_t k,
                         int64_t *ids, float *dist, vic_report *rep) {
  vic_index *ix = NULL;
  vic_status s = vic__index_new(c, x, m == VIC_METHOD_GRNND ? VIC_INDEX_GRNND : VIC_INDEX_TSDG, &ix);
  if (s != VIC_OK) return s;
  ix->report.method = m;
  double t0 = vic__now();
  int64_t *ti = NULL;
  float *td = NULL;
  if ((s = vic__flat_build(c, ix, o)) != VIC_OK) goto done;
  vic__report_stage(rep, m == VIC_METHOD_GRNND ? "grnnd graph" : "tsdg graph", vic__now() - t0);
  const int32_t kk = k + 1;
  ti = vic__malloc(c, (size_t)x->n * (size_t)kk * sizeof(int64_t), "search ids");
  td = ti ? vic__malloc(c, (size_t)x->n * (size_t)kk * sizeof(float), "search distances") : NULL;
  if (!td) { s = VIC_E_NOMEM; goto done; }
  vic_search_options so;
  vic_search_options_init(&so);
  so.k = kk;
  vic_report sr;
  memset(&sr, 0, sizeof sr);
  double ts = vic__now();
  if ((s = vic__flat_search(c, ix, &ix->x, &so, kk, ti, td, &sr)) != VIC_OK) goto done;
  vic__report_stage(rep, "search all points", vic__now() - ts);
  rep->seconds_transfer += ix->report.seconds_transfer + sr.seconds_transfer;
  rep->seconds_kernel += ix->report.seconds_kernel + sr.seconds_kernel;
  for (int64_t i = 0; i < x->n; ++i) {
    int32_t o2 = 0;
    for (int32_t j = 0; j < kk && o2 < k; ++j) {
      if (ti[i * kk + j] == i) continue;
      ids[i * k + o2] = ti[i * kk + j];
      dist[i * k + o2] = td[i * kk + j];
      ++o2;
    }
    for (; o2 < k; ++o2) {
      ids[i * k + o2] = -1;
      dist[i * k + o2] = INFINITY;
    }
  }
  vic__report_reason(rep, "%s; every point searched (%s)", ix->report.reason, sr.reason);
done:
  free(ti);
  free(td);
  /* the index's own parts: a flat graph over prepared rows */
  vic__flat_free(&ix->flat);
  free(ix->owned_rows);
  free(ix);
  return s;
}
