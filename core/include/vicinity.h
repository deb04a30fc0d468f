/* Vicinity — k-nearest-neighbour graphs, density and saliency for point
 * clouds and feature arrays, on the GPU with a complete CPU fallback.
 *
 * This is the library's one public header (C11).  Conventions:
 *  - Every call returns a vic_status.  On failure the context keeps a
 *    human-readable message (vic_ctx_error).  The library never aborts,
 *    exits or prints; it reports through the optional log callback.
 *  - Inputs are never modified.  Results are allocated by the library and
 *    released with the matching *_free call.
 *  - A context is not shared between threads at the same time; use one
 *    context per thread.  There is no global mutable state.
 *  - Neighbour ids are 64-bit row numbers of the data set.  Distances are
 *    true distances: Euclidean for VIC_L2, 1 - cos for VIC_COSINE and
 *    -<x,y> for VIC_INNER_PRODUCT (smaller is always nearer).  Lists are
 *    ascending by (distance, id): equal distances are broken by the lower
 *    id, so exact results are deterministic on every backend.
 *  - A point is never its own neighbour.  Duplicate points are ordinary
 *    neighbours at distance 0.
 *
 * ABI (stable across 0.y releases from 0.2 on):
 *  - Option structs begin with `size_t struct_size`, which their *_init
 *    call sets to the caller's sizeof (the *_init names are inline
 *    wrappers that pass it).  The library reads only the bytes the
 *    caller's struct_size covers and uses its own defaults for the rest,
 *    so a program built against an older header keeps working.  A newer
 *    program's options are accepted by an older library when the fields
 *    it does not know are zero, and refused with VIC_E_UNSUPPORTED when
 *    they are set.  Fields are only ever appended.
 *  - Result structs (vic_knn, vic_peaks, vic_report, vic_halos,
 *    vic_sph_image) are written whole by the library and have a fixed size: their fields are an anonymous
 *    struct in a union with a reserve, and new fields are appended to that
 *    struct (core/src/api/abi.c checks the sizes and records the last field).
 *    Their struct_size says how many bytes the library that filled them
 *    knows.  They need no initialisation by the caller.
 *  - vic_knn_out, the caller's buffers for vic_knn_build_into, holds both
 *    inputs and results: it is struct_size-first like the options (set by
 *    vic_knn_out_init, which the caller must call), the library reads the
 *    inputs and writes the results only within the caller's struct_size.
 *  - vic_data, a view the caller fills field by field, does not grow:
 *    further inputs come as options or as new functions.
 *  - Only vic_* symbols are exported; vic_version() tells the library's
 *    version at run time (VIC_VERSION the header's).
 */
#ifndef VICINITY_H
#define VICINITY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every declaration of this header is an exported symbol of the shared
 * library (the core is compiled with hidden visibility otherwise). */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define VIC_VERSION_MAJOR 0
#define VIC_VERSION_MINOR 2
#define VIC_VERSION_PATCH 0
#define VIC_VERSION (VIC_VERSION_MAJOR * 10000 + VIC_VERSION_MINOR * 100 + VIC_VERSION_PATCH)

/* The library's version (as VIC_VERSION) and "major.minor.patch"; a
 * program may compare them with the header's it was compiled against. */
int vic_version(void);
const char *vic_version_string(void);

/* ------------------------------------------------------------------ status */
typedef enum {
  VIC_OK = 0,
  VIC_E_ARGUMENT,    /* a parameter is out of range or inconsistent */
  VIC_E_NONFINITE,   /* NaN or Inf in the data, or values whose distances or densities a float cannot
                        hold; the message names the row or the numbers */
  VIC_E_NOMEM,       /* host allocation failed */
  VIC_E_NODEVICE,    /* the GPU backend was requested but is unavailable */
  VIC_E_DEVICE,      /* a CUDA call failed */
  VIC_E_CANCELLED,   /* the progress callback or vic_ctx_cancel stopped it */
  VIC_E_IO,          /* a file could not be read or written */
  VIC_E_FORMAT,      /* a file is not in the expected format or is corrupt */
  VIC_E_UNSUPPORTED  /* the combination is not offered (e.g. a forced method) */
} vic_status;

const char *vic_status_name(vic_status s);

/* ----------------------------------------------------------------- enums */
typedef enum { VIC_BACKEND_AUTO = 0, VIC_BACKEND_CPU, VIC_BACKEND_CUDA } vic_backend;
typedef enum { VIC_L2 = 0, VIC_COSINE, VIC_INNER_PRODUCT } vic_metric;
typedef enum {
  VIC_METHOD_AUTO = 0,  /* grid for d <= 3, brute force for small n, else approximate (on a usable GPU: GNND
                           lists, the GRNND index); the report's reason says which and why */
  VIC_METHOD_BRUTE,     /* exact, any d */
  VIC_METHOD_GRID,      /* exact, d <= 3, L2 only, periodic boxes */
  VIC_METHOD_NNDESCENT, /* approximate, CPU (Dong et al. 2011) */
  VIC_METHOD_GGNN,      /* approximate, GPU hierarchical graph */
  VIC_METHOD_GNND,      /* approximate, GPU NN-Descent */
  VIC_METHOD_GRNND,     /* approximate, GPU relative NN-Descent */
  VIC_METHOD_TSDG,      /* search graph: TSDG-diversified kNN graph */
  VIC_METHOD_RANDOM     /* baseline for tests: k random other points per point (CPU, no index) */
} vic_method;

