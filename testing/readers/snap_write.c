/* Test-only snapshot writers (see snap_write.h). */
#include "snap_write.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sw_split(int64_t n, int f, int nfiles, int64_t *first, int64_t *count) {
  int64_t base = n / nfiles, extra = n % nfiles;
  *first = f * base + (f < extra ? f : extra);
  *count = base + (f < extra ? 1 : 0);
}

static void swap_bytes(unsigned char *b, size_t width) {
  for (size_t j = 0; j < width / 2; ++j) {
    unsigned char t = b[j];
    b[j] = b[width - 1 - j];
    b[width - 1 - j] = t;
  }
}

typedef struct {
  FILE *f;
  int swap;
} out;

static void put(out *o, const void *v, size_t width) {
  unsigned char b[8];
  memcpy(b, v, width);
  if (o->swap) swap_bytes(b, width);
  fwrite(b, width, 1, o->f);
}
static void put_u32(out *o, uint32_t v) { put(o, &v, 4); }

static void put_label(out *o, const char *label, uint32_t next) {
  put_u32(o, 8);
  char l[4] = {' ', ' ', ' ', ' '};
  memcpy(l, label, strlen(label) < 4 ? strlen(label) : 4);
  fwrite(l, 4, 1, o->f);
  put_u32(o, next + 8);
  put_u32(o, 8);
}

/* One block: values of the selected particles, comps per particle. */
typedef enum { REAL, ID } kind;

static void put_block(out *o, const sw_gadget_options *opt, const char *label, const sw_snapshot *s, int f,
                      kind k, const float *data, int comps, int only_massless) {
  int width = k == ID ? (opt->id64 ? 8 : 4) : (opt->dbl ? 8 : 4);
  int64_t count = 0, type_first = 0;
  for (int t = 0; t < 6; ++t) {
    int64_t a, c;
    sw_split(s->npart[t], f, opt->nfiles, &a, &c);
    if (!only_massless || s->mass_table[t] == 0) count += c;
  }
  uint32_t len = (uint32_t)(count * comps * width);
  if (opt->format2) put_label(o, label, len);
  put_u32(o, len);
  for (int t = 0; t < 6; ++t) {
    int64_t a, c;
    sw_split(s->npart[t], f, opt->nfiles, &a, &c);
    if (!only_massless || s->mass_table[t] == 0)
      for (int64_t i = type_first + a; i < type_first + a + c; ++i)
        for (int j = 0; j < comps; ++j) {
          if (k == ID) {
            if (width == 8) { uint64_t v = (uint64_t)s->ids[i]; put(o, &v, 8); }
            else { uint32_t v = (uint32_t)s->ids[i]; put(o, &v, 4); }
          } else if (width == 8) { double v = data[i * comps + j]; put(o, &v, 8); }
          else put(o, &data[i * comps + j], 4);
        }
    type_first += s->npart[t];
  }
  put_u32(o, len);
}

int sw_write_gadget(const char *base, const sw_snapshot *s, const sw_gadget_options *opt) {
  for (int f = 0; f < opt->nfiles; ++f) {
    char path[1024];
    if (opt->nfiles == 1) snprintf(path, sizeof path, "%s", base);
    else snprintf(path, sizeof path, "%s.%d", base, f);
    out o = {fopen(path, "wb"), opt->swap};
    if (!o.f) return -1;
    unsigned char h[256] = {0};
    int64_t massless = 0;
    for (int t = 0; t < 6; ++t) {
      int64_t a, c;
      sw_split(s->npart[t], f, opt->nfiles, &a, &c);
      int32_t np = (int32_t)c;
      uint32_t tot = (uint32_t)s->npart[t], high = (uint32_t)(s->npart[t] >> 32);
      memcpy(h + 4 * t, &np, 4);
      memcpy(h + 24 + 8 * t, &s->mass_table[t], 8);
      memcpy(h + 96 + 4 * t, &tot, 4);
      memcpy(h + 168 + 4 * t, &high, 4);
      if (s->mass_table[t] == 0) massless += c;
    }
    int32_t nf = opt->nfiles;
    double cosmo[3] = {0.3, 0.7, 0.7};
    memcpy(h + 72, &s->time, 8);
    memcpy(h + 80, &s->redshift, 8);
    memcpy(h + 124, &nf, 4);
    memcpy(h + 128, &s->box, 8);
    memcpy(h + 136, cosmo, 24);
    if (opt->swap) {
      for (int t = 0; t < 6; ++t) { swap_bytes(h + 4 * t, 4); swap_bytes(h + 24 + 8 * t, 8); }
      for (int t = 0; t < 6; ++t) { swap_bytes(h + 96 + 4 * t, 4); swap_bytes(h + 168 + 4 * t, 4); }
      for (int at = 72; at <= 80; at += 8) swap_bytes(h + at, 8);
      swap_bytes(h + 124, 4);
      for (int at = 128; at <= 152; at += 8) swap_bytes(h + at, 8);
    }
    if (opt->format2) put_label(&o, "HEAD", 256);
    put_u32(&o, 256);
    fwrite(h, 256, 1, o.f);
    put_u32(&o, 256);
    put_block(&o, opt, "POS", s, f, REAL, s->pos, 3, 0);
    put_block(&o, opt, "VEL", s, f, REAL, s->vel, 3, 0);
    if (opt->format2) { /* a block the reader does not know, to be skipped */
      put_label(&o, "XTRA", 4);
      put_u32(&o, 4); put_u32(&o, 7); put_u32(&o, 4);
    }
    put_block(&o, opt, "ID", s, f, ID, NULL, 1, 0);
    if (massless > 0) put_block(&o, opt, "MASS", s, f, REAL, s->mass, 1, 1);
    if (fclose(o.f) != 0) return -1;
  }
  return 0;
}

