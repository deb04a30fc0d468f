/* vic_knn_build: validation, the choice of method and backend, and the
 * report.  Every method below it (its record in the method table) receives
 * validated, prepared rows and a clamped k, and fills preallocated
 * ids/dist. */
#include "backend_cuda.h"
#include "method_table.h"

#include <string.h>

/* The backend that will run: an explicit request is honoured or refused,
 * AUTO takes the GPU when one is usable. */
static vic_status choose_backend(vic_ctx *c, vic_backend *out) {
  vic_backend want = c->opt.backend;
  if (want == VIC_BACKEND_CPU) { *out = VIC_BACKEND_CPU; return VIC_OK; }
  vic_status s = vic__cuda_probe(c);
  if (s == VIC_OK) { *out = VIC_BACKEND_CUDA; return VIC_OK; }
  if (want == VIC_BACKEND_CUDA) return s; /* message set by the probe */
  c->error[0] = '\0';
  *out = VIC_BACKEND_CPU;
  return VIC_OK;
}

static vic_method choose_method(const vic_data *x, const vic_build_options *o, vic_backend be, vic_report *r) {
  vic_method m = o->method;
  if (m != VIC_METHOD_AUTO) {
    vic__report_reason(r, "requested by the caller");
    return m;
  }
  if (x->d <= 3 && x->metric == VIC_L2) {
    vic__report_reason(r, "d = %d <= 3 with the L2 metric: exact cell grid", (int)x->d);
    return VIC_METHOD_GRID;
  }
  if (x->n <= o->brute_max_n || x->metric == VIC_INNER_PRODUCT) {
    if (x->metric == VIC_INNER_PRODUCT)
      vic__report_reason(r, "inner product is not a metric: graph methods do not apply, exact brute force");
    else
      vic__report_reason(r, "n = %lld <= %lld: exact brute force is cheap", (long long)x->n, (long long)o->brute_max_n);
    return VIC_METHOD_BRUTE;
  }
  /* GPU, d > 3, n > brute_max_n: GNND, the GPU lists built fastest at
   * recall@10 0.99 with its defaults (GGNN's for-all lists and exact brute
   * force take longer at this size).  The recall estimate still runs
   * after it. */
  if (be == VIC_BACKEND_CUDA && vic__method_on_gpu(vic__method_ops(VIC_METHOD_GNND))) {
    vic__report_reason(r, "d = %d > 3 and n = %lld > %lld on the GPU: GNND, the GPU lists built fastest at recall@10 "
                          "0.99 (recall estimated)", (int)x->d, (long long)x->n, (long long)o->brute_max_n);
    return VIC_METHOD_GNND;
  }
  if (be == VIC_BACKEND_CUDA && vic__method_on_gpu(vic__method_ops(VIC_METHOD_BRUTE))) {
    vic__report_reason(r, "d = %d, n = %lld on the GPU: exact brute force", (int)x->d, (long long)x->n);
    return VIC_METHOD_BRUTE;
  }
  vic__report_reason(r, "d = %d > 3 and n = %lld > %lld: approximate NN-Descent", (int)x->d, (long long)x->n,
                     (long long)o->brute_max_n);
  return VIC_METHOD_NNDESCENT;
}

/* Method m's CPU lists (its record's), refused when it has none. */
static vic_status run_cpu(vic_ctx *c, const vic_data *x, const vic_build_options *o, vic_method m, int32_t k,
                          vic_knn *out, vic_report *rep) {
  const vic_method_ops *ops = vic__method_ops(m);
  if (!ops || !ops->cpu_lists)
    return vic__fail(c, VIC_E_UNSUPPORTED, "method '%s' has no CPU implementation", vic_method_name(m));
  return ops->cpu_lists(c, x, o, m, k, out->ids, out->dist, rep);
}

