/* GNND/GGM internals shared by gnnd_kernels.cu (the kernels and their
 * launchers), gnnd_build.cu (the iteration driver), gnnd_merge.cu (GGM,
 * incremental growth) and gnnd_shards.cu (out-of-GPU-memory builds). */
#ifndef VIC_GNND_INTERNAL_H
#define VIC_GNND_INTERNAL_H

#include "common.cuh"
#include "vic_kernels_gnnd.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdio.h>

#define GNND_SEG 32     /* one k-NN list segment: one warp, one spin-lock */
#define GNND_CHUNK 32   /* dimensions of the sample vectors held in shared memory at once */
#define GNND_EMPTY 0x7fffffff /* id of an empty slot: sorts after every real id */

/* A failed CUDA call through the common layer (vick_cuda_fail: message,
 * VICK_NOMEM / VICK_DEVICE / VICK_NODEVICE), as a value so every call site
 * reads `if ((rc = GNND_CK(call, x))) goto out;`. */
static inline int gnnd__check(vick_call *call, cudaError_t e, const char *what, const char *file, int line) {
  if (e == cudaSuccess) return VICK_OK;
  if (call) return vick_cuda_fail(call, e, what, file, line);
  cudaGetLastError(); /* clear a non-sticky error so later calls are not blamed */
  return e == cudaErrorMemoryAllocation ? VICK_NOMEM : VICK_DEVICE;
}
#define GNND_CK(call, x) gnnd__check((call), (x), #x, __FILE__, __LINE__)
/* After a launch: configuration errors now, execution errors at the next sync. */
#define GNND_LAUNCHED(call, name) gnnd__check((call), cudaGetLastError(), name, __FILE__, __LINE__)

/* One graph under construction on the device.  Rows come from two blocks
 * (A: ids < nA, B: the rest) so a shard pair needs no contiguous copy. */
typedef struct {
  const float *rowsA, *rowsB;
  const __half *hrowsA, *hrowsB; /* non-NULL: the rows in half precision (a compact build), rowsA/B unused */
  int64_t nA, n;
  int32_t d, K, nseg, p, M; /* M = 2p: sample list capacity */
  int32_t split;            /* > 0: GGM, only pairs across ids < split / >= split are compared */
  uint64_t seed;
  int32_t *ids;             /* n*K, segment s of list u at u*K + s*32, each segment sorted */
  float *dist;
  unsigned char *flags;     /* 1 = NEW */
  int *locks;               /* n*nseg spin-locks */
  int32_t *gnew, *gold;     /* n*M sample lists */
  int *cnt_new, *cnt_old, *fwd_new, *fwd_old;
  unsigned long long *counter; /* insertions of the running iteration */
  int32_t *extra;           /* GGM: n*K entries set aside (the far halves), else NULL */
  float *extra_dist;
  int32_t *flat_ids;        /* GGM input lists, (n1+n2)*K, when allocated for merges */
  float *flat_dist;
  int64_t capacity;         /* rows the buffers hold */
  vick_env *env;            /* budget gnnd__alloc counts against (NULL: the caller planned the bytes) */
} gnnd_dev;


/* ---- launchers (gnnd_kernels.cu); all asynchronous on stream st ---- */
/* Random initial lists: every slot NEW, ids drawn without repeats per segment. */
int gnnd__launch_random_init(vick_call *call, const gnnd_dev *g, cudaStream_t st);
/* GGM start: flat (n*K, sorted, ids already global) -> the nearest K/2 of
 * each list kept as OLD in its segments, the rest set aside in extra, the
 * free slots refilled with random NEW ids of the other side of split. */
int gnnd__launch_merge_init(vick_call *call, const gnnd_dev *g, const int32_t *flat_ids, const float *flat_dist,
                            cudaStream_t st);
/* One GNND iteration: sampling, reverse lists, de-duplication,
 * cross-matching with selective update.  Insertions are added to *counter. */
int gnnd__launch_iteration(vick_call *call, const gnnd_dev *g, int iteration, cudaStream_t st);
/* Segments (and GGM's set-aside entries) -> flat top-k lists (k <= K),
 * repeats removed, -1 / +inf padding. */
int gnnd__launch_finalize(vick_call *call, const gnnd_dev *g, int32_t k, int32_t *out_ids, float *out_dist,
                          cudaStream_t st);
/* Add `offset` to every valid id of a flat n*k device list. */
int gnnd__launch_offset_ids(vick_call *call, int32_t *ids, int64_t count, int32_t offset, cudaStream_t st);

/* ---- drivers (gnnd_build.cu) ---- */
/* Allocate every buffer of g for up to `capacity` rows (g->K, p, M, nseg
 * set by gnnd__setup); extra and the flat input of GGM when merge.  The
 * locks are cleared on st, the stream the build then runs on. */
void gnnd__setup(gnnd_dev *g, int32_t d, const vick_gnnd_params *p, uint64_t seed);
int gnnd__alloc(vick_call *call, gnnd_dev *g, int64_t capacity, int merge, cudaStream_t st);
void gnnd__free(gnnd_dev *g);
/* Iterate until converged or the cap (one host sync per iteration to read
 * the insertion count). */
int gnnd__refine(vick_call *call, gnnd_dev *g, const vick_gnnd_params *p, cudaStream_t st, int *iterations_run);
/* GNND on device rows (n <= capacity of g) into device flat top-k lists. */
int gnnd__build_run(vick_call *call, gnnd_dev *g, const float *d_rows, int64_t n, const vick_gnnd_params *p,
                    int32_t k, int32_t *d_out_ids, float *d_out_dist, cudaStream_t st);
/* GGM (Alg. 3) of row blocks 1 and 2 (device); d_flat_ids/dist hold the
 * (n1+n2)*K sorted lists of both sub-graphs with ids over the union.
 * Result: device flat top-k lists over the union. */
int gnnd__merge_run(vick_call *call, gnnd_dev *g, const float *d_rows1, int64_t n1, const float *d_rows2,
                    int64_t n2, const int32_t *d_flat_ids, const float *d_flat_dist, const vick_gnnd_params *p,
                    int32_t k, int32_t *d_out_ids, float *d_out_dist, cudaStream_t st);
/* GNND on device rows into device flat top-k lists (d_ids, d_dist: n x k),
 * its own buffers made and released here; waits for stream st. */
int gnnd__knn_device(vick_call *call, const float *d_rows, int64_t n, int32_t d, int32_t k, const vick_gnnd_params *p,
                     int32_t *d_ids, float *d_dist, cudaStream_t st);
int gnnd__check_params(vick_call *call, int64_t n, int32_t d, const vick_gnnd_params *p, int32_t k);
/* The common layer's stage report and clock (common.cuh). */
static inline void gnnd__stage(vick_call *call, const char *name, double seconds) {
  if (call) vick_stage_add(call, name, seconds);
}
static inline double gnnd__now(void) { return vick_now(); }
/* In-memory build with the rows in half precision, the candidates
 * re-ranked in fp32 (gnnd_compact.cu). */
int gnnd__knn_compact(vick_call *call, const float *rows, int64_t n, int32_t d, int32_t k, const vick_gnnd_params *p,
                      int64_t *ids, float *dist);
/* Out-of-GPU-memory build (gnnd_shards.cu). */
int gnnd__sharded_knn(vick_call *call, const float *rows, int64_t n, int32_t d, int32_t k,
                      const vick_gnnd_params *p, size_t budget, int64_t *ids, float *dist);

#endif
