/* The data loaders of testing/io: every supported format round-trips or
 * reads the real files with the documented sizes, and every malformed file
 * (bad magic, truncation, wrong dtype, Fortran order, ragged rows) is
 * refused with a message instead of a crash or a wrong matrix. */
#include "test_util.h"
#include "vic_io.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

static char tmpdir[64];

static const char *tmp_path(const char *name, char *buf, size_t size) {
  snprintf(buf, size, "%s/%s", tmpdir, name);
  return buf;
}

/* A .npy file of the given format version (1: uint16 header length, 2:
 * uint32) with the header dict padded as NumPy does, the values written
 * after it as they are; through gzip when gz is set. */
static void write_npy(const char *path, const char *dict, const void *data, size_t size, int version, int gz) {
  char hdr[256];
  const size_t pre = version == 1 ? 10 : 12;
  int len = snprintf(hdr, sizeof hdr, "%s", dict);
  while ((pre + (size_t)len + 1) % 64) hdr[len++] = ' ';
  hdr[len++] = '\n';
  const unsigned char head[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', (unsigned char)version, 0, (unsigned char)(len & 0xff),
                                  (unsigned char)(len >> 8), 0, 0};
  int ok;
  if (gz) {
    gzFile g = gzopen(path, "wb");
    ok = g && gzwrite(g, head, (unsigned)pre) == (int)pre && gzwrite(g, hdr, (unsigned)len) == len &&
         (size == 0 || gzwrite(g, data, (unsigned)size) == (int)size);
    if (g && gzclose(g) != Z_OK) ok = 0;
  } else {
    FILE *f = fopen(path, "wb");
    ok = f && fwrite(head, 1, pre, f) == pre && fwrite(hdr, 1, (size_t)len, f) == (size_t)len &&
         fwrite(data, 1, size, f) == size;
    if (f && fclose(f) != 0) ok = 0;
  }
  if (!ok) { fprintf(stderr, "cannot write %s\n", path); exit(1); }
}

/* Loading must fail, leave the matrix zeroed and say `expect`. */
static void expect_failure(const char *path, const char *expect) {
  vio_matrix m = {(float *)1, 7, 7};
  char err[512] = "";
  int rc = vio_load(path, &m, err, sizeof err);
  VT_CHECK(rc == -1, "%s loaded but should fail (%s)", path, expect);
  VT_CHECK(m.rows == NULL && m.n == 0 && m.d == 0, "%s: output not zeroed", path);
  VT_CHECK(strstr(err, expect) != NULL, "%s: message '%s' lacks '%s'", path, err, expect);
  if (rc == 0) vio_free(&m);
}

static void expect_matrix(const char *path, int64_t n, int32_t d, const float *want) {
  vio_matrix m;
  char err[512] = "";
  int rc = vio_load(path, &m, err, sizeof err);
  VT_CHECK(rc == 0, "%s: %s", path, err);
  if (rc != 0) return;
  VT_CHECK(m.n == n && m.d == d, "%s: got %lld x %d, want %lld x %d", path, (long long)m.n, m.d, (long long)n, d);
  if (m.n == n && m.d == d)
    for (int64_t i = 0; i < n * d; ++i)
      if (m.rows[i] != want[i]) { VT_CHECK(0, "%s: value %lld is %g, want %g", path, (long long)i, m.rows[i], want[i]); break; }
  vio_free(&m);
}

/* Files large enough to be read by several threads (uncompressed), the
 * same values as through the compressed stream; a cut file fails. */
