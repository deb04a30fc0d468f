/* Kernel primitives shared by every family (kernels/src/prims/):
 *
 *   key.cuh      the one (distance, id) order: vick_before, vick_key
 *   sort.cuh     warp sort of (distance, id) entries with payloads, and
 *                of one packed key per lane
 *   warp.cuh     warp / lane-group sums (fixed float butterfly, CUB for
 *                integers), the (distance, id) arg-min and the key minimum
 *   dist.cuh     L2 / inner-product distances, exact (CPU-identical) and
 *                fast (lane share, warp, group)
 *   visited.cuh  shared-memory hash set of visited ids
 *   rng.cuh      counter-based splitmix64
 *
 * Device code only (rng.cuh also host), header-only, no global state: a
 * family includes what it uses.  A new family should use these rather
 * than its own copy; a variant that must differ (another arithmetic, a
 * flag bit in the key) says why next to it. */
#ifndef VICK_PRIMS_CUH
#define VICK_PRIMS_CUH

#include "dist.cuh"
#include "key.cuh"
#include "rng.cuh"
#include "sort.cuh"
#include "visited.cuh"
#include "warp.cuh"

#endif
