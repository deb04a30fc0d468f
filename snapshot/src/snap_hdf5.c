/* HDF5 snapshots in the layout Gadget-4, SWIFT and AREPO write: /Header
 * attributes (NumPart_ThisFile, NumPart_Total[_HighWord], MassTable,
 * BoxSize, Time, Redshift, NumFilesPerSnapshot, cosmology), units from
 * /Header, /Parameters or /Units when present, and per type /PartTypeN
 * with Coordinates (n x 3), Masses (when the mass table has 0 for the
 * type), Velocities and ParticleIDs.  Values are converted by HDF5 to
 * float32 (ids to int64) as they are read, a hyperslab per range. */
#include "snap_internal.h"

#include <stdlib.h>
#include <string.h>

#ifndef VSNAP_WITH_HDF5

int vsnap_have_hdf5(void) { return 0; }
int vsnap__open_hdf5(vsnap *s, const char *path, char *err, size_t errsize) {
  (void)s;
  return vsnap__fail(err, errsize, path, "this build of the Vicinity snapshot readers has no HDF5 support");
}

#else
#include <hdf5.h>

int vsnap_have_hdf5(void) { return 1; }

typedef struct {
  int64_t npart[VSNAP_MAX_TYPES];
} hfile;

typedef struct {
  hfile *files;
} h5snap;

/* HDF5 prints its error stack on failures; a reader's failures are
 * reported as messages instead, so printing is off inside each call. */
typedef struct {
  H5E_auto2_t func;
  void *data;
} quiet;
static quiet quiet_begin(void) {
  quiet q;
  H5Eget_auto2(H5E_DEFAULT, &q.func, &q.data);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  return q;
}
static void quiet_end(quiet q) { H5Eset_auto2(H5E_DEFAULT, q.func, q.data); }

/* Reads a numeric attribute of up to max values as doubles; returns the
 * count, 0 when absent, -1 when present but unreadable. */
static int attr_doubles(hid_t obj, const char *name, double *v, int max) {
  if (H5Aexists(obj, name) <= 0) return 0;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  if (a < 0) return -1;
  hid_t sp = H5Aget_space(a);
  hssize_t n = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
  int rc = -1;
  hid_t t = H5Aget_type(a);
  if (n >= 1 && n <= max && t >= 0 && (H5Tget_class(t) == H5T_INTEGER || H5Tget_class(t) == H5T_FLOAT))
    rc = H5Aread(a, H5T_NATIVE_DOUBLE, v) >= 0 ? (int)n : -1;
  if (t >= 0) H5Tclose(t);
  if (sp >= 0) H5Sclose(sp);
  H5Aclose(a);
  return rc;
}

static int attr_i64(hid_t obj, const char *name, int64_t *v, int max) {
  if (H5Aexists(obj, name) <= 0) return 0;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  if (a < 0) return -1;
  hid_t sp = H5Aget_space(a);
  hssize_t n = sp >= 0 ? H5Sget_simple_extent_npoints(sp) : -1;
  int rc = -1;
  if (n >= 1 && n <= max) rc = H5Aread(a, H5T_NATIVE_INT64, v) >= 0 ? (int)n : -1;
  if (sp >= 0) H5Sclose(sp);
  H5Aclose(a);
  return rc;
}

/* The first of several spellings of a unit attribute found in the groups. */
static int find_unit(hid_t file, const char *const *names, double *v) {
  static const char *groups[] = {"/Header", "/Parameters", "/Units"};
  for (int g = 0; g < 3; ++g) {
    if (H5Lexists(file, groups[g], H5P_DEFAULT) <= 0) continue;
    hid_t grp = H5Gopen2(file, groups[g], H5P_DEFAULT);
    if (grp < 0) continue;
    int got = 0;
    for (const char *const *n = names; *n && !got; ++n) got = attr_doubles(grp, *n, v, 1) == 1;
    H5Gclose(grp);
    if (got) return 1;
  }
  return 0;
}

