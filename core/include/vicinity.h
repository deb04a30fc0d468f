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
 */
#ifndef VICINITY_H
#define VICINITY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VIC_VERSION_MAJOR 0
#define VIC_VERSION_MINOR 1

/* ------------------------------------------------------------------ status */
typedef enum {
  VIC_OK = 0,
  VIC_E_ARGUMENT,    /* a parameter is out of range or inconsistent */
  VIC_E_NONFINITE,   /* NaN or Inf in the data; the message names the row */
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
  VIC_METHOD_AUTO = 0,  /* grid for d <= 3, brute force for small n, else approximate */
  VIC_METHOD_BRUTE,     /* exact, any d */
  VIC_METHOD_GRID,      /* exact, d <= 3, L2 only, periodic boxes */
  VIC_METHOD_NNDESCENT, /* approximate, CPU (Dong et al. 2011) */
  VIC_METHOD_GGNN,      /* approximate, GPU hierarchical graph */
  VIC_METHOD_GNND,      /* approximate, GPU NN-Descent */
  VIC_METHOD_GRNND,     /* approximate, GPU relative NN-Descent */
  VIC_METHOD_TSDG       /* search graph: TSDG-diversified kNN graph */
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
  vic_backend backend; /* default AUTO: GPU when built with CUDA and a device is present */
  int device;          /* CUDA device ordinal, default 0 */
  int devices;         /* GPUs used from `device` on: 1 (default; 0 reads as 1) = that device only, N = devices
                          device..device+N-1, VIC_DEVICES_ALL = every device from `device` on.  The exact
                          grid kNN splits its queries over them; a sharded GGNN build puts shard s on the
                          s-th mod N.  Results do not depend on the count. */
  int threads;         /* CPU threads; 0 = all available */
  uint64_t seed;       /* seed of every random choice; results are reproducible per seed */
  void (*log)(void *user, vic_log_level level, const char *message);
  /* Called with a stage name ("grid", "brute", "nndescent", "recall", ...)
   * and a fraction in [0,1].  Return nonzero to cancel the running call. */
  int (*progress)(void *user, const char *stage, double fraction);
  void *user;
} vic_ctx_options;

typedef struct vic_ctx vic_ctx;

void vic_ctx_options_init(vic_ctx_options *o);
vic_status vic_ctx_create(const vic_ctx_options *o /* NULL = defaults */, vic_ctx **out);
void vic_ctx_destroy(vic_ctx *c);
/* The message of the last failure on this context ("" when none). */
const char *vic_ctx_error(const vic_ctx *c);
/* Ask a running call on this context to stop; safe from another thread.
 * The call returns VIC_E_CANCELLED.  vic_ctx_reset_cancel clears it. */
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
} vic_data;

/* Check a view: n > 0, d > 0, finite values (the message names the first
 * bad row and column), box lengths positive and coordinates inside
 * [0, box) tolerated by wrapping.  Every build calls it. */
vic_status vic_data_validate(vic_ctx *c, const vic_data *x);

/* ----------------------------------------------------------------- report */
#define VIC_MAX_STAGES 12
typedef struct {
  char name[32];
  double seconds;
} vic_stage_time;

typedef struct {              /* what happened, for users and filters */
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
} vic_report;

/* ------------------------------------------------------------ kNN lists */
typedef struct {
  int64_t n;      /* rows (points or queries) */
  int32_t k;
  int64_t *ids;   /* n*k, -1 where fewer than k neighbours exist */
  float *dist;    /* n*k, +inf where ids is -1 */
  vic_report report;
} vic_knn;

void vic_knn_free(vic_knn *r); /* frees ids/dist and zeroes the struct */

typedef struct {
  vic_method method;       /* default AUTO */
  int32_t k;               /* default 16 */
  int32_t recall_sample;   /* points checked against exact search; default 1000, 0 = skip */
  int64_t brute_max_n;     /* AUTO uses brute force up to this n for d > 3; default 20000 */
  struct {                 /* CPU NN-Descent (Dong et al. 2011) */
    int32_t k_build;       /* list length during the build (>= k); default max(k, 20) */
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
    int32_t k_build;       /* default max(k, 32) */
    int32_t samples;       /* p; default 16 */
    int32_t iterations;    /* default 10 */
    float converge;        /* stop when updated fraction < converge; default 0.001 */
  } gnnd;
  struct {                 /* GRNND (Li et al.) */
    int32_t s, r, t1, t2;  /* initial pool S (20), capacity R (96, at most 128), outer T1 (3) / inner T2 (4);
                              each outer iteration ends with reverse-edge sampling (BENCHMARKS.md) */
    float rho;             /* reverse-edge sampling ratio; default 0.6 */
  } grnnd;
  struct {                 /* TSDG (Wang et al.) */
    float alpha;           /* relaxed diversification; default 1.2 */
    int32_t lambda0;       /* occlusion cut; default 10 */
  } tsdg;
  int64_t shard_size;             /* 0 = no sharding.  GGNN: more points than this are built as
                                     ceil(n / shard_size) independent graphs of consecutive rows
                                     (Sec. 5.5), on the context's devices; queries ask every shard
                                     and merge; for-all lists merge each point's own-shard list with
                                     its queries into the other shards.  GNND: its own shards. */
  size_t device_memory_budget;    /* bytes; 0 = what the device has free */
} vic_build_options;