const char *vic_backend_name(vic_backend b);
const char *vic_metric_name(vic_metric m);
const char *vic_method_name(vic_method m);
/* Parse "auto", "brute", "grid", "nndescent", "ggnn", ... (also the enum
 * names); returns VIC_E_ARGUMENT for an unknown name. */
vic_status vic_method_parse(const char *name, vic_method *out);
vic_status vic_metric_parse(const char *name, vic_metric *out);
vic_status vic_backend_parse(const char *name, vic_backend *out);

/* --------------------------------------------------------------- context */
typedef enum { VIC_LOG_DEBUG = 0, VIC_LOG_INFO, VIC_LOG_WARNING, VIC_LOG_ERROR } vic_log_level;

#define VIC_DEVICES_ALL (-1) /* vic_ctx_options.devices: every device present */

typedef struct {
  size_t struct_size;  /* set by the *_init call: the caller's sizeof */
  vic_backend backend; /* default AUTO: GPU when built with CUDA and a device is present */
  int device;          /* CUDA device ordinal, default 0 */
  int devices;         /* GPUs used from `device` on: 1 (default; 0 reads as 1) = that device only, N = devices
                          device..device+N-1, VIC_DEVICES_ALL = every device from `device` on.  The exact
                          grid kNN splits its queries over them; a sharded GGNN build puts shard s on the
                          s-th mod N; the density and peak calls spread their slabs over them when a set
                          does not fit one device (device_memory_budget); GNND's kNN build of 16M rows or
                          more, over one device's budget or cut by shard_size builds shards on them in
                          parallel, joined by graph searches.  Other results do not depend on the count. */
  int threads;         /* CPU threads; 0 = all available */
  uint64_t seed;       /* seed of every random choice; results are reproducible per seed */
  void (*log)(void *user, vic_log_level level, const char *message);
  /* Called with a stage name ("grid", "brute", "nndescent", "recall", ...)
   * and a fraction in [0,1].  Return nonzero to cancel the running call
   * (that call only: the next call starts uncancelled). */
  int (*progress)(void *user, const char *stage, double fraction);
  void *user;
  size_t device_memory_budget; /* bytes the density and peak calls may hold on each device; 0 = 90% of what
                                  is free.  A set that needs more is processed in slabs (exact, slower) */
} vic_ctx_options;

typedef struct vic_ctx vic_ctx;

void vic_ctx_options_init_sized(vic_ctx_options *o, size_t struct_size);
/* Defaults, with struct_size = sizeof as this header sees it. */
static inline void vic_ctx_options_init(vic_ctx_options *o) { vic_ctx_options_init_sized(o, sizeof *o); }
vic_status vic_ctx_create(const vic_ctx_options *o /* NULL = defaults */, vic_ctx **out);
void vic_ctx_destroy(vic_ctx *c);
/* The message of the last failure on this context ("" when none). */
const char *vic_ctx_error(const vic_ctx *c);
/* Ask a running call on this context to stop; safe from another thread.
 * The call returns VIC_E_CANCELLED.  A cancel applies to one call: every
 * call clears it when it starts, so a cancel from the progress callback
 * does not stop the next call (and one requested before a call starts is
 * forgotten).  vic_ctx_reset_cancel clears it at any time. */
void vic_ctx_cancel(vic_ctx *c);
void vic_ctx_reset_cancel(vic_ctx *c);
/* 1 when this build has the CUDA backend and a usable device exists. */
int vic_cuda_available(vic_ctx *c);

/* --------------------------------------------------------------- data view */
typedef struct {
  const float *rows;  /* row-major n x d, row i at rows + i*stride */
  int64_t n;
  int32_t d;
  int64_t stride;     /* in floats; 0 means d */
  vic_metric metric;
  const double *box;  /* NULL, or d periodic box lengths (L2 only; 0 = not periodic in that dim) */
  const double *origin; /* NULL, or the box's lower corner (d values), when the data say where it is */
} vic_data;

/* Check a view: n > 0, d > 0, finite values (the message names the first
 * bad row and column), box lengths >= 0, and on every periodic axis a box
 * that holds the data: the points may sit anywhere (minimum-image
 * distances wrap them), but their extent (max - min) must not exceed the
 * length, and with an origin every coordinate must lie in [origin,
 * origin + L] -- L itself being origin again after wrapping -- both up to a
 * relative 1e-6 of L for float rounding.  A box too small for the data
 * would otherwise fold distant points onto each other without a word; the
 * message names the axis, the data's numbers and the box's.  The values
 * must also lie in a range that float distances can hold: the squared
 * diagonal of the bounding box (L2) or the largest possible dot product
 * (inner product) below FLT_MAX (VIC_E_NONFINITE) and, when not 0, above
 * about 1e-31, where squared distances become subnormal (VIC_E_ARGUMENT);
 * the message gives the factor to rescale by.  Every build calls it. */
vic_status vic_data_validate(vic_ctx *c, const vic_data *x);
/* vic_data_validate for one part of a larger data set whose row i is row
 * numbers[i] of the whole: of several bad rows the lowest-numbered one is
 * reported, under its number, so that processes that each hold a part
 * agree on the message one process gives for the whole.  *bad_row: that
 * number, or -1 when the rows pass or the problem is no row's. */
vic_status vic_data_validate_numbered(vic_ctx *c, const vic_data *x, const int64_t *numbers, int64_t *bad_row);

/* ----------------------------------------------------------------- report */
#define VIC_MAX_STAGES 12
typedef struct {
  char name[32];
  double seconds;
} vic_stage_time;

