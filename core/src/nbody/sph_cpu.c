/* The CPU deposit of the SPH maps (sph_internal.h).  Cells are owned by
 * bands (4 rows of a projection or slice, 1 plane of a volume); every
 * particle image is listed under each band its footprint touches, in
 * particle order, and one thread sums a band's list alone.  Each cell thus
 * adds its particles in the same order whatever the thread count: the
 * image is bit-identical for 1 or N threads. */
#include "sph_internal.h"

#include <omp.h>
#include <string.h>

#define SPH_CHUNKS 256 /* fixed particle chunks: list order does not depend on threads */

typedef struct {
  const vick_sph_frame *f;
  const vic_data *x;
  const float *h, *mass;
  int32_t n_arrays;
  const float *const *arrays;
  const double *ctab, *rtab;
  double *acc;
  double *scratch; /* per thread: 4 x (nx + 1): two rows of corner cumulatives, the columns' table positions */
  int64_t cells;
  int band_dim, band_rows, n_bands;
} sph_job;

/* Cell coordinates, support and footprint of image `shift` of particle
 * i: 0 when it touches no cell. */
static int locate(const sph_job *J, int64_t i, int shift, double xc[3], double *H, int lo[3], int hi[3]) {
  double p[3];
  vick_sph_wrap(J->f, vic__row(J->x, i), p);
  vick_sph_frame_coords(J->f, p, shift, xc);
  *H = J->f->support_of_h * (double)J->h[i];
  return vick_sph_footprint(J->f, xc, *H, lo, hi);
}

static void band_range(const sph_job *J, const int lo[3], const int hi[3], int *b0, int *b1) {
  *b0 = lo[J->band_dim] / J->band_rows;
  *b1 = hi[J->band_dim] / J->band_rows;
}

/* Adds weight (mass or density) times each channel's value to cell q. */
static inline void add(const sph_job *J, int64_t i, int64_t q, double weight) {
  double *acc = J->acc;
  acc[q] += weight;
  for (int32_t a = 0; a < J->n_arrays; ++a) acc[(size_t)(a + 1) * J->cells + q] += weight * (double)J->arrays[a][i];
}

/* One particle image into the cells of band b. */
static void deposit(const sph_job *J, int64_t i, int shift, int b) {
  const vick_sph_frame *f = J->f;
  double xc[3], H;
  int lo[3], hi[3];
  if (!locate(J, i, shift, xc, &H, lo, hi)) return;
  const int bd = J->band_dim, r0 = b * J->band_rows, r1 = r0 + J->band_rows - 1;
  if (lo[bd] < r0) lo[bd] = r0;
  if (hi[bd] > r1) hi[bd] = r1;
  const double m = J->mass ? (double)J->mass[i] : f->unit_mass;
  if (f->mode == VICK_SPH_PROJECTION) {
    /* each pixel corner's cumulative once (rows j and j + 1 of corners),
     * its position in the table once per column and once per row */
    const double rx = H * f->inv_cell[0], ry = H * f->inv_cell[1];
    const int T = f->table_n, w = hi[0] - lo[0] + 1;
    double *below = J->scratch + (size_t)omp_get_thread_num() * 4 * (f->nx + 1), *above = below + f->nx + 1;
    double *fa = above + f->nx + 1;
    int *ia = (int *)(fa + f->nx + 1);
    for (int t = 0; t <= w; ++t) vick_sph_table_pos(T, vick_sph_clamp1((lo[0] + t - xc[0]) / rx), &ia[t], &fa[t]);
    int ib;
    double fb;
    vick_sph_table_pos(T, vick_sph_clamp1((lo[1] - xc[1]) / ry), &ib, &fb);
    for (int t = 0; t <= w; ++t) below[t] = vick_sph_cumulative_at(J->ctab, T, ia[t], fa[t], ib, fb);
    for (int j = lo[1]; j <= hi[1]; ++j) {
      vick_sph_table_pos(T, vick_sph_clamp1((j + 1 - xc[1]) / ry), &ib, &fb);
      for (int t = 0; t <= w; ++t) above[t] = vick_sph_cumulative_at(J->ctab, T, ia[t], fa[t], ib, fb);
      for (int t = 0; t < w; ++t) {
        double wt = above[t + 1] - above[t] - below[t + 1] + below[t];
        if (wt != 0.0) add(J, i, (int64_t)j * f->nx + lo[0] + t, m * wt);
      }
      double *swap = below;
      below = above;
      above = swap;
    }
    return;
  }
  const int s = vick_sph_subsamples(f, H);
  double scale = m / (H * H * H); /* density per unit kernel value */
  if (f->mode == VICK_SPH_VOLUME) {
    const double cellvol = f->cell[0] * f->cell[1] * f->cell[2];
    if (s > 1) {
      double norm = vick_sph_volume_norm(f, J->rtab, xc, H, s);
      if (norm <= 0) { /* between the sub-samples: all of it in its own cell */
        int64_t ci = (int64_t)floor(xc[0]), cj = (int64_t)floor(xc[1]), ck = (int64_t)floor(xc[2]);
        if (ci >= 0 && ci < f->nx && cj >= 0 && cj < f->ny && ck >= r0 && ck <= r1 && ck < f->nz)
          add(J, i, (ck * f->ny + cj) * f->nx + ci, m);
        return;
      }
      scale = m / norm;
    } else {
      scale *= cellvol; /* the volume accumulates mass */
    }
  }
  for (int k = lo[2]; k <= hi[2]; ++k)
    for (int j = lo[1]; j <= hi[1]; ++j)
      for (int ii = lo[0]; ii <= hi[0]; ++ii) {
        double w = vick_sph_cell_mean(f, J->rtab, xc, H, s, ii, j, k);
        if (w != 0.0) add(J, i, ((int64_t)k * f->ny + j) * f->nx + ii, scale * w);
      }
}