static void test_npy_large(void) {
  char p[256];
  const int64_t n = 700001;
  float *f4 = malloc((size_t)n * 3 * sizeof *f4);
  double *f8 = malloc((size_t)n * 3 * sizeof *f8);
  float *want8 = malloc((size_t)n * 3 * sizeof *want8);
  if (!f4 || !f8 || !want8) { fprintf(stderr, "out of memory\n"); exit(1); }
  for (int64_t i = 0; i < n * 3; ++i) {
    f4[i] = (float)i * 0.25f - 7.f;
    f8[i] = (double)i * 1.0000001 + 0.1;
    want8[i] = (float)f8[i];
  }
  char dict[128];
  snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (%lld, 3), }", (long long)n);
  write_npy(tmp_path("large4.npy", p, sizeof p), dict, f4, (size_t)n * 3 * 4, 1, 0);
  expect_matrix(p, n, 3, f4);
  write_npy(tmp_path("large4.npy.gz", p, sizeof p), dict, f4, (size_t)n * 3 * 4, 1, 1);
  expect_matrix(p, n, 3, f4);
  /* a cut file: the header's size check refuses it before any read */
  write_npy(tmp_path("large4cut.npy", p, sizeof p), dict, f4, (size_t)n * 3 * 4 - 4, 1, 0);
  expect_failure(p, "truncated");
  snprintf(dict, sizeof dict, "{'descr': '<f8', 'fortran_order': False, 'shape': (%lld, 3), }", (long long)n);
  write_npy(tmp_path("large8.npy", p, sizeof p), dict, f8, (size_t)n * 3 * 8, 1, 0);
  expect_matrix(p, n, 3, want8);
  free(f4);
  free(f8);
  free(want8);
}

static void test_npy(void) {
  char p[256];
  float f4[6] = {1, 2, 3, 4, 5, 6.5f};
  double f8[6] = {1, 2, 3, 4, 5, 6.5};
  write_npy(tmp_path("a.npy", p, sizeof p), "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", f4, sizeof f4, 1, 0);
  expect_matrix(p, 2, 3, f4);
  write_npy(tmp_path("b.npy", p, sizeof p), "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }", f8, sizeof f8, 2, 0);
  expect_matrix(p, 3, 2, f4);
  write_npy(tmp_path("c.npy", p, sizeof p), "{'descr': '<f4', 'fortran_order': False, 'shape': (6,), }", f4, sizeof f4, 1, 0);
  expect_matrix(p, 6, 1, f4);

  write_npy(tmp_path("trunc.npy", p, sizeof p), "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 3), }", f4, sizeof f4, 1, 0);
  expect_failure(p, "truncated");
  write_npy(tmp_path("int.npy", p, sizeof p), "{'descr': '<i4', 'fortran_order': False, 'shape': (2, 3), }", f4, sizeof f4, 1, 0);
  expect_failure(p, "dtype '<i4'");
  write_npy(tmp_path("fort.npy", p, sizeof p), "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", f4, sizeof f4, 1, 0);
  expect_failure(p, "Fortran");
  write_npy(tmp_path("big.npy", p, sizeof p), "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", f4, sizeof f4, 1, 0);
  expect_failure(p, "big-endian");
  write_npy(tmp_path("3d.npy", p, sizeof p), "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 2, 3), }", f4, sizeof f4, 1, 0);
  expect_failure(p, "3-d array");
  write_npy(tmp_path("noshape.npy", p, sizeof p), "{'descr': '<f4', 'fortran_order': False, }", f4, sizeof f4, 1, 0);
  expect_failure(p, "malformed");
  write_npy(tmp_path("empty.npy", p, sizeof p), "{'descr': '<f4', 'fortran_order': False, 'shape': (0, 3), }", f4, 0, 1, 0);
  expect_failure(p, "empty");
  vt_write_file(tmp_path("magic.npy", p, sizeof p), "NUMPY not really", 16);
  expect_failure(p, "magic");
  vt_write_file(tmp_path("short.npy", p, sizeof p), "\x93NUMPY\x01", 7);
  expect_failure(p, "truncated");
}

