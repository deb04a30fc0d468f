/* C interface of the CUDA kernels library (vicinity_kernels).
 * Kernels own no policy: they compute what they are asked, report timing
 * and fail with a code and message; the core decides about fallbacks and
 * words the user-facing errors.  No CUDA types cross this header. */
#ifndef VIC_KERNELS_H
#define VIC_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum { VICK_OK = 0, VICK_NOMEM = 1, VICK_DEVICE = 2, VICK_CANCELLED = 3, VICK_ARGUMENT = 4, VICK_NODEVICE = 5 };

/* One call's environment and outcome. */
typedef struct {
  int device;                  /* CUDA ordinal */
  size_t memory_budget;        /* bytes the call may allocate on the device; 0 = free memory */
  uint64_t seed;
  /* polled between batches; nonzero = stop and return VICK_CANCELLED */
  int (*progress)(void *user, const char *stage, double fraction);
  void *user;
  int threads;                 /* host threads for the call's copies (0 = OpenMP's default); the core's count,
                                  so that its parallel regions and the call's keep one team size */
  /* outcome */
  double seconds_transfer;     /* host<->device copies, CUDA events */
  double seconds_kernel;       /* kernels, CUDA events (a small graph-search batch in one launch: the device's
                                  global timer from its first block's start to its last block's end) */
  double seconds_total;        /* wall time of the call */
  size_t peak_bytes;           /* most device memory the call held at once (its own allocations) */
  int n_stages;
  struct { char name[32]; double seconds; } stages[8];
  char message[512];           /* why it failed */
} vick_call;

/* A point set as the kernels see it: the core's vic_data without its
 * enums.  rows stay on the host; each entry point copies what it needs.
 * Working distances are returned, never true ones: squared Euclidean for
 * L2 (the core passes unit rows for cosine) and -<x,y> for the inner
 * product; the core converts them, exactly as its CPU methods do. */
enum { VICK_METRIC_L2 = 0, VICK_METRIC_IP = 1 };
typedef struct {
  const float *rows;   /* host, row-major, row i at rows + i*stride */
  int64_t n;
  int32_t d;
  int64_t stride;      /* floats between rows (>= d) */
  int metric;          /* VICK_METRIC_* */
  const double *box;   /* NULL or d periodic lengths (0 = open dimension) */
} vick_points;

/* Device count, or -1 with a message when the driver/runtime is unusable. */
int vick_device_count(char *message, size_t size);
/* Name and memory of a device for reports ("NVIDIA H100 80GB HBM3"). */
int vick_device_info(int device, char *name, size_t size, size_t *free_bytes, size_t *total_bytes);
/* While held (holds nest, from any thread), the pinned slots of the
 * staged copies stay allocated between calls, two pairs per device, and
 * the next calls on that device take them instead of pinning new host
 * memory (slab runs make dozens of calls per device, a context many
 * calls); the last release frees them. */
void vick_pinned_keep(int hold);

#ifdef __cplusplus
}
#endif
#endif
