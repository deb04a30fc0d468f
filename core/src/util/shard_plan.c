/* Shard sizes and the round-robin merge order (shard_plan.h). */
#include "shard_plan.h"

vic_shard_plan vic__shard_plan(int64_t n, int64_t max_rows) {
  vic_shard_plan p = {n, n, 1, 0};
  if (max_rows < 1) max_rows = 1;
  if (n <= max_rows) return p;
  int64_t s = (n + max_rows - 1) / max_rows;
  p.shards = (int32_t)s;
  p.m = (n + s - 1) / s;
  p.shards = (int32_t)((n + p.m - 1) / p.m); /* balanced m may need one shard fewer */
  p.rounds = p.shards % 2 == 0 ? p.shards - 1 : p.shards;
  return p;
}

/* Circle method over P = shards rounded up to even: position P-1 stays,
 * the others turn by one per round; pairs with the phantom shard (odd
 * counts) are skipped, that shard rests for the round. */
int32_t vic__shard_round(const vic_shard_plan *p, int32_t r, int32_t *a, int32_t *b) {
  const int32_t S = p->shards, P = S + (S & 1), R = P - 1;
  int32_t cnt = 0;
  if (S < 2 || r < 0 || r >= R) return 0;
  for (int32_t i = 0; i < P / 2; ++i) {
    int32_t x = i == 0 ? P - 1 : (r + i) % R;
    int32_t y = i == 0 ? r % R : (r - i + R) % R;
    if (x >= S || y >= S) continue;
    a[cnt] = x < y ? x : y;
    b[cnt] = x < y ? y : x;
    ++cnt;
  }
  return cnt;
}