/* Result structs keep a fixed size (checked where the core is built, for
 * LP64): their fields sit in an anonymous struct inside a union with a
 * reserve, and a new field is appended to that struct.  struct_size is
 * written by the library: the bytes of the struct it knows and filled. */
#define VIC_REPORT_BYTES 1024
#define VIC_KNN_BYTES 1152
#define VIC_PEAKS_BYTES 1280
#define VIC_HALOS_BYTES 1536
#define VIC_SPH_IMAGE_BYTES 1536

typedef struct {              /* what happened, for users and filters */
  size_t struct_size;         /* written by the library */
  union {
    struct {
      vic_method method;          /* the method that ran (never AUTO) */
      char reason[160];           /* why it was chosen, in words */
      vic_backend backend;        /* the backend that ran (never AUTO) */
      int32_t k_requested, k;     /* k asked for and k delivered (clamped to n-1) */
      double seconds_total;       /* wall time of the whole call */
      double seconds_transfer;    /* host<->device copies (0 on the CPU) */
      double seconds_kernel;      /* device kernel time (0 on the CPU) */
      int n_stages;
      vic_stage_time stages[VIC_MAX_STAGES];
      double recall_estimate;     /* recall@k on a random sample; 1 when exact; -1 when not measured */
      int64_t recall_sample;      /* points in that sample */
      double dnn1_mean, dnn1_max; /* GGNN's d_nn1 statistics over all points */
      int warnings;               /* number of warnings logged during the call */
      int64_t device_peak_bytes;  /* most device memory the call held on one device (0 on the CPU) */
      int32_t slabs;              /* spatial slabs the set was cut into for the device (1: in one piece) */
      int32_t devices_used;       /* GPUs the call ran on */
#ifdef VIC_ABI_TEST_EXTRA_FIELD
      double abi_test_extra;  /* only in the ABI-growth test's second build */
#endif
    };
    unsigned char reserved_[VIC_REPORT_BYTES - sizeof(size_t)];
  };
} vic_report;

/* Seconds of the report's stage of that name ("grid search", "shard
 * builds", ... as its stages list them), or -1 when it has none. */
double vic_report_stage_seconds(const vic_report *r, const char *name);

/* ------------------------------------------------------------ kNN lists */
typedef struct {
  size_t struct_size;   /* written by the library */
  union {
    struct {
      int64_t n;        /* rows (points or queries) */
      int32_t k;
      int64_t *ids;     /* n*k, -1 where fewer than k neighbours exist */
      float *dist;      /* n*k, +inf where ids is -1 */
      vic_report report;
    };
    unsigned char reserved_[VIC_KNN_BYTES - sizeof(size_t)];
  };
} vic_knn;

void vic_knn_free(vic_knn *r); /* frees ids/dist and zeroes the struct */

typedef struct {
  size_t struct_size;  /* set by the *_init call: the caller's sizeof */
  vic_method method;       /* default AUTO */
  int32_t k;               /* default 16 */
  int32_t recall_sample;   /* points checked against exact search; default 1000, 0 = skip */
  int64_t brute_max_n;     /* AUTO uses brute force up to this n for d > 3; default 20000 */
  struct {                 /* CPU NN-Descent (Dong et al. 2011) */
    int32_t k_build;       /* list length during the build (>= k, <= n-1); default max(k, 20).  Where a round
                              would cost more than exact search ((2 rho k_build)^2 > n) brute force runs
                              instead, with a warning and report.method = BRUTE */
    float rho;             /* sample rate of new/old neighbours; default 0.5 */
    float delta;           /* stop when updates < delta*n*k; default 0.001 */
    int32_t max_iterations;/* default 20 */
  } nndescent;
  struct {                 /* GGNN (Groh et al.) */
    int32_t k_build;       /* graph degree, 24..96; default 24 */
    int32_t segment;       /* s, points per bottom-layer batch; default 32 */
    int32_t layers;        /* L; default 4 */
    int32_t refinements;   /* default 2 */
    float tau_build;       /* default 0.5 */
    int32_t deterministic; /* nonzero: symmetric links placed in a fixed order, so a build repeats bit for
                              bit (sharded builds then equal on 1 and N GPUs); default 0: atomics */
  } ggnn;
  struct {                 /* GNND (Wang et al.) */
    int32_t k_build;       /* default max(k, 64) (TSDG's lists: 32) */
    int32_t samples;       /* p; default 24 (TSDG's lists: 16 unless k_build is set) */
    int32_t iterations;    /* default 6 (TSDG's lists: 10 unless k_build is set) */
    float converge;        /* stop when updated fraction < converge; default 0.001 */
  } gnnd;
  struct {                 /* GRNND (Li et al.) */
    int32_t s, r, t1, t2;  /* initial pool S (20), capacity R (96, at most 128), outer T1 (3) / inner T2 (4);
                              each outer iteration ends with reverse-edge sampling */
    float rho;             /* reverse-edge sampling ratio; default 0.6 */
  } grnnd;
  struct {                 /* TSDG (Wang et al.) */
    float alpha;           /* relaxed diversification, finite and >= 1; default 1.2 (0 also means it) */
    int32_t lambda0;       /* occlusion cut, 0..254; default 10 (0 also means it) */
  } tsdg;
  int64_t shard_size;             /* 0 = no sharding.  GGNN: more points than this are built as
                                     ceil(n / shard_size) independent graphs of consecutive rows
                                     (Sec. 5.5), on the context's devices; queries ask every shard
                                     and merge; for-all lists merge each point's own-shard list with
                                     its queries into the other shards.  GNND: its own shards (on
                                     several devices: built in parallel, every ordered pair of shards
                                     joined by one graph search). */
  size_t device_memory_budget;    /* bytes; 0 = what the device has free.  GNND beyond it: in memory
                                     with half-precision rows where that fits (lists re-ranked in
                                     fp32; K and p lowered, iterations raised as needed; the report's
                                     reason says so), else out of core: shards built one after the
                                     other, every ordered pair joined by one graph search (where the
                                     smallest such search does not fit either, shards merged by GGM) */
#ifdef VIC_ABI_TEST_EXTRA_FIELD
  int32_t abi_test_extra;         /* only in the ABI-growth test's second build; default 7 */
#endif
} vic_build_options;