static void test_vecs(void) {
  char p[256], err[512];
  float f[6] = {1, 2, 3, 4, 5, 6};
  vio_matrix m = {f, 2, 3};
  VT_CHECK(vio_save_fvecs(tmp_path("a.fvecs", p, sizeof p), &m, err, sizeof err) == 0, "%s", err);
  expect_matrix(p, 2, 3, f);

  int32_t ids[4] = {3, 1, 0, 2};
  vio_imatrix im = {ids, 2, 2}, back;
  VT_CHECK(vio_save_ivecs(tmp_path("a.ivecs", p, sizeof p), &im, err, sizeof err) == 0, "%s", err);
  VT_CHECK(vio_load_ivecs(p, &back, err, sizeof err) == 0, "%s", err);
  VT_CHECK(back.n == 2 && back.d == 2 && memcmp(back.rows, ids, sizeof ids) == 0, "ivecs round trip");
  vio_ifree(&back);
  expect_failure(p, "vio_load_ivecs");

  /* row 1 cut short: 16 + 10 bytes */
  unsigned char raw[32];
  int32_t three = 3, four = 4;
  memcpy(raw, &three, 4); memcpy(raw + 4, f, 12);
  memcpy(raw + 16, &three, 4); memcpy(raw + 20, f, 6);
  vt_write_file(tmp_path("trunc.fvecs", p, sizeof p), raw, 26);
  expect_failure(p, "truncated");
  memcpy(raw + 16, &four, 4); memcpy(raw + 20, f, 12);
  vt_write_file(tmp_path("ragged.fvecs", p, sizeof p), raw, 32);
  expect_failure(p, "row 1 has dimension 4");
  unsigned char raw2[36];
  memcpy(raw2, &three, 4); memcpy(raw2 + 4, f, 12);
  int32_t two = 2;
  memcpy(raw2 + 16, &two, 4); memcpy(raw2 + 20, f, 8);
  memcpy(raw2 + 28, &two, 4); memcpy(raw2 + 32, f, 4);
  vt_write_file(tmp_path("ragged2.fvecs", p, sizeof p), raw2, 36);
  expect_failure(p, "dimension 2");
  int32_t neg = -5;
  vt_write_file(tmp_path("neg.fvecs", p, sizeof p), &neg, 4);
  expect_failure(p, "implausible");
  vt_write_file(tmp_path("empty.fvecs", p, sizeof p), "", 0);
  expect_failure(p, "empty");
  VT_CHECK(vio_load_ivecs(tmp_path("missing.ivecs", p, sizeof p), &back, err, sizeof err) == -1 &&
               strstr(err, "cannot open"), "missing ivecs: %s", err);
}

static void test_idx(void) {
  char p[256];
  unsigned char idx[16 + 6] = {0, 0, 8, 3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 3, 0, 7, 255, 1, 2, 3};
  float want[6] = {0, 7, 255, 1, 2, 3};
  vt_write_file(tmp_path("a.idx3-ubyte", p, sizeof p), idx, sizeof idx);
  expect_matrix(p, 2, 3, want);
  gzFile g = gzopen(tmp_path("b-idx3-ubyte.gz", p, sizeof p), "wb");
  gzwrite(g, idx, sizeof idx);
  gzclose(g);
  expect_matrix(p, 2, 3, want);
  vt_write_file(tmp_path("trunc.idx", p, sizeof p), idx, sizeof idx - 1);
  expect_failure(p, "truncated");
  unsigned char flt[16 + 8] = {0, 0, 0x0D, 1, 0, 0, 0, 2};
  vt_write_file(tmp_path("float.idx", p, sizeof p), flt, sizeof flt);
  expect_failure(p, "type 0x0d");
  /* a gzip stream cut in the middle */
  g = gzopen(tmp_path("cut.gz", p, sizeof p), "wb");
  unsigned char big[4096 + 16] = {0, 0, 8, 3, 0, 0, 0, 64, 0, 0, 0, 8, 0, 0, 0, 8};
  for (int i = 16; i < (int)sizeof big; ++i) big[i] = (unsigned char)(i * 37);
  gzwrite(g, big, sizeof big);
  gzclose(g);
  FILE *f = fopen(p, "rb");
  unsigned char comp[8192];
  size_t clen = fread(comp, 1, sizeof comp, f);
  fclose(f);
  vt_write_file(p, comp, clen / 2);
  expect_failure(p, "");
}

