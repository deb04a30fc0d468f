/* Where a kNN list builder writes: the caller's buffers of vic_knn_build_into
 * (ids as int32 or int64) or vic_knn_build's own.  The helpers move lists
 * into such a destination with many threads, so that the page faults of a
 * fresh destination and the copies are spread over the cores. */
#ifndef VIC_LIST_DEST_H
#define VIC_LIST_DEST_H

#include "internal.h"

typedef struct {
  int id_bytes; /* 4 or 8 */
  void *ids;    /* n*k entries of id_bytes */
  float *dist;  /* n*k */
} vic__lists;

/* A piece of m lists (k entries each, ids of the destination's width) into
 * rows first + rows[r] of the destination (rows == NULL: first + r, written
 * as one block per thread), in parallel. */
void vic__lists_scatter(const vic__lists *dst, int threads, int64_t first, const uint32_t *rows, int64_t m, int32_t k,
                        const void *ids, const float *dist);

/* count int64 ids narrowed to int32 (ids < 2^31 by the caller's check), in
 * parallel; src and dst may not overlap. */
void vic__ids_narrow(int threads, const int64_t *src, int32_t *dst, int64_t count);

/* Id of entry i of the destination, whatever its width. */
static inline int64_t vic__lists_id(const vic__lists *d, int64_t i) {
  return d->id_bytes == 4 ? (int64_t)((const int32_t *)d->ids)[i] : ((const int64_t *)d->ids)[i];
}

/* d_nn1 statistics (column 0) of n filled lists into the report. */
void vic__lists_dnn1(const vic__lists *d, int64_t n, int32_t k, int threads, vic_report *r);

/* Threads, of the context's `threads`, that write result lists into fresh
 * host memory: the first touches of new pages contend in the operating
 * system's page-fault path, so past VIC_LIST_WRITERS threads in all (the
 * devices' teams together) more writers make the writes slower, not
 * faster (BENCHMARKS.md: exact lists on a 64-core host). */
enum { VIC_LIST_WRITERS = 32 };
static inline int vic__list_writers(int threads) { return threads < VIC_LIST_WRITERS ? threads : VIC_LIST_WRITERS; }

/* Host memory for n*k-entry result lists: like vic__malloc, but large
 * buffers are asked to come in huge pages (Linux), so that writing a fresh
 * result faults 512 times less often.  Released with free(). */
void *vic__malloc_lists(vic_ctx *c, size_t bytes, const char *what);

#endif
