/* The two steps every graph-growing call is made of (Wang et al. 2022,
 * Sec. 5): the k-NN graph of one block of rows (GNND on the GPU, NN-Descent
 * on the CPU), and the merge of two blocks' graphs into the graph of their
 * union (GGM on the GPU; on the CPU NN-Descent over the union whose lists
 * are then merged with the given ones).  Used by vic_knn_add,
 * vic_knn_merge and the sharded build.
 *
 * Lists here are "working" lists: int32 ids, squared L2 on prepared rows
 * (unit rows for cosine), K entries per row sorted by (distance, id), -1 /
 * +inf padding. */
#ifndef VIC_GGM_ENGINE_H
#define VIC_GGM_ENGINE_H

#include "internal.h"

typedef struct {
  int32_t K;                /* list length during builds and merges: a multiple of 32 in 32..256 */
  int32_t samples, iterations, merge_iterations;
  float converge;
} vic_ggm_params;

/* One step on one device, safe on a worker thread: the context is only
 * read (its options and cancel flag), failures are returned with their
 * message here, for the calling thread to record. */
typedef struct {
  int device;
  int threaded;               /* nonzero: runs beside other steps, polls only the cancel flag */
  char message[512];
  double seconds_kernel, seconds_transfer;
  vic_report *stages;         /* non-NULL (one step alone): the kernel's stages are added to it */
  int threads;                /* host threads of the step's own parallel work; 0 = the context's */
  size_t budget;              /* device bytes the step's kernels may hold (add only; 0: 90 % of what is free) */
  size_t peak;                /* most device bytes one of the step's kernel calls held */
} vic_ggm_step;

/* The GNND parameters of a build: K = max(gnnd.k_build (0: 64), k) rounded
 * up to the 32-entry segments; merges run at most GGM_MERGE_ITERATIONS. */
vic_status vic__ggm_params(vic_ctx *c, const vic_build_options *o, int32_t k, vic_ggm_params *p);

/* GPU steps (cuda_ggm.c; cuda_none.c answers VIC_E_NODEVICE).  rows are
 * packed (stride d).  merge: ids1 over block 1 (0..n1-1), ids2 local to
 * block 2 (0..n2-1), both K wide; out gets k <= K entries per row with
 * ids over the union (block-2 row r is n1 + r). */
vic_status vic__ggm_gpu_build(vic_ctx *c, vic_ggm_step *st, const float *rows, int64_t n, int32_t d,
                              const vic_ggm_params *p, int32_t *ids, float *dist);
vic_status vic__ggm_gpu_merge(vic_ctx *c, vic_ggm_step *st, const float *rows1, int64_t n1, const float *rows2,
                              int64_t n2, int32_t d, const vic_ggm_params *p, const int32_t *ids1, const float *dist1,
                              const int32_t *ids2, const float *dist2, int32_t k, int32_t *out_ids, float *out_dist);
/* A merge workspace kept on one device across the pair merges of a sharded
 * build (shards of up to m rows, k-wide results): the same contract as
 * vic__ggm_gpu_merge, without the allocations and with a shard whose rows
 * are still on the device not copied again. */
typedef struct vic_ggm_pairs vic_ggm_pairs;
vic_status vic__ggm_gpu_pairs_open(vic_ctx *c, vic_ggm_step *st, int64_t m, int32_t d, const vic_ggm_params *p,
                                   int32_t k, vic_ggm_pairs **out);
vic_status vic__ggm_gpu_pairs_merge(vic_ctx *c, vic_ggm_step *st, vic_ggm_pairs *w, const vic_ggm_params *p,
                                    const float *rows1, int64_t n1, const float *rows2, int64_t n2, const int32_t *ids1, const float *dist1,
                                    const int32_t *ids2, const float *dist2, int32_t k, int32_t *out_ids,
                                    float *out_dist);
void vic__ggm_gpu_pairs_close(vic_ggm_pairs *w);
/* The add by graph search over the old rows (vic_kernels_add.h; k <= 32):
 * the old lists as given (ids, n_old x k), the result (n_old + n_new) x k
 * with working distances, -1 / +inf after a row's last entry. */
typedef struct {
  int32_t width;   /* old rows searched for each new row */
  int32_t degree;  /* search graph edges per old row (its list, then reverse edges) */
  int32_t list;    /* the search's list */
  float delta;     /* the search's probe threshold */
  int32_t reverse; /* new rows an old row keeps of those whose search found it */
  int32_t join;    /* list entries (found rows) whose finders each row also tries */
  int32_t refine;  /* list entries whose own lists an old row tries */
  int32_t pivots;  /* search entry pivots (0: the search's defaults) */
  int64_t chunk;   /* queries per search launch, bounding its pivot scratch (0: the kernels' default) */
} vic_add_plan;
/* The add's parameters for k-entry lists (knn_grow.c). */
vic_add_plan vic__add_plan(int32_t k);
vic_status vic__ggm_gpu_add(vic_ctx *c, vic_ggm_step *st, const float *rows_old, int64_t n_old, const float *rows_new,
                            int64_t n_new, int32_t d, const int64_t *old_ids, int32_t k, const vic_add_plan *p,
                            int64_t *out_ids, float *out_dist);
/* Device bytes of one pair workspace for shards of m rows with k-wide
 * results (0 without CUDA). */
size_t vic__ggm_gpu_pair_bytes(int64_t m, int32_t d, const vic_ggm_params *p, int32_t k);
/* Device bytes of an in-memory GNND build of n rows (0 without CUDA). */
size_t vic__ggm_gpu_build_bytes(int64_t n, int32_t d, const vic_ggm_params *p);
/* The same with the rows in half precision during the descent and the
 * lists re-ranked in fp32 into k entries (vick_gnnd_compact_bytes; 0
 * without CUDA). */
size_t vic__ggm_gpu_compact_bytes(int64_t n, int32_t d, int32_t k, const vic_ggm_params *p);

/* The context's devices (first, count), as every multi-GPU call resolves
 * them; free bytes of one device (0 when unknown or without CUDA). */
vic_status vic__ggm_gpu_devices(vic_ctx *c, int *first, int *count);
size_t vic__ggm_gpu_free_bytes(int device);

/* CPU steps (ggm_cpu.c), same contracts, on the calling thread. */
vic_status vic__ggm_cpu_build(vic_ctx *c, const vic_build_options *o, const float *rows, int64_t n, int32_t d,
                              const vic_ggm_params *p, int32_t *ids, float *dist);
vic_status vic__ggm_cpu_merge(vic_ctx *c, const vic_build_options *o, const float *rows1, int64_t n1,
                              const float *rows2, int64_t n2, int32_t d, const vic_ggm_params *p,
                              const int32_t *ids1, const float *dist1, const int32_t *ids2, const float *dist2,
                              int32_t k, int32_t *out_ids, float *out_dist);

/* List b (kb entries, sorted, global ids) merged into list a (ka entries,
 * sorted, global ids) in place: the best ka distinct ids of both, sorted
 * by (distance, id).  ka <= 256. */
void vic__ggm_merge_list(int32_t *a_ids, float *a_dist, int32_t ka, const int32_t *b_ids, const float *b_dist,
                         int32_t kb);

/* Working distance of a true one (inverse of vic__true_dist for L2 and
 * cosine). */
float vic__ggm_work_of_true(vic_metric m, float true_dist);

#endif
