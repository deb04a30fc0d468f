/* vic_snapshot's public calls: format detection, the file set of a
 * multi-file snapshot, and range reads spread over the files. */
#include "snap_internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int vsnap__fail(char *err, size_t errsize, const char *path, const char *fmt, ...) {
  if (err && errsize) {
    int used = snprintf(err, errsize, "%s: ", path ? path : "(no file)");
    if (used < 0 || (size_t)used >= errsize) used = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err + used, errsize - (size_t)used, fmt, ap);
    va_end(ap);
  }
  return -1;
}

void vsnap__swap_words(void *p, size_t count, size_t width) {
  unsigned char *b = p;
  for (size_t i = 0; i < count; ++i, b += width)
    for (size_t j = 0; j < width / 2; ++j) {
      unsigned char t = b[j];
      b[j] = b[width - 1 - j];
      b[width - 1 - j] = t;
    }
}

int64_t vsnap__file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (int64_t)st.st_size : -1;
}

int vsnap__file_set(vsnap *s, const char *path, int nfiles, char *err, size_t errsize) {
  s->files = calloc((size_t)nfiles, sizeof(char *));
  s->file_n = calloc((size_t)nfiles, sizeof(int64_t));
  s->file_type_n = calloc((size_t)nfiles * VSNAP_MAX_TYPES, sizeof(int64_t));
  if (!s->files || !s->file_n || !s->file_type_n) return vsnap__fail(err, errsize, path, "out of memory for the file list");
  s->nfiles = nfiles;
  if (nfiles == 1) {
    s->files[0] = strdup(path);
    return s->files[0] ? 0 : vsnap__fail(err, errsize, path, "out of memory");
  }
  /* the last ".<digits>" of the base name that ends the name or a dot */
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  const char *num = NULL, *num_end = NULL;
  for (const char *p = base; *p; ++p) {
    if (*p != '.' || !isdigit((unsigned char)p[1])) continue;
    const char *q = p + 1;
    while (isdigit((unsigned char)*q)) ++q;
    if (*q == '\0' || *q == '.') { num = p + 1; num_end = q; }
  }
  if (!num)
    return vsnap__fail(err, errsize, path,
                       "the header says the snapshot has %d files, but the name has no '.<number>' part "
                       "(as in snap.0 or snap.0.hdf5) to find the others by",
                       nfiles);
  size_t len = strlen(path) + 16;
  for (int i = 0; i < nfiles; ++i) {
    if (!(s->files[i] = malloc(len))) return vsnap__fail(err, errsize, path, "out of memory");
    snprintf(s->files[i], len, "%.*s%d%s", (int)(num - path), path, i, num_end);
  }
  return 0;
}

vsnap_format vsnap_detect(const char *path) {
  FILE *f = path ? fopen(path, "rb") : NULL;
  if (!f) return VSNAP_UNKNOWN;
  unsigned char b[16] = {0};
  size_t got = fread(b, 1, sizeof b, f);
  fclose(f);
  static const unsigned char h5sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  if (got >= 8 && memcmp(b, h5sig, 8) == 0) return VSNAP_HDF5;
  if (got >= 8) {
    uint32_t m;
    memcpy(&m, b, 4);
    uint32_t ms = m;
    vsnap__swap_words(&ms, 1, 4);
    if (m == 256u || ms == 256u) return VSNAP_GADGET1;
    if ((m == 8u || ms == 8u) && memcmp(b + 4, "HEAD", 4) == 0) return VSNAP_GADGET2;
  }
  if (got >= 5 && memcmp(b, "ITEM:", 5) == 0) return VSNAP_LAMMPS;
  return VSNAP_UNKNOWN;
}

const char *vsnap_format_name(vsnap_format f) {
  switch (f) {
  case VSNAP_GADGET1: return "Gadget format 1";
  case VSNAP_GADGET2: return "Gadget format 2";
  case VSNAP_HDF5: return "HDF5 snapshot";
  case VSNAP_LAMMPS: return "LAMMPS dump";
  default: return "unknown";
  }
}

int vsnap_open(const char *path, vsnap **out, char *err, size_t errsize) {
  if (!out) return vsnap__fail(err, errsize, path, "no output pointer given");
  *out = NULL;
  if (!path) return vsnap__fail(err, errsize, path, "no file name given");
  FILE *probe = fopen(path, "rb");
  if (!probe) return vsnap__fail(err, errsize, path, "cannot open for reading");
  fclose(probe);
  vsnap *s = calloc(1, sizeof *s);
  if (!s) return vsnap__fail(err, errsize, path, "out of memory");
  for (int j = 0; j < 3; ++j) s->info.periodic[j] = 1;
  for (int t = 0; t < VSNAP_MAX_TYPES; ++t) s->info.type_selected[t] = 1;
  vsnap_format f = vsnap_detect(path);
  int rc;
  switch (f) {
  case VSNAP_GADGET1:
  case VSNAP_GADGET2: rc = vsnap__open_gadget(s, path, err, errsize); break;
  case VSNAP_HDF5: rc = vsnap__open_hdf5(s, path, err, errsize); break;
  case VSNAP_LAMMPS: rc = vsnap__open_lammps(s, path, err, errsize); break;
  default:
    rc = vsnap__fail(err, errsize, path,
                     "not a particle snapshot: no Gadget record marker (256 or 8), HDF5 signature or "
                     "LAMMPS 'ITEM:' line at the start of the file");
  }
  if (rc != 0) {
    vsnap_close(s);
    return -1;
  }
  s->info.format = f;
  s->info.nfiles = s->nfiles;
  *out = s;
  return 0;
}