static void attr(hid_t g, const char *name, hid_t type, int n, const void *v) {
  hsize_t dims[1] = {(hsize_t)n};
  hid_t sp = n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, dims, NULL);
  hid_t a = H5Acreate2(g, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, type, v);
  H5Aclose(a);
  H5Sclose(sp);
}

static void dataset(hid_t g, const char *name, hid_t file_type, hid_t mem_type, int64_t n, int comps, const void *v) {
  hsize_t dims[2] = {(hsize_t)n, (hsize_t)comps};
  hid_t sp = H5Screate_simple(comps == 1 ? 1 : 2, dims, NULL);
  hid_t d = H5Dcreate2(g, name, file_type, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
  H5Dclose(d);
  H5Sclose(sp);
}

int sw_write_hdf5(const char *base, const char *suffix, const sw_snapshot *s, int nfiles, int with_units) {
  for (int f = 0; f < nfiles; ++f) {
    char path[1024];
    if (nfiles == 1) snprintf(path, sizeof path, "%s%s", base, suffix);
    else snprintf(path, sizeof path, "%s.%d%s", base, f, suffix);
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (file < 0) return -1;
    hid_t h = H5Gcreate2(file, "/Header", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int32_t this_file[6];
    uint32_t total[6], high[6];
    int64_t first[6], count[6], type_first = 0;
    for (int t = 0; t < 6; ++t) {
      sw_split(s->npart[t], f, nfiles, &first[t], &count[t]);
      this_file[t] = (int32_t)count[t];
      total[t] = (uint32_t)s->npart[t];
      high[t] = (uint32_t)(s->npart[t] >> 32);
    }
    int32_t nf = nfiles;
    attr(h, "NumPart_ThisFile", H5T_NATIVE_INT32, 6, this_file);
    attr(h, "NumPart_Total", H5T_NATIVE_UINT32, 6, total);
    attr(h, "NumPart_Total_HighWord", H5T_NATIVE_UINT32, 6, high);
    attr(h, "MassTable", H5T_NATIVE_DOUBLE, 6, s->mass_table);
    attr(h, "BoxSize", H5T_NATIVE_DOUBLE, 1, &s->box);
    attr(h, "Time", H5T_NATIVE_DOUBLE, 1, &s->time);
    attr(h, "Redshift", H5T_NATIVE_DOUBLE, 1, &s->redshift);
    attr(h, "NumFilesPerSnapshot", H5T_NATIVE_INT32, 1, &nf);
    H5Gclose(h);
    if (with_units) {
      hid_t p = H5Gcreate2(file, "/Parameters", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      double ul = 3.085678e21, um = 1.989e43, uv = 1e5;
      attr(p, "UnitLength_in_cm", H5T_NATIVE_DOUBLE, 1, &ul);
      attr(p, "UnitMass_in_g", H5T_NATIVE_DOUBLE, 1, &um);
      attr(p, "UnitVelocity_in_cm_per_s", H5T_NATIVE_DOUBLE, 1, &uv);
      H5Gclose(p);
    }
    for (int t = 0; t < 6; ++t) {
      if (count[t] > 0) {
        char name[32];
        snprintf(name, sizeof name, "/PartType%d", t);
        hid_t g = H5Gcreate2(file, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        int64_t i0 = type_first + first[t];
        /* Coordinates in double as SWIFT writes them, the rest in float */
        double *pd = malloc((size_t)count[t] * 3 * sizeof(double));
        for (int64_t i = 0; i < 3 * count[t]; ++i) pd[i] = s->pos[3 * i0 + i];
        dataset(g, "Coordinates", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, count[t], 3, pd);
        free(pd);
        dataset(g, "Velocities", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, count[t], 3, s->vel + 3 * i0);
        dataset(g, "ParticleIDs", H5T_STD_U64LE, H5T_NATIVE_INT64, count[t], 1, s->ids + i0);
        if (s->mass_table[t] == 0) dataset(g, "Masses", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, count[t], 1, s->mass + i0);
        H5Gclose(g);
      }
      type_first += s->npart[t];
    }
    H5Fclose(file);
  }
  return 0;
}
