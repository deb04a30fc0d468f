/* Gadget format 1 and 2 snapshots.  A file is a sequence of Fortran
 * records, each framed by its byte length before and after.  Format 1:
 * the 256-byte header, then POS, VEL, ID and MASS (the last only for the
 * types whose mass-table entry is 0) in that order; format 2 puts before
 * each block an 8-byte record holding its 4-character label and size.
 * The byte order is told by the first marker, single or double precision
 * and 32- or 64-bit ids by the block length.  Opening reads every file's
 * header and checks each needed block's markers, so that a truncated or
 * mislabelled file fails at open, not half-way through a read. */
#define _FILE_OFFSET_BITS 64
#include "snap_internal.h"

#include <stdlib.h>
#include <string.h>

enum { POS, VEL, ID, MASS, NBLOCKS };
static const char *block_name[NBLOCKS] = {"POS", "VEL", "ID", "MASS"};

typedef struct {
  int swap;
  int64_t npart[6];
  int64_t offset[NBLOCKS]; /* byte offset of the block's data, -1 when absent */
  int width[NBLOCKS];      /* bytes per value: 4 or 8 */
} gfile;

typedef struct {
  gfile *files;
} gadget;

typedef struct {
  FILE *f;
  int swap;
  const char *path;
  char *err;
  size_t errsize;
} stream;

static int read_u32(stream *r, uint32_t *v) {
  if (fread(v, 4, 1, r->f) != 1) return -1;
  if (r->swap) vsnap__swap_words(v, 1, 4);
  return 0;
}

/* Reads a record's start marker; -2 at a clean end of file. */
static int64_t record_begin(stream *r) {
  uint32_t len;
  if (fread(&len, 4, 1, r->f) != 1) return -2;
  if (r->swap) vsnap__swap_words(&len, 1, 4);
  return (int64_t)len;
}

/* Skips a record's data and checks its end marker. */
static int record_skip(stream *r, const char *block, int64_t len) {
  uint32_t tail;
  if (fseeko(r->f, (off_t)len, SEEK_CUR) != 0 || read_u32(r, &tail) != 0)
    return vsnap__fail(r->err, r->errsize, r->path, "truncated Gadget file: the %s block (%lld bytes) is cut short",
                       block, (long long)len);
  if ((int64_t)tail != len)
    return vsnap__fail(r->err, r->errsize, r->path,
                       "Gadget %s block: end marker %u differs from start marker %lld (corrupt or truncated file)",
                       block, tail, (long long)len);
  return 0;
}

/* Checks a data block's length against the particles it must hold and
 * records where its data start. */
static int take_block(stream *r, gfile *g, int b, int64_t len, int64_t values) {
  if (len == 4 * values || (len == 8 * values && values > 0))
    g->width[b] = len == 8 * values && values > 0 ? 8 : 4;
  else
    return vsnap__fail(r->err, r->errsize, r->path,
                       "Gadget %s block has %lld bytes; %lld values need %lld (single) or %lld (double "
                       "precision) -- wrong block size or a header that does not match the file",
                       block_name[b], (long long)len, (long long)values, (long long)(4 * values),
                       (long long)(8 * values));
  g->offset[b] = (int64_t)ftello(r->f);
  return record_skip(r, block_name[b], len);
}

static int64_t header_i32(const unsigned char *h, int at, int swap) {
  int32_t v;
  memcpy(&v, h + at, 4);
  if (swap) vsnap__swap_words(&v, 1, 4);
  return v;
}
static uint32_t header_u32(const unsigned char *h, int at, int swap) {
  uint32_t v;
  memcpy(&v, h + at, 4);
  if (swap) vsnap__swap_words(&v, 1, 4);
  return v;
}
static double header_f64(const unsigned char *h, int at, int swap) {
  double v;
  memcpy(&v, h + at, 8);
  if (swap) vsnap__swap_words(&v, 1, 8);
  return v;
}

