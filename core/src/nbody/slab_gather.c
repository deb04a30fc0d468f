/* A slab region's points gathered on the host (slab_plan.h), from the
 * rows sorted by slab.  The points come in random order in a snapshot:
 * a slab's own ids, ascending, touch most cache lines of the whole set,
 * so a gather that reads the set by id reads about all of it for every
 * region.  The sorted copy holds each slab's rows contiguous, in the
 * same order as the bucketed ids, so a region spanning three slabs reads
 * those three slabs only -- and the packed rows come out identical. */
#include "slab_plan.h"

#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

void vic__slab_offsets(int64_t *count, int64_t parts, int64_t keys, int64_t *start) {
  int64_t run = 0;
  for (int64_t s = 0; s < keys; ++s) {
    start[s] = run;
    for (int64_t b = 0; b < parts; ++b) {
      const int64_t m = count[b * keys + s];
      count[b * keys + s] = run;
      run += m;
    }
  }
  start[keys] = run;
}

int vic__slab_bucket(const vic_data *x, const vic_slab_plan *p, int64_t *start, int64_t *order, float *xs) {
  const int64_t n = x->n, S = p->n_slabs;
  const int d = x->d;
  const int64_t stride = x->stride ? x->stride : d;
  const int64_t blocks = n < ((int64_t)1 << 20) ? 1 : 256, per = (n + blocks - 1) / blocks;
  int32_t *slab = vic__malloc_huge((size_t)(n > 0 ? n : 1) * sizeof *slab);
  int64_t *at = slab ? calloc((size_t)(blocks * S), sizeof *at) : NULL;
  if (!at) { free(slab); return -1; }
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t i = b * per; i < (b + 1) * per && i < n; ++i) {
      slab[i] = (int32_t)vic__slab_of(p, vic__slab_coord(x, i, p->axis));
      at[b * S + slab[i]]++;
    }
  vic__slab_offsets(at, blocks, S, start); /* block b's first place in slab s */
  /* x read in order, each block's rows of a slab written as one run */
#pragma omp parallel for schedule(static)
  for (int64_t b = 0; b < blocks; ++b)
    for (int64_t i = b * per; i < (b + 1) * per && i < n; ++i) {
      const int64_t t = at[b * S + slab[i]]++;
      order[t] = i;
      if (xs) memcpy(xs + t * d, x->rows + i * stride, (size_t)d * sizeof *xs);
    }
  free(at);
  free(slab);
  return 0;
}

void vic__slab_rows_copy(const vic_data *x, const int64_t *rows, int64_t n_rows, int threads, float *p, uint32_t *ids) {
  const int d = x->d;
  const int64_t stride = x->stride ? x->stride : d;
#pragma omp parallel for schedule(static) num_threads(threads)
  for (int64_t t = 0; t < n_rows; ++t) {
    memcpy(p + t * d, x->rows + rows[t] * stride, (size_t)d * sizeof *p);
    ids[t] = (uint32_t)rows[t];
  }
}

int vic__slab_gather(const vic_slab_source *src, const vic_region *r, const int64_t *rows, int64_t n_rows,
                     int64_t s_lo, int64_t s_hi, int64_t own, const unsigned char *is_row, int threads, float **pts,
                     uint32_t **gid, int64_t *n_out) {
  const vic_data *x = src->x;
  const int d = x->d;
  const int64_t stride = x->stride ? x->stride : d;
  /* the sorted rows as a view: row t is the point order[t] (same floats,
   * same box), so the region's test reads them exactly as x's */
  vic_data xs = *x;
  xs.rows = src->xs;
  xs.stride = d;
  const vic_data *scan = src->xs ? &xs : x;
  if (threads < 1) threads = 1;
  /* own >= 0: rows are slab own's ids in bucket order (order[start[own]
   * .. start[own+1])): its stretch is copied whole and skipped as
   * candidates, and no other point can be flagged (only the rows are) */
  const int whole = own >= 0 && src->xs && own >= s_lo && own <= s_hi && n_rows == src->start[own + 1] - src->start[own];
  const int64_t c0 = src->start[s_lo], c1 = src->start[s_hi + 1], span = c1 - c0;
  const int64_t o0 = whole ? src->start[own] : c1, o1 = whole ? src->start[own + 1] : c1;
  const int64_t block = 1 << 16, nb = (span + block - 1) / block;
  int64_t *cnt = calloc((size_t)nb + 1, sizeof *cnt);
  if (!cnt) return -1;
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads)
  for (int64_t b = 0; b < nb; ++b) {
    int64_t m = 0;
    const int64_t e = c0 + (b + 1) * block < c1 ? c0 + (b + 1) * block : c1;
    for (int64_t t = c0 + b * block; t < e; ++t) {
      if (t >= o0 && t < o1) { t = o1 - 1; continue; }
      const int64_t i = src->order[t];
      m += (whole || !is_row[i]) && vic__region_holds(r, scan, src->xs ? t : i);
    }
    cnt[b + 1] = m;
  }
  for (int64_t b = 0; b < nb; ++b) cnt[b + 1] += cnt[b];
  const int64_t m = n_rows + cnt[nb];
  float *p = vic__malloc_huge((size_t)(m > 0 ? m : 1) * (size_t)d * sizeof *p);
  uint32_t *g = vic__malloc_huge((size_t)(m > 0 ? m : 1) * sizeof *g);
  if (!p || !g) { free(p); free(g); free(cnt); return -1; }
  if (whole) {
    const float *from = src->xs + o0 * d;
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int64_t t = 0; t < n_rows; ++t) {
      memcpy(p + t * d, from + t * d, (size_t)d * sizeof *p);
      g[t] = (uint32_t)rows[t];
    }
  } else {
    vic__slab_rows_copy(x, rows, n_rows, threads, p, g);
  }
#pragma omp parallel for schedule(dynamic, 4) num_threads(threads)
  for (int64_t b = 0; b < nb; ++b) {
    int64_t at = n_rows + cnt[b];
    const int64_t e = c0 + (b + 1) * block < c1 ? c0 + (b + 1) * block : c1;
    for (int64_t t = c0 + b * block; t < e; ++t) {
      if (t >= o0 && t < o1) { t = o1 - 1; continue; }
      const int64_t i = src->order[t];
      if (!whole && is_row[i]) continue;
      if (src->xs) {
        if (!vic__region_holds(r, &xs, t)) continue;
        memcpy(p + at * d, src->xs + t * d, (size_t)d * sizeof *p);
      } else {
        if (!vic__region_holds(r, x, i)) continue;
        memcpy(p + at * d, x->rows + i * stride, (size_t)d * sizeof *p);
      }
      g[at++] = (uint32_t)i;
    }
  }
  free(cnt);
  *pts = p;
  *gid = g;
  *n_out = m;
  return 0;
}