/* A Gadget-1 file: type 0 with 3 particles and per-particle masses, type 1
 * with 2 particles of massarr 0.5. */
static size_t make_gadget(unsigned char *buf, int corrupt) {
  size_t o = 0;
  uint32_t m;
#define PUT(ptr, size) (memcpy(buf + o, (ptr), (size)), o += (size))
  unsigned char hdr[256] = {0};
  int32_t npart[6] = {3, 2, 0, 0, 0, 0};
  double massarr[6] = {0, 0.5, 0, 0, 0, 0};
  memcpy(hdr, npart, sizeof npart);
  memcpy(hdr + 24, massarr, sizeof massarr);
  m = 256; PUT(&m, 4); PUT(hdr, 256); PUT(&m, 4);
  float pos[15], vel[15];
  for (int i = 0; i < 15; ++i) { pos[i] = (float)i; vel[i] = (float)-i; }
  m = 60; PUT(&m, 4); PUT(pos, 60); if (corrupt == 1) m = 61; PUT(&m, 4);
  m = 60; PUT(&m, 4); PUT(vel, 60); PUT(&m, 4);
  int32_t id[5] = {1, 2, 3, 4, 5};
  m = 20; PUT(&m, 4); PUT(id, 20); PUT(&m, 4);
  float mass[3] = {0.1f, 0.2f, 0.3f};
  m = 12; PUT(&m, 4); PUT(mass, 12); PUT(&m, 4);
#undef PUT
  return o;
}

static void test_gadget(void) {
  char p[256], err[512];
  unsigned char buf[1024];
  size_t len = make_gadget(buf, 0);
  vt_write_file(tmp_path("snap.dat", p, sizeof p), buf, len);
  vio_matrix pos, vel;
  float *mass = NULL;
  VT_CHECK(vio_load_gadget(p, &pos, &vel, &mass, err, sizeof err) == 0, "%s", err);
  if (pos.rows) {
    VT_CHECK(pos.n == 5 && pos.d == 3 && pos.rows[14] == 14.f, "positions");
    VT_CHECK(vel.n == 5 && vel.rows[14] == -14.f, "velocities");
    VT_CHECK(mass[0] == 0.1f && mass[2] == 0.3f && mass[3] == 0.5f && mass[4] == 0.5f, "masses");
    vio_free(&pos); vio_free(&vel); free(mass);
  }
  float want[15];
  for (int i = 0; i < 15; ++i) want[i] = (float)i;
  expect_matrix(p, 5, 3, want); /* vio_load recognises the header record */

  vt_write_file(tmp_path("trunc.dat", p, sizeof p), buf, len - 30);
  VT_CHECK(vio_load_gadget(p, &pos, &vel, &mass, err, sizeof err) == -1 && strstr(err, "truncated"), "truncated: %s", err);
  VT_CHECK(pos.rows == NULL && vel.rows == NULL && mass == NULL, "outputs zeroed");
  vt_write_file(tmp_path("short.dat", p, sizeof p), buf, 100);
  expect_failure(p, "Gadget");
  len = make_gadget(buf, 1);
  vt_write_file(tmp_path("marker.dat", p, sizeof p), buf, len);
  expect_failure(p, "end marker");
  uint32_t eight = 8;
  memcpy(buf, &eight, 4);
  VT_CHECK(vio_load_gadget(p, &pos, NULL, NULL, err, sizeof err) == -1, "bad first marker");
  vt_write_file(tmp_path("fmt2.dat", p, sizeof p), buf, 64);
  VT_CHECK(vio_load_gadget(p, &pos, NULL, NULL, err, sizeof err) == -1 && strstr(err, "not a Gadget"), "marker 8 without HEAD: %s", err);
}

