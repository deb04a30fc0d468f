/* The records of the built-in methods (method_table.h), with the small
 * adapters from the record's signatures to each method's own entry
 * points.  GPU entries exist only in CUDA builds. */
#include "backend_cuda.h"
#include "grid.h"
#include "method_table.h"
#include "nndescent.h"

#ifdef VIC_WITH_CUDA
#define GPU(f) f
#else
#define GPU(f) NULL
#endif

/* ------------------------------------ CPU list entries of the methods */
static vic_status brute_lists(vic_ctx *c, const vic_data *x, const vic_build_options *o, vic_method m, int32_t k,
                              int64_t *ids, float *dist, vic_report *rep) {
  (void)o, (void)m, (void)rep;
  return vic__cpu_brute_knn(c, x, NULL, k, ids, dist);
}

static vic_status grid_lists(vic_ctx *c, const vic_data *x, const vic_build_options *o, vic_method m, int32_t k,
                             int64_t *ids, float *dist, vic_report *rep) {
  (void)o, (void)m, (void)rep;
  return vic__cpu_grid_knn(c, x, k, ids, dist);
}

static vic_status nndescent_lists(vic_ctx *c, const vic_data *x, const vic_build_options *o, vic_method m, int32_t k,
                                  int64_t *ids, float *dist, vic_report *rep) {
  (void)m, (void)rep;
  return vic__cpu_nndescent_knn(c, x, o, k, ids, dist, NULL);
}

/* ------------------------------------------------------------ records */
extern const vic_index_ops vic__index_ops_brute, vic__index_ops_grid, vic__index_ops_graph, vic__index_ops_ggnn,
    vic__index_ops_grnnd, vic__index_ops_tsdg;

const vic_method_ops vic__method_brute = {.flags = VIC_OPS_EXACT | VIC_OPS_INNER_PRODUCT, .cpu_lists = brute_lists,
                                          .gpu_lists = GPU(vic__cuda_brute_lists), .index = &vic__index_ops_brute};

const vic_method_ops vic__method_grid = {.flags = VIC_OPS_EXACT | VIC_OPS_LOW_D_L2, .cpu_lists = grid_lists,
                                         .gpu_lists_into = GPU(vic__cuda_grid_into), .index = &vic__index_ops_grid};

const vic_method_ops vic__method_nndescent = {.cpu_lists = nndescent_lists, .cpu_plan = vic__nndescent_plan,
                                              .index = &vic__index_ops_graph};

const vic_method_ops vic__method_ggnn = {.gpu_lists = GPU(vic__cuda_ggnn_lists), .cpu_stand_in = VIC_METHOD_NNDESCENT,
                                         .index = &vic__index_ops_ggnn, .index_stand_in = VIC_METHOD_NNDESCENT};

const vic_method_ops vic__method_gnnd = {.gpu_lists = GPU(vic__cuda_gnnd_lists), .cpu_stand_in = VIC_METHOD_NNDESCENT,
                                         .index_stand_in = VIC_METHOD_NNDESCENT};

/* GRNND and TSDG lists: a search graph built and every point searched
 * (grnnd_tsdg_index.c), which puts the graph on the GPU itself when one is
 * usable; a GPU failure there is final */
const vic_method_ops vic__method_grnnd = {.flags = VIC_OPS_GPU_NO_FALLBACK, .gpu_lists = vic__flat_knn,
                                          .cpu_stand_in = VIC_METHOD_NNDESCENT, .index = &vic__index_ops_grnnd,
                                          .index_stand_in = VIC_METHOD_NNDESCENT};

const vic_method_ops vic__method_tsdg = {.flags = VIC_OPS_GPU_NO_FALLBACK, .cpu_lists = vic__flat_knn,
                                         .gpu_lists = vic__flat_knn, .index = &vic__index_ops_tsdg};
