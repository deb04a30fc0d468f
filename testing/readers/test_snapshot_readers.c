/* The snapshot library (snapshot/): Gadget 1 and 2 in both byte orders and
 * precisions, single and multi-file, HDF5 single and multi-file, LAMMPS
 * dumps with plain and scaled coordinates, read whole and in pieces, give
 * back the particles written; and every damaged file (each truncation
 * length, wrong block sizes, wrong magic, missing datasets, text garbage,
 * a missing file of a set) is refused with a message naming the problem. */
#include "snap_write.h"
#include "vic_snapshot.h"

#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures, checks;
#define CHECK(cond, ...)                                                               \
  do {                                                                                 \
    ++checks;                                                                          \
    if (!(cond)) {                                                                     \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);         \
      fprintf(stderr, __VA_ARGS__);                                                    \
      fprintf(stderr, "\n");                                                           \
      failures++;                                                                      \
    }                                                                                  \
  } while (0)

static char tmpdir[64];
static const char *tmp(const char *name) {
  static char buf[8][256];
  static int next;
  char *b = buf[next++ % 8];
  snprintf(b, 256, "%s/%s", tmpdir, name);
  return b;
}

enum { N = 15 };
static const int64_t NPART[6] = {5, 7, 0, 3, 0, 0};
static const double MASS_TABLE[6] = {0, 0.25, 0, 0, 0, 0};
static float pos[3 * N], vel[3 * N], mass[N];
static int64_t ids[N];
static int32_t types[N];

static sw_snapshot make_snapshot(int big_ids) {
  int64_t i = 0;
  for (int t = 0; t < 6; ++t)
    for (int64_t q = 0; q < NPART[t]; ++q, ++i) {
      types[i] = t;
      ids[i] = (big_ids ? 10000000000LL : 100) + i * 3;
      mass[i] = MASS_TABLE[t] > 0 ? (float)MASS_TABLE[t] : 0.5f + 0.125f * (float)i;
      for (int j = 0; j < 3; ++j) {
        pos[3 * i + j] = (float)fmod(1.37 * (double)i + 2.9 * j + 0.25, 10.0);
        vel[3 * i + j] = (float)(i * 10 + j) - 70.f;
      }
    }
  sw_snapshot s;
  memset(&s, 0, sizeof s);
  memcpy(s.npart, NPART, sizeof NPART);
  memcpy(s.mass_table, MASS_TABLE, sizeof MASS_TABLE);
  s.box = 10;
  s.time = 0.5;
  s.redshift = 1;
  s.pos = pos; s.vel = vel; s.mass = mass; s.ids = ids;
  return s;
}

/* The particles read match the written ones, found by id. */
static void check_particles(const char *what, const vsnap_particles *p, int64_t expect_n) {
  CHECK(p->n == expect_n, "%s: %lld particles", what, (long long)p->n);
  for (int64_t r = 0; r < p->n; ++r) {
    int64_t i = -1;
    for (int64_t k = 0; k < N; ++k)
      if (ids[k] == p->ids[r]) i = k;
    CHECK(i >= 0, "%s: row %lld has unknown id %lld", what, (long long)r, (long long)p->ids[r]);
    if (i < 0) return;
    int same = p->type[r] == types[i] && p->mass[r] == mass[i];
    for (int j = 0; j < 3; ++j) same = same && p->pos[3 * r + j] == pos[3 * i + j] && p->vel[3 * r + j] == vel[3 * i + j];
    CHECK(same, "%s: particle id %lld differs (type %d/%d, mass %g/%g, x %g/%g)", what, (long long)ids[i],
          p->type[r], types[i], p->mass[r], mass[i], p->pos[3 * r], pos[3 * i]);
  }
}

/* Opens path, checks the header fields and reads all particles whole and
 * in 1..4 pieces. */
