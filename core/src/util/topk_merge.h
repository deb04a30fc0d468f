/* k-way merge of ascending neighbour lists: the answers of several shards
 * (or devices) for one row become one list ascending by (distance, id),
 * the order every method of the library returns. */
#ifndef VIC_TOPK_MERGE_H
#define VIC_TOPK_MERGE_H

#include <stdint.h>

/* The most lists one merge takes (a sharded index refuses more shards). */
#define VIC_MERGE_MAX_LISTS 256

/* Merge `lists` (<= VIC_MERGE_MAX_LISTS) rows, list t of len[t] entries at ids[t] / dist[t], each
 * ascending by (distance, id) with -1 ids (+inf) at the end, into the k
 * best of all: ids -1 are skipped, an id met again (equal distance) is
 * kept once, and out is padded with -1 / +inf when fewer than k exist. */
void vic__topk_merge_row(int lists, const int64_t *const *ids, const float *const *dist, const int32_t *len, int32_t k,
                         int64_t *out_ids, float *out_dist);

#endif
