/* The sharded build's plan (shard_plan.h): balanced shard sizes, and a
 * round-robin schedule in which every pair of shards is merged exactly
 * once and the pairs of a round are disjoint.  Runs in CI. */
#include "shard_plan.h"
#include "test_util.h"

#include <string.h>

static void check_schedule(int64_t n, int64_t max_rows) {
  vic_shard_plan p = vic__shard_plan(n, max_rows);
  VT_CHECK(p.m <= max_rows && p.m >= 1, "n %lld max %lld: m %lld", (long long)n, (long long)max_rows, (long long)p.m);
  VT_CHECK((int64_t)(p.shards - 1) * p.m < n && (int64_t)p.shards * p.m >= n, "shards %d of %lld for %lld", p.shards,
           (long long)p.m, (long long)n);
  int64_t rows = 0;
  for (int32_t s = 0; s < p.shards; ++s) {
    VT_CHECK(vic__shard_rows(&p, s) >= 1, "shard %d empty", s);
    VT_CHECK(vic__shard_first(&p, s) == rows, "shard %d starts at %lld", s, (long long)vic__shard_first(&p, s));
    rows += vic__shard_rows(&p, s);
  }
  VT_CHECK(rows == n, "rows %lld of %lld", (long long)rows, (long long)n);
  const int32_t S = p.shards;
  VT_CHECK(p.rounds == (S < 2 ? 0 : S % 2 ? S : S - 1), "rounds %d for %d shards", p.rounds, S);
  unsigned char *seen = calloc((size_t)S * S, 1);
  int32_t a[512], b[512];
  int64_t pairs = 0;
  for (int32_t r = 0; r < p.rounds; ++r) {
    int32_t np = vic__shard_round(&p, r, a, b);
    VT_CHECK(np >= S / 2 - (S % 2 ? 0 : 0) && np <= S / 2, "round %d: %d pairs of %d shards", r, np, S);
    unsigned char busy[1024] = {0};
    for (int32_t q = 0; q < np; ++q) {
      VT_CHECK(a[q] >= 0 && a[q] < b[q] && b[q] < S, "pair %d-%d", a[q], b[q]);
      VT_CHECK(!busy[a[q]] && !busy[b[q]], "round %d uses shard %d or %d twice", r, a[q], b[q]);
      busy[a[q]] = busy[b[q]] = 1;
      VT_CHECK(!seen[a[q] * S + b[q]], "pair %d-%d merged twice", a[q], b[q]);
      seen[a[q] * S + b[q]] = 1;
      pairs++;
    }
  }
  VT_CHECK(pairs == (int64_t)S * (S - 1) / 2, "%lld pairs for %d shards", (long long)pairs, S);
  VT_CHECK(vic__shard_round(&p, p.rounds, a, b) == 0, "a round past the last");
  free(seen);
}

int main(void) {
  vic_shard_plan one = vic__shard_plan(100, 1000);
  VT_CHECK(one.shards == 1 && one.m == 100 && one.rounds == 0, "one shard: %d x %lld", one.shards, (long long)one.m);
  /* balanced: 10 rows at most 4 -> 3 shards of 4, 4, 2? no: m = ceil(10/3) = 4 */
  vic_shard_plan p = vic__shard_plan(10, 4);
  VT_CHECK(p.shards == 3 && p.m == 4, "10 by 4: %d x %lld", p.shards, (long long)p.m);
  p = vic__shard_plan(1000000, 250001);
  VT_CHECK(p.shards == 4 && p.m == 250000, "1M by 250001: %d x %lld", p.shards, (long long)p.m);
  const int64_t cases[][2] = {{10, 4}, {100, 10}, {101, 10}, {1000, 7}, {12, 1}, {13, 1}, {1000000, 65536},
                              {64, 2}, {2, 1}, {3, 2}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) check_schedule(cases[i][0], cases[i][1]);
  return vt_finish("test_shard_plan");
}
