/* Where a sharded build keeps its shards' graphs: host memory, or the
 * memory-mapped work file <work_dir>/vicinity_shards.vgs, which makes the
 * build resumable after a cancel and lets graphs larger than memory live
 * in the page cache.
 *
 * File layout (little endian; H = header bytes, a multiple of 4096):
 *   0  "VICSHARD"        8  u32 format version (1)   12 u32 shards S
 *   16 i64 n             24 i32 d    28 i32 k        32 i32 K   36 u32 metric
 *   40 i64 m (rows per shard)   48 u64 data fingerprint   56 u64 seed
 *   64 u32 shards built  68 u32 merge rounds done
 *   128 + 16 s: u64 checksum of section own[s], u64 checksum of result[s]
 *   H - 8: u64 checksum of bytes 0 .. H-9
 *   own[s]    at H + first(s) K 8:           rows(s) K int32 ids (local to the shard), then as many float
 *                                             working distances: the shard's own graph
 *   result[s] at H + n K 8 + first(s) k 8:   rows(s) k int32 ids (global), then the distances: the best
 *                                             lists found so far
 * A section is checksummed when it is complete (own) or at each
 * checkpoint (results, after every round and at a cancel); the header
 * records the progress, so a resumed build verifies every section it
 * relies on and continues with the next shard or round. */
#ifndef VIC_SHARD_FILE_H
#define VIC_SHARD_FILE_H

#include "internal.h"
#include "shard_plan.h"

typedef struct {
  vic_shard_plan plan;
  int32_t d, k, K;
  vic_metric metric;
  uint64_t fingerprint, seed;
  uint32_t shards_built, rounds_done;
  /* private */
  unsigned char *base;
  size_t bytes, header;
  int fd;
  char *path;
} vic_shard_store;

/* Set plan, d, k, K, metric, fingerprint and seed first.  work_dir NULL:
 * host memory.  resume: the file must exist and record this build. */
vic_status vic__shard_store_open(vic_ctx *c, vic_shard_store *st, const char *work_dir, int resume);
void vic__shard_store_close(vic_shard_store *st);

int32_t *vic__shard_own_ids(const vic_shard_store *st, int32_t s);
float *vic__shard_own_dist(const vic_shard_store *st, int32_t s);
int32_t *vic__shard_res_ids(const vic_shard_store *st, int32_t s);
float *vic__shard_res_dist(const vic_shard_store *st, int32_t s);

/* Record the checksums of shard s's own graph and / or result lists (in
 * the file; nothing in memory). */
void vic__shard_seal(vic_shard_store *st, int32_t s, int own, int result);
/* Write the header (progress and checksums) and hand the dirty pages to
 * the kernel for writing; nothing to do in memory. */
vic_status vic__shard_checkpoint(vic_ctx *c, vic_shard_store *st);
/* Start the reading of shard s's own graph ahead of its use. */
void vic__shard_prefetch(const vic_shard_store *st, int32_t s);

#endif