/* Reads one file's /Header; with first set also the snapshot-wide fields. */
static int read_header(const char *path, int first, vsnap_info *info, int *nfiles, hfile *hf, char *err,
                       size_t errsize) {
  if (H5Fis_hdf5(path) <= 0) return vsnap__fail(err, errsize, path, "not a readable HDF5 file");
  hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (file < 0) return vsnap__fail(err, errsize, path, "HDF5 cannot open the file (truncated or damaged?)");
  int rc = -1;
  hid_t h = -1;
  if (H5Lexists(file, "/Header", H5P_DEFAULT) <= 0 || (h = H5Gopen2(file, "/Header", H5P_DEFAULT)) < 0) {
    vsnap__fail(err, errsize, path, "no /Header group: not a Gadget-4 / SWIFT / AREPO style snapshot");
    goto done;
  }
  int64_t counts[VSNAP_MAX_TYPES] = {0};
  int ntypes = attr_i64(h, "NumPart_ThisFile", counts, VSNAP_MAX_TYPES);
  if (ntypes <= 0) {
    vsnap__fail(err, errsize, path, "/Header has %s NumPart_ThisFile attribute (at most %d types)",
                ntypes == 0 ? "no" : "an unreadable", VSNAP_MAX_TYPES);
    goto done;
  }
  for (int t = 0; t < ntypes; ++t) {
    if (counts[t] < 0) { vsnap__fail(err, errsize, path, "/Header NumPart_ThisFile[%d] is negative", t); goto done; }
    hf->npart[t] = counts[t];
  }
  if (first) {
    info->ntypes = ntypes;
    double mt[VSNAP_MAX_TYPES] = {0};
    if (attr_doubles(h, "MassTable", mt, VSNAP_MAX_TYPES) < 0) {
      vsnap__fail(err, errsize, path, "/Header MassTable is unreadable");
      goto done;
    }
    for (int t = 0; t < ntypes; ++t) info->mass_table[t] = mt[t];
    int64_t total[VSNAP_MAX_TYPES] = {0}, high[VSNAP_MAX_TYPES] = {0};
    if (attr_i64(h, "NumPart_Total", total, VSNAP_MAX_TYPES) > 0) {
      attr_i64(h, "NumPart_Total_HighWord", high, VSNAP_MAX_TYPES);
      for (int t = 0; t < ntypes; ++t)
        info->npart[t] = (int64_t)(((uint64_t)total[t] & 0xffffffffu) | (uint64_t)high[t] << 32);
    } else
      for (int t = 0; t < ntypes; ++t) info->npart[t] = -1; /* unknown: the files' sum is taken */
    double box[3];
    int nb = attr_doubles(h, "BoxSize", box, 3);
    if (nb == 1 || nb == 3) {
      for (int j = 0; j < 3; ++j) info->box[j] = box[nb == 1 ? 0 : j];
      info->has_box = info->box[0] > 0 && info->box[1] > 0 && info->box[2] > 0;
    } else if (nb != 0) {
      vsnap__fail(err, errsize, path, "/Header BoxSize must have 1 or 3 values");
      goto done;
    }
    double v;
    if (attr_doubles(h, "Time", &v, 1) == 1) { info->time = v; info->has_time = 1; }
    if (attr_doubles(h, "Redshift", &v, 1) == 1) { info->redshift = v; info->has_redshift = 1; }
    double om = 0, ol = 0, hp = 0;
    int c = attr_doubles(h, "Omega0", &om, 1) == 1;
    c += attr_doubles(h, "OmegaLambda", &ol, 1) == 1;
    c += attr_doubles(h, "HubbleParam", &hp, 1) == 1;
    if (c == 3) { info->omega0 = om; info->omega_lambda = ol; info->hubble_param = hp; info->has_cosmology = 1; }
    double nf = 1;
    if (attr_doubles(h, "NumFilesPerSnapshot", &nf, 1) < 0) {
      vsnap__fail(err, errsize, path, "/Header NumFilesPerSnapshot is unreadable");
      goto done;
    }
    *nfiles = nf >= 1 && nf <= 1000000 ? (int)nf : 1;
    static const char *len_names[] = {"UnitLength_in_cm", "Unit length in cgs (U_L)", NULL};
    static const char *mass_names[] = {"UnitMass_in_g", "Unit mass in cgs (U_M)", NULL};
    static const char *vel_names[] = {"UnitVelocity_in_cm_per_s", NULL};
    static const char *time_names[] = {"Unit time in cgs (U_t)", NULL};
    double ul = 0, um = 0, uv = 0, ut = 0;
    if (find_unit(file, len_names, &ul) && find_unit(file, mass_names, &um)) {
      if (!find_unit(file, vel_names, &uv) && find_unit(file, time_names, &ut) && ut > 0) uv = ul / ut;
      if (uv > 0) {
        info->unit_length_cm = ul;
        info->unit_mass_g = um;
        info->unit_velocity_cm_s = uv;
        info->has_units = 1;
      }
    }
  } else if (ntypes != info->ntypes) {
    vsnap__fail(err, errsize, path, "this file has %d particle types, the first file %d", ntypes, info->ntypes);
    goto done;
  }
  /* the datasets each type with particles must have */
  for (int t = 0; t < ntypes; ++t) {
    if (hf->npart[t] == 0) continue;
    char name[64];
    static const char *sets[] = {"Coordinates", "Masses", "Velocities", "ParticleIDs"};
    for (int k = 0; k < 4; ++k) {
      snprintf(name, sizeof name, "/PartType%d/%s", t, sets[k]);
      char group[32];
      snprintf(group, sizeof group, "/PartType%d", t);
      /* H5Lexists fails on a path whose parent group is missing */
      int there = H5Lexists(file, group, H5P_DEFAULT) > 0 && H5Lexists(file, name, H5P_DEFAULT) > 0;
      int need = k == 0 || (k == 1 && info->mass_table[t] == 0);
      if (!there && need) {
        vsnap__fail(err, errsize, path, "the header counts %lld particles of type %d but the dataset %s is missing%s",
                    (long long)hf->npart[t], t, name, k == 1 ? " (and MassTable gives the type no mass)" : "");
        goto done;
      }
      if (!there) {
        if (k == 2) info->has_velocities = 0;
        if (k == 3) info->has_ids = 0;
        continue;
      }
      hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
      hid_t sp = d >= 0 ? H5Dget_space(d) : -1;
      hsize_t dims[2] = {0, 0};
      int rank = sp >= 0 ? H5Sget_simple_extent_ndims(sp) : -1;
      if (rank >= 1 && rank <= 2) H5Sget_simple_extent_dims(sp, dims, NULL);
      if (sp >= 0) H5Sclose(sp);
      if (d >= 0) H5Dclose(d);
      int vec = k == 0 || k == 2;
      int shape_ok = vec ? rank == 2 && dims[1] == 3 : rank == 1 || (rank == 2 && dims[1] == 1);
      if (!shape_ok || (int64_t)dims[0] != hf->npart[t]) {
        vsnap__fail(err, errsize, path, "dataset %s has shape (%llu%s%llu), expected (%lld%s) from NumPart_ThisFile", name,
                    (unsigned long long)dims[0], rank == 2 ? ", " : ")", rank == 2 ? (unsigned long long)dims[1] : 0ULL,
                    (long long)hf->npart[t], vec ? ", 3" : "");
        goto done;
      }
    }
  }
  rc = 0;
done:
  if (h >= 0) H5Gclose(h);
  H5Fclose(file);
  return rc;
}

