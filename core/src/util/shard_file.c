/* The sharded build's store (shard_file.h): memory or a mapped file. */
#include "shard_file.h"
#include "hash64.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum { VERSION = 1, TABLE = 128 };
static const char MAGIC[8] = {'V', 'I', 'C', 'S', 'H', 'A', 'R', 'D'};

static void put_u32(unsigned char *p, uint32_t v) { for (int i = 0; i < 4; ++i) p[i] = (unsigned char)(v >> (8 * i)); }
static void put_u64(unsigned char *p, uint64_t v) { for (int i = 0; i < 8; ++i) p[i] = (unsigned char)(v >> (8 * i)); }
static uint32_t get_u32(const unsigned char *p) { uint32_t v = 0; for (int i = 0; i < 4; ++i) v |= (uint32_t)p[i] << (8 * i); return v; }
static uint64_t get_u64(const unsigned char *p) { uint64_t v = 0; for (int i = 0; i < 8; ++i) v |= (uint64_t)p[i] << (8 * i); return v; }

static size_t header_bytes(int32_t shards) { return ((size_t)TABLE + 16 * (size_t)shards + 8 + 4095) / 4096 * 4096; }

int32_t *vic__shard_own_ids(const vic_shard_store *st, int32_t s) {
  return (int32_t *)(st->base + st->header + (size_t)vic__shard_first(&st->plan, s) * st->K * 8);
}
float *vic__shard_own_dist(const vic_shard_store *st, int32_t s) {
  return (float *)(vic__shard_own_ids(st, s) + (size_t)vic__shard_rows(&st->plan, s) * st->K);
}
int32_t *vic__shard_res_ids(const vic_shard_store *st, int32_t s) {
  return (int32_t *)(st->base + st->header + (size_t)st->plan.n * st->K * 8 +
                     (size_t)vic__shard_first(&st->plan, s) * st->k * 8);
}
float *vic__shard_res_dist(const vic_shard_store *st, int32_t s) {
  return (float *)(vic__shard_res_ids(st, s) + (size_t)vic__shard_rows(&st->plan, s) * st->k);
}

static uint64_t section_sum(const vic_shard_store *st, int32_t s, int own) {
  const size_t bytes = (size_t)vic__shard_rows(&st->plan, s) * (own ? st->K : st->k) * 8;
  return vic__hash_bytes(VIC_HASH_SEED, own ? (void *)vic__shard_own_ids(st, s) : (void *)vic__shard_res_ids(st, s),
                         bytes);
}

void vic__shard_seal(vic_shard_store *st, int32_t s, int own, int result) {
  if (st->fd < 0) return; /* in memory: nothing to resume, nothing to verify */
  unsigned char *e = st->base + TABLE + 16 * (size_t)s;
  if (own) put_u64(e, section_sum(st, s, 1));
  if (result) put_u64(e + 8, section_sum(st, s, 0));
}

static void encode_header(vic_shard_store *st) {
  unsigned char *h = st->base;
  memcpy(h, MAGIC, 8);
  put_u32(h + 8, VERSION);
  put_u32(h + 12, (uint32_t)st->plan.shards);
  put_u64(h + 16, (uint64_t)st->plan.n);
  put_u32(h + 24, (uint32_t)st->d);
  put_u32(h + 28, (uint32_t)st->k);
  put_u32(h + 32, (uint32_t)st->K);
  put_u32(h + 36, (uint32_t)st->metric);
  put_u64(h + 40, (uint64_t)st->plan.m);
  put_u64(h + 48, st->fingerprint);
  put_u64(h + 56, st->seed);
  put_u32(h + 64, st->shards_built);
  put_u32(h + 68, st->rounds_done);
  put_u64(h + st->header - 8, vic__hash_bytes(VIC_HASH_SEED, h, st->header - 8));
}

vic_status vic__shard_checkpoint(vic_ctx *c, vic_shard_store *st) {
  encode_header(st);
  if (st->fd < 0) return VIC_OK;
  /* asynchronous: the pages reach the disk while the next merges run;
   * the checksums catch what a crash left unwritten */
  if (msync(st->base, st->bytes, MS_ASYNC) != 0)
    return vic__fail(c, VIC_E_IO, "writing '%s' failed: %s", st->path, strerror(errno));
  return VIC_OK;
}

void vic__shard_prefetch(const vic_shard_store *st, int32_t s) {
  if (st->fd < 0) return;
  const long page = sysconf(_SC_PAGESIZE);
  uintptr_t a = (uintptr_t)vic__shard_own_ids(st, s);
  uintptr_t lo = a / (uintptr_t)page * (uintptr_t)page;
  size_t len = (size_t)(a - lo) + (size_t)vic__shard_rows(&st->plan, s) * st->K * 8;
  madvise((void *)lo, len, MADV_WILLNEED);
}

/* A resumed file: its own header first (so another build is named as
 * such), then its size, progress and every section it claims. */
