/* The ABI-growth test's program.  Built against the installed header, it
 * runs against whichever libvicinity.so.0 the loader finds:
 *   abi_program same   the library it was built with
 *   abi_program later  a library whose vic_build_options and vic_report
 *                      have one more field (VIC_ABI_TEST_EXTRA_FIELD): it
 *                      must read only the program's bytes of the options
 *                      (the extra one at its default, 7, although the
 *                      bytes after the program's struct are 0xAB), and
 *                      fill the report the program knows, saying it knows
 *                      more (report.struct_size)
 * Built with -DVIC_ABI_TEST_EXTRA_FIELD (a newer program) against the
 * library without the field:
 *   abi_program older  options with the unknown field left at zero work;
 *                      with it set, VIC_E_UNSUPPORTED and a message. */
#include <vicinity.h>

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int extra_seen = -1;

static void on_log(void *user, vic_log_level level, const char *msg) {
  (void)user; (void)level;
  int v;
  if (sscanf(msg, "abi_test_extra = %d", &v) == 1) extra_seen = v;
}

#define CHECK(cond, ...)                                   \
  do {                                                     \
    if (!(cond)) {                                         \
      fprintf(stderr, "FAIL line %d: ", __LINE__);         \
      fprintf(stderr, __VA_ARGS__);                        \
      fprintf(stderr, "\n");                               \
      return 1;                                            \
    }                                                      \
  } while (0)

enum { N = 400, D = 3, K = 5 };

