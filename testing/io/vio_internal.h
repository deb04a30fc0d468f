/* Helpers shared by the format readers of vic_io (not installed). */
#ifndef VIO_INTERNAL_H
#define VIO_INTERNAL_H

#include "vic_io.h"

#include <stdio.h>
#include <zlib.h>

/* Writes "path: message" into err and returns -1, so that readers end
 * failures with `return vio__fail(...)`. */
int vio__fail(char *err, size_t errsize, const char *path, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Reads up to bytes from a gzFile (plain files pass through zlib unchanged),
 * in chunks because gzread takes an unsigned int.  Returns bytes read, or
 * -1 on a read/decompression error. */
int64_t vio__read(gzFile f, void *buf, size_t bytes);

/* On-disk size of path, -1 when unknown. */
int64_t vio__file_size(const char *path);

/* Product a*b when it fits in limit, else -1 (sizes come from file headers
 * and must not overflow an allocation). */
int64_t vio__mul(int64_t a, int64_t b, int64_t limit);

uint32_t vio__bswap32(uint32_t v);

/* For a plain (uncompressed) stream: -1 with a message when fewer than
 * `bytes` bytes follow the current position, so that a header declaring
 * more data than the file holds fails before anything is allocated.
 * Compressed streams cannot tell: their readers grow buffers with
 * vio__grow as the data arrive.  what: the data, for the message. */
int vio__check_remaining(gzFile f, const char *path, int64_t bytes, const char *what, char *err, size_t errsize);

/* Makes *buf (capacity *cap bytes) hold at least need bytes: doubling, at
 * least 1 MiB, never past total (the size the header declares), so that a
 * buffer costs at most about twice the data actually read.  0, or -1 when
 * out of memory (*buf is then unchanged). */
int vio__grow(void **buf, size_t *cap, size_t need, size_t total);

/* count values of itemsize bytes (4: float32, 8: float64, converted),
 * little-endian, at byte offset of the uncompressed file path, read by
 * several threads into *rows (malloc'd); 0, or -1 with a message. */
int vio__read_direct(const char *path, int64_t offset, int64_t count, int itemsize, float **rows, char *err,
                     size_t errsize);

/* The format readers, each taking an already opened stream positioned at
 * byte 0 (vio_load closes it). */
int vio__load_npy(gzFile f, const char *path, vio_matrix *out, char *err, size_t errsize);
int vio__load_fvecs(gzFile f, const char *path, vio_matrix *out, char *err, size_t errsize);
int vio__load_idx(gzFile f, const char *path, vio_matrix *out, char *err, size_t errsize);
int vio__load_csv(gzFile f, const char *path, vio_matrix *out, char *err, size_t errsize);

#endif