void vic_build_options_init_sized(vic_build_options *o, size_t struct_size);
/* Defaults, with struct_size = sizeof as this header sees it. */
static inline void vic_build_options_init(vic_build_options *o) { vic_build_options_init_sized(o, sizeof *o); }

/* For every point of x its k nearest other points.  out is filled on
 * VIC_OK and left zeroed on failure.  k >= n is clamped to n-1 with a
 * warning (report.k says what was delivered); n < 2 is VIC_E_ARGUMENT. */
vic_status vic_knn_build(vic_ctx *c, const vic_data *x, const vic_build_options *o, vic_knn *out);

/* The same lists written into buffers the caller owns (e.g. the arrays of
 * a VTK data set), so that nothing is copied twice and the caller's
 * memory is the only copy of the result.  Row i of the lists is at
 * ids + i*k and dist + i*k, k = min(o->k, n - 1) (report.k), ascending as
 * in vic_knn.  On the GPU the exact grid's lists leave the device in
 * chunks through pinned memory while the next chunks compute, ids already
 * in the requested width, and are written into the buffers by all CPU
 * threads; other methods write int64 ids that are then narrowed when
 * int32 is asked for (a temporary n*k*8 bytes).  vic_knn_build is this
 * call with buffers the library allocates. */
typedef enum {
  VIC_IDS_INT64 = 0, /* int64_t ids (vtkIdType, vic_knn) */
  VIC_IDS_INT32      /* int32_t ids: needs n < 2^31 (VIC_E_ARGUMENT otherwise) */
} vic_id_type;

/* Inputs and results in one struct_size-first struct: vic_knn_out_init
 * (required; a struct it did not set is refused with VIC_E_ARGUMENT) sets
 * struct_size and the defaults (INT64 ids, no buffers); the caller then
 * sets the buffers.  The library reads the inputs and writes the results
 * only within the caller's struct_size, so fields appended later (inputs
 * or results) keep their defaults for an older program. */
typedef struct {
  size_t struct_size;    /* set by the *_init call: the caller's sizeof */
  vic_id_type id_type;   /* element type of ids; default INT64 */
  void *ids;             /* capacity entries of id_type, -1 where fewer than k neighbours exist */
  float *dist;           /* capacity floats, +inf where the id is -1 */
  int64_t capacity;      /* entries in each buffer: at least n * min(o->k, n - 1), else VIC_E_ARGUMENT */
  int64_t n;             /* set by the call: rows written (0 on failure) */
  int32_t k;             /* set by the call: entries per row (0 on failure) */
  vic_report report;     /* set by the call (cleared on failure) */
} vic_knn_out;

void vic_knn_out_init_sized(vic_knn_out *o, size_t struct_size);
/* Defaults, with struct_size = sizeof as this header sees it. */
static inline void vic_knn_out_init(vic_knn_out *o) { vic_knn_out_init_sized(o, sizeof *o); }

/* On failure the buffers' contents are unspecified (never read past
 * capacity), n and k are 0 and the context's message says why. */
vic_status vic_knn_build_into(vic_ctx *c, const vic_data *x, const vic_build_options *o, vic_knn_out *out);

/* Exact k nearest neighbours of a query set q in x (no self exclusion:
 * a query that coincides with a data point finds it at distance 0).
 * Grid for d <= 3 with L2, brute force otherwise. */
vic_status vic_knn_query_exact(vic_ctx *c, const vic_data *x, const vic_data *q, int32_t k, vic_knn *out);

/* Recall@k of approximate lists against exact search on `sample` random
 * points of x (seeded by the context).  Writes the fraction to *recall.
 * A non-finite distance in the lists or the exact reference (an overflow)
 * is VIC_E_NONFINITE: no estimate from it. */
vic_status vic_knn_recall(vic_ctx *c, const vic_data *x, const vic_knn *approx, int32_t sample, double *recall);

/* --------------------------------------------------------- search index */
typedef struct vic_index vic_index;

typedef struct {
  size_t struct_size;  /* set by the *_init call: the caller's sizeof */
  int32_t k;              /* default 10 */
  float tau;              /* slack of the stopping criterion (GGNN); default 0.5 */
  int32_t max_visits;     /* visit budget of graph searches; 0 = automatic */
  int32_t occlusion_limit;/* TSDG per-search occlusion limit; 0 = all edges */
  int32_t entry_points;   /* random entry points per query; 0 = automatic; more than n is clamped to n */
} vic_search_options;

void vic_search_options_init_sized(vic_search_options *o, size_t struct_size);
/* Defaults, with struct_size = sizeof as this header sees it. */
static inline void vic_search_options_init(vic_search_options *o) { vic_search_options_init_sized(o, sizeof *o); }

/* Build a search structure over x.  x must outlive the index (it keeps a
 * reference to the rows, not a copy). */