/* the program's own brute force: the K-th neighbour distance of point i */
static float kth_distance(const float *x, int i) {
  float best[K];
  for (int j = 0; j < K; ++j) best[j] = INFINITY;
  for (int j = 0; j < N; ++j) {
    if (j == i) continue;
    float s = 0;
    for (int c = 0; c < D; ++c) { float t = x[i * D + c] - x[j * D + c]; s += t * t; }
    float dj = sqrtf(s);
    for (int m = 0; m < K; ++m)
      if (dj < best[m]) { memmove(best + m + 1, best + m, (K - 1 - m) * sizeof *best); best[m] = dj; break; }
  }
  return best[K - 1];
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "same";
  printf("header %d, library %d (%s); sizeof options %zu, report %zu\n", VIC_VERSION, vic_version(),
         vic_version_string(), sizeof(vic_build_options), sizeof(vic_report));
  CHECK(vic_version() / 100 == VIC_VERSION / 100, "library %d is not a 0.y of header %d", vic_version(), VIC_VERSION);

  float x[N * D];
  unsigned s = 12345u;
  for (int i = 0; i < N * D; ++i) { s = s * 1664525u + 1013904223u; x[i] = (float)(s >> 8) / 16777216.0f; }
  vic_data data = {x, N, D, 0, VIC_L2, NULL};

  vic_ctx_options co;
  vic_ctx_options_init(&co);
  co.backend = VIC_BACKEND_CPU;
  co.log = on_log;
  vic_ctx *c;
  CHECK(vic_ctx_create(&co, &c) == VIC_OK, "context");

  /* options inside a buffer whose bytes after the program's struct are junk */
  union { vic_build_options o; unsigned char raw[sizeof(vic_build_options) + 256]; } buf;
  memset(&buf, 0xAB, sizeof buf);
  vic_build_options_init(&buf.o);
  CHECK(buf.o.struct_size == sizeof(vic_build_options), "struct_size %zu", buf.o.struct_size);
  CHECK(buf.o.k == 16 && buf.o.recall_sample == 1000, "defaults not set by init");
  buf.o.k = K;
  buf.o.method = VIC_METHOD_BRUTE;

  if (!strcmp(mode, "older")) {
#ifdef VIC_ABI_TEST_EXTRA_FIELD
    CHECK(buf.o.abi_test_extra == 0, "an older library's init leaves the field it does not know at 0");
    vic_knn r;
    CHECK(vic_knn_build(c, &data, &buf.o, &r) == VIC_OK, "unknown field at zero refused: %s", vic_ctx_error(c));
    vic_knn_free(&r);
    buf.o.abi_test_extra = 3;
    vic_status st = vic_knn_build(c, &data, &buf.o, &r);
    CHECK(st == VIC_E_UNSUPPORTED, "a set unknown field gave %s", vic_status_name(st));
    printf("refused as expected: %s\n", vic_ctx_error(c));
    vic_ctx_destroy(c);
    printf("PASS older\n");
    return 0;
#else
    CHECK(0, "mode 'older' needs a build with -DVIC_ABI_TEST_EXTRA_FIELD");
#endif
  }

  vic_knn r;
  memset(&r, 0x5A, sizeof r);
  vic_status st = vic_knn_build(c, &data, &buf.o, &r);
  CHECK(st == VIC_OK, "vic_knn_build: %s", vic_ctx_error(c));
  CHECK(r.n == N && r.k == K && r.report.k == K, "n %lld k %d", (long long)r.n, (int)r.k);
  CHECK(r.report.method == VIC_METHOD_BRUTE && r.report.backend == VIC_BACKEND_CPU, "report method/backend");
  for (int i = 0; i < N; ++i) {
    float want = kth_distance(x, i);
    CHECK(fabsf(r.dist[(size_t)i * K + K - 1] - want) <= 1e-5f * (1 + want), "point %d: %g vs %g", i,
          r.dist[(size_t)i * K + K - 1], want);
  }
  const size_t known = offsetof(vic_report, devices_used) + sizeof(int32_t); /* its last field */
  printf("report.struct_size %zu (this header knows %zu), extra option seen %d\n", r.report.struct_size, known,
         extra_seen);
  if (!strcmp(mode, "later")) {
    CHECK(extra_seen == 7, "the later library read %d for the field the program lacks (default 7)", extra_seen);
    CHECK(r.report.struct_size > known, "the later library's report is not larger (%zu)", r.report.struct_size);
  } else {
    CHECK(extra_seen == -1, "this library should not have the extra field");
    CHECK(r.report.struct_size == known, "report.struct_size %zu", r.report.struct_size);
  }
  vic_knn_free(&r);

  /* the other option structs through the same path */
  vic_index *ix;
  CHECK(vic_index_build(c, &data, &buf.o, &ix) == VIC_OK, "index: %s", vic_ctx_error(c));
  vic_search_options so;
  vic_search_options_init(&so);
  so.k = K;
  CHECK(vic_index_search(c, ix, &data, &so, &r) == VIC_OK, "search: %s", vic_ctx_error(c));
  CHECK(r.k == K && r.ids[0] == 0, "a point's own row comes first in a search");
  vic_knn_free(&r);
  vic_index_free(ix);
  float rho[N];
  vic_density_options dop;
  vic_density_options_init(&dop);
  CHECK(vic_knn_density(c, &data, 8, NULL, &dop, NULL, rho, NULL, NULL) == VIC_OK, "density: %s", vic_ctx_error(c));
  vic_peak_options po;
  vic_peak_options_init(&po);
  vic_peaks p;
  CHECK(vic_knn_density_peaks(c, &data, 8, NULL, &dop, &po, NULL, rho, NULL, NULL, &p) == VIC_OK, "peaks: %s",
        vic_ctx_error(c));
  CHECK(p.n == N && p.n_peaks >= 1 && p.report.struct_size >= known, "peaks result");

  /* the result structs of the catalogue, the SPH map and the caller's
   * lists carry the report the library knows, like vic_knn's */
  vic_knn ref;
  CHECK(vic_knn_build(c, &data, &buf.o, &ref) == VIC_OK, "lists: %s", vic_ctx_error(c));
  const size_t report_size = ref.report.struct_size;
  int64_t ids[N * K];
  float dist[N * K];
  vic_knn_out into;
  vic_knn_out_init(&into);
  CHECK(into.struct_size == sizeof into && into.id_type == VIC_IDS_INT64, "vic_knn_out_init");
  into.ids = ids;
  into.dist = dist;
  into.capacity = N * K;
  CHECK(vic_knn_build_into(c, &data, &buf.o, &into) == VIC_OK, "into: %s", vic_ctx_error(c));
  CHECK(into.n == N && into.k == K && into.report.struct_size == report_size && ids[K] == ref.ids[K],
        "vic_knn_out: n %lld k %d report %zu", (long long)into.n, (int)into.k, into.report.struct_size);
  vic_knn_free(&ref);
  vic_halo_options ho;
  vic_halo_options_init(&ho);
  ho.min_members = 1;
  vic_halos halos;
  CHECK(vic_halo_catalogue(c, &data, &p, NULL, NULL, &ho, &halos) == VIC_OK, "halos: %s", vic_ctx_error(c));
  CHECK(halos.struct_size > offsetof(vic_halos, report) && halos.report.struct_size == report_size,
        "vic_halos: struct_size %zu, report %zu", halos.struct_size, halos.report.struct_size);
  vic_halos_free(&halos);
  float hsm[N];
  CHECK(vic_knn_density(c, &data, 8, NULL, &dop, NULL, rho, NULL, hsm) == VIC_OK, "h: %s", vic_ctx_error(c));
  vic_sph_options sop;
  vic_sph_options_init(&sop);
  sop.centre[0] = sop.centre[1] = sop.centre[2] = 0.5;
  sop.resolution[0] = sop.resolution[1] = 16;
  vic_sph_image im;
  CHECK(vic_sph_resample(c, &data, NULL, hsm, 0, NULL, &sop, &im) == VIC_OK, "sph: %s", vic_ctx_error(c));
  CHECK(im.nx == 16 && im.struct_size > offsetof(vic_sph_image, report) && im.report.struct_size == report_size,
        "vic_sph_image: struct_size %zu, report %zu", im.struct_size, im.report.struct_size);
  vic_sph_image_free(&im);
  vic_peaks_free(&p);

  /* an options struct that no init call set is refused with a message */
  vic_build_options junk;
  memset(&junk, 0, sizeof junk);
  junk.k = K;
  st = vic_knn_build(c, &data, &junk, &r);
  CHECK(st == VIC_E_ARGUMENT && strstr(vic_ctx_error(c), "vic_build_options_init"), "uninitialised options: %s",
        vic_ctx_error(c));
  vic_ctx_destroy(c);
  printf("PASS %s\n", mode);
  return 0;
}