static vic_status check_options(vic_ctx *c, const vic_data *x, const vic_build_options *o) {
  if (!o) return vic__fail(c, VIC_E_ARGUMENT, "no build options");
  if (o->method != VIC_METHOD_AUTO && !vic__method_ops(o->method))
    return vic__fail(c, VIC_E_ARGUMENT, "unknown method %d", (int)o->method);
  if (o->k <= 0) return vic__fail(c, VIC_E_ARGUMENT, "k must be at least 1 (got %d)", (int)o->k);
  if (x->n < 2) return vic__fail(c, VIC_E_ARGUMENT, "a kNN graph needs at least 2 points (got %lld)", (long long)x->n);
  if (o->recall_sample < 0) return vic__fail(c, VIC_E_ARGUMENT, "recall_sample must be >= 0");
  const vic_method_ops *ops = vic__method_ops(o->method); /* NULL for AUTO */
  if (ops && (ops->flags & VIC_OPS_LOW_D_L2) && (x->d > 3 || x->metric != VIC_L2))
    return vic__fail(c, VIC_E_UNSUPPORTED, "the %s method needs d <= 3 and the L2 metric (d = %d, metric %s)",
                     vic_method_name(o->method),
                     (int)x->d, vic_metric_name(x->metric));
  if (x->metric == VIC_INNER_PRODUCT && ops && !(ops->flags & VIC_OPS_INNER_PRODUCT))
    return vic__fail(c, VIC_E_UNSUPPORTED, "the inner product is not a metric; only brute force supports it");
  return VIC_OK;
}

/* The caller's buffers of vic_knn_build_into: present, of a known id
 * type, large enough for n*k entries, and int32 ids only where every row
 * number fits. */
static vic_status check_into(vic_ctx *c, const vic_knn_out *into, int64_t n, int32_t k) {
  if (!into->ids || !into->dist) return vic__fail(c, VIC_E_ARGUMENT, "vic_knn_build_into: no ids or dist buffer");
  if (into->id_type != VIC_IDS_INT64 && into->id_type != VIC_IDS_INT32)
    return vic__fail(c, VIC_E_ARGUMENT, "vic_knn_build_into: unknown id type %d", (int)into->id_type);
  if (n > INT64_MAX / k)
    return vic__fail(c, VIC_E_ARGUMENT, "n = %lld times k = %d lists do not fit 64-bit offsets", (long long)n, (int)k);
  if (into->capacity < n * (int64_t)k)
    return vic__fail(c, VIC_E_ARGUMENT, "vic_knn_build_into: the buffers hold %lld entries; n = %lld times k = %d needs %lld",
                     (long long)into->capacity, (long long)n, (int)k, (long long)(n * (int64_t)k));
  if (into->id_type == VIC_IDS_INT32 && n > ((int64_t)1 << 31))
    return vic__fail(c, VIC_E_ARGUMENT, "int32 ids cannot hold the row numbers of n = %lld points (at most 2^31)",
                     (long long)n);
  return VIC_OK;
}

/* The body of vic_knn_build (own != NULL: the library allocates the lists)
 * and vic_knn_build_into (into != NULL: the caller's buffers). */