/* Format 2's label record before a block: its name; -2 at end of file. */
static int read_label(stream *r, char label[5]) {
  int64_t len = record_begin(r);
  if (len == -2) return -2;
  if (len != 8)
    return vsnap__fail(r->err, r->errsize, r->path,
                       "Gadget format 2 label record has %lld bytes, expected 8 (corrupt file)", (long long)len);
  unsigned char b[8];
  uint32_t tail;
  if (fread(b, 8, 1, r->f) != 1 || read_u32(r, &tail) != 0)
    return vsnap__fail(r->err, r->errsize, r->path, "truncated Gadget file: a block label is cut short");
  if (tail != 8)
    return vsnap__fail(r->err, r->errsize, r->path, "Gadget format 2 label record: end marker %u, expected 8", tail);
  memcpy(label, b, 4);
  label[4] = '\0';
  for (int i = 3; i >= 0 && label[i] == ' '; --i) label[i] = '\0';
  return 0;
}

/* Opens one file, reads its header into g (and, for the first file, the
 * snapshot-wide fields into info) and locates the blocks. */
static int scan_file(const char *path, int format2, int first_file, vsnap_info *info, int *nfiles,
                     gfile *g, char *err, size_t errsize) {
  stream r = {fopen(path, "rb"), 0, path, err, errsize};
  if (!r.f) return vsnap__fail(err, errsize, path, "cannot open this file of the snapshot for reading");
  int rc = -1;
  for (int b = 0; b < NBLOCKS; ++b) g->offset[b] = -1;
  uint32_t first;
  if (fread(&first, 4, 1, r.f) != 1) { vsnap__fail(err, errsize, path, "truncated Gadget file (no header)"); goto done; }
  uint32_t want = format2 ? 8u : 256u, swapped = first;
  vsnap__swap_words(&swapped, 1, 4);
  if (first != want && swapped != want) {
    vsnap__fail(err, errsize, path, "not a Gadget format %d file: the first record marker is %u, expected %u",
                format2 ? 2 : 1, first, want);
    goto done;
  }
  r.swap = g->swap = first != want;
  if (format2) {
    char label[5];
    rewind(r.f);
    if (read_label(&r, label) != 0) {
      vsnap__fail(err, errsize, path, "truncated Gadget format 2 file (no header label)");
      goto done;
    }
    if (strcmp(label, "HEAD") != 0) {
      vsnap__fail(err, errsize, path, "Gadget format 2 file starts with block '%s', expected HEAD", label);
      goto done;
    }
    uint32_t hlen;
    if (read_u32(&r, &hlen) != 0 || hlen != 256u) {
      vsnap__fail(err, errsize, path, "Gadget header record has %u bytes, expected 256", hlen);
      goto done;
    }
  }
  unsigned char h[256];
  if (fread(h, 256, 1, r.f) != 1) { vsnap__fail(err, errsize, path, "truncated Gadget header"); goto done; }
  uint32_t tail;
  if (read_u32(&r, &tail) != 0 || tail != 256u) {
    vsnap__fail(err, errsize, path, "Gadget header: end marker %u, expected 256 (corrupt file)", tail);
    goto done;
  }
  int64_t n = 0, n_mass = 0;
  for (int t = 0; t < 6; ++t) {
    g->npart[t] = header_i32(h, 4 * t, r.swap);
    double m = header_f64(h, 24 + 8 * t, r.swap);
    if (g->npart[t] < 0 || !(m >= 0)) {
      vsnap__fail(err, errsize, path, "corrupt Gadget header: type %d has %lld particles and mass %g", t,
                  (long long)g->npart[t], m);
      goto done;
    }
    if (first_file) info->mass_table[t] = m;
    else if (m != info->mass_table[t]) {
      vsnap__fail(err, errsize, path, "the mass table of this file (type %d: %g) differs from the first file's (%g)",
                  t, m, info->mass_table[t]);
      goto done;
    }
    n += g->npart[t];
    if (info->mass_table[t] == 0) n_mass += g->npart[t];
  }
  if (first_file) {
    info->ntypes = 6;
    info->time = header_f64(h, 72, r.swap);
    info->redshift = header_f64(h, 80, r.swap);
    info->has_time = info->has_redshift = 1;
    for (int t = 0; t < 6; ++t)
      info->npart[t] = (int64_t)((uint64_t)header_u32(h, 96 + 4 * t, r.swap) |
                                 (uint64_t)header_u32(h, 168 + 4 * t, r.swap) << 32); /* a damaged high word: checked against the files */
    *nfiles = (int)header_i32(h, 124, r.swap);
    double box = header_f64(h, 128, r.swap);
    if (!(box >= 0) || box > 1e300) {
      vsnap__fail(err, errsize, path, "corrupt Gadget header: BoxSize is %g", box);
      goto done;
    }
    if (box > 0) {
      info->has_box = 1;
      info->box[0] = info->box[1] = info->box[2] = box;
    }
    info->omega0 = header_f64(h, 136, r.swap);
    info->omega_lambda = header_f64(h, 144, r.swap);
    info->hubble_param = header_f64(h, 152, r.swap);
    info->has_cosmology = 1;
  }
  /* the blocks: format 1 in fixed order, format 2 by label (others skipped) */
  const int64_t values[NBLOCKS] = {3 * n, 3 * n, n, n_mass};
  const int needed[NBLOCKS] = {1, 1, 1, n_mass > 0};
  for (int b = 0; !format2 && b < NBLOCKS && needed[b]; ++b) {
    int64_t len = record_begin(&r);
    if (len == -2) {
      vsnap__fail(err, errsize, path, "truncated Gadget file: the %s block is missing", block_name[b]);
      goto done;
    }
    if (take_block(&r, g, b, len, values[b]) != 0) goto done;
  }
  while (format2) {
    char label[5];
    int got = read_label(&r, label);
    if (got == -2) break;
    if (got != 0) goto done;
    int64_t len = record_begin(&r);
    if (len == -2) {
      vsnap__fail(err, errsize, path, "truncated Gadget file: the %s block is missing after its label", label);
      goto done;
    }
    int b = NBLOCKS;
    for (int k = 0; k < NBLOCKS; ++k)
      if (strcmp(label, block_name[k]) == 0) b = k;
    if (b == NBLOCKS) {
      if (record_skip(&r, label, len) != 0) goto done;
    } else if (take_block(&r, g, b, len, values[b]) != 0) goto done;
  }
  for (int b = 0; b < NBLOCKS; ++b)
    if (needed[b] && g->offset[b] < 0) {
      vsnap__fail(err, errsize, path, "the Gadget file has no %s block%s", block_name[b],
                  b == MASS ? " although the mass table has zero entries for types with particles" : "");
      goto done;
    }
  rc = 0;
done:
  fclose(r.f);
  return rc;
}

