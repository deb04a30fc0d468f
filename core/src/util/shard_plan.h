/* The sharded graph build's plan: how many shards of how many rows, and
 * the order of the pair merges.  Every pair of shards is merged exactly
 * once, in rounds of disjoint pairs (the circle method of round-robin
 * tournaments), so the pairs of one round run on several devices at once
 * without two of them touching the same shard's lists, and each round's
 * pairs are dealt to the devices in turn (balanced to one pair). */
#ifndef VIC_SHARD_PLAN_H
#define VIC_SHARD_PLAN_H

#include <stdint.h>

typedef struct {
  int64_t n, m;    /* rows; rows per shard (the last may hold fewer) */
  int32_t shards;  /* ceil(n / m) */
  int32_t rounds;  /* shards - 1 when even, shards when odd (1 shard: 0) */
} vic_shard_plan;

/* Shards of at most max_rows rows (>= 1), balanced: m = ceil(n / shards). */
vic_shard_plan vic__shard_plan(int64_t n, int64_t max_rows);
/* First row and row count of shard s. */
static inline int64_t vic__shard_first(const vic_shard_plan *p, int32_t s) { return (int64_t)s * p->m; }
static inline int64_t vic__shard_rows(const vic_shard_plan *p, int32_t s) {
  int64_t a = (int64_t)s * p->m;
  return a + p->m <= p->n ? p->m : p->n - a;
}
/* The pairs of round r (0 <= r < rounds): a[i] < b[i], disjoint; returns
 * their count (at most shards / 2). */
int32_t vic__shard_round(const vic_shard_plan *p, int32_t r, int32_t *a, int32_t *b);

#endif
