/* IDX reader (the MNIST files): magic 0x0000TTNN with element type TT and
 * NN big-endian int32 dimensions, then the elements.  Only unsigned bytes
 * (type 0x08) are read; the first dimension gives rows, the product of the
 * rest gives columns (28 x 28 images -> 784).  gzip is undone by zlib. */
#include "vio_internal.h"

#include <stdlib.h>
#include <string.h>

int vio__load_idx(gzFile f, const char *path, vio_matrix *out, char *err, size_t errsize) {
  unsigned char magic[4];
  if (vio__read(f, magic, 4) != 4) return vio__fail(err, errsize, path, "truncated IDX magic");
  if (magic[2] != 0x08)
    return vio__fail(err, errsize, path, "IDX element type 0x%02x is not supported (unsigned byte 0x08 only)", magic[2]);
  int nd = magic[3];
  if (nd < 1 || nd > 4) return vio__fail(err, errsize, path, "IDX with %d dimensions is not supported", nd);
  int64_t n = 0, d = 1;
  for (int i = 0; i < nd; ++i) {
    unsigned char b[4];
    if (vio__read(f, b, 4) != 4) return vio__fail(err, errsize, path, "truncated IDX header");
    int64_t v = ((int64_t)b[0] << 24) | ((int64_t)b[1] << 16) | ((int64_t)b[2] << 8) | b[3];
    if (i == 0) n = v;
    else d = vio__mul(d, v, INT32_MAX);
    if (d < 0) return vio__fail(err, errsize, path, "IDX row size too large");
  }
  if (n == 0 || d == 0) return vio__fail(err, errsize, path, "the IDX array is empty");
  int64_t count = vio__mul(n, d, INT64_MAX / 4);
  if (count < 0 || (uint64_t)count > SIZE_MAX / 4) return vio__fail(err, errsize, path, "IDX array too large");
  char what[96];
  snprintf(what, sizeof what, "%lld x %lld bytes", (long long)n, (long long)d);
  if (vio__check_remaining(f, path, count, what, err, errsize) != 0) return -1;
  /* bytes read in chunks and widened into a buffer grown as they arrive
   * (gzip-compressed files cannot tell their size up front) */
  enum { CHUNK = 1 << 16 };
  unsigned char *bytes = malloc(CHUNK);
  float *rows = NULL;
  size_t cap = 0;
  if (!bytes) return vio__fail(err, errsize, path, "out of memory");
  for (int64_t done = 0; done < count;) {
    int64_t m = count - done < CHUNK ? count - done : CHUNK;
    if (vio__grow((void **)&rows, &cap, (size_t)(done + m) * sizeof(float), (size_t)count * sizeof(float)) != 0) {
      free(bytes);
      free(rows);
      return vio__fail(err, errsize, path, "out of memory for %lld values", (long long)(done + m));
    }
    if (vio__read(f, bytes, (size_t)m) != m) {
      free(bytes);
      free(rows);
      return vio__fail(err, errsize, path, "truncated IDX data: fewer than %s", what);
    }
    for (int64_t i = 0; i < m; ++i) rows[done + i] = (float)bytes[i];
    done += m;
  }
  free(bytes);
  out->rows = rows;
  out->n = n;
  out->d = (int32_t)d;
  return 0;
}
