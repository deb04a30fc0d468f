/* .fvecs / .ivecs (TEXMEX layout): every row is an int32 dimension followed
 * by that many 4-byte values.  The dimension must be the same on every row;
 * a partial last row means the file was truncated. */
#include "vio_internal.h"

#include <stdlib.h>
#include <string.h>

/* Reads rows of 4-byte values (float or int32: same layout) from f. */
static int load_vecs(gzFile f, const char *path, const char *kind, void **rows_out, int64_t *n_out,
                     int32_t *d_out, char *err, size_t errsize) {
  int32_t d;
  int64_t got = vio__read(f, &d, 4);
  if (got == 0) return vio__fail(err, errsize, path, "the %s file is empty", kind);
  if (got != 4) return vio__fail(err, errsize, path, "truncated %s file (partial dimension field)", kind);
  if (d <= 0 || d > (1 << 24)) return vio__fail(err, errsize, path, "implausible %s dimension %d in row 0", kind, d);
  int64_t rec = 4 + 4 * (int64_t)d;
  /* Plain files tell their row count up front; compressed ones grow. */
  int64_t size = gzdirect(f) ? vio__file_size(path) : -1;
  /* A size that is not a whole number of rows is diagnosed while reading,
   * where the first ragged or partial row can be named. */
  /* The buffer grows as the rows arrive, each row in chunks, so that a
   * huge declared d costs memory only for the bytes actually present;
   * a plain file's whole rows bound it. */
  const size_t row_bytes = (size_t)d * 4;
  const size_t total = size > 0 ? (size_t)(size / rec + 1) * row_bytes : SIZE_MAX;
  unsigned char *rows = NULL;
  size_t cap = 0;
  int64_t n = 0;
  for (;;) {
    for (size_t off = 0; off < row_bytes;) {
      const size_t m = row_bytes - off < ((size_t)1 << 16) ? row_bytes - off : (size_t)1 << 16;
      const size_t at = (size_t)n * row_bytes + off;
      if (vio__grow((void **)&rows, &cap, at + m, total) != 0) {
        free(rows);
        return vio__fail(err, errsize, path, "out of memory for %lld rows", (long long)n + 1);
      }
      if (vio__read(f, rows + at, m) != (int64_t)m) {
        free(rows);
        return vio__fail(err, errsize, path, "truncated %s file: row %lld is incomplete", kind, (long long)n);
      }
      off += m;
    }
    ++n;
    int32_t next;
    got = vio__read(f, &next, 4);
    if (got == 0) break;
    if (got != 4 || next != d) {
      free(rows);
      if (got != 4) return vio__fail(err, errsize, path, "truncated %s file after row %lld", kind, (long long)(n - 1));
      return vio__fail(err, errsize, path, "row %lld has dimension %d, row 0 has %d", (long long)n, next, d);
    }
  }
  *rows_out = rows;
  *n_out = n;
  *d_out = d;
  return 0;
}

int vio__load_fvecs(gzFile f, const char *path, vio_matrix *out, char *err, size_t errsize) {
  void *rows = NULL;
  if (load_vecs(f, path, ".fvecs", &rows, &out->n, &out->d, err, errsize) != 0) return -1;
  out->rows = rows;
  return 0;
}

int vio_load_ivecs(const char *path, vio_imatrix *out, char *err, size_t errsize) {
  if (!out) return vio__fail(err, errsize, path, "no output matrix given");
  memset(out, 0, sizeof *out);
  gzFile f = path ? gzopen(path, "rb") : NULL;
  if (!f) return vio__fail(err, errsize, path, "cannot open for reading");
  void *rows = NULL;
  int rc = load_vecs(f, path, ".ivecs", &rows, &out->n, &out->d, err, errsize);
  gzclose(f);
  if (rc == 0) out->rows = rows;
  else memset(out, 0, sizeof *out);
  return rc;
}

static int save_vecs(const char *path, const void *rows, int64_t n, int32_t d, char *err, size_t errsize) {
  if (!rows || n <= 0 || d <= 0) return vio__fail(err, errsize, path, "nothing to save (n = %lld, d = %d)", (long long)n, d);
  FILE *f = path ? fopen(path, "wb") : NULL;
  if (!f) return vio__fail(err, errsize, path, "cannot open for writing");
  const unsigned char *p = rows;
  for (int64_t i = 0; i < n; ++i) {
    if (fwrite(&d, 4, 1, f) != 1 || fwrite(p + (size_t)i * (size_t)d * 4, 4, (size_t)d, f) != (size_t)d) {
      fclose(f);
      return vio__fail(err, errsize, path, "write failed at row %lld (disk full?)", (long long)i);
    }
  }
  if (fclose(f) != 0) return vio__fail(err, errsize, path, "write failed while closing (disk full?)");
  return 0;
}

int vio_save_fvecs(const char *path, const vio_matrix *m, char *err, size_t errsize) {
  if (!m) return vio__fail(err, errsize, path, "no matrix given");
  return save_vecs(path, m->rows, m->n, m->d, err, errsize);
}

int vio_save_ivecs(const char *path, const vio_imatrix *m, char *err, size_t errsize) {
  if (!m) return vio__fail(err, errsize, path, "no matrix given");
  return save_vecs(path, m->rows, m->n, m->d, err, errsize);
}