/* Reads count values of `width` bytes at offset + index*width*comps into
 * floats (or, with as_id, int64). */
static int read_values(FILE *f, const gfile *g, int b, int64_t index, int64_t count, int comps, float *fl,
                       int64_t *id, const char *path, char *err, size_t errsize) {
  int w = g->width[b];
  size_t items = (size_t)count * (size_t)comps;
  if (items == 0) return 0;
  unsigned char *buf = malloc(items * (size_t)w);
  if (!buf) return vsnap__fail(err, errsize, path, "out of memory reading the %s block", block_name[b]);
  int ok = fseeko(f, (off_t)(g->offset[b] + index * w * comps), SEEK_SET) == 0 && fread(buf, (size_t)w, items, f) == items;
  if (ok) {
    if (g->swap) vsnap__swap_words(buf, items, (size_t)w);
    for (size_t i = 0; i < items; ++i) {
      if (id) {
        if (w == 4) { uint32_t v; memcpy(&v, buf + 4 * i, 4); id[i] = v; }
        else { uint64_t v; memcpy(&v, buf + 8 * i, 8); id[i] = (int64_t)v; }
      } else if (w == 4) memcpy(fl + i, buf + 4 * i, 4);
      else { double v; memcpy(&v, buf + 8 * i, 8); fl[i] = (float)v; }
    }
  }
  free(buf);
  return ok ? 0 : vsnap__fail(err, errsize, path, "read error in the %s block (file changed since it was opened?)",
                              block_name[b]);
}

