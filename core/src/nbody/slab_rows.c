/* Host list steps for the rows the slabs keep on the host (slab_rows.h).
 * The loops are the device kernels' (slab_peaks.cu), comparison for
 * comparison: "denser" is higher density, ties to the lower id. */
#include "slab_rows.h"

#include <stdlib.h>

static int denser(const float *rho, int64_t j, int64_t i) {
  return rho[j] > rho[i] || (rho[j] == rho[i] && j < i);
}

void vic__rows_links(const int64_t *row, int64_t m, int32_t k, const int32_t *ids, const float *dist, int64_t n,
                     const float *rho, int32_t *parent, float *delta, int32_t *up, int32_t *is_max) {
#pragma omp parallel for schedule(static)
  for (int64_t r = 0; r < m; ++r) {
    const int64_t i = row[r];
    int64_t p = -2, g = -1;
    float dl = 0.f;
    for (int32_t t = 0; t < k; ++t) {
      const int64_t j = ids[r * k + t];
      if (j < 0 || j >= n || j == i || !denser(rho, j, i)) continue;
      if (p == -2) { p = j; dl = dist[r * k + t]; }
      if (g < 0 || denser(rho, j, g)) g = j;
    }
    parent[i] = (int32_t)p;
    delta[i] = dl;
    up[i] = (int32_t)(g >= 0 ? g : i);
    is_max[i] = p == -2;
  }
}

int vic__rows_edges(const int64_t *row, int64_t m, int32_t k, const int32_t *ids, int64_t n, const float *rho,
                    const int32_t *lab, const int32_t *rank, uint64_t **pair, uint64_t **pos, int64_t *count,
                    int64_t *cap) {
  for (int64_t r = 0; r < m; ++r) {
    const int64_t i = row[r];
    const int32_t bi = lab[i];
    int32_t seen[VIC_SLAB_EDGE_SEEN];
    int ns = 0;
    for (int32_t t = 0; t < k; ++t) {
      const int64_t j = ids[r * k + t];
      if (j < 0 || j >= n || !denser(rho, j, i)) continue;
      const int32_t bj = lab[j];
      if (bj == bi) continue;
      int dup = 0;
      for (int q = 0; q < ns; ++q) dup |= seen[q] == bj;
      if (dup) continue;
      if (ns < VIC_SLAB_EDGE_SEEN) seen[ns++] = bj;
      if (*count == *cap) {
        const int64_t c2 = *cap ? 2 * *cap : 1024;
        uint64_t *a = realloc(*pair, (size_t)c2 * sizeof *a);
        if (a) *pair = a;
        uint64_t *b = a ? realloc(*pos, (size_t)c2 * sizeof *b) : NULL;
        if (b) *pos = b;
        if (!b) return -1;
        *cap = c2;
      }
      const uint32_t lo = (uint32_t)(bi < bj ? bi : bj), hi = (uint32_t)(bi < bj ? bj : bi);
      (*pair)[*count] = ((uint64_t)lo << 32) | hi;
      (*pos)[*count] = (uint64_t)rank[i] * (uint64_t)k + (uint64_t)t;
      ++*count;
    }
  }
  return 0;
}

void vic__peaks_from_links(int64_t n, const int32_t *parent, const float *delta, const float *rho, int64_t m,
                           const int64_t *max_point, const int64_t *max_parent, const float *max_delta,
                           const float *max_saliency, int threads, int64_t *out_parent, float *out_delta,
                           float *out_saliency) {
  if (threads < 1) threads = 1;
#pragma omp parallel for num_threads(threads) schedule(static) if (n > 65536)
  for (int64_t i = 0; i < n; ++i) {
    out_parent[i] = parent[i];
    out_delta[i] = delta[i];
    out_saliency[i] = rho[i] * delta[i];
  }
#pragma omp parallel for num_threads(threads) schedule(static) if (m > 65536)
  for (int64_t q = 0; q < m; ++q) {
    const int64_t i = max_point[q];
    out_parent[i] = max_parent[q];
    out_delta[i] = max_delta[q];
    out_saliency[i] = max_saliency[q];
  }
}
