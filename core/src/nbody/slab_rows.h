/* The list steps of the device peaks (slab_peaks.cu) for a few rows whose
 * lists the host holds: the rows the slabs answered outside their first
 * region, whose regions the later passes do not make again
 * (density_slabs.c).  Plain host code, tested on the CPU
 * (testing/core/test_slab_rows.c); results equal the device's. */
#ifndef VIC_SLAB_ROWS_H
#define VIC_SLAB_ROWS_H

#include "internal.h"

/* Other basins a row remembers while listing its boundary edges: as the
 * device's EDGE_SEEN (peaks.cu, slab_peaks.cu), so both keep the same
 * edges. */
#define VIC_SLAB_EDGE_SEEN 16

/* Rows row[0, m) of a set of n points, lists ids / dist (m x k, true
 * distances), rho by id: parent (nearest denser list neighbour, -2 for
 * none), delta, up (densest denser neighbour, the row itself for none)
 * and is_max, written by id. */
void vic__rows_links(const int64_t *row, int64_t m, int32_t k, const int32_t *ids, const float *dist, int64_t n,
                     const float *rho, int32_t *parent, float *delta, int32_t *up, int32_t *is_max);

/* Their boundary edges with lab (basin's maximum number by id) and rank
 * (density rank by id): pairs (lower << 32 | higher) and positions
 * (rank * k + list place), the first of each row to each other basin,
 * appended at *pair / *pos (grown with realloc; *count, *cap).  -1 when
 * out of memory. */
int vic__rows_edges(const int64_t *row, int64_t m, int32_t k, const int32_t *ids, int64_t n, const float *rho,
                    const int32_t *lab, const int32_t *rank, uint64_t **pair, uint64_t **pos, int64_t *count,
                    int64_t *cap);

/* The per-point peak results of a slab run from the links the host gave
 * the device (parent, delta: n each, by id) and the densities rho: the
 * device changes the links only at the m maxima (max_point), whose
 * final parent, delta and saliency it reports; every other point's
 * saliency is rho * delta, one IEEE product as the device's __fmul_rn.
 * Written into out_parent (int64), out_delta, out_saliency by `threads`
 * host threads, so that none of these n-sized arrays crosses back. */
void vic__peaks_from_links(int64_t n, const int32_t *parent, const float *delta, const float *rho, int64_t m,
                           const int64_t *max_point, const int64_t *max_parent, const float *max_delta,
                           const float *max_saliency, int threads, int64_t *out_parent, float *out_delta,
                           float *out_saliency);

#endif