static int gadget_read_file(vsnap *s, int file, int64_t local_first, int64_t count, vsnap_particles *out,
                            int64_t row, char *err, size_t errsize) {
  const gadget *gd = s->impl;
  const gfile *g = &gd->files[file];
  const char *path = s->files[file];
  FILE *f = fopen(path, "rb");
  if (!f) return vsnap__fail(err, errsize, path, "cannot open this file of the snapshot for reading");
  int rc = 0;
  /* sel_first counts the selected types' particles (the range's index
   * space), all_first every type's (the blocks' index), mass_first the
   * MASS block's */
  int64_t sel_first = 0, all_first = 0, mass_first = 0;
  for (int t = 0; t < 6 && rc == 0; ++t) {
    const int64_t nt = g->npart[t];
    if (s->info.type_selected[t]) {
      int64_t lo = local_first > sel_first ? local_first : sel_first;
      int64_t hi = local_first + count < sel_first + nt ? local_first + count : sel_first + nt;
      if (lo < hi) {
        int64_t r0 = row + (lo - local_first), k = hi - lo, at = lo - sel_first;
        rc = read_values(f, g, POS, all_first + at, k, 3, out->pos + 3 * r0, NULL, path, err, errsize);
        if (rc == 0 && out->vel)
          rc = read_values(f, g, VEL, all_first + at, k, 3, out->vel + 3 * r0, NULL, path, err, errsize);
        if (rc == 0 && out->ids) rc = read_values(f, g, ID, all_first + at, k, 1, NULL, out->ids + r0, path, err, errsize);
        if (rc == 0 && s->info.mass_table[t] == 0)
          rc = read_values(f, g, MASS, mass_first + at, k, 1, out->mass + r0, NULL, path, err, errsize);
        else
          for (int64_t i = 0; i < k; ++i) out->mass[r0 + i] = (float)s->info.mass_table[t];
        for (int64_t i = 0; i < k; ++i) out->type[r0 + i] = t;
      }
      sel_first += nt;
    }
    if (s->info.mass_table[t] == 0) mass_first += nt;
    all_first += nt;
  }
  fclose(f);
  return rc;
}

static void gadget_close(vsnap *s) {
  gadget *gd = s->impl;
  if (gd) free(gd->files);
  free(gd);
  s->impl = NULL;
}

static const vsnap_ops gadget_ops = {gadget_read_file, gadget_close};

int vsnap__open_gadget(vsnap *s, const char *path, char *err, size_t errsize) {
  s->ops = &gadget_ops;
  gadget *gd = calloc(1, sizeof *gd);
  if (!(s->impl = gd)) return vsnap__fail(err, errsize, path, "out of memory");
  int format2 = vsnap_detect(path) == VSNAP_GADGET2;
  gfile head;
  int nfiles = 0;
  if (scan_file(path, format2, 1, &s->info, &nfiles, &head, err, errsize) != 0) return -1;
  if (nfiles < 1 || nfiles > 1000000) nfiles = 1; /* old writers leave num_files 0 */
  if (vsnap__file_set(s, path, nfiles, err, errsize) != 0) return -1;
  if (!(gd->files = calloc((size_t)nfiles, sizeof(gfile)))) return vsnap__fail(err, errsize, path, "out of memory");
  int64_t sum[6] = {0};
  for (int f = 0; f < nfiles; ++f) {
    if (nfiles == 1) gd->files[0] = head;
    else if (scan_file(s->files[f], format2, 0, &s->info, &nfiles, &gd->files[f], err, errsize) != 0) return -1;
    if (gd->files[f].swap != head.swap)
      return vsnap__fail(err, errsize, s->files[f], "this file's byte order differs from the first file's");
    for (int t = 0; t < 6; ++t) {
      sum[t] += gd->files[f].npart[t];
      s->file_type_n[(size_t)f * VSNAP_MAX_TYPES + t] = gd->files[f].npart[t];
    }
  }
  for (int t = 0; t < 6; ++t) {
    /* single files written by hand often leave npartTotal 0: trust npart */
    if (nfiles > 1 && s->info.npart[t] != sum[t])
      return vsnap__fail(err, errsize, path,
                         "the header's total for type %d is %lld particles but the %d files hold %lld "
                         "(a file of the snapshot is missing or from another snapshot)",
                         t, (long long)s->info.npart[t], nfiles, (long long)sum[t]);
    s->info.npart[t] = sum[t];
  }
  vsnap__count_selected(s);
  if (s->info.n == 0) return vsnap__fail(err, errsize, path, "the Gadget snapshot holds no particles");
  s->info.has_velocities = s->info.has_ids = s->info.has_masses = s->info.has_types = 1;
  return 0;
}
