/* The cross-search shard plan (cross_plan.h) of GNND over several GPUs and
 * of the one-device out-of-core build: the bytes of one cross search grow
 * with the shards and match the add's buffers, the plan takes the fewest
 * shards that fit (a multiple of the devices, at least the wanted count),
 * a larger budget never takes more shards, and a budget nothing fits gets
 * 0.  The 10M x 96 case of issue 23: a quarter of GNND's fp32 need
 * (4,482 MiB) gives 3 shards of 3.33M rows, 6 searches, with the add's
 * searches and with the one-device plan's narrower ones
 * (vic__cross_add_plan: k rounded up to 16 wide, the graph as wide).
 * Runs in CI. */
#include "cross_plan.h"
#include "test_util.h"

static vic_add_plan plan(int32_t k, int64_t chunk) {
  vic_add_plan p = vic__add_plan(k);
  p.chunk = chunk;
  return p;
}

int main(void) {
  const vic_add_plan one = plan(10, 16384), multi = plan(10, 0);
  const size_t MiB = (size_t)1 << 20;

  /* the add's buffers (rows of both, old lists, graph, counts, found rows,
   * reverse lists, results) and the search's scratch, exactly */
  const int64_t na = 1000, nb = 700;
  const size_t buffers = (size_t)(na + nb) * 96 * 4 + (size_t)na * 10 * 8 + (size_t)na * 32 * 4 + (size_t)na * 8 +
                         (size_t)nb * 32 * 4 + (size_t)nb * 32 * 12 + (size_t)na * 16 * 4 + (size_t)(na + nb) * 10 * 8 +
                         (size_t)na * 4;
  VT_CHECK(vic__cross_bytes(na, nb, 96, 10, &multi) == buffers + 512 * MiB, "flat scratch: %zu",
           vic__cross_bytes(na, nb, 96, 10, &multi));
  VT_CHECK(vic__cross_bytes(na, nb, 96, 10, &one) == buffers + (size_t)nb * 4096 + (size_t)na * 4 +
                                                         (size_t)8192 * (96 * 4 + 8) + 4 * MiB,
           "chunked scratch: %zu", vic__cross_bytes(na, nb, 96, 10, &one));
  /* the scratch stops growing at the chunk */
  const size_t a = vic__cross_bytes(200000, 200000, 96, 10, &one), b = vic__cross_bytes(200000, 300000, 96, 10, &one);
  VT_CHECK(b - a == (size_t)100000 * (96 * 4 + 32 * 4 + 10 * 8), "past the chunk: %zu", b - a);

  /* the one-device searches: k rounded up to 16 wide, never wider than
   * the add's, within the kernel's ranges, the add's graph degree */
  for (int32_t kk = 1; kk <= 32; ++kk) {
    const vic_add_plan a = vic__add_plan(kk), x = vic__cross_add_plan(kk);
    VT_CHECK(x.width >= kk && x.width % 16 == 0 && x.width - kk < 16 && x.width <= a.width, "k %d: width %d", kk,
             x.width);
    VT_CHECK(x.list == 2 * x.width && x.degree == (x.width > kk ? x.width : a.degree) && x.degree > kk &&
                 x.degree <= 128,
             "k %d: list %d degree %d", kk, x.list, x.degree);
    VT_CHECK(x.join <= x.width && x.join >= 1 && x.reverse == a.reverse, "k %d: join %d reverse %d", kk, x.join,
             x.reverse);
  }
  /* issue 23's case: 10M x 96 under 4,482 MiB less the slack of 70 MiB */
  const size_t fit = 4482 * MiB - 4482 * MiB / 64;
  vic_add_plan narrow = vic__cross_add_plan(10);
  narrow.chunk = 16384;
  VT_CHECK(vic__cross_bytes(na, nb, 96, 10, &narrow) < vic__cross_bytes(na, nb, 96, 10, &one), "narrower, not smaller");
  VT_CHECK(vic__cross_shards(10000000, 96, 10, &narrow, 1, 2, fit) == 3,
           "10M x 96 under a quarter, narrow searches: %d shards", vic__cross_shards(10000000, 96, 10, &narrow, 1, 2, fit));

  int S = vic__cross_shards(10000000, 96, 10, &one, 1, 2, fit);
  VT_CHECK(S == 3, "10M x 96 under a quarter: %d shards", S);
  VT_CHECK(vic__cross_bytes(3333334, 3333334, 96, 10, &one) <= fit &&
               vic__cross_bytes(5000000, 5000000, 96, 10, &one) > fit,
           "3 fit, 2 do not");
  printf("10M x 96, budget 4482 MiB: %d shards, a search holds %.0f MiB\n", S,
         vic__cross_bytes(3333334, 3333334, 96, 10, &one) / (double)MiB);

  /* the fewest, monotone in the budget, a multiple of the devices */
  int last = 1 << 30;
  for (size_t f = 64 * MiB; f <= 64 * 1024 * MiB; f *= 2) {
    S = vic__cross_shards(4000000, 64, 10, &one, 1, 2, f);
    if (S == 0) continue;
    const int64_t m = (4000000 + S - 1) / S, m1 = (4000000 + S - 2) / (S - 1);
    VT_CHECK(vic__cross_bytes(m, m, 64, 10, &one) <= f, "budget %zu: %d shards do not fit", f, S);
    VT_CHECK(S == 2 || vic__cross_bytes(m1, m1, 64, 10, &one) > f, "budget %zu: %d shards, %d would fit", f, S,
             S - 1);
    VT_CHECK(S <= last, "budget %zu: %d shards after %d at half of it", f, S, last);
    last = S;
  }
  VT_CHECK(last == 2, "a large budget: %d shards (want 2)", last);
  S = vic__cross_shards(4000000, 64, 10, &multi, 3, 2, 3 * 1024 * MiB);
  VT_CHECK(S > 0 && S % 3 == 0, "3 devices: %d shards", S);
  VT_CHECK(vic__cross_shards(4000000, 64, 10, &multi, 4, 9, 0) == 12, "want 9 on 4 devices: %d",
           vic__cross_shards(4000000, 64, 10, &multi, 4, 9, 0));
  /* nothing fits: shards would shrink below twice the search width */
  VT_CHECK(vic__cross_shards(4000000, 64, 10, &one, 1, 2, 8 * MiB) == 0, "8 MiB took %d shards",
           vic__cross_shards(4000000, 64, 10, &one, 1, 2, 8 * MiB));
  VT_CHECK(vic__cross_shards(100, 64, 10, &one, 1, 2, 0) == 0, "100 rows took shards");
  return vt_finish("test_cross_plan");
}