/* Reads rows [lo, lo + k) of a dataset into buf, converted to mem_type. */
static int read_rows(hid_t file, const char *name, int comps, hid_t mem_type, int64_t lo, int64_t k, void *buf) {
  hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
  if (d < 0) return -1;
  hid_t fs = H5Dget_space(d);
  hsize_t start[2] = {(hsize_t)lo, 0}, cnt[2] = {(hsize_t)k, (hsize_t)comps};
  int rank = H5Sget_simple_extent_ndims(fs);
  if (rank == 2) cnt[1] = rank == 2 ? (hsize_t)comps : 1;
  herr_t st = H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL);
  hsize_t mdims[1] = {(hsize_t)k * (hsize_t)comps};
  hid_t ms = H5Screate_simple(1, mdims, NULL);
  if (st >= 0) st = H5Dread(d, mem_type, ms, fs, H5P_DEFAULT, buf);
  H5Sclose(ms);
  H5Sclose(fs);
  H5Dclose(d);
  return st >= 0 ? 0 : -1;
}

static int h5_read_file(vsnap *s, int file, int64_t local_first, int64_t count, vsnap_particles *out, int64_t row,
                        char *err, size_t errsize) {
  const h5snap *hs = s->impl;
  const hfile *hf = &hs->files[file];
  const char *path = s->files[file];
  quiet q = quiet_begin();
  hid_t fid = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  int rc = 0;
  if (fid < 0) rc = vsnap__fail(err, errsize, path, "HDF5 cannot open the file");
  int64_t type_first = 0; /* in the range's index space: the selected types only */
  for (int t = 0; t < s->info.ntypes && rc == 0; ++t) {
    if (!s->info.type_selected[t]) continue;
    int64_t lo = local_first > type_first ? local_first : type_first;
    int64_t hi = local_first + count < type_first + hf->npart[t] ? local_first + count : type_first + hf->npart[t];
    if (lo < hi) {
      int64_t r0 = row + (lo - local_first), k = hi - lo, at = lo - type_first;
      char name[64];
      const char *bad = NULL;
      snprintf(name, sizeof name, "/PartType%d/Coordinates", t);
      if (read_rows(fid, name, 3, H5T_NATIVE_FLOAT, at, k, out->pos + 3 * r0) != 0) bad = "Coordinates";
      snprintf(name, sizeof name, "/PartType%d/Velocities", t);
      if (!bad && out->vel && read_rows(fid, name, 3, H5T_NATIVE_FLOAT, at, k, out->vel + 3 * r0) != 0) bad = "Velocities";
      snprintf(name, sizeof name, "/PartType%d/ParticleIDs", t);
      if (!bad && out->ids && read_rows(fid, name, 1, H5T_NATIVE_INT64, at, k, out->ids + r0) != 0) bad = "ParticleIDs";
      snprintf(name, sizeof name, "/PartType%d/Masses", t);
      if (!bad && s->info.mass_table[t] == 0) {
        if (read_rows(fid, name, 1, H5T_NATIVE_FLOAT, at, k, out->mass + r0) != 0) bad = "Masses";
      } else
        for (int64_t i = 0; i < k; ++i) out->mass[r0 + i] = (float)s->info.mass_table[t];
      for (int64_t i = 0; i < k; ++i) out->type[r0 + i] = t;
      if (bad) rc = vsnap__fail(err, errsize, path, "HDF5 could not read /PartType%d/%s (damaged file?)", t, bad);
    }
    type_first += hf->npart[t];
  }
  if (fid >= 0) H5Fclose(fid);
  quiet_end(q);
  return rc;
}