vic_status vic_index_build(vic_ctx *c, const vic_data *x, const vic_build_options *o, vic_index **out);
vic_status vic_index_search(vic_ctx *c, const vic_index *ix, const vic_data *queries,
                            const vic_search_options *o, vic_knn *out);
/* Save the structure (not the rows) with a versioned, checksummed header;
 * load checks sizes, the checksum and that x matches what was indexed. */
vic_status vic_index_save(vic_ctx *c, const vic_index *ix, const char *path);
vic_status vic_index_load(vic_ctx *c, const char *path, const vic_data *x, vic_index **out);
/* What the index is: method, n, d, build seconds, report of the build. */
const vic_report *vic_index_report(const vic_index *ix);
int64_t vic_index_size(const vic_index *ix);
void vic_index_free(vic_index *ix);

/* ------------------------------------------------------ n-body analysis */
typedef struct {
  double mean, max;       /* of d_nn1, the distance to the nearest neighbour */
  double global_density;  /* number density of a Poisson process with that mean d_nn1 */
} vic_dnn1_stats;

/* d_nn1 statistics of kNN lists (column 0).  d is the dimension. */
vic_status vic_dnn1_stats_compute(vic_ctx *c, const vic_knn *nn, int32_t d, vic_dnn1_stats *out);

typedef enum { VIC_SPH_PYNBODY = 0, VIC_SPH_GADGET } vic_sph_convention;

/* Both conventions use the cubic spline with support radius r_k (the
 * k-th neighbour distance), so their densities agree; they differ in the
 * smoothing length reported.  pynbody's nsmooth and Gadget's neighbour
 * number count the particle itself: nsmooth = 32 is k = 31 here. */
typedef struct {
  size_t struct_size;  /* set by the *_init call: the caller's sizeof */
  vic_sph_convention sph;  /* pynbody (default): h = r_k/2, support 2h; Gadget: h = r_k, support h */
  double total_mass;       /* used when mass == NULL: each particle weighs total_mass/n; default 0 = unit masses */
} vic_density_options;

void vic_density_options_init_sized(vic_density_options *o, size_t struct_size);
/* Defaults, with struct_size = sizeof as this header sees it. */
static inline void vic_density_options_init(vic_density_options *o) { vic_density_options_init_sized(o, sizeof *o); }

/* vic_density's check of per-particle masses (finite and >= 0) for one
 * part of a larger set whose particle i is numbers[i] of the whole
 * (numbers NULL: 0 .. n-1): the lowest-numbered bad mass is reported
 * under its number, so processes that each hold a part agree on one
 * process's message.  *bad_particle (may be NULL): that number, or -1. */
vic_status vic_masses_validate_numbered(vic_ctx *c, const float *mass, int64_t n, const int64_t *numbers,
                                        int64_t *bad_particle);

/* Densities from kNN lists of x (self excluded; the k used is nn->k >= 2;
 * L2 metric; any d: 2-d, 3-d, 6-d phase space with the velocities scaled
 * by the caller; periodic boxes through the lists' minimum-image
 * distances).  mass: per-particle masses or NULL.  Outputs (n floats
 * each, any may be NULL): kNN density (k-1) m / (V_d r_k^d) (with masses:
 * the mass of the k-1 nearest neighbours, neither the particle itself nor
 * the k-th), SPH density sum_j m_j W(r_ij, r_k) over the particle itself
 * and its neighbours (cubic spline), smoothing length h.  Computed in logs
 * (r_k^d leaves double's range in high d); a density a float cannot hold
 * (above 3.4e38, or nonzero below 1.2e-38) is VIC_E_NONFINITE with the
 * range of the densities and the factor on the coordinates that fits it. */
vic_status vic_density(vic_ctx *c, const vic_data *x, const vic_knn *nn, const float *mass,
                       const vic_density_options *o, float *knn_density, float *sph_density,
                       float *smoothing_length);

/* Exact kNN lists (k neighbours, self excluded, 2 <= k < n) and the
 * densities of vic_density from them in one call.  On the GPU with
 * d <= 3 the cell grid's lists stay on the device for the densities (no
 * round trip through the host); otherwise vic_knn_build (grid for d <= 3,
 * brute force above) then vic_density, each with the context's backend
 * policy.  nn (optional) receives the lists with their report. */
vic_status vic_knn_density(vic_ctx *c, const vic_data *x, int32_t k, const float *mass, const vic_density_options *o,
                           vic_knn *nn, float *knn_density, float *sph_density, float *smoothing_length);

/* A peak is a local maximum (none of its k neighbours is denser) that
 * passes every threshold below; the densest point always is one. */
typedef struct {
  size_t struct_size;  /* set by the *_init call: the caller's sizeof */
  double min_density;     /* peaks below this density are dropped; default 0 */
  double min_delta;       /* peaks nearer than this to a denser point are dropped; default 0 = auto:
                             delta_factor times the peak's own k-th neighbour distance */
  int64_t min_members;    /* peaks with fewer members are merged into the next peak up; default 20 */
  double delta_factor;    /* the auto min_delta's multiple of r_k; default 2 */
  double min_prominence;  /* a peak's density over that of the saddle where its region meets a denser
                             one (persistence); default 0 = auto: exp(6 / sqrt(k - 1)), six standard
                             deviations of the kNN estimator's log-density noise */
} vic_peak_options;

void vic_peak_options_init_sized(vic_peak_options *o, size_t struct_size);
/* Defaults, with struct_size = sizeof as this header sees it. */
static inline void vic_peak_options_init(vic_peak_options *o) { vic_peak_options_init_sized(o, sizeof *o); }