static vic_status build(vic_ctx *c, const vic_data *x_in, const vic_build_options *o_in, vic_knn_out *into,
                        vic_knn *own) {
  c->error[0] = '\0';
  c->warnings = 0;
  double t0 = vic__now();
  vic_status s = vic_data_validate(c, x_in);
  if (s != VIC_OK) return s;
  if (!o_in) return vic__fail(c, VIC_E_ARGUMENT, "no build options");
  vic_build_options o_full;
  vic_build_options_init(&o_full);
  if ((s = VIC__OPTIONS_IN(c, o_in, &o_full, "vic_build_options")) != VIC_OK) return s;
  const vic_build_options *o = &o_full;
#ifdef VIC_ABI_TEST_EXTRA_FIELD
  vic__log(c, VIC_LOG_INFO, "abi_test_extra = %d", (int)o->abi_test_extra);
#endif
  if ((s = check_options(c, x_in, o)) != VIC_OK) return s;

  vic_report rep;
  vic__report_clear(&rep);
  rep.k_requested = o->k;
  int32_t k = o->k;
  if ((int64_t)k >= x_in->n) {
    k = (int32_t)(x_in->n - 1);
    vic__log(c, VIC_LOG_WARNING, "k = %d >= n = %lld: clamped to k = %d (every other point)", (int)o->k,
             (long long)x_in->n, (int)k);
  }
  rep.k = k;
  if (into && (s = check_into(c, into, x_in->n, k)) != VIC_OK) return s;
  if (!into && x_in->n > INT64_MAX / 8 / k)
    return vic__fail(c, VIC_E_ARGUMENT, "n = %lld times k = %d lists do not fit 64-bit offsets", (long long)x_in->n,
                     (int)k);

  vic_backend be;
  if ((s = choose_backend(c, &be)) != VIC_OK) return s;
  vic_method m = choose_method(x_in, o, be, &rep);
  const vic_method_ops *ops = vic__method_ops(m);
  if (be == VIC_BACKEND_CUDA && !vic__method_on_gpu(ops)) {
    if (c->opt.backend == VIC_BACKEND_CUDA)
      return vic__fail(c, VIC_E_UNSUPPORTED, "method '%s' has no GPU implementation", vic_method_name(m));
    be = VIC_BACKEND_CPU;
  }
  if (be == VIC_BACKEND_CPU && !ops->cpu_lists && ops->cpu_stand_in != VIC_METHOD_AUTO) {
    const vic_method in = ops->cpu_stand_in;
    if (o->method != VIC_METHOD_AUTO && c->opt.backend == VIC_BACKEND_CPU)
      return vic__fail(c, VIC_E_UNSUPPORTED, "method '%s' runs on the GPU only; choose %s for the CPU",
                       vic_method_name(m), vic_method_name(in));
    vic__log(c, VIC_LOG_WARNING, "method '%s' needs a GPU; using its CPU equivalent %s", vic_method_name(m),
             vic__method_title(in));
    vic__report_reason(&rep, "'%s' needs a GPU, none usable: CPU %s instead", vic_method_name(m), vic__method_title(in));
    m = in;
    ops = vic__method_ops(m);
  }
  if (be == VIC_BACKEND_CPU && ops->cpu_plan) { /* may hand the work to another method */
    if ((s = ops->cpu_plan(c, x_in, o, k, &rep, &m)) != VIC_OK) return s;
    ops = vic__method_ops(m);
  }
  rep.method = m;
  rep.backend = be;

  vic_data x;
  float *owned = NULL;
  int64_t *ids64 = NULL; /* int64 lists before narrowing to the caller's int32 */
  if ((s = vic__prepare_rows(c, x_in, &x, &owned)) != VIC_OK) return s;
  const size_t entries = (size_t)x.n * (size_t)k;
  vic__lists dst = {8, NULL, NULL};
  if (own) {
    own->ids = vic__malloc_lists(c, entries * sizeof(int64_t), "neighbour ids");
    own->dist = own->ids ? vic__malloc_lists(c, entries * sizeof(float), "neighbour distances") : NULL;
    if (!own->ids || !own->dist) { s = VIC_E_NOMEM; goto fail; }
    dst = (vic__lists){8, own->ids, own->dist};
  } else {
    dst = (vic__lists){into->id_type == VIC_IDS_INT32 ? 4 : 8, into->ids, into->dist};
  }

  double tm = vic__now();
  int placed = 0; /* the lists are in dst already (streamed) */
  if (be == VIC_BACKEND_CUDA && ops->gpu_lists_into) {
    s = ops->gpu_lists_into(c, &x, o, k, &dst, &rep);
    placed = s == VIC_OK;
    if (s == VIC_E_NOMEM || s == VIC_E_DEVICE || s == VIC_E_UNSUPPORTED) {
      if (c->opt.backend == VIC_BACKEND_CUDA) goto fail;
      vic__log(c, VIC_LOG_WARNING, "GPU failed (%s); falling back to the CPU", c->error);
      c->error[0] = '\0';
      be = rep.backend = VIC_BACKEND_CPU;
      rep.seconds_kernel = rep.seconds_transfer = 0;
      s = VIC_OK;
    }
    if (s != VIC_OK) goto fail;
  }
  vic_knn view;
  vic__knn_clear(&view);
  view.n = x.n;
  view.k = k;
  view.dist = dst.dist;
  if (!placed) {
    ids64 = dst.id_bytes == 8 ? dst.ids : vic__malloc_lists(c, entries * sizeof(int64_t), "int64 neighbour ids");
    if (!ids64) { s = VIC_E_NOMEM; goto fail; }
    view.ids = ids64;
    if (be == VIC_BACKEND_CUDA) {
      s = ops->gpu_lists(c, &x, o, m, k, view.ids, view.dist, &rep);
      /* UNSUPPORTED: a limit of the GPU kernels (k too large, n too large) */
      if (!(ops->flags & VIC_OPS_GPU_NO_FALLBACK) && (s == VIC_E_NOMEM || s == VIC_E_DEVICE || s == VIC_E_UNSUPPORTED)) {
        if (c->opt.backend == VIC_BACKEND_CUDA) goto fail;
        vic__log(c, VIC_LOG_WARNING, "GPU failed (%s); falling back to the CPU", c->error);
        c->error[0] = '\0';
        be = rep.backend = VIC_BACKEND_CPU;
        if (!ops->cpu_lists && ops->cpu_stand_in != VIC_METHOD_AUTO) m = rep.method = ops->cpu_stand_in;
        s = run_cpu(c, &x, o, m, k, &view, &rep);
      }
    } else {
      s = run_cpu(c, &x, o, m, k, &view, &rep);
    }
    if (s == VIC_OK) s = vic__check_distances(c, view.n, k, view.ids, view.dist, "kNN build");
    if (s != VIC_OK) goto fail;
  }
  vic__report_stage(&rep, vic_method_name(m), vic__now() - tm);

  if (vic__method_ops(m)->flags & VIC_OPS_EXACT) {
    rep.recall_estimate = 1.0;
  } else if (o->recall_sample > 0) {
    double tr = vic__now();
    view.report = rep;
    if ((s = vic__knn_recall(c, &x, &view, o->recall_sample, &rep.recall_estimate)) != VIC_OK) goto fail;
    rep.recall_sample = o->recall_sample < x.n ? o->recall_sample : x.n;
    vic__report_stage(&rep, "recall", vic__now() - tr);
  } else {
    rep.recall_estimate = -1.0;
  }
  if (ids64 && dst.id_bytes == 4) {
    double tn = vic__now();
    vic__ids_narrow(vic__threads(c), ids64, dst.ids, (int64_t)entries);
    free(ids64);
    ids64 = NULL;
    vic__report_stage(&rep, "narrow ids", vic__now() - tn);
  }
  vic__lists_dnn1(&dst, x.n, k, vic__threads(c), &rep);
  free(owned);
  rep.seconds_total = vic__now() - t0;
  rep.warnings = c->warnings;
  if (own) {
    own->n = x.n;
    own->k = k;
    own->report = rep;
  } else {
    into->n = x.n;
    into->k = k;
    into->report = rep;
  }
  return VIC_OK;

fail:
  if (ids64 && (void *)ids64 != dst.ids) free(ids64);
  free(owned);
  if (own) vic_knn_free(own);
  return s;
}