void vic_build_options_init(vic_build_options *o);

/* For every point of x its k nearest other points.  out is filled on
 * VIC_OK and left zeroed on failure.  k >= n is clamped to n-1 with a
 * warning (report.k says what was delivered); n < 2 is VIC_E_ARGUMENT. */
vic_status vic_knn_build(vic_ctx *c, const vic_data *x, const vic_build_options *o, vic_knn *out);

/* Exact k nearest neighbours of a query set q in x (no self exclusion:
 * a query that coincides with a data point finds it at distance 0).
 * Grid for d <= 3 with L2, brute force otherwise. */
vic_status vic_knn_query_exact(vic_ctx *c, const vic_data *x, const vic_data *q, int32_t k, vic_knn *out);

/* Recall@k of approximate lists against exact search on `sample` random
 * points of x (seeded by the context).  Writes the fraction to *recall. */
vic_status vic_knn_recall(vic_ctx *c, const vic_data *x, const vic_knn *approx, int32_t sample, double *recall);

/* --------------------------------------------------------- search index */
typedef struct vic_index vic_index;

typedef struct {
  int32_t k;              /* default 10 */
  float tau;              /* slack of the stopping criterion (GGNN); default 0.5 */
  int32_t max_visits;     /* visit budget of graph searches; 0 = automatic */
  int32_t occlusion_limit;/* TSDG per-search occlusion limit; 0 = all edges */
  int32_t entry_points;   /* random entry points per query; 0 = automatic */
} vic_search_options;

void vic_search_options_init(vic_search_options *o);

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
  vic_sph_convention sph;  /* pynbody (default): h = r_k/2, support 2h; Gadget: h = r_k, support h */
  double total_mass;       /* used when mass == NULL: each particle weighs total_mass/n; default 0 = unit masses */
} vic_density_options;

void vic_density_options_init(vic_density_options *o);

/* Densities from kNN lists of x (self excluded; the k used is nn->k >= 2;
 * L2 metric; any d: 2-d, 3-d, 6-d phase space with the velocities scaled
 * by the caller; periodic boxes through the lists' minimum-image
 * distances).  mass: per-particle masses or NULL.  Outputs (n floats
 * each, any may be NULL): kNN density (k-1) m / (V_d r_k^d) (with masses:
 * the mass of the k-1 nearest neighbours, neither the particle itself nor
 * the k-th), SPH density sum_j m_j W(r_ij, r_k) over the particle itself
 * and its neighbours (cubic spline), smoothing length h. */
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
  double min_density;     /* peaks below this density are dropped; default 0 */
  double min_delta;       /* peaks nearer than this to a denser point are dropped; default 0 = auto:
                             delta_factor times the peak's own k-th neighbour distance */
  int64_t min_members;    /* peaks with fewer members are merged into the next peak up; default 20 */
  double delta_factor;    /* the auto min_delta's multiple of r_k; default 2 */
  double min_prominence;  /* a peak's density over that of the saddle where its region meets a denser
                             one (persistence); default 0 = auto: exp(6 / sqrt(k - 1)), six standard
                             deviations of the kNN estimator's log-density noise */
} vic_peak_options;

void vic_peak_options_init(vic_peak_options *o);

typedef struct {
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

void vic_sph_options_init(vic_sph_options *o);
/* Sets u and v for a view along `direction` (from the camera into the
 * scene: w = direction / |direction|) with `up` (projected off w) as v;
 * up NULL or parallel to w picks the world axis least aligned with w. */
vic_status vic_sph_options_set_view(vic_sph_options *o, const double direction[3], const double up[3]);

typedef struct {
  int32_t nx, ny, nz;         /* cells along u, v, w (nz = 1 for a projection or a slice) */
  double origin[3];           /* world position of the centre of cell (0, 0, 0) */
  double spacing[3];          /* cell sizes along u, v, w (projection and slice: spacing[2] = 1) */
  double axes[3][3];          /* u, v, w */
  float *density;             /* nx*ny*nz, x fastest: surface density (projection) or density */
  int32_t n_arrays;
  float *means;               /* n_arrays blocks of nx*ny*nz: the density-weighted mean of each array along the
                                 line of sight (projection) or at the cell; NaN where no particle reaches */
  double mass_deposited;      /* projection and volume: the mass the image received */
  vic_report report;
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

#ifdef __cplusplus
}
#endif
#endif /* VICINITY_H */