static void check_snapshot(const char *what, const char *path, vsnap_format format, int nfiles) {
  char err[512];
  vsnap *s;
  if (vsnap_open(path, &s, err, sizeof err) != 0) {
    CHECK(0, "%s: open failed: %s", what, err);
    return;
  }
  const vsnap_info *in = vsnap_get_info(s);
  CHECK(in->format == format && in->nfiles == nfiles && in->n == N, "%s: format %d, %d files, n %lld", what,
        in->format, in->nfiles, (long long)in->n);
  CHECK(in->has_box && in->box[0] == 10 && in->box[2] == 10, "%s: box %g", what, in->box[0]);
  CHECK(in->has_redshift && in->redshift == 1 && in->time == 0.5, "%s: z %g, time %g", what, in->redshift, in->time);
  CHECK(in->npart[1] == 7 && in->npart[3] == 3 && in->mass_table[1] == 0.25, "%s: npart / mass table", what);
  vsnap_particles p;
  CHECK(vsnap_read(s, 0, N, &p, err, sizeof err) == 0, "%s: read: %s", what, err);
  check_particles(what, &p, N);
  for (int pieces = 1; pieces <= 4; ++pieces) {
    int64_t seen = 0;
    for (int piece = 0; piece < pieces; ++piece) {
      int64_t first, count;
      vsnap_piece_range(N, piece, pieces, &first, &count);
      vsnap_particles q;
      CHECK(first == seen, "%s: pieces are contiguous", what);
      if (vsnap_read(s, first, count, &q, err, sizeof err) != 0) {
        CHECK(0, "%s: piece read: %s", what, err);
        continue;
      }
      int same = 1;
      for (int64_t r = 0; r < count; ++r)
        same = same && q.ids[r] == p.ids[first + r] && q.pos[3 * r + 1] == p.pos[3 * (first + r) + 1];
      CHECK(same, "%s: piece %d of %d differs from the whole read", what, piece, pieces);
      seen += count;
      vsnap_particles_free(&q);
    }
    CHECK(seen == N, "%s: %d pieces cover %lld", what, pieces, (long long)seen);
  }
  vsnap_particles_free(&p);
  CHECK(vsnap_read(s, 10, 6, &p, err, sizeof err) == -1 && strstr(err, "outside"), "%s: range past the end: %s",
        what, err);
  /* types 1 and 3 only (type 3 has per-particle masses, type 1 the table's) */
  const int pick[4] = {0, 1, 0, 1};
  CHECK(vsnap_select_types(s, pick, 4, err, sizeof err) == 0 && in->n == 10, "%s: select types: n %lld %s", what,
        (long long)in->n, err);
  int64_t seen = 0;
  for (int piece = 0; piece < 3; ++piece) {
    int64_t first, count;
    vsnap_piece_range(in->n, piece, 3, &first, &count);
    if (vsnap_read(s, first, count, &p, err, sizeof err) != 0) {
      CHECK(0, "%s: read of selected types: %s", what, err);
      continue;
    }
    int only = 1;
    for (int64_t r = 0; r < p.n; ++r) only = only && (p.type[r] == 1 || p.type[r] == 3);
    CHECK(only, "%s: a type that was not selected was read", what);
    check_particles(what, &p, count);
    seen += p.n;
    vsnap_particles_free(&p);
  }
  CHECK(seen == 10, "%s: the selected types' pieces hold %lld particles", what, (long long)seen);
  const int all[1] = {1};
  CHECK(vsnap_select_types(s, all, 1, err, sizeof err) == 0 && in->n == N, "%s: all types again", what);
  vsnap_close(s);
}

static void expect_failure(const char *what, const char *path, const char *needle) {
  char err[512] = "";
  vsnap *s = NULL;
  int rc = vsnap_open(path, &s, err, sizeof err);
  if (rc == 0) { /* a damage the header scan cannot see must fail the read */
    vsnap_particles p;
    rc = vsnap_read(s, 0, vsnap_get_info(s)->n, &p, err, sizeof err);
    if (rc == 0) vsnap_particles_free(&p);
    vsnap_close(s);
  }
  CHECK(rc == -1 && strstr(err, needle), "%s: expected a failure with '%s', got rc %d: %s", what, needle, rc, err);
}