static void test_csv(void) {
  char p[256];
  const char *good = "x,y,z\n1,2,3\n\n# comment\n4, 5, 6.5\n";
  float want[6] = {1, 2, 3, 4, 5, 6.5f};
  vt_write_file(tmp_path("a.csv", p, sizeof p), good, strlen(good));
  expect_matrix(p, 2, 3, want);
  const char *blank = "1 2 3\r\n4\t5 6.5";
  vt_write_file(tmp_path("b.txt", p, sizeof p), blank, strlen(blank));
  expect_matrix(p, 2, 3, want);
  const char *ragged = "1,2,3\n4,5\n";
  vt_write_file(tmp_path("ragged.csv", p, sizeof p), ragged, strlen(ragged));
  expect_failure(p, "line 2 has 2 columns");
  const char *word = "a,b\n1,2\n3,oops\n";
  vt_write_file(tmp_path("word.csv", p, sizeof p), word, strlen(word));
  expect_failure(p, "line 3: 'oops'");
  vt_write_file(tmp_path("hdr.csv", p, sizeof p), "a,b\n", 4);
  expect_failure(p, "no numeric rows");
}

/* The audit's CSV cases: each an error that names the cause, or read as
 * documented (vic_io.h), never a silently different matrix. */
static void test_csv_strict(void) {
  char p[256];
  vt_write_file(tmp_path("empty-fields.csv", p, sizeof p), ",,,\n,,\n", 7);
  expect_failure(p, "line 1: field 1 is empty");
  vt_write_file(tmp_path("gap.csv", p, sizeof p), "1,,2\n3,4,5\n", strlen("1,,2\n3,4,5\n"));
  expect_failure(p, "line 1: field 2 is empty");
  vt_write_file(tmp_path("trailing.csv", p, sizeof p), "1,2\n3,4,\n", strlen("1,2\n3,4,\n"));
  expect_failure(p, "line 2: field 3 is empty");
  vt_write_file(tmp_path("nul.csv", p, sizeof p), "1,2\n3,\0004\n", 9);
  expect_failure(p, "line 2 holds a NUL byte");
  const char bom[] = "\xEF\xBB\xBF" "1,2\n3,4\n";
  float want_bom[4] = {1, 2, 3, 4};
  vt_write_file(tmp_path("bom.csv", p, sizeof p), bom, strlen(bom));
  expect_matrix(p, 2, 2, want_bom);
  const char bom_hdr[] = "\xEF\xBB\xBF" "a,b\n1,2\n3,4\n";
  vt_write_file(tmp_path("bom-header.csv", p, sizeof p), bom_hdr, strlen(bom_hdr));
  expect_matrix(p, 2, 2, want_bom);
  vt_write_file(tmp_path("tiny.csv", p, sizeof p), "1e-50,2\n", strlen("1e-50,2\n"));
  expect_failure(p, "line 1: '1e-50' is outside what a float holds");
  vt_write_file(tmp_path("huge.csv", p, sizeof p), "1,2\n-1e39,2\n", strlen("1,2\n-1e39,2\n"));
  expect_failure(p, "line 2: '-1e39' is outside what a float holds");
  float want_small[4] = {0, 1e-30f, 3.25f, -2};
  vt_write_file(tmp_path("small.csv", p, sizeof p), "0;1e-30\n3.25 ; -2\n", strlen("0;1e-30\n3.25 ; -2\n"));
  expect_matrix(p, 2, 2, want_small);
}

/* Headers that declare far more data than the file holds: a plain file
 * fails before allocating, a compressed one after reading what is there
 * (its buffer grows with the data).  Without a sanitizer the data
 * segment is limited to 1 GiB meanwhile, so a loader that allocated the
 * declared 12 GiB first would fail with "out of memory" instead. */
