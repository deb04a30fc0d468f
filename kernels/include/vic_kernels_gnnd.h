/* C interface of GNND and GGM (Wang, Zhao, Zeng 2022: GPU NN-Descent and
 * GPU graph merge), part of vicinity_kernels.  Kernels own no policy: the
 * core picks parameters and words user-facing errors.
 *
 * Distances are squared Euclidean on the rows as given (the core hands
 * cosine data over as unit rows, where squared L2 = 2 (1 - cos)).
 * Graphs on the host are "flat": n lists of k entries sorted ascending by
 * (distance, id), ids -1 / distance +inf where a list has fewer entries. */
#ifndef VIC_KERNELS_GNND_H
#define VIC_KERNELS_GNND_H

#include "vic_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int32_t k_build;    /* K, list length during the build; a multiple of 32, 32..256 */
  int32_t samples;    /* p: NEW and OLD samples per list (reverse ones fill up to 2p); 1..32 */
  int32_t iterations; /* iteration cap */
  float converge;     /* stop when an iteration inserts fewer than converge * n * K neighbours */
  int64_t shard_rows; /* vick_gnnd_knn: > 0 forces shards of at most this many rows; 0 = from the budget */
  int32_t merge_iterations; /* GGM's iteration cap (its lists start good); 0 = iterations */
  int32_t half_rows;  /* vick_gnnd_knn in memory: nonzero keeps the rows in half precision during the
                         descent and re-ranks every row's K candidates by fp32 distances at the end
                         (a compact build: vick_gnnd_compact_bytes); never sharded */
} vick_gnnd_params;

typedef struct {
  int64_t n;
  int32_t k;
  int32_t *ids;  /* n*k, caller-owned */
  float *dist;   /* n*k, squared L2 */
} vick_gnnd_graph;

/* Device bytes an in-memory build (or a merge when merge != 0) of n rows
 * of dimension d needs; vick_gnnd_knn shards when this exceeds the budget. */
size_t vick_gnnd_bytes(int64_t n, int32_t d, const vick_gnnd_params *p, int merge);

/* Device bytes of vick_gnnd_knn's compact build (half_rows) of n rows into
 * k-entry lists: the larger of the descent (half rows and K lists) and the
 * re-ranking (fp32 rows, the K candidates, the k lists). */
size_t vick_gnnd_compact_bytes(int64_t n, int32_t d, int32_t k, const vick_gnnd_params *p);
/* GNND on rows (n x d, host) into g (g->k <= K lists, ids 0..n-1). */
int vick_gnnd_build(vick_call *call, const float *rows, int64_t n, int32_t d, const vick_gnnd_params *p,
                    vick_gnnd_graph *g);

/* GGM: rows holds S1 (n1 rows) then S2 (n2 rows).  g1 lists S1 with ids
 * 0..n1-1, g2 lists S2 with ids 0..n2-1 (local to S2); both have
 * g.k == p->k_build.  out (n1+n2 lists of out->k <= K) gets ids over the
 * union (S2 row r is n1 + r). */
int vick_gnnd_merge(vick_call *call, const float *rows, int64_t n1, int64_t n2, int32_t d,
                    const vick_gnnd_params *p, const vick_gnnd_graph *g1, const vick_gnnd_graph *g2,
                    vick_gnnd_graph *out);

/* vick_gnnd_merge with S1 and S2 in two separate host blocks (shards of a
 * larger set, which need no contiguous copy). */
int vick_gnnd_merge_blocks(vick_call *call, const float *rows1, int64_t n1, const float *rows2, int64_t n2,
                           int32_t d, const vick_gnnd_params *p, const vick_gnnd_graph *g1,
                           const vick_gnnd_graph *g2, vick_gnnd_graph *out);

/* Incremental growth: rows holds the n_old indexed rows then n_new new
 * ones; g_old (k == K) lists the old rows.  Builds the new rows' graph and
 * merges it in (GGM); out gets n_old + n_new lists. */
int vick_gnnd_add(vick_call *call, const float *rows, int64_t n_old, int64_t n_new, int32_t d,
                  const vick_gnnd_params *p, const vick_gnnd_graph *g_old, vick_gnnd_graph *out);

/* All-points k nearest neighbours (self excluded) into host ids/dist
 * (n*k, 64-bit ids, squared L2).  In memory when vick_gnnd_bytes fits the
 * call's memory budget, else out of GPU memory: shards in host memory,
 * every pair of shards merged once by GGM, transfers on a second stream. */
int vick_gnnd_knn(vick_call *call, const float *rows, int64_t n, int32_t d, int32_t k,
                  const vick_gnnd_params *p, int64_t *ids, float *dist);

#ifdef __cplusplus
}
#endif
#endif
