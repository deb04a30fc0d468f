/* 64-bit hashing for saved files: a checksum of byte ranges and a
 * fingerprint of a data view.  FNV-1a's structure, but over 8-byte words
 * with a multiply-xorshift finaliser per word, which runs near memory speed
 * instead of one multiply per byte; every flipped bit changes the result. */
#ifndef VIC_HASH64_H
#define VIC_HASH64_H

#include "internal.h"

#include <string.h>

#define VIC_HASH_SEED 0xcbf29ce484222325ull

static inline uint64_t vic__hash_word(uint64_t h, uint64_t w) {
  w *= 0xff51afd7ed558ccdull;
  w ^= w >> 33;
  h = (h ^ w) * 0x100000001b3ull;
  return h ^ (h >> 29);
}

static inline uint64_t vic__hash_bytes(uint64_t h, const void *data, size_t len) {
  const unsigned char *p = data;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h = vic__hash_word(h, w);
  }
  uint64_t tail = 0;
  memcpy(&tail, p + i, len - i);
  return vic__hash_word(h, tail ^ ((uint64_t)(len - i) << 56));
}

/* Fingerprint of what the rows mean: n, d, metric, box and every value read
 * through the stride (so a padded or strided view of the same numbers
 * matches).  Blocks of rows are hashed in parallel and combined in order. */
uint64_t vic__data_fingerprint(vic_ctx *c, const vic_data *x);

#endif
