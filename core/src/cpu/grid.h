/* Exact k nearest neighbours for d <= 3 (L2) with a uniform cell grid.
 *
 * The points are copied into cell order (a counting sort), so a cell's
 * points are contiguous and neighbouring cells are near in memory.  A query
 * visits cells in expanding Chebyshev shells around its own cell and stops
 * when the nearest possible point of the next shell is farther than its
 * current k-th neighbour.  Periodic axes (box length > 0) use the minimum
 * image; open axes span the data's bounding box.  Data too clustered for
 * any affordable uniform grid (n-body cores in a sparse background) are
 * searched through a kd-tree over the same stored points instead.
 *
 * The grid owns a copy of the points and keeps no reference to the view it
 * was built from.  It is read-only after the build, so one grid may serve
 * concurrent queries (each with its own context). */
#ifndef VIC_GRID_H
#define VIC_GRID_H

#include "internal.h"

typedef struct vic_grid vic_grid;

/* Build the grid over x (d <= 3, metric L2, box optional).  Fails with
 * VIC_E_UNSUPPORTED for other views, VIC_E_NOMEM, or VIC_E_CANCELLED. */
vic_status vic__grid_build(vic_ctx *c, const vic_data *x, vic_grid **out);

/* k nearest neighbours in the grid's points of every row of q, or, with
 * q == NULL, of every point of the grid itself (self excluded).  ids/dist
 * hold rows * k entries, ascending by (distance, id) with true Euclidean
 * distances, padded with -1 / +inf when fewer than k points exist.
 * q must have the grid's d; its rows may lie outside the data's box. */
vic_status vic__grid_query(vic_ctx *c, const vic_grid *g, const vic_data *q, int32_t k, int64_t *ids,
                           float *dist);

void vic__grid_free(vic_grid *g);

/* The kNN graph of x by grid (build, query all points, free): the
 * VIC_METHOD_GRID case of vic_knn_build. */
vic_status vic__cpu_grid_knn(vic_ctx *c, const vic_data *x, int32_t k, int64_t *ids, float *dist);

/* Bytes held by the grid (points, ids, cell offsets or tree boxes). */
size_t vic__grid_bytes(const vic_grid *g);

#endif
