/* Lists streamed to the host while the device computes: the contract
 * between a kernel that produces kNN lists in chunks (vick_grid_knn_stream)
 * and the caller that places them (the core, with many threads).
 *
 * The device writes lists into a ring of output chunks, one kernel launch
 * per chunk; a second stream copies finished chunks piece by piece into
 * two pinned host slots, and the caller's write() empties one slot while
 * the other fills and the next chunk computes.  So the result never passes
 * through one pageable copy, and the device holds only the ring.
 *
 * The chunk plan is plain C (no CUDA) so the host side can test it. */
#ifndef VIC_KERNELS_STREAM_H
#define VIC_KERNELS_STREAM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where streamed lists go. */
typedef struct {
  int id_bytes; /* 4 or 8: ids are written as int32 or int64 on the device */
  int true_l2;  /* nonzero: distances leave the device as true Euclidean distances (sqrt of the working
                   distance, ties in the rounded value re-ordered by id, as the core's CPU methods) */
  int by_rows;  /* nonzero: each launch answers a range of consecutive rows, so pieces arrive in row order
                   (rows == NULL below) and the host writes them sequentially; zero: each launch answers a
                   range of the sorted order (neighbouring queries, the kernel's best order) and every
                   piece row carries its row number (a scatter on the host) */
  /* Called on the calling thread once per piece, in order.  Piece row r is
   * row first + (rows ? rows[r] : r) of the answered range (0 = its first
   * row); ids (m*k entries of id_bytes, -1 where missing) and dist (m*k,
   * +inf where missing) are pinned host memory, valid until write returns.
   * Nonzero stops the call with VICK_CANCELLED. */
  int (*write)(void *user, int64_t first, const uint32_t *rows, int64_t m, int32_t k, const void *ids,
               const float *dist);
  void *user;
  size_t piece_bytes;  /* pinned bytes per slot; 0 = VICK_STREAM_PIECE_BYTES */
  int64_t chunk_rows;  /* rows per kernel launch; 0 = automatic (vick_stream_plan_make) */
} vick_sink;

#define VICK_STREAM_PIECE_BYTES ((size_t)32 << 20)

/* How m rows of row_bytes each are cut: kernel launches of chunk_rows rows
 * (the last may be shorter), a device ring of ring_chunks such chunks
 * (chunk c lives in slot c % ring_chunks), and host pieces of at most
 * piece_rows rows, never across a chunk boundary. */
typedef struct {
  int64_t m, chunk_rows, piece_rows;
  int64_t chunks, ring_chunks;
} vick_stream_plan;

/* Fewer launches than this leave the copies of the first and last chunk
 * without overlap; more make launches too small to fill the device. */
#define VICK_STREAM_TARGET_CHUNKS 16
#define VICK_STREAM_MIN_CHUNK_ROWS ((int64_t)1 << 18)

/* Plan for m rows of row_bytes on the device, device_bytes available for
 * the ring and piece_bytes per pinned slot.  chunk_rows > 0 forces the
 * launch size.  Returns 0, or -1 when not even a ring of two one-row
 * chunks fits (or an argument is not positive). */
static inline int vick_stream_plan_make(int64_t m, int64_t row_bytes, size_t device_bytes, size_t piece_bytes,
                                        int64_t chunk_rows, vick_stream_plan *p) {
  if (m < 1 || row_bytes < 1 || piece_bytes < 1) return -1;
  p->m = m;
  int64_t kr = chunk_rows;
  if (kr <= 0) {
    kr = (m + VICK_STREAM_TARGET_CHUNKS - 1) / VICK_STREAM_TARGET_CHUNKS;
    if (kr < VICK_STREAM_MIN_CHUNK_ROWS) kr = VICK_STREAM_MIN_CHUNK_ROWS;
  }
  if (kr > m) kr = m;
  const int64_t fit = (int64_t)(device_bytes / (size_t)row_bytes); /* rows the device can hold */
  if (fit >= m) {
    p->chunk_rows = kr;
    p->chunks = (m + kr - 1) / kr;
    p->ring_chunks = p->chunks;
  } else {
    if (fit < 2) return -1;
    if (2 * kr > fit) kr = fit / 2;
    p->chunk_rows = kr;
    p->chunks = (m + kr - 1) / kr;
    p->ring_chunks = fit / kr;
    if (p->ring_chunks > p->chunks) p->ring_chunks = p->chunks;
  }
  int64_t pr = (int64_t)(piece_bytes / (size_t)row_bytes);
  if (pr < 1) pr = 1;
  if (pr > p->chunk_rows) pr = p->chunk_rows;
  p->piece_rows = pr;
  return 0;
}

/* Rows [*r0, *r1) of chunk c. */
static inline void vick_stream_chunk(const vick_stream_plan *p, int64_t c, int64_t *r0, int64_t *r1) {
  *r0 = c * p->chunk_rows;
  *r1 = *r0 + p->chunk_rows < p->m ? *r0 + p->chunk_rows : p->m;
}

/* Pieces of chunk c. */
static inline int64_t vick_stream_pieces(const vick_stream_plan *p, int64_t c) {
  int64_t r0, r1;
  vick_stream_chunk(p, c, &r0, &r1);
  return (r1 - r0 + p->piece_rows - 1) / p->piece_rows;
}

#ifdef __cplusplus
}
#endif
#endif
