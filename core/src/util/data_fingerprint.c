/* vic__data_fingerprint: see hash64.h.  A saved index refers to rows it
 * does not contain, so loading it against other rows must be caught. */
#include "hash64.h"

enum { ROWS_PER_BLOCK = 1024 };

uint64_t vic__data_fingerprint(vic_ctx *c, const vic_data *x) {
  int64_t nb = (x->n + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK;
  uint64_t h = VIC_HASH_SEED;
  h = vic__hash_word(h, (uint64_t)x->n);
  h = vic__hash_word(h, (uint64_t)x->d);
  h = vic__hash_word(h, (uint64_t)x->metric);
  if (x->box) h = vic__hash_bytes(h, x->box, (size_t)x->d * sizeof(double));
  uint64_t *bh = malloc((size_t)nb * sizeof *bh);
  if (!bh) { /* rare: fall back to one sequential pass, same definition */
    for (int64_t b = 0; b < nb; ++b) {
      uint64_t g = VIC_HASH_SEED ^ (uint64_t)b;
      for (int64_t i = b * ROWS_PER_BLOCK; i < x->n && i < (b + 1) * ROWS_PER_BLOCK; ++i)
        g = vic__hash_bytes(g, vic__row(x, i), (size_t)x->d * sizeof(float));
      h = vic__hash_word(h, g);
    }
    return h;
  }
#pragma omp parallel for schedule(static) num_threads(vic__threads(c))
  for (int64_t b = 0; b < nb; ++b) {
    uint64_t g = VIC_HASH_SEED ^ (uint64_t)b;
    for (int64_t i = b * ROWS_PER_BLOCK; i < x->n && i < (b + 1) * ROWS_PER_BLOCK; ++i)
      g = vic__hash_bytes(g, vic__row(x, i), (size_t)x->d * sizeof(float));
    bh[b] = g;
  }
  for (int64_t b = 0; b < nb; ++b) h = vic__hash_word(h, bh[b]);
  free(bh);
  return h;
}