static void test_huge_headers(void) {
#if !defined(__SANITIZE_ADDRESS__)
  struct rlimit old, lim;
  int limited = getrlimit(RLIMIT_DATA, &old) == 0;
  if (limited) {
    lim = old;
    lim.rlim_cur = (rlim_t)1 << 30;
    if (old.rlim_max != RLIM_INFINITY && old.rlim_max < lim.rlim_cur) lim.rlim_cur = old.rlim_max;
    limited = setrlimit(RLIMIT_DATA, &lim) == 0;
  }
#endif
  char p[256];
  float some[15] = {0};
  /* .npy: 2^30 x 3 float32 declared, 60 bytes present */
  write_npy(tmp_path("huge.npy", p, sizeof p), "{'descr': '<f4', 'fortran_order': False, 'shape': (1073741824, 3), }",
            some, sizeof some, 1, 0);
  expect_failure(p, "declares 1073741824 x 3 float32 values");
  long len = 0;
  unsigned char *bytes = vt_read_file(p, &len);
  gzFile g = gzopen(tmp_path("huge.npy.gz", p, sizeof p), "wb");
  gzwrite(g, bytes, (unsigned)len);
  gzclose(g);
  free(bytes);
  expect_failure(p, "truncated");
  /* IDX: 2^30 rows of 3 bytes declared, 6 present */
  unsigned char idx[12 + 6] = {0, 0, 8, 2, 0x40, 0, 0, 0, 0, 0, 0, 3, 1, 2, 3, 4, 5, 6};
  vt_write_file(tmp_path("huge.idx", p, sizeof p), idx, sizeof idx);
  expect_failure(p, "declares 1073741824 x 3 bytes");
  g = gzopen(tmp_path("huge-idx2-ubyte.gz", p, sizeof p), "wb");
  gzwrite(g, idx, sizeof idx);
  gzclose(g);
  expect_failure(p, "truncated");
  /* .fvecs(.gz): a first row of 2^24 components, 16 bytes of them present */
  unsigned char vec[4 + 16] = {0, 0, 0, 1};
  vt_write_file(tmp_path("huge.fvecs", p, sizeof p), vec, sizeof vec);
  expect_failure(p, "row 0 is incomplete");
  g = gzopen(tmp_path("huge.fvecs.gz", p, sizeof p), "wb");
  gzwrite(g, vec, sizeof vec);
  gzclose(g);
  expect_failure(p, "row 0 is incomplete");
  /* Gadget: 10^8 particles (a 1.2 GB position block) declared, 16 bytes present */
  unsigned char gad[4 + 256 + 4 + 4 + 16] = {0};
  uint32_t m256 = 256, mpos = 1200000000u;
  int32_t npart[6] = {100000000, 0, 0, 0, 0, 0};
  memcpy(gad, &m256, 4);
  memcpy(gad + 4, npart, sizeof npart);
  memcpy(gad + 260, &m256, 4);
  memcpy(gad + 264, &mpos, 4);
  vt_write_file(tmp_path("huge.dat", p, sizeof p), gad, sizeof gad);
  expect_failure(p, "(1200000000 bytes) is cut short");
#if !defined(__SANITIZE_ADDRESS__)
  if (limited) setrlimit(RLIMIT_DATA, &old);
#endif
}

static void test_misc(void) {
  char p[256];
  expect_failure(tmp_path("does-not-exist.npy", p, sizeof p), "cannot open");
  vt_write_file(tmp_path("thing.bin", p, sizeof p), "hello world", 11);
  expect_failure(p, "unrecognised format");
  vt_write_file(tmp_path("empty.bin", p, sizeof p), "", 0);
  expect_failure(p, "empty");
  vio_matrix m;
  char err[64];
  VT_CHECK(vio_load(NULL, &m, err, sizeof err) == -1, "NULL path");
  char tiny[8];
  VT_CHECK(vio_load(p, &m, tiny, sizeof tiny) == -1 && strlen(tiny) == 7, "message truncated to the buffer");
}