vic_status vic_knn_build(vic_ctx *c, const vic_data *x, const vic_build_options *o, vic_knn *out) {
  vic__begin_call(c);
  return vic__knn_build(c, x, o, out);
}

vic_status vic__knn_build(vic_ctx *c, const vic_data *x, const vic_build_options *o, vic_knn *out) {
  if (!c || !out) return VIC_E_ARGUMENT;
  vic__knn_clear(out);
  return build(c, x, o, NULL, out);
}

/* The caller's struct is read and written only within its struct_size:
 * the call works on a full copy (this library's defaults beyond the
 * caller's bytes) and hands back the bytes the caller has.  n, k and the
 * report are in every version of the struct, so a refusal zeroes them
 * even when struct_size is wrong. */
vic_status vic_knn_build_into(vic_ctx *c, const vic_data *x, const vic_build_options *o, vic_knn_out *out) {
  if (!c || !out) return VIC_E_ARGUMENT;
  vic__begin_call(c);
  c->error[0] = '\0';
  vic_knn_out full;
  vic_knn_out_init(&full);
  vic_status s = VIC_OK;
  if (out->struct_size < offsetof(vic_knn_out, report) + sizeof(vic_report))
    s = vic__fail(c, VIC_E_ARGUMENT,
                  "vic_knn_out: struct_size %zu is not a size of this struct (set it with vic_knn_out_init)",
                  out->struct_size);
  if (s == VIC_OK) s = VIC__OPTIONS_IN(c, out, &full, "vic_knn_out");
  if (s == VIC_OK) {
    vic__report_clear(&full.report);
    s = build(c, x, o, &full, NULL);
  }
  if (s != VIC_OK) {
    out->n = 0;
    out->k = 0;
    vic__report_clear(&out->report);
    return s;
  }
  const size_t size = out->struct_size < sizeof full ? out->struct_size : sizeof full;
  memcpy((unsigned char *)out + sizeof(size_t), (const unsigned char *)&full + sizeof(size_t), size - sizeof(size_t));
  return VIC_OK;
}

void vic__report_dnn1(const vic_knn *nn, vic_report *r) {
  double sum = 0, mx = 0;
  int64_t cnt = 0;
  for (int64_t i = 0; i < nn->n; ++i) {
    float d = nn->dist[i * nn->k];
    if (nn->ids[i * nn->k] < 0) continue;
    sum += d;
    if (d > mx) mx = d;
    cnt++;
  }
  r->dnn1_mean = cnt ? sum / (double)cnt : 0;
  r->dnn1_max = mx;
}

