// Parallel insertion of a fetch's accepted candidates into the cache's
// sorted lists (best, and the prioq ring): the batch (one candidate per
// lane) is sorted across the warp by a bitonic network, then every new and
// every existing entry finds its final slot by one binary search in the
// other sorted sequence, and all move at once.  This replaces one
// ballot-and-shift insertion per candidate (two warp barriers per 32
// entries each) by a constant number of steps per batch.
//
// Callers guarantee that no batch id is already in the list (the visited
// set, prims/visited.cuh), so (distance, id) keys are distinct and the two
// searches agree on one merged order (prims/key.cuh's vick_before).
#ifndef VIC_GGNN_BATCH_CUH
#define VIC_GGNN_BATCH_CUH

#include "prims/key.cuh"
#include "prims/sort.cuh"

#include <stdint.h>

// Sort the lanes' (d, id) ascending; lanes without a candidate pass id < 0
// and end up last.  Returns the number of candidates; the sorted batch is
// also written to sid/sd (32 entries) for the existing entries' searches.
__device__ __forceinline__ int ggnn_batch_sort(int32_t &id, float &d, int32_t *sid, float *sd) {
  const int lane = threadIdx.x & 31;
  const int nb = __popc(__ballot_sync(VICK_FULL_MASK, id >= 0));
  if (nb == 0) return 0;
  if (id < 0) { id = 0x7fffffff; d = __int_as_float(0x7f800000); }
  vick_warp_sort(d, id);
  if (lane >= nb) id = -1;
  sid[lane] = id;
  sd[lane] = d;
  __syncwarp();
  return nb;
}

// Merge the sorted batch (lane t holds its t-th entry, nb of them) into the
// ascending list ids/ds of count entries and capacity cap; RING: logical
// slot j is physical (head + j) & (cap - 1).  What falls past cap is
// dropped.  Existing entries only move right, so they move in chunks of 32
// from the end: a chunk's targets lie above every chunk not yet read.
template <bool RING>
__device__ __forceinline__ void ggnn_batch_merge(int32_t *ids, float *ds, int cap, int head, int &count, int nb,
                                                 int32_t id, float d, const int32_t *sid, const float *sd) {
  const int lane = threadIdx.x & 31;
  const int mask = cap - 1;
  // the new entry's slot: its rank in the batch + the existing entries before it
  int lo = 0, hi = count;
  while (lo < hi) {
    int mid = (lo + hi) >> 1;
    int p = RING ? (head + mid) & mask : mid;
    if (vick_before(ds[p], ids[p], d, id)) lo = mid + 1;
    else hi = mid;
  }
  const int npos = lane + lo;
  for (int c0 = (count - 1) & ~31; c0 >= 0; c0 -= 32) {
    const int j = c0 + lane;
    int32_t eid = 0;
    float ed = 0.f;
    int epos = cap;  // nothing to write
    if (j < count) {
      int p = RING ? (head + j) & mask : j;
      eid = ids[p];
      ed = ds[p];
      int a = 0, b = nb;
      while (a < b) {
        int mid = (a + b) >> 1;
        if (vick_before(sd[mid], sid[mid], ed, eid)) a = mid + 1;
        else b = mid;
      }
      epos = j + a;
    }
    __syncwarp();  // the chunk's reads (and the new entries' searches) before its writes
    if (epos < cap) {
      int p = RING ? (head + epos) & mask : epos;
      ids[p] = eid;
      ds[p] = ed;
    }
    __syncwarp();
  }
  if (lane < nb && npos < cap) {
    int p = RING ? (head + npos) & mask : npos;
    ids[p] = id;
    ds[p] = d;
  }
  __syncwarp();
  count = count + nb < cap ? count + nb : cap;
}

#endif
