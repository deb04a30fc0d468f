/* vio_load: recognises the format of a data file and hands it to the
 * matching reader.  Content decides first (magic numbers cannot lie about
 * the layout); the extension decides only for formats without a magic
 * number (.fvecs, .csv). */
#include "vio_internal.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int has_ext(const char *path, const char *ext) {
  size_t n = strlen(path), e = strlen(ext);
  if (n >= 3 && strcasecmp(path + n - 3, ".gz") == 0) n -= 3; /* data.fvecs.gz */
  return n > e && strncasecmp(path + n - e, ext, e) == 0;
}

/* A Gadget-1 file starts with the 256-byte header record: the Fortran
 * record marker 256 (either byte order) before and after it. */
static int looks_like_gadget(gzFile f, const unsigned char *head) {
  uint32_t m0;
  memcpy(&m0, head, 4);
  if (m0 != 256u && vio__bswap32(m0) != 256u) return 0;
  unsigned char tail[4];
  if (gzseek(f, 4 + 256, SEEK_SET) != 4 + 256 || vio__read(f, tail, 4) != 4) return 0;
  uint32_t m1;
  memcpy(&m1, tail, 4);
  return m1 == m0;
}

int vio_load(const char *path, vio_matrix *out, char *err, size_t errsize) {
  if (!out) return vio__fail(err, errsize, path, "no output matrix given");
  memset(out, 0, sizeof *out);
  if (!path) return vio__fail(err, errsize, path, "no path given");
  if (has_ext(path, ".ivecs"))
    return vio__fail(err, errsize, path, ".ivecs holds integer ids, not coordinates; use vio_load_ivecs");
  gzFile f = gzopen(path, "rb");
  if (!f) return vio__fail(err, errsize, path, "cannot open for reading");
  gzbuffer(f, 1 << 17);
  unsigned char head[8] = {0};
  int64_t got = vio__read(f, head, sizeof head);
  if (got < 0) {
    gzclose(f);
    return vio__fail(err, errsize, path, "read error (corrupt gzip stream?)");
  }
  int rc;
  int gadget = got >= 4 && !has_ext(path, ".fvecs") && looks_like_gadget(f, head);
  if (gzrewind(f) != 0) {
    gzclose(f);
    return vio__fail(err, errsize, path, "cannot rewind the file");
  }
  if (got >= 6 && memcmp(head, "\x93NUMPY", 6) == 0) {
    rc = vio__load_npy(f, path, out, err, errsize);
  } else if (got >= 4 && head[0] == 0 && head[1] == 0 && head[2] >= 0x08 && head[2] <= 0x0E &&
             head[3] >= 1 && head[3] <= 4) {
    rc = vio__load_idx(f, path, out, err, errsize);
  } else if (gadget) {
    gzclose(f);
    return vio_load_gadget(path, out, NULL, NULL, err, errsize);
  } else if (has_ext(path, ".fvecs")) {
    rc = vio__load_fvecs(f, path, out, err, errsize);
  } else if (has_ext(path, ".csv") || has_ext(path, ".txt")) {
    rc = vio__load_csv(f, path, out, err, errsize);
  } else if (got == 0) {
    rc = vio__fail(err, errsize, path, "the file is empty");
  } else if (has_ext(path, ".npy")) {
    rc = vio__fail(err, errsize, path, "not a NumPy .npy file (missing the \\x93NUMPY magic)");
  } else if (has_ext(path, ".dat") || has_ext(path, ".gadget")) {
    rc = vio__fail(err, errsize, path,
                   "not a Gadget format 1 snapshot (no 256-byte header record; format 2 is not read)");
  } else {
    rc = vio__fail(err, errsize, path,
                   "unrecognised format: expected .npy, .fvecs, IDX (MNIST), Gadget format 1 or .csv");
  }
  gzclose(f);
  if (rc != 0) vio_free(out);
  return rc;
}

void vio_free(vio_matrix *m) {
  if (!m) return;
  free(m->rows);
  memset(m, 0, sizeof *m);
}

void vio_ifree(vio_imatrix *m) {
  if (!m) return;
  free(m->rows);
  memset(m, 0, sizeof *m);
}