static vic_status check_resumed(vic_ctx *c, vic_shard_store *st, size_t file_bytes) {
  const unsigned char *h = st->base;
  if (file_bytes < 4096 || memcmp(h, MAGIC, 8) != 0)
    return vic__fail(c, VIC_E_FORMAT, "'%s' is not a Vicinity shard file", st->path);
  if (get_u32(h + 8) != VERSION)
    return vic__fail(c, VIC_E_FORMAT, "'%s' has shard-file version %u; this library reads version %u", st->path,
                     get_u32(h + 8), (unsigned)VERSION);
  const size_t hb = header_bytes((int32_t)(get_u32(h + 12) & 0x7fffffff));
  if (hb > file_bytes || get_u64(h + hb - 8) != vic__hash_bytes(VIC_HASH_SEED, h, hb - 8))
    return vic__fail(c, VIC_E_FORMAT, "'%s' is corrupt: its header fails its checksum", st->path);
  if (get_u32(h + 12) != (uint32_t)st->plan.shards || get_u64(h + 16) != (uint64_t)st->plan.n ||
      get_u32(h + 24) != (uint32_t)st->d || get_u32(h + 28) != (uint32_t)st->k || get_u32(h + 32) != (uint32_t)st->K ||
      get_u32(h + 36) != (uint32_t)st->metric || get_u64(h + 40) != (uint64_t)st->plan.m ||
      get_u64(h + 48) != st->fingerprint || get_u64(h + 56) != st->seed)
    return vic__fail(c, VIC_E_ARGUMENT,
                     "'%s' records another build (n = %lld, d = %d, k = %d, %u shards of %lld rows, or other data or "
                     "seed); start over without resume",
                     st->path, (long long)get_u64(h + 16), (int)get_u32(h + 24), (int)get_u32(h + 28), get_u32(h + 12),
                     (long long)get_u64(h + 40));
  if (file_bytes != st->bytes)
    return vic__fail(c, VIC_E_FORMAT, "'%s' is truncated: %zu bytes of %zu", st->path, file_bytes, st->bytes);
  st->shards_built = get_u32(h + 64);
  st->rounds_done = get_u32(h + 68);
  if (st->shards_built > (uint32_t)st->plan.shards || st->rounds_done > (uint32_t)st->plan.rounds ||
      (st->rounds_done > 0 && st->shards_built != (uint32_t)st->plan.shards))
    return vic__fail(c, VIC_E_FORMAT, "'%s' is corrupt: its progress (%u shards, %u rounds) is impossible", st->path,
                     st->shards_built, st->rounds_done);
  for (int32_t s = 0; s < (int32_t)st->shards_built; ++s)
    for (int own = 1; own >= 0; --own)
      if (get_u64(h + TABLE + 16 * (size_t)s + (own ? 0 : 8)) != section_sum(st, s, own))
        return vic__fail(c, VIC_E_FORMAT,
                         "'%s' is corrupt: section %s[%d] fails its checksum; start over without resume", st->path,
                         own ? "own graph" : "result lists", (int)s);
  return VIC_OK;
}

vic_status vic__shard_store_open(vic_ctx *c, vic_shard_store *st, const char *work_dir, int resume) {
  st->base = NULL;
  st->fd = -1;
  st->path = NULL;
  st->shards_built = st->rounds_done = 0;
  st->header = header_bytes(st->plan.shards);
  st->bytes = st->header + (size_t)st->plan.n * ((size_t)st->K + (size_t)st->k) * 8;
  if (!work_dir) {
    if (resume) return vic__fail(c, VIC_E_ARGUMENT, "resume needs the work_dir of the cancelled build");
    st->base = vic__calloc(c, 1, st->bytes, "shard graphs");
    return st->base ? VIC_OK : VIC_E_NOMEM;
  }
  size_t len = strlen(work_dir);
  st->path = vic__malloc(c, len + 32, "file name");
  if (!st->path) return VIC_E_NOMEM;
  snprintf(st->path, len + 32, "%s/vicinity_shards.vgs", work_dir);
  st->fd = open(st->path, resume ? O_RDWR : O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (st->fd < 0) {
    vic_status s = vic__fail(c, VIC_E_IO, "cannot %s '%s': %s", resume ? "open (to resume)" : "create", st->path,
                             strerror(errno));
    vic__shard_store_close(st);
    return s;
  }
  struct stat sb;
  size_t file_bytes = st->bytes;
  if (resume) {
    if (fstat(st->fd, &sb) != 0) {
      vic_status s = vic__fail(c, VIC_E_IO, "cannot read '%s': %s", st->path, strerror(errno));
      vic__shard_store_close(st);
      return s;
    }
    file_bytes = (size_t)sb.st_size;
    if (file_bytes < 4096) {
      vic_status s = vic__fail(c, VIC_E_FORMAT, "'%s' is not a Vicinity shard file (%zu bytes)", st->path, file_bytes);
      vic__shard_store_close(st);
      return s;
    }
  }
  if (!resume && ftruncate(st->fd, (off_t)st->bytes) != 0) {
    vic_status s = vic__fail(c, VIC_E_IO, "cannot size '%s' to %zu bytes: %s", st->path, st->bytes, strerror(errno));
    vic__shard_store_close(st);
    return s;
  }
  const size_t want = st->bytes;
  st->bytes = file_bytes; /* what is mapped, and unmapped by close */
  void *p = mmap(NULL, st->bytes, PROT_READ | PROT_WRITE, MAP_SHARED, st->fd, 0);
  if (p == MAP_FAILED) {
    vic_status s = vic__fail(c, VIC_E_IO, "cannot map '%s': %s", st->path, strerror(errno));
    vic__shard_store_close(st);
    return s;
  }
  st->base = p;
  if (resume) {
    st->bytes = want;
    vic_status s = check_resumed(c, st, file_bytes);
    st->bytes = file_bytes;
    if (s != VIC_OK) { vic__shard_store_close(st); return s; }
    return VIC_OK; /* sizes equal */
  }
  vic_status s = vic__shard_checkpoint(c, st);
  if (s != VIC_OK) vic__shard_store_close(st);
  return s;
}

void vic__shard_store_close(vic_shard_store *st) {
  if (st->fd >= 0) {
    if (st->base) munmap(st->base, st->bytes);
    close(st->fd);
  } else {
    free(st->base);
  }
  free(st->path);
  st->base = NULL;
  st->path = NULL;
  st->fd = -1;
}