vic_status vic_knn_recall(vic_ctx *c, const vic_data *x, const vic_knn *approx, int32_t sample, double *recall) {
  vic__begin_call(c);
  return vic__knn_recall(c, x, approx, sample, recall);
}

vic_status vic__knn_recall(vic_ctx *c, const vic_data *x, const vic_knn *approx, int32_t sample, double *recall) {
  if (!c || !x || !approx || !recall || sample <= 0 || approx->n != x->n || approx->k <= 0)
    return c ? vic__fail(c, VIC_E_ARGUMENT, "recall needs lists of the same data and a positive sample size")
             : VIC_E_ARGUMENT;
  int64_t m = sample < x->n ? sample : x->n;
  int32_t k = approx->k;
  int64_t *rows = vic__malloc(c, (size_t)m * sizeof *rows, "recall sample");
  int64_t *ids = rows ? vic__malloc(c, (size_t)m * (size_t)k * sizeof *ids, "recall ids") : NULL;
  float *dist = ids ? vic__malloc(c, (size_t)m * (size_t)k * sizeof *dist, "recall distances") : NULL;
  vic_status s = VIC_E_NOMEM;
  if (!dist) goto done;
  /* A partial Fisher-Yates over implicit indices would need n memory; for a
   * sample much smaller than n, rejection of repeats is cheaper. */
  vic_rng g = vic__rng(c->opt.seed, 0x7eca11);
  if (m == x->n) {
    for (int64_t i = 0; i < m; ++i) rows[i] = i;
  } else {
    for (int64_t i = 0; i < m; ++i) {
      int64_t r;
      int dup;
      do {
        r = (int64_t)vic__rng_below(&g, (uint64_t)x->n);
        dup = 0;
        for (int64_t t = 0; t < i && !dup; ++t) dup = rows[t] == r;
      } while (dup);
      rows[i] = r;
    }
  }
  if ((s = vic__cpu_brute_knn_rows(c, x, rows, m, k, ids, dist)) != VIC_OK) goto done;
  /* an overflowed reference (or approximate list) would compare infinities
   * and give a meaningless fraction: refuse it with the row */
  for (int64_t i = 0; i < m; ++i)
    for (int32_t t = 0; t < k; ++t) {
      const float rd = dist[i * k + t], ad = approx->dist[rows[i] * k + t];
      if ((ids[i * k + t] >= 0 && !isfinite(rd)) || (approx->ids[rows[i] * k + t] >= 0 && !isfinite(ad))) {
        s = vic__fail(c, VIC_E_NONFINITE,
                      "recall: row %lld has a non-finite %s distance (%g) to neighbour %d; no estimate from "
                      "overflowed distances (rescale the data)",
                      (long long)rows[i], isfinite(rd) ? "approximate" : "exact", (double)(isfinite(rd) ? ad : rd),
                      (int)t);
        goto done;
      }
    }
  /* A neighbour counts as found when the approximate list holds it, or holds
   * another point at the same distance (ties are interchangeable). */
  int64_t hit = 0, total = 0;
  for (int64_t i = 0; i < m; ++i) {
    int64_t qhit = 0, qtotal = 0;
    const int64_t *a = approx->ids + rows[i] * k;
    const float *ad = approx->dist + rows[i] * k;
    float kth = dist[i * k + k - 1];
    for (int32_t t = 0; t < k; ++t) {
      if (ids[i * k + t] < 0) continue;
      qtotal++;
      int found = 0;
      for (int32_t u = 0; u < k && !found; ++u) found = a[u] == ids[i * k + t];
      qhit += found;
    }
    /* ties at the k-th distance: any approximate member at <= kth distance is correct */
    int32_t extra = 0;
    for (int32_t u = 0; u < k; ++u) {
      if (a[u] < 0 || ad[u] > kth * (1.f + 1e-6f)) continue;
      int in = 0;
      for (int32_t t = 0; t < k && !in; ++t) in = ids[i * k + t] == a[u];
      if (!in) extra++;
    }
    qhit += extra;
    hit += qhit < qtotal ? qhit : qtotal;
    total += qtotal;
  }
  *recall = total ? (double)hit / (double)total : 1.0;
  s = VIC_OK;
done:
  free(rows);
  free(ids);
  free(dist);
  return s;
}
