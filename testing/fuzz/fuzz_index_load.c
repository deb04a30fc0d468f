/* libFuzzer target of vic_index_load against a fixed data set.  In the
 * default checksum fix-up mode the header's data fields (n, d, metric,
 * flags, fingerprint), the payload size and both checksums are rewritten
 * to match the mutated bytes, so that mutations reach the section parsing
 * and validation behind the checksums; VIC_FUZZ_RAW=1 feeds the bytes as
 * they are (which exercises the header checks).  A loaded index is searched
 * once, so that a file that loads but is inconsistent would show here. */
#include "fuzz_data.h"
#include "hash64.h"
#include "internal.h"

#include <string.h>

enum { HEADER = 96 };

static float g_points[FUZZ_N * FUZZ_D];
static vic_data g_x;
static vic_ctx *g_c;
static uint64_t g_fingerprint;
static int g_raw;

static void put_u32(uint8_t *p, uint32_t v) { for (int i = 0; i < 4; ++i) p[i] = (uint8_t)(v >> (8 * i)); }
static void put_u64(uint8_t *p, uint64_t v) { for (int i = 0; i < 8; ++i) p[i] = (uint8_t)(v >> (8 * i)); }
static uint64_t get_u64(const uint8_t *p) { uint64_t v = 0; for (int i = 0; i < 8; ++i) v |= (uint64_t)p[i] << (8 * i); return v; }

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc; (void)argv;
  fuzz_points(g_points);
  vic_data x = {g_points, FUZZ_N, FUZZ_D, 0, VIC_L2, NULL};
  g_x = x;
  vic_ctx_options o;
  vic_ctx_options_init(&o);
  o.backend = VIC_BACKEND_CPU;
  o.threads = 1;
  if (vic_ctx_create(&o, &g_c) != VIC_OK) abort();
  g_fingerprint = vic__data_fingerprint(g_c, &g_x);
  const char *raw = getenv("VIC_FUZZ_RAW");
  g_raw = raw && *raw == '1';
  return 0;
}

/* Header fields made to match the data, payload size and checksums made
 * to match the bytes: the payload checksum chains each section's 16-byte
 * head and content hash (index_file.c), walked as far as the heads fit. */
static void fix_up(uint8_t *b, size_t size) {
  memcpy(b, "VICINDEX", 8);
  put_u64(b + 16, FUZZ_N);
  put_u32(b + 24, FUZZ_D);
  put_u32(b + 28, VIC_L2);
  put_u64(b + 40, g_fingerprint);
  put_u32(b + 64, get_u64(b + 64) & ~1ull);
  memset(b + 68, 0, 20);
  uint64_t payload = size - HEADER, sum = VIC_HASH_SEED;
  size_t at = HEADER;
  while (at + 16 <= size) {
    uint64_t bytes = get_u64(b + at + 8);
    uint64_t avail = size - at - 16;
    uint64_t take = bytes < avail ? bytes : avail;
    sum = vic__hash_bytes(sum, b + at, 16);
    sum = vic__hash_word(sum, vic__hash_bytes(VIC_HASH_SEED, b + at + 16, (size_t)take));
    at += 16 + (size_t)take;
  }
  put_u64(b + 48, payload);
  put_u64(b + 56, sum);
  put_u64(b + 88, vic__hash_bytes(VIC_HASH_SEED, b, 88));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *b = malloc(size ? size : 1);
  if (!b) return 0;
  memcpy(b, data, size);
  if (!g_raw && size >= HEADER) fix_up(b, size);
  char path[256];
  fuzz_scratch(".vicindex", path, sizeof path);
  int w = fuzz_write(path, b, size);
  free(b);
  if (w != 0) return 0;
  vic_index *ix = NULL;
  vic_status s = vic_index_load(g_c, path, &g_x, &ix);
  if (s == VIC_OK) {
    vic_search_options so;
    vic_search_options_init(&so);
    so.k = 5;
    vic_data q = {g_points, 8, FUZZ_D, 0, VIC_L2, NULL};
    vic_knn r;
    if (vic_index_search(g_c, ix, &q, &so, &r) == VIC_OK) {
      for (int64_t e = 0; e < r.n * r.k; ++e)
        if (r.ids[e] < -1 || r.ids[e] >= FUZZ_N) abort(); /* an id outside the data */
      vic_knn_free(&r);
    }
    vic_index_free(ix);
  } else if (ix) {
    abort(); /* a failed load hands out nothing */
  }
  unlink(path);
  return 0;
}
