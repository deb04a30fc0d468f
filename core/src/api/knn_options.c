/* The defaults of vic_build_options and vic_knn_out, and vic_knn_free:
 * what every kNN entry point (knn_build.c, knn_grow.c, knn_sharded.c)
 * uses, in a unit that calls none of them. */
#include "internal.h"

#include <string.h>

static void defaults(vic_build_options *o) {
  memset(o, 0, sizeof *o);
  o->method = VIC_METHOD_AUTO;
  o->k = 16;
  o->recall_sample = 1000;
  o->brute_max_n = 20000;
  o->nndescent.k_build = 0; /* max(k, 20) */
  o->nndescent.rho = 0.5f;
  o->nndescent.delta = 0.001f;
  o->nndescent.max_iterations = 20;
  o->ggnn.k_build = 24;
  o->ggnn.segment = 32;
  o->ggnn.layers = 4;
  o->ggnn.refinements = 2;
  o->ggnn.tau_build = 0.5f;
  /* K 64, p 24, 6 iterations: the quickest point of the GNND sweep whose
   * lists reach recall@10 0.99 on manifold 1M x 128 (K 32 with p 16 stays
   * below it) */
  o->gnnd.k_build = 0; /* max(k, 64) */
  o->gnnd.samples = 24;
  o->gnnd.iterations = 6;
  o->gnnd.converge = 0.001f;
  /* RNN-Descent's defaults (S initial neighbours fit the pools of capacity R),
   * GRNND's reverse-edge ratio; vick_grnnd_params_init has the same */
  o->grnnd.s = 20;
  o->grnnd.r = 96;
  o->grnnd.t1 = 3;
  o->grnnd.t2 = 4;
  o->grnnd.rho = 0.6f;
  o->tsdg.alpha = 1.2f;
  o->tsdg.lambda0 = 10;
#ifdef VIC_ABI_TEST_EXTRA_FIELD
  o->abi_test_extra = 7;
#endif
}

void vic_build_options_init_sized(vic_build_options *o, size_t struct_size) {
  vic_build_options d;
  defaults(&d);
  vic__init_sized(o, struct_size, &d, sizeof d);
}

void vic_knn_out_init_sized(vic_knn_out *o, size_t struct_size) {
  vic_knn_out d;
  memset(&d, 0, sizeof d);
  d.id_type = VIC_IDS_INT64;
  vic__init_sized(o, struct_size, &d, sizeof d);
}

void vic_knn_free(vic_knn *r) {
  if (!r) return;
  free(r->ids);
  free(r->dist);
  memset(r, 0, sizeof *r);
}
