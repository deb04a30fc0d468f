/* The shard plan of GNND joined by cross searches (cuda_gnnd_multi.c):
 * how many device bytes one cross search of two shards holds, and the
 * fewest shards whose cross search fits a budget.  Host arithmetic only,
 * so that the CPU tests check it. */
#ifndef VIC_CROSS_PLAN_H
#define VIC_CROSS_PLAN_H

#include "ggm_engine.h"

/* The one-device plan's search parameters for k-entry lists: the add's
 * (vic__add_plan) with the width narrowed to k rounded up to 16.  The
 * add's width is sized so that an old row is found by the new rows whose
 * lists it would enter, its only way to get them; here every ordered pair
 * of shards is searched, so each row looks for its own k nearest rows of
 * every other shard itself.  The search graph is as wide as the search
 * (the add's degree where k fills the width: the graph needs an edge past
 * the list), the search list twice the width, the joins at most the
 * width. */
vic_add_plan vic__cross_add_plan(int32_t k);

/* Device bytes of one cross search of na old and nb new rows of d floats
 * (the add's buffers in knn_add.cu's layout: the found rows' 32-bit ids,
 * the search's 64-bit ids and distances of one chunk of new rows; and the
 * search's scratch): with p->chunk set, the pivot candidates of that many queries
 * at the most slices (32 x 16 entries of 8 bytes a query), the component
 * labels and members, the most pivots' rows and 4 MiB for the search's
 * workspace; else those at a flat 512 MiB. */
size_t vic__cross_bytes(int64_t na, int64_t nb, int32_t d, int32_t k, const vic_add_plan *p);

/* The fewest shards S, a multiple of count and at least want, whose cross
 * search of two shards of ceil(n / S) rows fits `fit` bytes (0: no limit)
 * while a shard keeps more than twice the search width; 0 when none up to
 * 4096 does. */
int vic__cross_shards(int64_t n, int32_t d, int32_t k, const vic_add_plan *p, int count, int64_t want, size_t fit);

#endif
