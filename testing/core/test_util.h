/* Small helpers shared by the core tests: checks that report the line,
 * seeded random data, a double-precision naive reference and data paths. */
#ifndef VIC_TEST_UTIL_H
#define VIC_TEST_UTIL_H

#include "vic_io.h"
#include "vicinity.h"

#include <stdio.h>
#include <stdlib.h>

extern int vt_failures;

#define VT_CHECK(cond, ...)                                                                        \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);                     \
      fprintf(stderr, __VA_ARGS__);                                                                \
      fprintf(stderr, "\n");                                                                       \
      vt_failures++;                                                                               \
    }                                                                                              \
  } while (0)

#define VT_OK(ctx, call)                                                                           \
  do {                                                                                             \
    vic_status vt_s_ = (call);                                                                     \
    if (vt_s_ != VIC_OK) {                                                                         \
      fprintf(stderr, "%s:%d: %s -> %s: %s\n", __FILE__, __LINE__, #call, vic_status_name(vt_s_), \
              vic_ctx_error(ctx));                                                                 \
      exit(1);                                                                                     \
    }                                                                                              \
  } while (0)

/* Exit code: 0 when every check passed. */
int vt_finish(const char *name);
/* Skip the whole test (exit 77) with a reason. */
void vt_skip(const char *reason);

/* The context of options o; the test ends (exit 1) when it cannot be made. */
vic_ctx *vt_ctx_make(const vic_ctx_options *o);
/* A context for tests: CPU backend unless backend says otherwise, fixed seed,
 * log messages collected into vt_last_log (warnings counted). */
vic_ctx *vt_ctx(vic_backend backend, uint64_t seed);
/* A CPU context with `threads` threads and a seed, log left to the library's
 * default (nothing collected); exits when it cannot be made. */
vic_ctx *vt_ctx_threads(int threads, uint64_t seed);
extern char vt_last_log[1024];
extern int vt_warnings;

/* n*d floats, uniform in [0, scale), from a seed. */
float *vt_uniform(int64_t n, int32_t d, float scale, uint64_t seed);
/* n*d floats drawn from a few Gaussian clusters (high-d test data):
 * vt_blobs with spread 3 and the centres from seed's own stream. */
float *vt_clusters(int64_t n, int32_t d, int clusters, uint64_t seed);
/* n*d floats around `clusters` centres drawn N(0, spread^2) per
 * coordinate, each row a centre plus N(0, 1) noise.  centre_seed 0: the
 * centres are drawn first from seed's stream (two calls with one seed
 * share centres and rows); otherwise from a stream of their own, so rows
 * of different seeds (data and queries) share the centres. */
float *vt_blobs(int64_t n, int32_t d, int clusters, double spread, uint64_t seed, uint64_t centre_seed);
/* The next value of the splitmix64 stream *s, the stream behind every
 * vt_ data maker. */
uint64_t vt_splitmix(uint64_t *s);
/* A uniform double in [0, 1) from the splitmix64 stream *s. */
double vt_unif(uint64_t *s);
/* One standard normal draw from the splitmix64 stream *s (Box-Muller). */
double vt_gauss(uint64_t *s);
/* The next value of the xorshift64 (13, 7, 17) stream *s (state nonzero). */
uint64_t vt_xorshift(uint64_t *s);

/* n rows of d "pixels" shaped like a small image set (MNIST's stand-in,
 * so that no test needs the real files): ten classes, each a mean image in
 * [0, 255) plus a 16-dimensional Gaussian family of strokes and pixel
 * noise, so the rows lie near ten 16-d sheets as digits do near their
 * low-dimensional manifolds.  NN-Descent and the graph index find them
 * about as hard as MNIST t10k (recall, distances per query). */
float *vt_digits(int64_t n, int32_t d, uint64_t seed);
/* Writes a Gadget-1 snapshot (one file, native byte order) of n type-1
 * particles with per-particle masses (massarr 0) and zero velocities;
 * exits the test on failure. */
void vt_write_gadget(const char *path, const float *xyz, const float *mass, int64_t n);

/* Naive double-precision exact kNN (self excluded when q == NULL), with
 * minimum-image wrapping when x->box is set; ties broken by lower id. */
void vt_naive_knn(const vic_data *x, const vic_data *q, int32_t k, int64_t *ids, double *dist);

/* Compare lists with a reference: ids equal except where distances tie
 * (within rel), and distances within rel.  Returns mismatching rows. */
int64_t vt_compare_knn(const vic_knn *got, const int64_t *ref_ids, const double *ref_dist, double rel);
/* vt_compare_knn of got with the naive reference of k neighbours
 * (vt_naive_knn of x, or of the rows of q); every row counts as differing
 * when got is not the reference's shape (q or x rows by k). */
int64_t vt_naive_mismatch(const vic_knn *got, const vic_data *x, const vic_data *q, int32_t k, double rel);
/* Neighbours out of (distance, id) order: adjacent pairs of a row where
 * the first comes later, or where an empty slot (id -1) comes before a
 * neighbour; 0 when every list is ascending with its empty slots last. */
int64_t vt_order_violations(const vic_knn *r);
/* Recall of got against reference lists ref: the fraction of ref's
 * entries (ref->n by ref->k) whose id is in got's row. */
double vt_recall(const vic_knn *got, const vic_knn *ref);

/* Path of a file under VICINITY_DATA_DIR (or ../shared/data), NULL when absent. */
const char *vt_data_path(const char *relative, char *buf, size_t size);
/* Loads the data file at `relative` (see vt_data_path) into m: 1 when
 * loaded; 0 when absent (a note is printed, the caller skips that part)
 * or unreadable (a failed check). */
int vt_load_data(const char *relative, vio_matrix *m);
/* A per-process scratch path "$TMPDIR/vic_test_<test>_<pid>_<name>". */
const char *vt_tmp_path(const char *test, const char *name, char *buf, size_t size);
/* Whole-file read (malloc'd, NULL when unreadable) and write (exit on failure). */
unsigned char *vt_read_file(const char *path, long *len);
void vt_write_file(const char *path, const void *bytes, long len);

/* Scale for test sizes: 1 normally, smaller under sanitizers (VIC_TEST_SMALL). */
int vt_small(void);
/* The start of every GPU test: exits 77 (skipped) without a usable CUDA
 * device; returns 1 for the small run ("small" as argv[1], or
 * VIC_TEST_SMALL, as under compute-sanitizer), else 0. */
int vt_gpu_start(int argc, char **argv);

#endif
