/* The one binary search of the kernels (Morton-code ranges of the grids,
 * GGNN's request groups, the graph search's sorted key lists), in a header
 * of its own so that kernel families that do not include common.cuh use it
 * too. */
#ifndef VICK_LOWER_BOUND_CUH
#define VICK_LOWER_BOUND_CUH

/* First index in [a, b) of the ascending keys whose key is not below v. */
template <typename K, typename I>
__device__ __forceinline__ I vick_lower_bound(const K *keys, I a, I b, K v) {
  while (a < b) {
    const I m = (a + b) >> 1;
    if (keys[m] < v) a = m + 1;
    else b = m;
  }
  return a;
}

#endif
