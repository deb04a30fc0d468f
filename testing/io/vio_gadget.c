/* Gadget format 1 snapshot reader (one file of a snapshot).  The file is a
 * sequence of Fortran records, each framed by its byte length before and
 * after: the 256-byte header (npart[6] int32, massarr[6] float64, ...),
 * then POS (3 floats per particle), VEL, ID, and MASS for the types whose
 * massarr entry is 0.  Either byte order (told by the first marker) and
 * single or double precision blocks (told by the block length) are read. */
#include "vio_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  FILE *f;
  int swap;         /* file byte order differs from ours */
  const char *path;
  char *err;
  size_t errsize;
} reader;

static void swap_words(void *p, size_t count, size_t width) {
  unsigned char *b = p;
  for (size_t i = 0; i < count; ++i, b += width)
    for (size_t j = 0; j < width / 2; ++j) {
      unsigned char t = b[j];
      b[j] = b[width - 1 - j];
      b[width - 1 - j] = t;
    }
}

static int read_u32(reader *r, uint32_t *v) {
  if (fread(v, 4, 1, r->f) != 1) return -1;
  if (r->swap) *v = vio__bswap32(*v);
  return 0;
}

/* Reads one record's length and checks it is one of the expected sizes
 * (0 terminates the list); returns the length or -1 with the message set. */
static int64_t record_begin(reader *r, const char *block, const int64_t *sizes) {
  uint32_t len;
  if (read_u32(r, &len) != 0)
    return vio__fail(r->err, r->errsize, r->path, "truncated Gadget file: the %s block is missing", block);
  for (const int64_t *s = sizes; *s; ++s)
    if ((int64_t)len == *s) {
      /* the block must fit in what is left of the file before it is allocated */
      long at = ftell(r->f);
      int64_t size = vio__file_size(r->path);
      if (at >= 0 && size >= 0 && (int64_t)len > size - at)
        return vio__fail(r->err, r->errsize, r->path,
                         "truncated Gadget file: the %s block declares %u bytes, only %lld follow", block, len,
                         (long long)(size - at));
      return len;
    }
  return vio__fail(r->err, r->errsize, r->path, "Gadget %s block has %u bytes, expected %lld (corrupt file or not format 1)",
                   block, len, (long long)sizes[0]);
}

static int record_end(reader *r, const char *block, int64_t len) {
  uint32_t tail;
  if (read_u32(r, &tail) != 0) return vio__fail(r->err, r->errsize, r->path, "truncated Gadget %s block", block);
  if ((int64_t)tail != len)
    return vio__fail(r->err, r->errsize, r->path, "Gadget %s block: end marker %u differs from start marker %lld",
                     block, tail, (long long)len);
  return 0;
}

/* Reads a block of count floats stored as float32 or float64 (told by the
 * record length) into a new float array. */
static float *read_floats(reader *r, const char *block, int64_t count) {
  int64_t sizes[3] = {4 * count, 8 * count, 0};
  int64_t len = record_begin(r, block, sizes);
  if (len < 0) return NULL;
  float *v = malloc((size_t)count * sizeof(float) + 1);
  if (!v) { vio__fail(r->err, r->errsize, r->path, "out of memory for the %s block", block); return NULL; }
  int ok;
  if (len == 4 * count) {
    ok = fread(v, 4, (size_t)count, r->f) == (size_t)count;
    if (ok && r->swap) swap_words(v, (size_t)count, 4);
  } else {
    double *tmp = malloc((size_t)count * sizeof(double) + 1);
    ok = tmp && fread(tmp, 8, (size_t)count, r->f) == (size_t)count;
    if (ok && r->swap) swap_words(tmp, (size_t)count, 8);
    for (int64_t i = 0; ok && i < count; ++i) v[i] = (float)tmp[i];
    free(tmp);
  }
  if (!ok) {
    free(v);
    vio__fail(r->err, r->errsize, r->path, "truncated Gadget %s block", block);
    return NULL;
  }
  if (record_end(r, block, len) != 0) { free(v); return NULL; }
  return v;
}