static unsigned char *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  fseek(f, 0, SEEK_END);
  *len = (size_t)ftell(f);
  rewind(f);
  unsigned char *b = malloc(*len + 1);
  if (fread(b, 1, *len, f) != *len) exit(1);
  fclose(f);
  return b;
}
static void spit(const char *path, const void *b, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(b, 1, len, f) != len) exit(1);
  fclose(f);
}

static void test_gadget(void) {
  sw_snapshot s = make_snapshot(0);
  for (int variant = 0; variant < 16; ++variant) {
    sw_gadget_options o = {variant & 1, (variant >> 1) & 1, (variant >> 2) & 1, (variant >> 3) & 1, 1};
    s = make_snapshot(o.id64);
    char what[64];
    snprintf(what, sizeof what, "gadget%d swap %d double %d id64 %d", 1 + o.format2, o.swap, o.dbl, o.id64);
    CHECK(sw_write_gadget(tmp("g.dat"), &s, &o) == 0, "write %s", what);
    check_snapshot(what, tmp("g.dat"), o.format2 ? VSNAP_GADGET2 : VSNAP_GADGET1, 1);
    o.nfiles = 3;
    CHECK(sw_write_gadget(tmp("multi"), &s, &o) == 0, "write %s", what);
    strcat(what, " 3 files");
    check_snapshot(what, tmp("multi.2"), o.format2 ? VSNAP_GADGET2 : VSNAP_GADGET1, 3);
  }
  /* every truncation of a file fails with a message, never a crash */
  s = make_snapshot(0);
  for (int format2 = 0; format2 < 2; ++format2) {
    sw_gadget_options o = {format2, 0, 0, 0, 1};
    sw_write_gadget(tmp("whole.dat"), &s, &o);
    size_t len;
    unsigned char *b = slurp(tmp("whole.dat"), &len);
    for (size_t cut = 0; cut < len; ++cut) {
      spit(tmp("cut.dat"), b, cut);
      char err[512] = "";
      vsnap *sn;
      int rc = vsnap_open(tmp("cut.dat"), &sn, err, sizeof err);
      if (rc == 0) {
        vsnap_close(sn);
        /* format 2 may end after any whole block (they are found by label) */
        CHECK(format2, "gadget1 cut at %zu of %zu bytes was accepted", cut, len);
      } else
        CHECK(strlen(err) > 0, "cut at %zu: empty message", cut);
    }
    /* cut inside the POS block: the message says truncated */
    spit(tmp("cut.dat"), b, (format2 ? 16 : 0) + 264 + (format2 ? 16 : 0) + 40);
    expect_failure("truncated POS", tmp("cut.dat"), "truncated");
    free(b);
  }
  sw_gadget_options o1 = {0, 0, 0, 0, 1};
  sw_write_gadget(tmp("whole.dat"), &s, &o1);
  size_t len;
  unsigned char *b = slurp(tmp("whole.dat"), &len);
  uint32_t bad = 64; /* POS block with a size that fits no particle count */
  memcpy(b + 264, &bad, 4);
  spit(tmp("bad.dat"), b, len);
  expect_failure("wrong POS size", tmp("bad.dat"), "POS block has 64 bytes");
  memcpy(b + 264, &(uint32_t){180}, 4);
  memcpy(b + 264 + 4 + 180, &(uint32_t){181}, 4); /* end marker disagrees */
  spit(tmp("bad.dat"), b, len);
  expect_failure("POS end marker", tmp("bad.dat"), "end marker 181");
  memcpy(b + 264 + 4 + 180, &(uint32_t){180}, 4);
  memcpy(b, &(uint32_t){300}, 4); /* wrong magic */
  spit(tmp("bad.dat"), b, len);
  expect_failure("wrong first marker", tmp("bad.dat"), "not a particle snapshot");
  memcpy(b, &(uint32_t){256}, 4);
  memcpy(b + 4, &(int32_t){-5}, 4); /* negative npart */
  spit(tmp("bad.dat"), b, len);
  expect_failure("negative npart", tmp("bad.dat"), "corrupt Gadget header");
  memcpy(b + 4, &(int32_t){6}, 4); /* header counts one particle more than the blocks hold */
  spit(tmp("bad.dat"), b, len);
  expect_failure("header/file mismatch", tmp("bad.dat"), "block has");
  free(b);
  spit(tmp("text.dat"), "hello world\nthis is not a snapshot\n", 35);
  expect_failure("text", tmp("text.dat"), "not a particle snapshot");
  spit(tmp("empty.dat"), "", 0);
  expect_failure("empty", tmp("empty.dat"), "not a particle snapshot");
  expect_failure("no file", tmp("does-not-exist"), "cannot open");
  /* a multi-file set with a file missing, and one from another snapshot */
  sw_gadget_options o3 = {0, 0, 0, 0, 3};
  sw_write_gadget(tmp("set"), &s, &o3);
  unlink(tmp("set.1"));
  expect_failure("missing file", tmp("set.0"), "set.1: cannot open");
  sw_gadget_options o2 = {0, 0, 0, 0, 2};
  sw_write_gadget(tmp("set"), &s, &o2); /* set.0, set.1 of a 2-file set beside set.2 */
  sw_write_gadget(tmp("set"), &s, &o3);
  sw_write_gadget(tmp("two"), &s, &o2);
  rename(tmp("two.1"), tmp("set.1"));
  expect_failure("mixed sets", tmp("set.0"), "from another snapshot");
  spit(tmp("nonumber"), "", 0);
  sw_write_gadget(tmp("set"), &s, &o3);
  rename(tmp("set.0"), tmp("nonumber"));
  expect_failure("multi-file without a number", tmp("nonumber"), "no '.<number>' part");
}