typedef struct {
  size_t struct_size;       /* written by the library */
  union {
    struct {
      int64_t n;              /* points */
      int64_t *parent;        /* nearest denser point, -1 for the densest */
      float *delta;           /* distance to it (max distance for the densest) */
      float *saliency;        /* density * delta */
      int64_t *peak_id;       /* index into peaks of the peak each point climbs to */
      int64_t n_peaks;
      int64_t *peak_point;    /* point id of each peak, by descending saliency */
      int64_t *peak_members;  /* member count of each peak */
      float *peak_centre;     /* n_peaks x d: mean position of each peak's members at least half as dense as
                                 the peak (its core; minimum image) */
      vic_report report;      /* how it ran: backend, seconds; vic_knn_density_peaks adds the lists' and the
                                 GPU run's (kernel and transfer seconds, stages) */
    };
    unsigned char reserved_[VIC_PEAKS_BYTES - sizeof(size_t)];
  };
} vic_peaks;

vic_status vic_peaks_find(vic_ctx *c, const vic_data *x, const vic_knn *nn, const float *density,
                          const vic_peak_options *o, vic_peaks *out);
void vic_peaks_free(vic_peaks *p);

/* vic_knn_density then vic_peaks_find on the kNN density, in one call:
 * exact lists (2 <= k < n, L2), the densities of vic_density (knn_density
 * required, the others may be NULL) and the peaks of vic_peaks_find
 * (po NULL: defaults).  On the GPU with d <= 3 the whole pipeline runs on
 * the device and the lists reach the host only when nn is given; the
 * results are those of the two calls on the CPU (centres to float
 * rounding).  nn (optional) receives the lists with their report. */
vic_status vic_knn_density_peaks(vic_ctx *c, const vic_data *x, int32_t k, const float *mass,
                                 const vic_density_options *o, const vic_peak_options *po, vic_knn *nn,
                                 float *knn_density, float *sph_density, float *smoothing_length, vic_peaks *out);

/* ------------------------------------------------------- halo catalogue */
typedef enum {
  VIC_OVERDENSITY_MEAN = 0, /* Delta times the mean density (mean_density, or from the data) */
  VIC_OVERDENSITY_CRITICAL  /* Delta times critical_density */
} vic_overdensity_reference;

typedef struct {
  size_t struct_size;                   /* set by the *_init call: the caller's sizeof */
  double overdensity;                   /* Delta; default 200 */
  vic_overdensity_reference reference;  /* default MEAN */
  double critical_density;              /* rho_crit in the data's mass / length^3 units (CRITICAL only) */
  double mean_density;                  /* 0 (default) = from the data: total mass over the volume, the box's
                                           lengths on periodic axes and the points' extent on open ones */
  double total_mass;                    /* as vic_density_options: masses total_mass / n when mass is NULL;
                                           default 0 = unit masses */
  int64_t min_members;                  /* a peak is a halo when at least this many particles lie inside
                                           its R_Delta; default 20 */
  int32_t unbind;                       /* nonzero: remove members with positive energy (needs velocities) */
  double gravitational_constant;        /* G in the data's units, for unbind; default 1 */
  double softening;                     /* Plummer softening of the potential, for unbind; default 0 */
  int64_t unbind_direct_max;            /* members up to which the potential is the direct pair sum; above,
                                           the potential of the spherically averaged mass; default 20000 */
  int32_t profile_bins;                 /* logarithmic radial bins per halo; default 20, 0 = no profiles */
  double profile_inner;                 /* innermost bin edge as a fraction of R_Delta; default 0.02 */
  double profile_outer;                 /* outermost bin edge as a fraction of R_Delta; default 1 */
} vic_halo_options;

void vic_halo_options_init_sized(vic_halo_options *o, size_t struct_size);
/* Defaults, with struct_size = sizeof as this header sees it. */
static inline void vic_halo_options_init(vic_halo_options *o) { vic_halo_options_init_sized(o, sizeof *o); }

typedef struct {
  size_t struct_size;          /* written by the library */
  union {
    struct {
      int64_t n;               /* points */
      int64_t *halo_id;        /* n: the halo each point belongs to, -1 for none */
      int64_t n_halos;
      /* per halo (by the peaks' order, i.e. descending saliency); vectors are n_halos x 3 */
      int64_t *peak;           /* index into vic_peaks.peak_* */
      int64_t *members;        /* particles in the halo: its basin's inside R_Delta (bound ones with unbind) */
      double *mass;            /* their total mass */
      double *centre;          /* the density-peak centre (vic_peaks.peak_centre) */
      double *centre_of_mass;  /* of the members, minimum image about the centre, wrapped into the box */
      double *r_delta, *m_delta; /* spherical-overdensity radius and mass: M_Delta = (4/3) pi R_Delta^3 Delta
                                    rho_ref */
      double *r_half;          /* radius around the centre holding half the members' mass */
      double *bulk_velocity;   /* mass-weighted mean velocity of the members (NAN without velocities) */
      double *sigma_v;         /* 1-d velocity dispersion sqrt(sum m |v - v_bulk|^2 / (3 M)) (NAN without) */
      int64_t *unbound;        /* particles inside R_Delta removed by the energy cut (0 without unbind) */
      /* profiles: n_halos x profile_bins, bin b of halo h at h * profile_bins + b */
      int32_t profile_bins;
      double *profile_radius;  /* the bin's geometric-mean radius */
      double *profile_density; /* basin mass in the shell over the shell's volume */
      int64_t *profile_count;  /* basin particles in the shell */
      double reference_density; /* Delta rho_ref: the mean enclosed density at R_Delta */
      double mean_density;      /* the mean density used (given or from the data) */
      vic_report report;
    };
    unsigned char reserved_[VIC_HALOS_BYTES - sizeof(size_t)];
  };
} vic_halos;