static void h5_close(vsnap *s) {
  h5snap *hs = s->impl;
  if (hs) free(hs->files);
  free(hs);
  s->impl = NULL;
}

static const vsnap_ops h5_ops = {h5_read_file, h5_close};

static int open_all(vsnap *s, const char *path, char *err, size_t errsize) {
  h5snap *hs = calloc(1, sizeof *hs);
  if (!(s->impl = hs)) return vsnap__fail(err, errsize, path, "out of memory");
  hfile head = {{0}};
  int nfiles = 1;
  s->info.has_velocities = s->info.has_ids = 1;
  if (read_header(path, 1, &s->info, &nfiles, &head, err, errsize) != 0) return -1;
  if (vsnap__file_set(s, path, nfiles, err, errsize) != 0) return -1;
  if (!(hs->files = calloc((size_t)nfiles, sizeof(hfile)))) return vsnap__fail(err, errsize, path, "out of memory");
  int64_t sum[VSNAP_MAX_TYPES] = {0};
  for (int f = 0; f < nfiles; ++f) {
    if (nfiles == 1) hs->files[0] = head;
    else if (read_header(s->files[f], 0, &s->info, &nfiles, &hs->files[f], err, errsize) != 0) return -1;
    for (int t = 0; t < s->info.ntypes; ++t) {
      sum[t] += hs->files[f].npart[t];
      s->file_type_n[(size_t)f * VSNAP_MAX_TYPES + t] = hs->files[f].npart[t];
    }
  }
  for (int t = 0; t < s->info.ntypes; ++t) {
    if (s->info.npart[t] >= 0 && s->info.npart[t] != sum[t])
      return vsnap__fail(err, errsize, path,
                         "/Header NumPart_Total for type %d is %lld but the %d file(s) hold %lld "
                         "(a file of the snapshot is missing or from another snapshot)",
                         t, (long long)s->info.npart[t], nfiles, (long long)sum[t]);
    s->info.npart[t] = sum[t];
  }
  vsnap__count_selected(s);
  if (s->info.n == 0) return vsnap__fail(err, errsize, path, "the HDF5 snapshot holds no particles");
  s->info.has_masses = s->info.has_types = 1;
  return 0;
}

int vsnap__open_hdf5(vsnap *s, const char *path, char *err, size_t errsize) {
  s->ops = &h5_ops;
  quiet q = quiet_begin();
  int rc = open_all(s, path, err, errsize);
  quiet_end(q);
  return rc;
}
#endif
