/* LAMMPS text dumps (dump style atom/custom): the first frame's
 *   ITEM: TIMESTEP / ITEM: NUMBER OF ATOMS / ITEM: BOX BOUNDS xx yy zz /
 *   ITEM: ATOMS <column names>
 * sections.  Columns id, type, x y z (or scaled xs ys zs, unwrapped xu
 * yu zu, xsu ysu zsu), vx vy vz and mass map to the snapshot's arrays;
 * every other column becomes a named array.  Scaled coordinates are
 * unscaled with the box bounds.  Opening counts the atom lines, so a
 * truncated dump fails at open; a range read skips to its first line. */
#define _FILE_OFFSET_BITS 64
#include "snap_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { COL_EXTRA = -1, COL_ID = 0, COL_TYPE, COL_X, COL_Y, COL_Z, COL_VX, COL_VY, COL_VZ, COL_MASS, NROLES };

typedef struct {
  int64_t data_offset; /* byte offset of the first atom line */
  int64_t data_line;   /* its line number (1-based), for messages */
  int ncols;
  int role[VSNAP_MAX_EXTRA + NROLES]; /* per column: COL_*, or COL_EXTRA */
  int extra_index[VSNAP_MAX_EXTRA + NROLES];
  int scaled[3];
  double lo[3], hi[3];
} lammps;

#define LINE_MAX_LEN 65536

static int read_line(FILE *f, char *buf, int64_t *lineno) {
  if (!fgets(buf, LINE_MAX_LEN, f)) return -1;
  ++*lineno;
  size_t len = strlen(buf);
  while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r')) buf[--len] = '\0';
  return 0;
}

static int column_role(const char *name, int *scaled) {
  static const char *axes = "xyz";
  if (!strcmp(name, "id")) return COL_ID;
  if (!strcmp(name, "type")) return COL_TYPE;
  if (!strcmp(name, "mass")) return COL_MASS;
  for (int j = 0; j < 3; ++j) {
    char x[2] = {axes[j], 0}, xs[3] = {axes[j], 's', 0}, xu[3] = {axes[j], 'u', 0}, xsu[4] = {axes[j], 's', 'u', 0},
         vx[3] = {'v', axes[j], 0};
    if (!strcmp(name, x) || !strcmp(name, xu)) { scaled[j] = 0; return COL_X + j; }
    if (!strcmp(name, xs) || !strcmp(name, xsu)) { scaled[j] = 1; return COL_X + j; }
    if (!strcmp(name, vx)) return COL_VX + j;
  }
  return COL_EXTRA;
}

static int parse_atoms_header(vsnap *s, lammps *lm, char *names, const char *path, int64_t lineno, char *err,
                              size_t errsize) {
  int seen[NROLES] = {0};
  lm->ncols = 0;
  for (char *tok = strtok(names, " \t"); tok; tok = strtok(NULL, " \t")) {
    if (lm->ncols >= VSNAP_MAX_EXTRA + NROLES)
      return vsnap__fail(err, errsize, path, "line %lld: more than %d ATOMS columns", (long long)lineno,
                         VSNAP_MAX_EXTRA + NROLES);
    int c = lm->ncols++;
    int role = column_role(tok, lm->scaled);
    if (role != COL_EXTRA && seen[role]++)
      return vsnap__fail(err, errsize, path, "line %lld: the ATOMS columns name '%s' twice (or two forms of it)",
                         (long long)lineno, tok);
    lm->role[c] = role;
    if (role == COL_EXTRA) {
      if (s->info.nextra >= VSNAP_MAX_EXTRA)
        return vsnap__fail(err, errsize, path, "line %lld: more than %d extra ATOMS columns", (long long)lineno,
                           VSNAP_MAX_EXTRA);
      lm->extra_index[c] = s->info.nextra;
      snprintf(s->info.extra_names[s->info.nextra++], VSNAP_NAME_LEN, "%s", tok);
    }
  }
  if (!seen[COL_X] || !seen[COL_Y] || !seen[COL_Z])
    return vsnap__fail(err, errsize, path,
                       "line %lld: the ATOMS columns lack x, y or z (or xs/xu/xsu ...); positions are needed",
                       (long long)lineno);
  int nv = seen[COL_VX] + seen[COL_VY] + seen[COL_VZ];
  if (nv != 0 && nv != 3)
    return vsnap__fail(err, errsize, path, "line %lld: the ATOMS columns have %d of vx, vy, vz; give all three or none",
                       (long long)lineno, nv);
  s->info.has_velocities = nv == 3;
  s->info.has_ids = seen[COL_ID];
  s->info.has_types = seen[COL_TYPE];
  s->info.has_masses = seen[COL_MASS];
  return 0;
}