/* A halo catalogue from density peaks (vic_peaks_find on x, d = 3, L2,
 * periodic boxes by minimum image).  For every peak, the particles of its
 * basin (those whose peak_id is it) sorted by distance from the peak's
 * centre give R_Delta: walking outward, the last particle before the
 * enclosed mean density first falls below Delta rho_ref fixes M_Delta, and
 * R_Delta is the radius of that mass at exactly Delta rho_ref.  A peak is a
 * halo when at least min_members particles lie inside R_Delta, so noise
 * peaks of a uniform box are none.  The halo's members are its basin's
 * particles inside R_Delta; with unbind, those whose kinetic energy
 * relative to the bulk velocity plus potential energy is positive are
 * removed, repeatedly until none is.  mass: per-particle masses or NULL;
 * velocity: n x 3 or NULL.  Profiles come from the whole basin. */
vic_status vic_halo_catalogue(vic_ctx *c, const vic_data *x, const vic_peaks *peaks, const float *mass,
                              const float *velocity, const vic_halo_options *o, vic_halos *out);
void vic_halos_free(vic_halos *h);

/* Friends-of-friends groups from kNN lists of x (L2, any d; periodic boxes
 * through the lists).  Two points are friends when nearer than b times the
 * mean interparticle spacing (volume / n)^(1/d), the volume as in
 * vic_halo_options.mean_density; groups are the connected sets of friends.
 * Only pairs in the lists are seen: points whose k-th neighbour lies
 * inside the linking length may miss links, and their number is logged as
 * a warning (raise k).  group (n): the group of each point, groups with at
 * least min_members points numbered 0.. by descending size (ties: lowest
 * point id), -1 for the rest.  *n_groups: the number numbered;
 * *linking_length (optional): the length used. */
vic_status vic_fof(vic_ctx *c, const vic_data *x, const vic_knn *nn, double b, int64_t min_members, int64_t *group,
                   int64_t *n_groups, double *linking_length);

/* ------------------------------------------------------------- SPH maps */
typedef enum {
  VIC_SPH_PROJECTION = 0, /* line-of-sight integral: surface density (mass per area) */
  VIC_SPH_SLICE,          /* the SPH density on the plane through the centre, normal w */
  VIC_SPH_VOLUME          /* the SPH density in nx x ny x nz cells */
} vic_sph_mode;
typedef enum {
  VIC_SPH_CUBIC_SPLINE = 0, /* M4, the kernel of vic_density (density_math.h) */
  VIC_SPH_WENDLAND_C2,      /* Wendland C2, 21/(2 pi) (1-q)^4 (1+4q) (Dehnen & Aly 2012) */
  VIC_SPH_WENDLAND_C4       /* Wendland C4, 495/(32 pi) (1-q)^6 (1+6q+35q^2/3) */
} vic_sph_kernel;

/* The region and grid of a map.  The frame is centre plus the orthonormal
 * axes u (image x), v (image y) and w = u x v (line of sight, slice
 * normal, volume z); size gives its full widths along u, v, w in world
 * units and resolution its cells.  All three kernels take the support
 * radius from the smoothing length with the SPH convention of vic_density
 * (pynbody: support 2h; Gadget: support h). */
typedef struct {
  size_t struct_size;         /* set by the *_init call: the caller's sizeof */
  vic_sph_mode mode;          /* default projection */
  vic_sph_kernel kernel;      /* default cubic spline */
  vic_sph_convention sph;     /* what smoothing_length means; default pynbody */
  double centre[3];           /* default 0 */
  double u[3], v[3];          /* default x and y: projection along z */
  double size[3];             /* widths along u, v, w.  Projection: size[2] > 0 keeps the particles whose centre
                                 lies within size[2]/2 of the centre along w, 0 (default) every particle.
                                 Slice: size[2] is ignored.  Default 1, 1, 0 */
  int32_t resolution[3];      /* cells along u, v (and w for a volume; 1 otherwise); default 256, 256, 1 */
  double total_mass;          /* as vic_density_options: mass == NULL gives each particle total_mass/n;
                                 default 0 = unit masses */
  size_t max_bytes;           /* largest image memory (accumulators and outputs) the call may allocate;
                                 default 0 = 4 GiB */
} vic_sph_options;

void vic_sph_options_init_sized(vic_sph_options *o, size_t struct_size);
/* Defaults, with struct_size = sizeof as this header sees it. */
static inline void vic_sph_options_init(vic_sph_options *o) { vic_sph_options_init_sized(o, sizeof *o); }
/* Sets u and v for a view along `direction` (from the camera into the
 * scene: w = direction / |direction|) with `up` (projected off w) as v;
 * up NULL or parallel to w picks the world axis least aligned with w.
 * o must have been set by vic_sph_options_init (VIC_E_ARGUMENT otherwise). */
vic_status vic_sph_options_set_view(vic_sph_options *o, const double direction[3], const double up[3]);

