/* NumPy .npy reader: v1 (uint16 header length), v2/v3 (uint32), a Python
 * dict header with 'descr', 'fortran_order' and 'shape'.  Only what the
 * tools produce for point sets is accepted: little-endian float32/float64
 * in C order, 1-d (n x 1) or 2-d (n x d). */
#include "vio_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The value text after 'key': in the header dict, or NULL. */
static const char *dict_value(const char *hdr, const char *key) {
  char pat[32];
  snprintf(pat, sizeof pat, "'%s'", key);
  const char *p = strstr(hdr, pat);
  if (!p) {
    snprintf(pat, sizeof pat, "\"%s\"", key);
    p = strstr(hdr, pat);
  }
  if (!p) return NULL;
  p += strlen(pat);
  while (isspace((unsigned char)*p)) ++p;
  if (*p != ':') return NULL;
  ++p;
  while (isspace((unsigned char)*p)) ++p;
  return p;
}

/* Parses "(a, b)" / "(a,)" / "()" into dims; returns the count or -1. */
static int parse_shape(const char *p, int64_t dims[3]) {
  if (*p != '(') return -1;
  ++p;
  int nd = 0;
  for (;;) {
    while (isspace((unsigned char)*p)) ++p;
    if (*p == ')') return nd;
    if (!isdigit((unsigned char)*p) || nd == 3) return -1;
    errno = 0;
    char *end;
    long long v = strtoll(p, &end, 10);
    if (errno) return -1;
    dims[nd++] = v;
    p = end;
    while (isspace((unsigned char)*p)) ++p;
    if (*p == ',') ++p;
    else if (*p != ')') return -1;
  }
}

int vio__load_npy(gzFile f, const char *path, vio_matrix *out, char *err, size_t errsize) {
  unsigned char pre[12];
  if (vio__read(f, pre, 10) != 10) return vio__fail(err, errsize, path, "truncated .npy preamble");
  int major = pre[6];
  uint32_t hlen;
  if (major == 1) {
    hlen = (uint32_t)pre[8] | ((uint32_t)pre[9] << 8);
  } else if (major == 2 || major == 3) {
    if (vio__read(f, pre + 10, 2) != 2) return vio__fail(err, errsize, path, "truncated .npy preamble");
    hlen = (uint32_t)pre[8] | ((uint32_t)pre[9] << 8) | ((uint32_t)pre[10] << 16) | ((uint32_t)pre[11] << 24);
  } else {
    return vio__fail(err, errsize, path, "unsupported .npy format version %d", major);
  }
  if (hlen == 0 || hlen > (1u << 20)) return vio__fail(err, errsize, path, "implausible .npy header length %u", hlen);
  char *hdr = malloc((size_t)hlen + 1);
  if (!hdr) return vio__fail(err, errsize, path, "out of memory for the header");
  if (vio__read(f, hdr, hlen) != (int64_t)hlen) {
    free(hdr);
    return vio__fail(err, errsize, path, "truncated .npy header");
  }
  hdr[hlen] = '\0';

  const char *descr = dict_value(hdr, "descr");
  const char *fortran = dict_value(hdr, "fortran_order");
  const char *shape = dict_value(hdr, "shape");
  if (!descr || !fortran || !shape) {
    free(hdr);
    return vio__fail(err, errsize, path, "malformed .npy header (needs descr, fortran_order and shape)");
  }
  char dt[16] = {0};
  if (*descr == '\'' || *descr == '"') {
    char q = *descr++;
    size_t i = 0;
    while (descr[i] && descr[i] != q && i + 1 < sizeof dt) { dt[i] = descr[i]; ++i; }
  }
  int itemsize;
  if (strcmp(dt, "<f4") == 0) itemsize = 4;
  else if (strcmp(dt, "<f8") == 0) itemsize = 8;
  else {
    free(hdr);
    if (dt[0] == '>') return vio__fail(err, errsize, path, "big-endian dtype '%s' is not supported", dt);
    return vio__fail(err, errsize, path, "dtype '%s' is not supported (float32 or float64 only)", dt);
  }
  if (strncmp(fortran, "True", 4) == 0) {
    free(hdr);
    return vio__fail(err, errsize, path, "Fortran-order arrays are not supported (save with C order)");
  }
  if (strncmp(fortran, "False", 5) != 0) {
    free(hdr);
    return vio__fail(err, errsize, path, "malformed fortran_order value in the .npy header");
  }
  int64_t dims[3] = {0, 0, 0};
  int nd = parse_shape(shape, dims);
  free(hdr);
  if (nd < 0) return vio__fail(err, errsize, path, "malformed shape in the .npy header");
  if (nd != 1 && nd != 2) return vio__fail(err, errsize, path, "a %d-d array; 1-d or 2-d expected", nd);
  int64_t n = dims[0], d = nd == 2 ? dims[1] : 1;
  if (n == 0 || d == 0) return vio__fail(err, errsize, path, "the array is empty (shape %lld x %lld)", (long long)n, (long long)d);
  if (d > INT32_MAX) return vio__fail(err, errsize, path, "too many columns (%lld)", (long long)d);
  int64_t count = vio__mul(n, d, INT64_MAX / 8);
  if (count < 0 || (uint64_t)count > SIZE_MAX / 8) return vio__fail(err, errsize, path, "shape too large");

  char what[96];
  snprintf(what, sizeof what, "%lld x %lld float%d values", (long long)n, (long long)d, itemsize * 8);
  if (vio__check_remaining(f, path, count * itemsize, what, err, errsize) != 0) return -1;
  /* an uncompressed file: read by several threads straight from where
   * the values start */
  const int64_t at = gzdirect(f) ? (int64_t)gztell(f) : -1;
  if (at > 0) {
    float *rows = NULL;
    if (vio__read_direct(path, at, count, itemsize, &rows, err, errsize) != 0) return -1;
    out->rows = rows;
    out->n = n;
    out->d = (int32_t)d;
    return 0;
  }
  /* Read in chunks into a buffer grown as the data arrive (a compressed
   * file cannot tell its size up front); float64 is converted chunk by
   * chunk so the file is never held twice. */
  enum { CHUNK = 1 << 16 };
  double *buf = malloc(CHUNK * sizeof(double));
  float *rows = NULL;
  size_t cap = 0;
  if (!buf) return vio__fail(err, errsize, path, "out of memory");
  for (int64_t done = 0; done < count;) {
    int64_t m = count - done < CHUNK ? count - done : CHUNK;
    if (vio__grow((void **)&rows, &cap, (size_t)(done + m) * sizeof(float), (size_t)count * sizeof(float)) != 0) {
      free(buf);
      free(rows);
      return vio__fail(err, errsize, path, "out of memory for %lld values", (long long)(done + m));
    }
    if (vio__read(f, buf, (size_t)m * (size_t)itemsize) != m * itemsize) {
      free(buf);
      free(rows);
      return vio__fail(err, errsize, path, "truncated data: fewer than %s", what);
    }
    if (itemsize == 4) memcpy(rows + done, buf, (size_t)m * 4);
    else for (int64_t i = 0; i < m; ++i) rows[done + i] = (float)buf[i];
    done += m;
  }
  free(buf);
  out->rows = rows;
  out->n = n;
  out->d = (int32_t)d;
  return 0;
}