static int parse_i64(const char *text, int64_t *v) {
  char *end;
  errno = 0;
  long long x = strtoll(text, &end, 10);
  while (isspace((unsigned char)*end)) ++end;
  if (errno || end == text || *end) return -1;
  *v = x;
  return 0;
}

static const vsnap_ops lammps_ops;

int vsnap__open_lammps(vsnap *s, const char *path, char *err, size_t errsize) {
  s->ops = &lammps_ops;
  lammps *lm = calloc(1, sizeof *lm);
  char *line = malloc(LINE_MAX_LEN);
  FILE *f = fopen(path, "rb");
  int rc = -1;
  if (!(s->impl = lm) || !line || !f) {
    vsnap__fail(err, errsize, path, f ? "out of memory" : "cannot open for reading");
    goto done;
  }
  if (vsnap__file_set(s, path, 1, err, errsize) != 0) goto done;
  int64_t lineno = 0, natoms = -1;
  int have_box = 0;
  for (;;) {
    if (read_line(f, line, &lineno) != 0) {
      vsnap__fail(err, errsize, path, "the dump ends at line %lld before an 'ITEM: ATOMS' section", (long long)lineno);
      goto done;
    }
    if (strncmp(line, "ITEM:", 5) != 0) {
      vsnap__fail(err, errsize, path, "line %lld: expected an 'ITEM:' line, found '%.40s'", (long long)lineno, line);
      goto done;
    }
    const char *item = line + 5;
    while (*item == ' ') ++item;
    if (!strncmp(item, "TIMESTEP", 8) || !strncmp(item, "NUMBER OF ATOMS", 15) || !strncmp(item, "TIME", 4)) {
      int what = item[0] == 'N' ? 1 : !strncmp(item, "TIMESTEP", 8) ? 0 : 2;
      char *value = malloc(LINE_MAX_LEN);
      int64_t iv = 0;
      int bad = !value || read_line(f, value, &lineno) != 0;
      if (!bad && what == 2) {
        char *end;
        s->info.time = strtod(value, &end);
        s->info.has_time = 1;
        bad = end == value;
      } else if (!bad) bad = parse_i64(value, &iv) != 0;
      free(value);
      if (bad) {
        vsnap__fail(err, errsize, path, "line %lld: the %s item has no valid number after it", (long long)lineno,
                    what == 1 ? "NUMBER OF ATOMS" : what == 0 ? "TIMESTEP" : "TIME");
        goto done;
      }
      if (what == 0) { s->info.timestep = iv; s->info.has_timestep = 1; }
      if (what == 1) {
        if (iv < 0) { vsnap__fail(err, errsize, path, "line %lld: NUMBER OF ATOMS is negative", (long long)lineno); goto done; }
        natoms = iv;
      }
    } else if (!strncmp(item, "BOX BOUNDS", 10)) {
      const char *flags = item + 10;
      if (strstr(flags, "xy") || strstr(flags, "xz") || strstr(flags, "yz")) {
        vsnap__fail(err, errsize, path, "line %lld: triclinic boxes (xy xz yz tilts) are not supported", (long long)lineno);
        goto done;
      }
      char fl[3][3] = {"pp", "pp", "pp"};
      int nf = sscanf(flags, " %2s %2s %2s", fl[0], fl[1], fl[2]);
      if (nf != 3 && nf != EOF && nf != 0) {
        vsnap__fail(err, errsize, path, "line %lld: BOX BOUNDS needs three boundary flags (as 'pp pp pp')", (long long)lineno);
        goto done;
      }
      for (int j = 0; j < 3; ++j) {
        char bl[256];
        char *rest;
        if (!fgets(bl, sizeof bl, f)) { vsnap__fail(err, errsize, path, "the dump ends inside BOX BOUNDS"); goto done; }
        ++lineno;
        s->info.periodic[j] = fl[j][0] == 'p';
        lm->lo[j] = strtod(bl, &rest);
        char *rest2;
        lm->hi[j] = strtod(rest, &rest2);
        if (rest == bl || rest2 == rest || !(lm->hi[j] > lm->lo[j])) {
          vsnap__fail(err, errsize, path, "line %lld: a box bound line needs 'lo hi' with lo < hi", (long long)lineno);
          goto done;
        }
        s->info.origin[j] = lm->lo[j];
        s->info.box[j] = lm->hi[j] - lm->lo[j];
      }
      have_box = s->info.has_box = 1;
    } else if (!strncmp(item, "ATOMS", 5)) {
      if (natoms < 0) { vsnap__fail(err, errsize, path, "line %lld: ITEM: ATOMS before ITEM: NUMBER OF ATOMS", (long long)lineno); goto done; }
      if (parse_atoms_header(s, lm, line + (item - line) + 5, path, lineno, err, errsize) != 0) goto done;
      if (!have_box && (lm->scaled[0] || lm->scaled[1] || lm->scaled[2])) {
        vsnap__fail(err, errsize, path, "scaled coordinates need ITEM: BOX BOUNDS before ITEM: ATOMS");
        goto done;
      }
      break;
    } else {
      /* an item this reader does not use (UNITS, ...): skip to the next one */
      off_t at;
      do {
        at = ftello(f);
        if (read_line(f, line, &lineno) != 0) break;
      } while (strncmp(line, "ITEM:", 5) != 0);
      fseeko(f, at, SEEK_SET);
      --lineno;
    }
  }
  lm->data_offset = (int64_t)ftello(f);
  lm->data_line = lineno + 1;
  /* count the frame's atom lines, so that a short dump fails now */
  int64_t lines = 0;
  while (lines < natoms && read_line(f, line, &lineno) == 0) {
    if (!strncmp(line, "ITEM:", 5)) break;
    ++lines;
  }
  if (lines < natoms) {
    vsnap__fail(err, errsize, path, "the ATOMS section has %lld lines, but NUMBER OF ATOMS is %lld (truncated dump?)",
                (long long)lines, (long long)natoms);
    goto done;
  }
  if (natoms == 0) { vsnap__fail(err, errsize, path, "the dump holds no atoms"); goto done; }
  s->file_n[0] = s->info.n = natoms;
  s->info.ntypes = 0;
  rc = 0;
done:
  if (f) fclose(f);
  free(line);
  return rc;
}

