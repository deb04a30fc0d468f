/* Block-wide k-selection of one row: the FAISS idea of a running threshold
 * with a small candidate buffer, sorted by CUB's BlockRadixSort when it
 * fills.  A block of SELECT_THREADS threads owns one row; its best `kp`
 * (distance, id) keys so far live in shared memory (and between launches in
 * global memory).  Candidates at or above the kp-th key are dropped at once,
 * so after the first few thousand columns almost nothing reaches the sort.
 *
 * Keys are vick_key(distance, id): integer order = (distance, id) order, so
 * ties go to the lower id as on the CPU. */
#ifndef VICK_BLOCK_SELECT_CUH
#define VICK_BLOCK_SELECT_CUH

#include "common.cuh"

#include <cub/block/block_radix_sort.cuh>

#define SELECT_THREADS 256
#define SELECT_IPT 8                              /* keys per thread in a sort */
#define SELECT_CAP (SELECT_THREADS * SELECT_IPT)  /* 2048 keys of shared memory */
#define SELECT_ROUND 4                            /* columns per thread between checks */
/* The list may hold at most this many keys: a round adds up to
 * SELECT_THREADS*SELECT_ROUND candidates, which must fit behind it. */
#define SELECT_MAX_KP (SELECT_CAP - SELECT_THREADS * SELECT_ROUND)

typedef cub::BlockRadixSort<unsigned long long, SELECT_THREADS, SELECT_IPT> vick_select_sort;

struct vick_select_smem {
  unsigned long long keys[SELECT_CAP];
  typename vick_select_sort::TempStorage sort;
  unsigned long long thr; /* the kp-th key: candidates must be below it */
  int count;              /* keys in use (list + candidates) */
};

/* Sort keys[0..CAP) ascending, keep the first kp, reset the buffer. */
__device__ __forceinline__ void vick_select_flush(vick_select_smem &s, int kp) {
  unsigned long long items[SELECT_IPT];
  const int t = threadIdx.x;
#pragma unroll
  for (int i = 0; i < SELECT_IPT; ++i) {
    int slot = t * SELECT_IPT + i;
    items[i] = slot < s.count ? s.keys[slot] : VICK_KEY_NONE;
  }
  __syncthreads();
  vick_select_sort(s.sort).Sort(items);
#pragma unroll
  for (int i = 0; i < SELECT_IPT; ++i) s.keys[t * SELECT_IPT + i] = items[i];
  __syncthreads();
  if (t == 0) {
    s.count = kp;
    s.thr = s.keys[kp - 1];
  }
  __syncthreads();
}

/* Start a row from its list in global memory (kp keys, VICK_KEY_NONE for
 * empty slots). */
__device__ __forceinline__ void vick_select_begin(vick_select_smem &s, const unsigned long long *list, int kp) {
  for (int i = threadIdx.x; i < kp; i += SELECT_THREADS) s.keys[i] = list[i];
  if (threadIdx.x == 0) {
    s.count = kp;
    s.thr = list[kp - 1];
  }
  __syncthreads();
}

/* Offer columns [0, ncols) of a row; key(j) returns the key of column j or
 * VICK_KEY_NONE to skip it (the row's own point). */
template <class KeyOf>
__device__ __forceinline__ void vick_select_scan(vick_select_smem &s, int kp, int64_t ncols, KeyOf key) {
  const int64_t per_round = (int64_t)SELECT_THREADS * SELECT_ROUND;
  for (int64_t base = 0; base < ncols; base += per_round) {
    const unsigned long long thr = s.thr;
#pragma unroll
    for (int r = 0; r < SELECT_ROUND; ++r) {
      int64_t j = base + r * SELECT_THREADS + threadIdx.x;
      if (j < ncols) {
        unsigned long long kj = key(j);
        if (kj < thr) s.keys[atomicAdd(&s.count, 1)] = kj;
      }
    }
    __syncthreads();
    /* every thread reads the same count between the two barriers */
    const int full = s.count > SELECT_MAX_KP;
    __syncthreads();
    if (full) vick_select_flush(s, kp);
  }
}

/* Push this thread's keys key(0..N) that beat thr into the buffer with one
 * reservation for all of them, so that a caller can keep many loads in
 * flight per thread and pay one barrier per round.  A reservation that
 * does not fit writes none of them (it fills the slots it got with
 * VICK_KEY_NONE so the buffer has no holes) and returns 1.  The caller's
 * protocol, every thread of the block taking part:
 *
 *   int failed = vick_select_push<N>(s, s.thr, key);
 *   while (__syncthreads_or(failed)) {
 *     vick_select_flush(s, kp);
 *     if (failed) failed = vick_select_push<N>(s, s.thr, key);  // keys made again
 *   }
 *
 * After a flush at least CAP - SELECT_MAX_KP >= N slots are free, so the
 * first reservation of each try fits: every try makes progress.  key is a
 * function rather than an array so that the caller may rebuild the keys
 * after a flush instead of keeping them in registers through the sort. */
template <int N, class KeyOf>
__device__ __forceinline__ int vick_select_push(vick_select_smem &s, unsigned long long thr, KeyOf key) {
  static_assert(N <= SELECT_CAP - SELECT_MAX_KP, "one thread's keys must fit behind a full list");
  int m = 0;
#pragma unroll
  for (int i = 0; i < N; ++i) m += key(i) < thr;
  if (!m) return 0;
  int slot = atomicAdd(&s.count, m);
  if (slot + m <= SELECT_CAP) {
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const unsigned long long ki = key(i);
      if (ki < thr) s.keys[slot++] = ki;
    }
    return 0;
  }
  const int end = slot + m < SELECT_CAP ? slot + m : SELECT_CAP;
  for (int i = slot; i < end; ++i) s.keys[i] = VICK_KEY_NONE;
  return 1;
}

/* Final sort; the best kp keys are in s.keys[0..kp), written to list when
 * list != NULL.  When nothing was added since the begin or the last flush
 * (the common case once the threshold is tight) s.keys[0..kp) is already
 * sorted and the block sort is skipped. */
__device__ __forceinline__ void vick_select_end(vick_select_smem &s, unsigned long long *list, int kp) {
  /* every thread reads s.count after the caller's last barrier */
  if (s.count != kp) vick_select_flush(s, kp);
  if (list)
    for (int i = threadIdx.x; i < kp; i += SELECT_THREADS) list[i] = s.keys[i];
}

#endif
