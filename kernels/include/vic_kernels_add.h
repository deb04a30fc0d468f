/* C interface of the incremental add by graph search, part of
 * vicinity_kernels: rows added to a k-NN graph without rebuilding it or
 * merging a second graph into it.  Kernels own no policy: the core picks
 * the parameters and words user-facing errors.
 *
 * The old rows' lists plus their reverse edges make a flat search graph
 * (graph_search_*.cu); each new row's nearest old rows are found by the
 * large-batch search over it.  An old row is then offered the new rows
 * that found it, and the new rows that found its neighbours (one local
 * join through the reverse direction of the search); a new row is offered
 * the rows it found and the new rows that found its nearest found rows.
 * Every distance is computed here from the rows, so the old lists'
 * distances are not needed.  Distances are squared Euclidean on the rows
 * as given (the core hands cosine data over as unit rows). */
#ifndef VIC_KERNELS_ADD_H
#define VIC_KERNELS_ADD_H

#include "vic_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int32_t width;   /* W: old rows searched for each new row, k..128 */
  int32_t degree;  /* search graph edges per old row: its list, then reverse edges up to this, k+1..128 */
  int32_t list;    /* the search's sorted list, width..256 */
  float delta;     /* the search's probe threshold (vick_gsearch_params.delta), >= 0 */
  int32_t reverse; /* new rows an old row keeps of those whose search found it, 1..32 */
  int32_t join;    /* an old row also tries the new rows that found its first `join` list entries, a new row
                      those that found its first `join` found rows; 0..width */
  int32_t refine;  /* an old row also tries the lists of its first `refine` entries (one local-join step among
                      the old rows), 0..k */
  int32_t pivots;  /* search entry pivots drawn over the old rows and compared with each new row (0: the
                      search's defaults), 0..8192 */
  int64_t chunk;   /* queries per search launch (bounds the pivot scratch and the search's 64-bit results,
                      held for one chunk; the found ids are kept in 32 bits); 0 = 262144 */
} vick_add_params;

/* k-NN lists of rows_old (n_old x d) then rows_new (n_new x d) into
 * out_ids / out_dist (host, (n_old + n_new) x k, new row r is n_old + r,
 * ascending by (distance, id), no repeats, -1 / +inf after the last entry
 * a row got).  old_ids: host n_old x k lists of the old rows (ids in
 * 0..n_old-1 or -1 after the last, never the row itself), k <= 32.  The
 * rows are uploaded once; one device holds rows, lists and search graph. */
int vick_knn_add_search(vick_call *call, const float *rows_old, int64_t n_old, const float *rows_new, int64_t n_new,
                        int32_t d, const int64_t *old_ids, int32_t k, const vick_add_params *p, int64_t *out_ids,
                        float *out_dist);

#ifdef __cplusplus
}
#endif
#endif