static int lammps_read_file(vsnap *s, int file, int64_t local_first, int64_t count, vsnap_particles *out,
                            int64_t row, char *err, size_t errsize) {
  const lammps *lm = s->impl;
  const char *path = s->files[file];
  FILE *f = fopen(path, "rb");
  char *line = malloc(LINE_MAX_LEN);
  int rc = -1;
  if (!f || !line) { vsnap__fail(err, errsize, path, f ? "out of memory" : "cannot open for reading"); goto done; }
  if (fseeko(f, (off_t)lm->data_offset, SEEK_SET) != 0) { vsnap__fail(err, errsize, path, "cannot seek to the atoms"); goto done; }
  int64_t lineno = lm->data_line - 1;
  for (int64_t i = 0; i < local_first; ++i)
    if (read_line(f, line, &lineno) != 0) { vsnap__fail(err, errsize, path, "the dump changed since it was opened"); goto done; }
  for (int64_t i = 0; i < count; ++i) {
    if (read_line(f, line, &lineno) != 0) { vsnap__fail(err, errsize, path, "the dump changed since it was opened"); goto done; }
    int64_t r = row + i;
    char *p = line;
    for (int c = 0; c < lm->ncols; ++c) {
      char *end;
      errno = 0;
      const int integer = lm->role[c] == COL_ID || lm->role[c] == COL_TYPE; /* ids beyond 2^53 stay exact */
      long long iv = integer ? strtoll(p, &end, 10) : 0;
      double v = integer ? (double)iv : strtod(p, &end);
      if (integer && end != p && (*end == '.' || *end == 'e' || *end == 'E')) end = p; /* not an integer */
      if (end == p) {
        while (isspace((unsigned char)*p)) ++p;
        vsnap__fail(err, errsize, path, "line %lld, column %d: %s", (long long)lineno, c + 1,
                    !*p ? "missing (fewer values than ATOMS columns)" : integer ? "not an integer" : "not a number");
        goto done;
      }
      p = end;
      int role = lm->role[c];
      if (role >= COL_X && role <= COL_Z) {
        int j = role - COL_X;
        out->pos[3 * r + j] = (float)(lm->scaled[j] ? lm->lo[j] + v * (lm->hi[j] - lm->lo[j]) : v);
      } else if (role >= COL_VX && role <= COL_VZ) out->vel[3 * r + role - COL_VX] = (float)v;
      else if (role == COL_ID) out->ids[r] = iv;
      else if (role == COL_TYPE) out->type[r] = (int32_t)iv;
      else if (role == COL_MASS) out->mass[r] = (float)v;
      else out->extra[r * s->info.nextra + lm->extra_index[c]] = v;
    }
    while (isspace((unsigned char)*p)) ++p;
    if (*p) {
      vsnap__fail(err, errsize, path, "line %lld: more values than the %d ATOMS columns", (long long)lineno, lm->ncols);
      goto done;
    }
  }
  rc = 0;
done:
  if (f) fclose(f);
  free(line);
  return rc;
}

static void lammps_close(vsnap *s) {
  free(s->impl);
  s->impl = NULL;
}

static const vsnap_ops lammps_ops = {lammps_read_file, lammps_close};