typedef struct {
  size_t struct_size;             /* written by the library */
  union {
    struct {
      int32_t nx, ny, nz;         /* cells along u, v, w (nz = 1 for a projection or a slice) */
      double origin[3];           /* world position of the centre of cell (0, 0, 0) */
      double spacing[3];          /* cell sizes along u, v, w (projection and slice: spacing[2] = 1) */
      double axes[3][3];          /* u, v, w */
      float *density;             /* nx*ny*nz, x fastest: surface density (projection) or density */
      int32_t n_arrays;
      float *means;               /* n_arrays blocks of nx*ny*nz: the density-weighted mean of each array along
                                     the line of sight (projection) or at the cell; NaN where no particle
                                     reaches */
      double mass_deposited;      /* projection and volume: the mass the image received */
      vic_report report;
    };
    unsigned char reserved_[VIC_SPH_IMAGE_BYTES - sizeof(size_t)];
  };
} vic_sph_image;

void vic_sph_image_free(vic_sph_image *im); /* frees the arrays and zeroes the struct */

/* Deposit particles with their own smoothing lengths onto a projection,
 * slice or volume (adaptive SPH maps).  x: 3-d positions (L2; a periodic
 * box is wrapped: particles near a face also deposit through it, and a
 * projection along a box axis sums each particle once along the line of
 * sight).  mass: n masses or NULL; smoothing_length: n values > 0 (from
 * vic_density or vic_knn_density); arrays: n_arrays arrays of n floats
 * whose density-weighted means are mapped.  n = 0 gives an empty image
 * (zero density).  Particles smaller than a pixel are integrated exactly
 * over the pixels they overlap (vic_kernels_sph.h): every particle inside
 * the region deposits exactly its mass, to rounding.  The CPU result does
 * not depend on the thread count; the GPU gives the same image to float
 * rounding (backend policy as vic_density). */
vic_status vic_sph_resample(vic_ctx *c, const vic_data *x, const float *mass, const float *smoothing_length,
                            int32_t n_arrays, const float *const *arrays, const vic_sph_options *o,
                            vic_sph_image *out);


/* ------------------------------------ growing, merging and sharded graphs */
/* The GNND paper's graph merge (GGM, Wang et al. 2022, Sec. 5) behind
 * three calls.  Metrics L2 and cosine, no periodic boxes.  On the GPU the
 * new rows' graph is built by GNND and merged by GGM; without a usable GPU
 * (or with the CPU backend) by NN-Descent over the union, whose lists are
 * merged with the given ones, so each call also runs on the CPU.  The
 * options' gnnd fields (GPU) or nndescent fields (CPU) apply; merges run
 * at most 4 iterations.  report.method is GNND (GPU) or NNDESCENT (CPU).
 *
 * vic_knn_add: graph lists x (graph->n == x->n, ids 0..x->n-1, true
 * distances as vic_knn_build gives them); out lists x's rows then added's
 * rows (added row r is x->n + r), graph->k entries each.  added must have
 * x's d and metric and at least one row.  On the GPU with graph->k <= 32
 * no graph of the new rows is built and nothing merged: each new row's
 * nearest rows of x are found by a graph search over x's lists and their
 * reverse edges, and each row of x takes the new rows whose search found
 * it or its first neighbours (the report's reason says which way ran). */
vic_status vic_knn_add(vic_ctx *c, const vic_data *x, const vic_knn *graph, const vic_data *added,
                       const vic_build_options *o, vic_knn *out);
/* Two graphs of disjoint row sets into the graph of their union: g1 lists
 * x1, g2 lists x2 (ids local to x2), both with the same k; out lists x1's
 * rows then x2's (x2 row r is x1->n + r). */
vic_status vic_knn_merge(vic_ctx *c, const vic_data *x1, const vic_knn *g1, const vic_data *x2, const vic_knn *g2,
                         const vic_build_options *o, vic_knn *out);

typedef struct {
  size_t struct_size; /* set by the *_init call: the caller's sizeof */
  int64_t shard_rows; /* rows per shard; default 0 = the most whose pair merge fits the build options'
                         device_memory_budget (0: 90% of the device's free memory) */
  const char *work_dir; /* NULL (default): the shards' graphs stay in host memory.  Otherwise they live in
                           the file <work_dir>/vicinity_shards.vgs, memory-mapped, written shard by shard with
                           a checksum per section, so a cancelled build can be resumed */
  int32_t resume;     /* nonzero: continue the build recorded in work_dir (same data, k and shards; its
                         checksums are verified first) instead of starting over; default 0 */
} vic_shard_options;

void vic_shard_options_init_sized(vic_shard_options *o, size_t struct_size);
/* Defaults, with struct_size = sizeof as this header sees it. */
static inline void vic_shard_options_init(vic_shard_options *o) { vic_shard_options_init_sized(o, sizeof *o); }

/* A k-NN graph of rows whose build does not fit the device at once: the
 * rows are cut into shards of consecutive rows, each shard's graph is
 * built, then every pair of shards is merged once (GGM) in rounds of
 * disjoint pairs spread over the context's devices; each row keeps the
 * best k of all its merges.  Progress ("ggm shards") and cancel between
 * merges; a cancel with a work_dir leaves the file resumable.  The
 * report's reason gives the shard count and size.  vic_knn_build takes
 * this path by itself for GNND, with a warning, when the rows need more
 * device memory than the budget even with half-precision rows and the
 * shards joined by graph searches (device_memory_budget) do not fit
 * either, or shard_size is set on one device. */
vic_status vic_knn_build_sharded(vic_ctx *c, const vic_data *x, const vic_build_options *o,
                                 const vic_shard_options *so, vic_knn *out);


#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
#ifdef __cplusplus
}
#endif
#endif /* VICINITY_H */
