/* Internal helpers shared by the core's translation units.  Not installed. */
#ifndef VIC_INTERNAL_H
#define VIC_INTERNAL_H

#include "vicinity.h"

#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

struct vic_ctx {
  vic_ctx_options opt;
  char error[1024];
  atomic_int cancel;
  int warnings; /* warnings logged since the current public call began */
  atomic_int pinned_held; /* holds the kernels' kept pinned slots (vick_pinned_keep) since its first GPU call */
  void (*gpu_release)(vic_ctx *c); /* set by the GPU backend with the hold: gives it back at vic_ctx_destroy */
};

/* Records the message as the context's last error, logs it at ERROR level
 * and returns s, so that failures read `return vic__fail(c, VIC_E_..., ...)`. */
vic_status vic__fail(vic_ctx *c, vic_status s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void vic__log(vic_ctx *c, vic_log_level level, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Reports progress and polls the cancel flag.  Returns VIC_OK or
 * VIC_E_CANCELLED (with the message set).  Cheap enough for outer loops;
 * call it from one thread only (the OpenMP master / the calling thread). */
vic_status vic__progress(vic_ctx *c, const char *stage, double fraction);
/* Nonzero when a cancel was requested; safe from any thread. */
static inline int vic__cancelled(vic_ctx *c) { return atomic_load_explicit(&c->cancel, memory_order_relaxed); }

/* Called first by every public call that may poll the cancel flag: a
 * cancel (from the progress callback or vic_ctx_cancel) stops the call that
 * is running and is cleared when the next call starts.  Public calls that
 * the core also makes internally have a vic__ body that does not clear it,
 * so a cancel during the outer call is not lost between its stages. */
static inline void vic__begin_call(vic_ctx *c) {
  if (c) atomic_store(&c->cancel, 0);
}
vic_status vic__knn_build(vic_ctx *c, const vic_data *x, const vic_build_options *o, vic_knn *out);
vic_status vic__knn_recall(vic_ctx *c, const vic_data *x, const vic_knn *approx, int32_t sample, double *recall);
vic_status vic__density(vic_ctx *c, const vic_data *x, const vic_knn *nn, const float *mass,
                        const vic_density_options *o, float *knn_density, float *sph_density, float *smoothing_length);
vic_status vic__knn_density(vic_ctx *c, const vic_data *x, int32_t k, const float *mass, const vic_density_options *o,
                            vic_knn *nn, float *knn_density, float *sph_density, float *smoothing_length);
vic_status vic__peaks_find(vic_ctx *c, const vic_data *x, const vic_knn *nn, const float *density,
                           const vic_peak_options *o, vic_peaks *out);

int vic__threads(const vic_ctx *c); /* effective CPU thread count */
double vic__now(void);              /* monotonic seconds */
void vic__report_stage(vic_report *r, const char *name, double seconds);
void vic__report_reason(vic_report *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Result structs emptied with their struct_size set (abi.c). */
void vic__report_clear(vic_report *r);
void vic__knn_clear(vic_knn *k);
void vic__peaks_clear(vic_peaks *p);
void vic__halos_clear(vic_halos *h);
void vic__sph_image_clear(vic_sph_image *im);
/* Options of a public call: `full` holds this library's defaults (its
 * *_init) and receives the bytes of `given` that the caller's struct_size
 * covers.  Refuses a struct_size no *_init call wrote and fields of a
 * newer header that this library does not know (when they are set).
 * c may be NULL (vic_ctx_create): the status alone then. */
vic_status vic__options_in(vic_ctx *c, const void *given, void *full, size_t full_size, const char *what);
/* The body of each *_init_sized: the caller's struct_size bytes of the
 * defaults (zero beyond this library's size), struct_size set. */
void vic__init_sized(void *o, size_t struct_size, const void *defaults, size_t full_size);
#define VIC__OPTIONS_IN(c, given, full, what) vic__options_in((c), (given), (full), sizeof *(full), (what))

/* Allocation that fails cleanly: returns NULL and sets VIC_E_NOMEM on c. */
void *vic__malloc(vic_ctx *c, size_t bytes, const char *what);
/* Host memory of many bytes (from VIC_HUGE_MIN on: 2 MiB aligned and
 * advised to transparent huge pages on Linux, so a first touch of
 * gigabytes faults 512 times less often); NULL when there is none, no
 * message.  free() releases. */
#define VIC_HUGE_MIN ((size_t)16 << 20)
void *vic__malloc_huge(size_t bytes);
/* free() of every pointer (NULL allowed) on a detached thread, or here
 * where no thread starts: for buffers of many GB whose release the caller
 * need not wait for (free_beside.c). */
void vic__free_beside(void *const *p, size_t count);
/* The same for pointers gathered one by one, with no array of the
 * caller's: a batch of room for capacity pointers (NULL when there is no
 * memory), add hands it one (freed here when the batch is NULL or full),
 * go frees them all on a detached thread, or here where none starts, and
 * the batch with them (free_beside.c). */
typedef struct vic__free_batch vic__free_batch;
vic__free_batch *vic__free_batch_new(size_t capacity);
void vic__free_batch_add(vic__free_batch *b, void *p);
void vic__free_batch_go(vic__free_batch *b);
void *vic__calloc(vic_ctx *c, size_t count, size_t size, const char *what);

static inline const float *vic__row(const vic_data *x, int64_t i) {
  return x->rows + i * (x->stride ? x->stride : x->d);
}

/* ------------------------------------------------------------ random */
/* splitmix64 seeded per use: no shared generator state anywhere. */
typedef struct { uint64_t s; } vic_rng;
static inline vic_rng vic__rng(uint64_t seed, uint64_t stream) {
  vic_rng r = {seed * 0x9E3779B97F4A7C15ull ^ (stream + 0x632BE59BD9B4E019ull)};
  return r;
}
static inline uint64_t vic__rng_next(vic_rng *r) {
  uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static inline uint64_t vic__rng_below(vic_rng *r, uint64_t n) { return vic__rng_next(r) % n; }
static inline double vic__rng_uniform(vic_rng *r) { return (vic__rng_next(r) >> 11) * (1.0 / 9007199254740992.0); }

/* ---------------------------------------------------------- distances */
/* Squared Euclidean distance, with minimum-image wrapping when box != NULL. */
static inline float vic__l2sq(const float *a, const float *b, int32_t d, const double *box) {
  float s = 0.f;
  if (!box) {
    for (int32_t j = 0; j < d; ++j) { float t = a[j] - b[j]; s += t * t; }
  } else {
    for (int32_t j = 0; j < d; ++j) {
      float t = fabsf(a[j] - b[j]);
      if (box[j] > 0) { float L = (float)box[j]; t = fmodf(t, L); if (t > 0.5f * L) t = L - t; }
      s += t * t;
    }
  }
  return s;
}
static inline float vic__dot(const float *a, const float *b, int32_t d) {
  float s = 0.f;
  for (int32_t j = 0; j < d; ++j) s += a[j] * b[j];
  return s;
}

/* A metric-aware "working" distance whose order equals the true distance's
 * order, and its conversion to the true distance reported to callers.
 *   L2: squared distance -> sqrt; cosine: computed on unit rows as
 *   squared distance, true = sq/2; inner product: -dot, unchanged. */
float vic__work_dist(const vic_data *x, const float *a, const float *b);
float vic__true_dist(vic_metric m, float work);
/* n lists of k working distances (a kernel's output) made true in place,
 * in the CPU's (distance, id) order: the conversion can round distinct
 * working distances to one float, and such runs are then ordered by id;
 * missing entries (id < 0) become +inf.  Rows in parallel. */
void vic__true_lists(vic_ctx *c, vic_metric m, int64_t n, int32_t k, int64_t *ids, float *dist);
/* Working distances of n entries into true ones in place, INFINITY where
 * ids[i] < 0 (no sort: for lists whose order the conversion keeps, e.g. a
 * search's results); parallel for large n. */
void vic__true_dists(vic_ctx *c, vic_metric m, int64_t n, const int64_t *ids, float *dist);

/* Row r scaled to unit length (computed in a frame scaled by its largest
 * magnitude, so no value range overflows); the zero row stays zero. */
void vic__unit_row(const float *r, int32_t d, float *out);

/* VIC_E_NONFINITE naming the first row of n lists of k whose distance to a
 * present neighbour (id >= 0) is not finite: a float overflow that slipped
 * past validation must not come back as an answer.  what: the call. */
vic_status vic__check_distances(vic_ctx *c, int64_t n, int32_t k, const int64_t *ids, const float *dist,
                                const char *what);

/* Results of `rows` queries of k from a kernel's output (working
 * distances) into the caller's arrays: ids as given, distances made true
 * (vic__true_dists), and the first of these rows vic__check_distances
 * would refuse (INT64_MAX: none).  One pass, for the copy out of a
 * search's staging. */
int64_t vic__true_rows(vic_metric m, int32_t k, int64_t rows, const int64_t *src_ids, const float *src_dist,
                       int64_t *ids, float *dist);
/* vic__check_distances' verdict on its first bad row (INT64_MAX: VIC_OK). */
vic_status vic__distance_verdict(vic_ctx *c, int64_t bad, int32_t k, const int64_t *ids, const float *dist,
                                 const char *what);

/* vic_data_validate's checks without the pass over the rows (NULL rows,
 * n, d, stride, metric, box lengths). */
vic_status vic__data_shape(vic_ctx *c, const vic_data *x);

/* vic_data_validate in parts, for a pass that also copies the rows (a
 * search's staging): begin checks the shape and makes `threads` slots;
 * part scans rows [i0, i1) in slot `thread` (one thread a slot at a time)
 * and, when dst is given, copies them packed (d floats a row, as given)
 * to dst, stopping at the first bad row (returns 1); end gives
 * vic_data_validate's verdict and words on what the parts saw (every row
 * must have been scanned, or a bad one found) and frees the slots. */
typedef struct {
  const vic_data *x;
  int threads, cosine;
  float *box;   /* per slot: lo[d], hi[d] (slots on cache lines of their own) */
  void *box_mem;
  int64_t *bad; /* per slot: the first bad row it saw, INT64_MAX */
} vic_rows_check;
vic_status vic__rows_check_begin(vic_ctx *c, const vic_data *x, int threads, vic_rows_check *rc);
int vic__rows_check_part(vic_rows_check *rc, int thread, int64_t i0, int64_t i1, float *dst);
int64_t vic__rows_check_bad(const vic_rows_check *rc); /* the first bad row seen, INT64_MAX */
vic_status vic__rows_check_end(vic_ctx *c, vic_rows_check *rc);
void vic__rows_check_free(vic_rows_check *rc);

/* Cosine data are normalised once into a private copy so every method can
 * run L2 on them.  *owned receives the buffer to free (NULL if x was used
 * as is).  The returned view has metric VIC_COSINE and stride d. */
vic_status vic__prepare_rows(vic_ctx *c, const vic_data *x, vic_data *view, float **owned);

/* ------------------------------------------------------- CPU methods */
/* Exact k nearest neighbours by blocked brute force.  q == NULL: all points
 * of x against x with self excluded; otherwise every row of q against x.
 * ids/dist: rows(q or x) * k, ascending by (distance, id), true distances. */
vic_status vic__cpu_brute_knn(vic_ctx *c, const vic_data *x, const vic_data *q, int32_t k,
                              int64_t *ids, float *dist);

/* Exact brute force for a subset of x's own rows (self excluded): rows[i]
 * are point ids; used by recall estimation. */
vic_status vic__cpu_brute_knn_rows(vic_ctx *c, const vic_data *x, const int64_t *rows, int64_t m,
                                   int32_t k, int64_t *ids, float *dist);

/* d_nn1 statistics from filled lists into the report. */
void vic__report_dnn1(const vic_knn *nn, vic_report *r);

#endif