/* The particle images of chunk ch, band by band: counted into at[b]
 * (list NULL), else written at list[at[b]++] (image = i * shifts + shift)
 * -- the two passes of the band lists walk the same images. */
static void chunk_bands(const sph_job *J, int ch, int64_t *at, int64_t *list) {
  const int64_t n = J->x->n;
  const int S = J->f->n_shifts;
  for (int64_t i = n * ch / SPH_CHUNKS; i < n * (ch + 1) / SPH_CHUNKS; ++i)
    for (int s = 0; s < S; ++s) {
      double xc[3], H;
      int lo[3], hi[3], b0, b1;
      if (!locate(J, i, s, xc, &H, lo, hi)) continue;
      band_range(J, lo, hi, &b0, &b1);
      for (int b = b0; b <= b1; ++b)
        if (list) list[at[b]++] = i * S + s;
        else at[b]++;
    }
}

vic_status vic__sph_cpu(vic_ctx *c, const vick_sph_frame *f, const vic_data *x, const float *h, const float *mass,
                        int32_t n_arrays, const float *const *arrays, const double *ctab, const double *rtab,
                        double *acc) {
  const int threads = vic__threads(c);
  sph_job J = {f, x, h, mass, n_arrays, arrays, ctab, rtab, acc, NULL, (int64_t)f->nx * f->ny * f->nz, 1, 4, 0};
  if (f->mode == VICK_SPH_VOLUME) { J.band_dim = 2; J.band_rows = 1; }
  const int nrows = J.band_dim == 2 ? f->nz : f->ny;
  J.n_bands = (nrows + J.band_rows - 1) / J.band_rows;
  const int64_t nb = J.n_bands;
  const int S = f->n_shifts;
  /* per thread: two rows of corners, the columns' table fractions and cells (an int fits a double's place) */
  J.scratch = vic__malloc(c, (size_t)threads * 4 * (f->nx + 1) * sizeof *J.scratch, "SPH pixel corners");
  if (!J.scratch) return VIC_E_NOMEM;
  int64_t *cnt = vic__calloc(c, (size_t)SPH_CHUNKS * (size_t)nb, sizeof *cnt, "SPH band counts");
  int64_t *start = vic__malloc(c, (size_t)(nb + 1) * sizeof *start, "SPH band offsets");
  if (!cnt || !start) { free(cnt); free(start); free(J.scratch); return VIC_E_NOMEM; }

  /* pass 1: list lengths per (chunk, band) */
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (int ch = 0; ch < SPH_CHUNKS; ++ch) chunk_bands(&J, ch, cnt + (size_t)ch * nb, NULL);
  /* offsets: band by band, chunks in particle order */
  int64_t total = 0;
  for (int64_t b = 0; b < nb; ++b) {
    start[b] = total;
    for (int ch = 0; ch < SPH_CHUNKS; ++ch) {
      int64_t t = cnt[(size_t)ch * nb + b];
      cnt[(size_t)ch * nb + b] = total;
      total += t;
    }
  }
  start[nb] = total;
  int64_t *list = vic__malloc(c, (size_t)(total ? total : 1) * sizeof *list, "SPH band lists");
  if (!list) { free(cnt); free(start); free(J.scratch); return VIC_E_NOMEM; }
  vic_status st = vic__progress(c, "sph map", 0.1);
  if (st != VIC_OK) goto out;

  /* pass 2: the lists */
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (int ch = 0; ch < SPH_CHUNKS; ++ch) chunk_bands(&J, ch, cnt + (size_t)ch * nb, list);

  /* the deposit: one thread per band */
  int64_t done = 0;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1)
  for (int64_t b = 0; b < nb; ++b) {
    if (vic__cancelled(c)) continue;
    for (int64_t e = start[b]; e < start[b + 1]; ++e) deposit(&J, list[e] / S, (int)(list[e] % S), (int)b);
    int64_t d;
#pragma omp atomic capture
    d = ++done;
    if (omp_get_thread_num() == 0) vic__progress(c, "sph map", 0.1 + 0.85 * (double)d / (double)nb);
  }
  st = vic__progress(c, "sph map", 0.95);
out:
  free(J.scratch);
  free(cnt);
  free(start);
  free(list);
  return st;
}
