/* The cross-search shard plan (cross_plan.h). */
#include "cross_plan.h"

vic_add_plan vic__cross_add_plan(int32_t k) {
  vic_add_plan p = vic__add_plan(k);
  p.width = (k + 15) / 16 * 16;
  if (p.width > k) p.degree = p.width;
  p.list = 2 * p.width;
  if (p.join > p.width) p.join = p.width;
  return p;
}

size_t vic__cross_bytes(int64_t na, int64_t nb, int32_t d, int32_t k, const vic_add_plan *p) {
  const size_t n = (size_t)(na + nb);
  const int64_t chunk = p->chunk > 0 ? p->chunk : 262144, per = nb < chunk ? nb : chunk;
  const size_t b = n * d * 4 + (size_t)na * k * 8 + (size_t)na * p->degree * 4 + (size_t)na * 8 +
                   (size_t)nb * p->width * 4 + (size_t)per * p->width * 12 + (size_t)na * p->reverse * 4 + n * k * 8;
  const size_t scratch = p->chunk > 0 ? (size_t)per * 4096 + (size_t)na * 4 + (size_t)8192 * ((size_t)d * 4 + 8) +
                                            ((size_t)4 << 20)
                                      : ((size_t)512 << 20);
  return b + (size_t)na * 4 + scratch;
}

int vic__cross_shards(int64_t n, int32_t d, int32_t k, const vic_add_plan *p, int count, int64_t want, size_t fit) {
  if (count < 1) count = 1;
  if (want < 1) want = 1;
  for (int64_t S = (want + count - 1) / count * count; S <= 4096; S += count) {
    if (n / S <= 2 * (int64_t)p->width) return 0; /* smaller shards only get smaller */
    const int64_t m = (n + S - 1) / S;
    if (fit == 0 || vic__cross_bytes(m, m, d, k, p) <= fit) return (int)S;
  }
  return 0;
}