static void write_text(const char *path, const char *text) { spit(path, text, strlen(text)); }

static void test_lammps(void) {
  const char *good =
      "ITEM: TIMESTEP\n1200\nITEM: NUMBER OF ATOMS\n4\nITEM: BOX BOUNDS pp ff pp\n"
      "-1 3\n0 2\n0.0 10.0\nITEM: ATOMS id type xs ys zs vx vy vz mass c_pe\n"
      "9007199254740993 1 0.25 0.5 0.1 1 2 3 2.5 -1.5\n"
      "8 2 0.75 0.25 0.9 4 5 6 1.0 -2.5\n"
      "9 1 0.0 0.0 0.0 0 0 0 2.5 0\n"
      "10 2 0.5 1.0 0.5 -1 -1 -1 1.0 3.25\n"
      "ITEM: TIMESTEP\n1300\n";
  write_text(tmp("dump.lammpstrj"), good);
  char err[512];
  vsnap *s;
  if (vsnap_open(tmp("dump.lammpstrj"), &s, err, sizeof err) != 0) {
    CHECK(0, "lammps open: %s", err);
  } else {
    const vsnap_info *in = vsnap_get_info(s);
    CHECK(in->format == VSNAP_LAMMPS && in->n == 4 && in->has_timestep && in->timestep == 1200, "lammps header");
    CHECK(in->box[0] == 4 && in->origin[0] == -1 && in->box[1] == 2 && in->box[2] == 10, "lammps box");
    CHECK(in->periodic[0] == 1 && in->periodic[1] == 0 && in->periodic[2] == 1, "lammps periodic flags");
    CHECK(in->has_velocities && in->has_ids && in->has_types && in->has_masses, "lammps columns");
    CHECK(in->nextra == 1 && !strcmp(in->extra_names[0], "c_pe"), "lammps extra column");
    const int one[1] = {1};
    CHECK(vsnap_select_types(s, one, 1, err, sizeof err) == -1 && strstr(err, "Threshold"), "lammps has no type blocks: %s",
          err);
    vsnap_particles p;
    CHECK(vsnap_read(s, 1, 3, &p, err, sizeof err) == 0, "lammps read: %s", err);
    if (p.n == 3) {
      CHECK(p.ids[0] == 8 && p.type[0] == 2 && p.pos[0] == 2.f && p.pos[1] == 0.5f && p.pos[2] == 9.f,
            "unscaled (%g %g %g)", p.pos[0], p.pos[1], p.pos[2]);
      CHECK(p.vel[5] == 0.f && p.mass[0] == 1.f && p.extra[0] == -2.5 && p.extra[2] == 3.25, "lammps arrays");
      CHECK(p.pos[6] == 1.f && p.pos[7] == 2.f, "last atom (%g %g)", p.pos[6], p.pos[7]);
    }
    vsnap_particles_free(&p);
    CHECK(vsnap_read(s, 0, 1, &p, err, sizeof err) == 0 && p.ids[0] == 9007199254740993LL, "an id past 2^53 is exact");
    vsnap_particles_free(&p);
    vsnap_close(s);
  }
  write_text(tmp("plain.dump"), "ITEM: TIMESTEP\n0\nITEM: NUMBER OF ATOMS\n2\nITEM: BOX BOUNDS pp pp pp\n0 5\n0 5\n0 5\n"
                                "ITEM: ATOMS x y z\n1 2 3\n4.5 0 1e-1\n");
  if (vsnap_open(tmp("plain.dump"), &s, err, sizeof err) == 0) {
    vsnap_particles p;
    CHECK(vsnap_read(s, 0, 2, &p, err, sizeof err) == 0 && p.pos[3] == 4.5f && !p.ids && !p.mass && !p.vel,
          "plain x y z dump");
    vsnap_particles_free(&p);
    vsnap_close(s);
  } else
    CHECK(0, "plain dump: %s", err);

  const char *head = "ITEM: TIMESTEP\n0\nITEM: NUMBER OF ATOMS\n3\nITEM: BOX BOUNDS pp pp pp\n0 1\n0 1\n0 1\n";
  char buf[1024];
  snprintf(buf, sizeof buf, "%sITEM: ATOMS id x y z\n1 0 0 0\n2 0.5 0.5 0.5\n", head);
  write_text(tmp("bad.dump"), buf);
  expect_failure("lammps truncated", tmp("bad.dump"), "ATOMS section has 2 lines, but NUMBER OF ATOMS is 3");
  snprintf(buf, sizeof buf, "%sITEM: ATOMS id x y z\n1 0 0 0\n2 0.5 zero 0.5\n3 1 1 1\n", head);
  write_text(tmp("bad.dump"), buf);
  expect_failure("lammps garbage value", tmp("bad.dump"), "line 11, column 3: not a number");
  snprintf(buf, sizeof buf, "%sITEM: ATOMS id x y z\n1 0 0 0\n2.5 0.5 0.5 0.5\n3 1 1 1\n", head);
  write_text(tmp("bad.dump"), buf);
  expect_failure("lammps fractional id", tmp("bad.dump"), "line 11, column 1: not an integer");
  snprintf(buf, sizeof buf, "%sITEM: ATOMS id x y z\n1 0 0 0\n2 0.5 0.5\n3 1 1 1\n", head);
  write_text(tmp("bad.dump"), buf);
  expect_failure("lammps short line", tmp("bad.dump"), "missing (fewer values");
  snprintf(buf, sizeof buf, "%sITEM: ATOMS id x y z\n1 0 0 0 9\n2 0.5 0.5 0.5\n3 1 1 1\n", head);
  write_text(tmp("bad.dump"), buf);
  expect_failure("lammps long line", tmp("bad.dump"), "more values than the 4");
  snprintf(buf, sizeof buf, "%sITEM: ATOMS id x y q\n1 0 0 0\n2 0.5 0.5 0.5\n3 1 1 1\n", head);
  write_text(tmp("bad.dump"), buf);
  expect_failure("lammps no z", tmp("bad.dump"), "lack x, y or z");
  write_text(tmp("bad.dump"), "ITEM: TIMESTEP\n0\nITEM: NUMBER OF ATOMS\n1\nITEM: BOX BOUNDS xy xz yz pp pp pp\n"
                              "0 1 0\n0 1 0\n0 1 0\nITEM: ATOMS x y z\n0 0 0\n");
  expect_failure("lammps triclinic", tmp("bad.dump"), "triclinic");
  write_text(tmp("bad.dump"), "ITEM: TIMESTEP\nlots\n");
  expect_failure("lammps bad timestep", tmp("bad.dump"), "TIMESTEP item has no valid number");
  write_text(tmp("bad.dump"), "ITEM: TIMESTEP\n0\nITEM: NUMBER OF ATOMS\n1\nITEM: BOX BOUNDS pp pp pp\n1 0\n0 1\n0 1\n");
  expect_failure("lammps inverted bounds", tmp("bad.dump"), "lo < hi");
  write_text(tmp("bad.dump"), "ITEM: TIMESTEP\n0\nITEM: NUMBER OF ATOMS\n1\n");
  expect_failure("lammps no atoms section", tmp("bad.dump"), "before an 'ITEM: ATOMS'");
  write_text(tmp("bad.dump"), "ITEM: TIMESTEP\n0\ngarbage here\n");
  expect_failure("lammps garbage line", tmp("bad.dump"), "expected an 'ITEM:' line");
}