static void test_real_files(void) {
  char p[1024], err[512];
  vio_matrix m;
  /* The loaders are tested above on files written here; the real files
   * are an extra check, not a reason to skip the test. */
  if (!vt_data_path("mnist/t10k-images-idx3-ubyte.gz", p, sizeof p)) {
    printf("mnist/t10k-images-idx3-ubyte.gz absent (set VICINITY_DATA_DIR): the real-file checks skipped\n");
    return;
  }
  VT_CHECK(vio_load(p, &m, err, sizeof err) == 0, "%s", err);
  VT_CHECK(m.n == 10000 && m.d == 784, "mnist %lld x %d", (long long)m.n, m.d);
  float lo = 1e9f, hi = -1e9f;
  for (int64_t i = 0; i < m.n * m.d; ++i) { lo = fminf(lo, m.rows[i]); hi = fmaxf(hi, m.rows[i]); }
  VT_CHECK(lo == 0.f && hi == 255.f, "mnist pixel range %g..%g", lo, hi);
  vio_free(&m);
  if (vt_data_path("mnist/t10k-labels-idx1-ubyte.gz", p, sizeof p)) {
    VT_CHECK(vio_load(p, &m, err, sizeof err) == 0, "%s", err);
    VT_CHECK(m.n == 10000 && m.d == 1 && m.rows[0] == 7.f, "labels %lld x %d, first %g", (long long)m.n, m.d, m.rows ? m.rows[0] : -1);
    vio_free(&m);
  }
  if (!vt_data_path("nbody/halo_low_res.npy", p, sizeof p)) {
    printf("nbody/halo_low_res.npy absent: the real n-body file checks skipped\n");
    return;
  }
  VT_CHECK(vio_load(p, &m, err, sizeof err) == 0, "%s", err);
  VT_CHECK(m.n == 32314 && m.d == 3, "halo %lld x %d", (long long)m.n, m.d);
  int finite = 1;
  for (int64_t i = 0; i < m.n * m.d; ++i) finite &= isfinite(m.rows[i]) != 0;
  VT_CHECK(finite, "halo coordinates finite");
  vio_free(&m);

  if (!vt_data_path("nbody/gassphere_littleendian.dat", p, sizeof p)) {
    printf("nbody/gassphere_littleendian.dat absent: that check skipped\n");
    return;
  }
  vio_matrix pos, vel;
  float *mass;
  VT_CHECK(vio_load_gadget(p, &pos, &vel, &mass, err, sizeof err) == 0, "%s", err);
  if (!pos.rows) return;
  VT_CHECK(pos.n == 1472 && vel.n == 1472, "gassphere particles %lld", (long long)pos.n);
  double total = 0, rmax = 0;
  for (int64_t i = 0; i < pos.n; ++i) {
    const float *x = pos.rows + 3 * i;
    total += mass[i];
    rmax = fmax(rmax, sqrt((double)x[0] * x[0] + (double)x[1] * x[1] + (double)x[2] * x[2]));
  }
  VT_CHECK(fabs(total - 1.0) < 1e-3, "gassphere total mass %g", total);
  VT_CHECK(rmax <= 1.05 && rmax > 0.8, "gassphere radius %g", rmax);
  vio_free(&pos); vio_free(&vel); free(mass);
}

int main(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/vic_test_io_XXXXXX");
  if (!mkdtemp(tmpdir)) { perror("mkdtemp"); return 1; }
  test_npy();
  test_npy_large();
  test_vecs();
  test_idx();
  test_gadget();
  test_csv();
  test_csv_strict();
  test_huge_headers();
  test_misc();
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  int rc_rm = system(cmd); /* the temp files are ours; remove before the data tests may skip */
  (void)rc_rm;
  test_real_files();
  return vt_finish("test_io");
}
