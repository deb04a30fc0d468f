/* The kNN lists TSDG diversifies (grnnd_tsdg_index.c): GNND on the GPU when one
 * is usable, else exact brute force for n <= brute_max_n and NN-Descent
 * above, under vic_knn_build's rules for these three methods: NN-Descent's
 * options checked and brute force where it would cost more, a failed GPU
 * run retried by NN-Descent on the CPU unless the context demands the GPU.
 * The methods are called directly, not through the method table: TSDG is
 * in the table, and reaching the table from here would make the table's
 * files call each other in a cycle. */
#include "backend_cuda.h"
#include "flat_index.h"
#include "nndescent.h"

#include <string.h>

vic_status vic__tsdg_input_lists(vic_ctx *c, const vic_data *x_in, const vic_build_options *o, int gpu, int32_t k,
                                 int64_t **ids_out, float **dist_out, double *seconds) {
  *ids_out = NULL;
  *dist_out = NULL;
  c->error[0] = '\0';
  c->warnings = 0;
  double t0 = vic__now();
  vic_status s = vic_data_validate(c, x_in);
  if (s != VIC_OK) return s;
  vic_report rep;
  vic__report_clear(&rep);
  vic_method m = o->method; /* GNND when gpu, else brute or nndescent */
  /* the backend as vic_knn_build chooses it: the GPU when usable */
  vic_backend be = VIC_BACKEND_CPU;
  if (c->opt.backend != VIC_BACKEND_CPU) {
    if ((s = vic__cuda_probe(c)) == VIC_OK) be = VIC_BACKEND_CUDA;
    else if (c->opt.backend == VIC_BACKEND_CUDA) return s;
    else c->error[0] = '\0';
  }
  if (m != VIC_METHOD_GNND) be = VIC_BACKEND_CPU; /* brute force on the CPU, as TSDG without a GPU asks */
  if (be == VIC_BACKEND_CPU && m == VIC_METHOD_GNND) {
    vic__log(c, VIC_LOG_WARNING, "method '%s' needs a GPU; using its CPU equivalent %s", vic_method_name(m), "NN-Descent");
    m = VIC_METHOD_NNDESCENT;
  }
  if (m == VIC_METHOD_NNDESCENT && (s = vic__nndescent_plan(c, x_in, o, k, &rep, &m)) != VIC_OK) return s;

  vic_data x;
  float *owned = NULL;
  if ((s = vic__prepare_rows(c, x_in, &x, &owned)) != VIC_OK) return s;
  const size_t entries = (size_t)x.n * (size_t)k;
  int64_t *ids = vic__malloc_lists(c, entries * sizeof(int64_t), "neighbour ids");
  float *dist = ids ? vic__malloc_lists(c, entries * sizeof(float), "neighbour distances") : NULL;
  if (!dist) {
    s = VIC_E_NOMEM;
  } else if (be == VIC_BACKEND_CUDA) {
    s = vic__cuda_gnnd_lists(c, &x, o, m, k, ids, dist, &rep);
    if (s == VIC_E_NOMEM || s == VIC_E_DEVICE || s == VIC_E_UNSUPPORTED) {
      if (c->opt.backend != VIC_BACKEND_CUDA) {
        vic__log(c, VIC_LOG_WARNING, "GPU failed (%s); falling back to the CPU", c->error);
        c->error[0] = '\0';
        s = vic__cpu_nndescent_knn(c, &x, o, k, ids, dist, NULL);
      }
    }
  } else if (m == VIC_METHOD_BRUTE) {
    s = vic__cpu_brute_knn(c, &x, NULL, k, ids, dist);
  } else {
    s = vic__cpu_nndescent_knn(c, &x, o, k, ids, dist, NULL);
  }
  if (s == VIC_OK) s = vic__check_distances(c, x.n, k, ids, dist, "kNN build");
  free(owned);
  if (s != VIC_OK) {
    free(ids);
    free(dist);
    return s;
  }
  *ids_out = ids;
  *dist_out = dist;
  *seconds = vic__now() - t0;
  return VIC_OK;
}