const vsnap_info *vsnap_get_info(const vsnap *s) { return s ? &s->info : NULL; }

void vsnap__count_selected(vsnap *s) {
  s->info.n = 0;
  for (int f = 0; f < s->nfiles; ++f) {
    s->file_n[f] = 0;
    for (int t = 0; t < s->info.ntypes; ++t)
      if (s->info.type_selected[t]) s->file_n[f] += s->file_type_n[(size_t)f * VSNAP_MAX_TYPES + t];
    s->info.n += s->file_n[f];
  }
}

int vsnap_select_types(vsnap *s, const int *selected, int count, char *err, size_t errsize) {
  if (!s) return vsnap__fail(err, errsize, NULL, "no snapshot given");
  if (s->info.ntypes == 0)
    return vsnap__fail(err, errsize, s->files[0],
                       "a %s has no particle-type blocks to select (its types are a column: use Threshold "
                       "on ParticleType)", vsnap_format_name(s->info.format));
  if (count < 0 || count > VSNAP_MAX_TYPES)
    return vsnap__fail(err, errsize, s->files[0], "%d type flags given, at most %d", count, VSNAP_MAX_TYPES);
  for (int t = 0; t < VSNAP_MAX_TYPES; ++t) s->info.type_selected[t] = t < count ? selected[t] != 0 : 1;
  vsnap__count_selected(s);
  return 0;
}

void vsnap_piece_range(int64_t n, int piece, int pieces, int64_t *first, int64_t *count) {
  if (pieces < 1) pieces = 1;
  if (piece < 0 || piece >= pieces) { *first = 0; *count = 0; return; }
  int64_t base = n / pieces, extra = n % pieces;
  *first = piece * base + (piece < extra ? piece : extra);
  *count = base + (piece < extra ? 1 : 0);
}

void vsnap_particles_free(vsnap_particles *p) {
  if (!p) return;
  free(p->pos); free(p->vel); free(p->mass); free(p->ids); free(p->type); free(p->extra);
  memset(p, 0, sizeof *p);
}

static void *alloc_rows(int64_t n, size_t bytes) { return malloc((size_t)(n > 0 ? n : 1) * bytes); }

int vsnap_read(vsnap *s, int64_t first, int64_t count, vsnap_particles *out, char *err, size_t errsize) {
  if (!out) return vsnap__fail(err, errsize, NULL, "no output given");
  memset(out, 0, sizeof *out);
  if (!s) return vsnap__fail(err, errsize, NULL, "no snapshot given");
  const vsnap_info *in = &s->info;
  if (first < 0 || count < 0 || first > in->n || count > in->n - first)
    return vsnap__fail(err, errsize, s->files[0], "particle range [%lld, %lld) outside the %lld particles",
                       (long long)first, (long long)(first + count), (long long)in->n);
  out->first = first;
  out->n = count;
  int ok = (out->pos = alloc_rows(count, 3 * sizeof(float))) != NULL;
  if (in->has_velocities) ok = ok && (out->vel = alloc_rows(count, 3 * sizeof(float)));
  if (in->has_masses) ok = ok && (out->mass = alloc_rows(count, sizeof(float)));
  if (in->has_ids) ok = ok && (out->ids = alloc_rows(count, sizeof(int64_t)));
  if (in->has_types) ok = ok && (out->type = alloc_rows(count, sizeof(int32_t)));
  if (in->nextra) ok = ok && (out->extra = alloc_rows(count, (size_t)in->nextra * sizeof(double)));
  if (!ok) {
    vsnap_particles_free(out);
    return vsnap__fail(err, errsize, s->files[0], "out of memory for %lld particles", (long long)count);
  }
  int64_t file_first = 0, row = 0;
  for (int f = 0; f < s->nfiles && row < count; ++f) {
    int64_t lo = first + row, file_end = file_first + s->file_n[f];
    if (lo < file_end) {
      int64_t take = file_end - lo < count - row ? file_end - lo : count - row;
      if (s->ops->read_file(s, f, lo - file_first, take, out, row, err, errsize) != 0) {
        vsnap_particles_free(out);
        return -1;
      }
      row += take;
    }
    file_first = file_end;
  }
  return 0;
}

void vsnap_close(vsnap *s) {
  if (!s) return;
  if (s->ops && s->ops->close) s->ops->close(s);
  for (int i = 0; s->files && i < s->nfiles; ++i) free(s->files[i]);
  free(s->files);
  free(s->file_n);
  free(s->file_type_n);
  free(s);
}