static int skip_record(reader *r, const char *block, const int64_t *sizes) {
  int64_t len = record_begin(r, block, sizes);
  if (len < 0) return -1;
  if (fseek(r->f, (long)len, SEEK_CUR) != 0) return vio__fail(r->err, r->errsize, r->path, "truncated Gadget %s block", block);
  return record_end(r, block, len);
}

int vio_load_gadget(const char *path, vio_matrix *pos, vio_matrix *vel, float **mass, char *err,
                    size_t errsize) {
  if (!pos) return vio__fail(err, errsize, path, "no position matrix given");
  memset(pos, 0, sizeof *pos);
  if (vel) memset(vel, 0, sizeof *vel);
  if (mass) *mass = NULL;
  reader r = {path ? fopen(path, "rb") : NULL, 0, path, err, errsize};
  if (!r.f) return vio__fail(err, errsize, path, "cannot open for reading");
  float *p = NULL, *v = NULL, *m = NULL, *mblock = NULL;
  int rc = -1;

  uint32_t first;
  unsigned char hdr[256];
  if (fread(&first, 4, 1, r.f) != 1) { vio__fail(err, errsize, path, "truncated Gadget file (no header)"); goto done; }
  if (first == 8u || vio__bswap32(first) == 8u) {
    vio__fail(err, errsize, path, "Gadget format 2 (labelled blocks) is not supported; write format 1");
    goto done;
  }
  if (first != 256u && vio__bswap32(first) != 256u) {
    vio__fail(err, errsize, path, "not a Gadget format 1 file: first record has %u bytes, the header has 256", first);
    goto done;
  }
  r.swap = first != 256u;
  if (fread(hdr, 256, 1, r.f) != 1) { vio__fail(err, errsize, path, "truncated Gadget header"); goto done; }
  if (record_end(&r, "header", 256) != 0) goto done;

  int32_t npart[6];
  double massarr[6];
  memcpy(npart, hdr, sizeof npart);
  memcpy(massarr, hdr + 24, sizeof massarr);
  if (r.swap) { swap_words(npart, 6, 4); swap_words(massarr, 6, 8); }
  int64_t n = 0, n_with_mass = 0;
  for (int t = 0; t < 6; ++t) {
    if (npart[t] < 0 || !(massarr[t] >= 0)) {
      vio__fail(err, errsize, path, "corrupt Gadget header: type %d has npart %d, massarr %g", t, npart[t], massarr[t]);
      goto done;
    }
    n += npart[t];
    if (massarr[t] == 0) n_with_mass += npart[t];
  }
  if (n == 0) { vio__fail(err, errsize, path, "the Gadget file holds no particles"); goto done; }

  if (!(p = read_floats(&r, "POS", 3 * n))) goto done;
  if (vel || mass) {
    if (!(v = read_floats(&r, "VEL", 3 * n))) goto done;
  }
  if (mass) {
    int64_t id_sizes[3] = {4 * n, 8 * n, 0};
    if (skip_record(&r, "ID", id_sizes) != 0) goto done;
    if (n_with_mass > 0 && !(mblock = read_floats(&r, "MASS", n_with_mass))) goto done;
    if (!(m = malloc((size_t)n * sizeof(float)))) { vio__fail(err, errsize, path, "out of memory for masses"); goto done; }
    int64_t i = 0, j = 0;
    for (int t = 0; t < 6; ++t)
      for (int32_t q = 0; q < npart[t]; ++q, ++i) m[i] = massarr[t] == 0 ? mblock[j++] : (float)massarr[t];
  }
  pos->rows = p; pos->n = n; pos->d = 3; p = NULL;
  if (vel) { vel->rows = v; vel->n = n; vel->d = 3; v = NULL; }
  if (mass) { *mass = m; m = NULL; }
  rc = 0;
done:
  fclose(r.f);
  free(p);
  free(v);
  free(m);
  free(mblock);
  return rc;
}