static void test_hdf5(void) {
  if (!vsnap_have_hdf5()) { fprintf(stderr, "SKIP part: no HDF5 in this build\n"); return; }
  sw_snapshot s = make_snapshot(1);
  CHECK(sw_write_hdf5(tmp("snap"), ".hdf5", &s, 1, 1) == 0, "write hdf5");
  check_snapshot("hdf5", tmp("snap.hdf5"), VSNAP_HDF5, 1);
  char err[512];
  vsnap *sn;
  if (vsnap_open(tmp("snap.hdf5"), &sn, err, sizeof err) == 0) {
    const vsnap_info *in = vsnap_get_info(sn);
    CHECK(in->has_units && fabs(in->unit_length_cm - 3.085678e21) < 1e15 && in->unit_velocity_cm_s == 1e5, "units");
    vsnap_close(sn);
  }
  CHECK(sw_write_hdf5(tmp("multi"), ".hdf5", &s, 3, 0) == 0, "write hdf5 x3");
  check_snapshot("hdf5 3 files", tmp("multi.1.hdf5"), VSNAP_HDF5, 3);

  /* damaged files: each made from a good one */
  struct { const char *remove, *needle; } cases[] = {
      {"/PartType1/Coordinates", "dataset /PartType1/Coordinates is missing"},
      {"/PartType0/Masses", "/PartType0/Masses is missing (and MassTable"},
      {"/PartType3", "/PartType3/Coordinates is missing"},
      {"/Header", "no /Header group"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    sw_write_hdf5(tmp("bad"), ".hdf5", &s, 1, 0);
    hid_t f = H5Fopen(tmp("bad.hdf5"), H5F_ACC_RDWR, H5P_DEFAULT);
    H5Ldelete(f, cases[c].remove, H5P_DEFAULT);
    H5Fclose(f);
    expect_failure(cases[c].remove, tmp("bad.hdf5"), cases[c].needle);
  }
  /* a Coordinates dataset of the wrong shape */
  sw_write_hdf5(tmp("bad"), ".hdf5", &s, 1, 0);
  hid_t f = H5Fopen(tmp("bad.hdf5"), H5F_ACC_RDWR, H5P_DEFAULT);
  H5Ldelete(f, "/PartType0/Coordinates", H5P_DEFAULT);
  hsize_t dims[2] = {5, 2};
  hid_t sp = H5Screate_simple(2, dims, NULL);
  hid_t d = H5Dcreate2(f, "/PartType0/Coordinates", H5T_IEEE_F32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dclose(d);
  H5Sclose(sp);
  H5Fclose(f);
  expect_failure("wrong shape", tmp("bad.hdf5"), "has shape (5, 2), expected (5, 3)");
  /* truncations of a good file */
  size_t len;
  unsigned char *b = slurp(tmp("snap.hdf5"), &len);
  size_t cuts[] = {4, 100, len / 3, len / 2, len - 200};
  for (size_t c = 0; c < sizeof cuts / sizeof cuts[0]; ++c) {
    spit(tmp("cut.hdf5"), b, cuts[c]);
    char e[512] = "";
    vsnap *t = NULL;
    int rc = vsnap_open(tmp("cut.hdf5"), &t, e, sizeof e);
    if (rc == 0) {
      vsnap_particles p;
      rc = vsnap_read(t, 0, vsnap_get_info(t)->n, &p, e, sizeof e);
      if (rc == 0) vsnap_particles_free(&p);
      vsnap_close(t);
    }
    CHECK(rc == -1 && strlen(e) > 0, "hdf5 cut at %zu of %zu: rc %d", cuts[c], len, rc);
  }
  free(b);
  /* a multi-file set with a file missing */
  sw_write_hdf5(tmp("gone"), ".hdf5", &s, 2, 0);
  unlink(tmp("gone.1.hdf5"));
  expect_failure("hdf5 missing file", tmp("gone.0.hdf5"), "gone.1.hdf5");
}

/* Random byte damage to good files: every outcome is a clean read or a
 * message (run under ASan by hand: no crash, no out-of-bounds access). */
static void fuzz(const char *what, const char *good, int rounds, uint64_t seed) {
  size_t len;
  unsigned char *b = slurp(good, &len);
  unsigned char *m = malloc(len);
  int refused = 0;
  for (int round = 0; round < rounds; ++round) {
    memcpy(m, b, len);
    int flips = 1 + (int)(seed % 4);
    for (int f = 0; f < flips; ++f) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
      size_t at = (size_t)(seed >> 33) % len;
      m[at] = (unsigned char)(seed >> 13);
    }
    size_t keep = round % 7 == 0 ? (size_t)(seed >> 40) % len : len; /* some truncated too */
    spit(tmp("fuzz"), m, keep);
    char err[512] = "";
    vsnap *sn;
    int rc = vsnap_open(tmp("fuzz"), &sn, err, sizeof err);
    if (rc == 0) {
      vsnap_particles p;
      rc = vsnap_read(sn, 0, vsnap_get_info(sn)->n, &p, err, sizeof err);
      if (rc == 0) vsnap_particles_free(&p);
      vsnap_close(sn);
    }
    if (rc != 0) {
      ++refused;
      CHECK(strlen(err) > 0, "%s: round %d refused without a message", what, round);
    }
  }
  printf("%s: %d damaged copies, %d refused with a message, the rest read\n", what, rounds, refused);
  free(m);
  free(b);
}

int main(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/vic_snap_XXXXXX");
  if (!mkdtemp(tmpdir)) return 1;
  test_gadget();
  test_lammps();
  test_hdf5();
  sw_snapshot s = make_snapshot(0);
  sw_gadget_options o1 = {0, 0, 0, 0, 1}, o2 = {1, 1, 1, 1, 1};
  sw_write_gadget(tmp("fuzz1.dat"), &s, &o1);
  fuzz("gadget1 fuzz", tmp("fuzz1.dat"), 1500, 1);
  sw_write_gadget(tmp("fuzz2.dat"), &s, &o2);
  fuzz("gadget2 fuzz", tmp("fuzz2.dat"), 1500, 2);
  fuzz("lammps fuzz", tmp("dump.lammpstrj"), 1500, 3);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
  if (failures) fprintf(stderr, "test_snapshot_readers: %d failures\n", failures);
  else printf("test_snapshot_readers: all %d checks passed\n", checks);
  return failures != 0;
}
