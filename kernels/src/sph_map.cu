/* SPH maps on the device (vick_sph_deposit, vic_kernels_sph.h).
 *
 * Projection: the image is cut into 32 x 32 tiles.  Every particle image
 * is listed under each tile its footprint touches, with a flag saying
 * whether it is small (support up to SPH_SMALL cells) or large; one radix
 * sort by (tile, flag) groups the lists, and each tile's lists are cut
 * into chunks, one block per chunk.  A block sums its chunk into the
 * tile in shared memory: small particles one per thread (shared atomics,
 * a few pixels each), large ones one at a time by the whole block (the
 * pixel corners' cumulatives computed once into shared memory, each
 * thread owning its pixels, no atomics).  The block then adds its tile to
 * the image with one double atomic per pixel: only the few chunks of one
 * tile meet there.  Slices and volumes: one thread per particle with
 * double atomics into the cells (their particles spread over many cells).
 *
 * The cell weights are vic_kernels_sph.h's, the same functions the CPU
 * deposit evaluates; sums differ from the CPU's only by their order and
 * by the float tile accumulators (within float rounding of the image). */
#include "common.cuh"
#include "vic_kernels_sph.h"

#include <cub/cub.cuh>
#include <stdlib.h>
#include <string.h>

#define SPH_TILE 32
#define SPH_THREADS 256
#define SPH_SMALL 1.5       /* support radius in cells up to which a particle goes one per thread */
#define SPH_CHUNK_SMALL 4096
#define SPH_CHUNK_LARGE 16
#define SPH_PASS_CHANNELS 8 /* channels summed per pass over the lists (shared memory) */

typedef struct {
  vick_env env;
  vick_buf rows, h, mass, chan, ctab, rtab, acc, counts, offsets, keys[2], vals[2], bounds, chunks, tmp;
} sph_ws;

static void ws_free(sph_ws *w) {
  vick_buf *all[] = {&w->rows, &w->h, &w->mass, &w->chan, &w->ctab, &w->rtab, &w->acc, &w->counts, &w->offsets,
                     &w->keys[0], &w->keys[1], &w->vals[0], &w->vals[1], &w->bounds, &w->chunks, &w->tmp};
  for (size_t i = 0; i < sizeof all / sizeof *all; ++i) vick_buf_free(&w->env, all[i]);
}

typedef struct {
  const float *rows;
  int64_t stride;
  const float *h, *mass, *chan; /* chan: n_arrays x n */
  int64_t n;
  int n_arrays;
  const double *ctab, *rtab;
  double *acc; /* (1 + n_arrays) x cells */
  int64_t cells;
} sph_in;

/* Cell coordinates, support and footprint of particle image e = i * S + s. */
__device__ __forceinline__ int sph_locate(const vick_sph_frame &f, const sph_in &in, uint64_t e, double xc[3],
                                          double *H, int lo[3], int hi[3]) {
  const int64_t i = (int64_t)(e / (uint64_t)f.n_shifts);
  const int s = (int)(e % (uint64_t)f.n_shifts);
  double p[3];
  vick_sph_wrap(&f, in.rows + i * in.stride, p);
  vick_sph_frame_coords(&f, p, s, xc);
  *H = f.support_of_h * (double)in.h[i];
  return vick_sph_footprint(&f, xc, *H, lo, hi);
}

__device__ __forceinline__ float sph_channel(const sph_in &in, int64_t i, int ch) {
  return ch == 0 ? 1.0f : in.chan[(int64_t)(ch - 1) * in.n + i];
}

/* ------------------------------------------------------------ projection */
__device__ __forceinline__ void sph_tiles(const int lo[3], const int hi[3], int *tx0, int *tx1, int *ty0, int *ty1) {
  *tx0 = lo[0] / SPH_TILE;
  *tx1 = hi[0] / SPH_TILE;
  *ty0 = lo[1] / SPH_TILE;
  *ty1 = hi[1] / SPH_TILE;
}

__global__ void sph_count(vick_sph_frame f, sph_in in, int64_t *counts) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= in.n) return;
  int64_t c = 0;
  for (int s = 0; s < f.n_shifts; ++s) {
    double xc[3], H;
    int lo[3], hi[3], tx0, tx1, ty0, ty1;
    if (!sph_locate(f, in, (uint64_t)i * f.n_shifts + s, xc, &H, lo, hi)) continue;
    sph_tiles(lo, hi, &tx0, &tx1, &ty0, &ty1);
    c += (int64_t)(tx1 - tx0 + 1) * (ty1 - ty0 + 1);
  }
  counts[i] = c;
}

__global__ void sph_fill(vick_sph_frame f, sph_in in, const int64_t *offsets, int tiles_x, uint32_t *keys,
                         uint64_t *vals) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= in.n) return;
  int64_t o = offsets[i];
  for (int s = 0; s < f.n_shifts; ++s) {
    double xc[3], H;
    int lo[3], hi[3], tx0, tx1, ty0, ty1;
    const uint64_t e = (uint64_t)i * f.n_shifts + s;
    if (!sph_locate(f, in, e, xc, &H, lo, hi)) continue;
    sph_tiles(lo, hi, &tx0, &tx1, &ty0, &ty1);
    const uint32_t large = (H * f.inv_cell[0] > SPH_SMALL || H * f.inv_cell[1] > SPH_SMALL) ? 1u : 0u;
    for (int ty = ty0; ty <= ty1; ++ty)
      for (int tx = tx0; tx <= tx1; ++tx) {
        keys[o] = 2u * (uint32_t)(ty * tiles_x + tx) + large;
        vals[o] = e;
        ++o;
      }
  }
}

/* bounds[k] = first entry whose key is >= k, for k = 0 .. 2 * tiles. */
__global__ void sph_bounds(const uint32_t *keys, int64_t total, int64_t nkeys, int64_t *bounds) {
  int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (k > nkeys) return;
  bounds[k] = vick_lower_bound<uint32_t, int64_t>(keys, (int64_t)0, total, (uint32_t)k);
}

typedef struct {
  int32_t tile, large;
  int64_t begin, end;
} sph_chunk;

__global__ void __launch_bounds__(SPH_THREADS)
sph_tile_kernel(vick_sph_frame f, sph_in in, const uint64_t *vals, const sph_chunk *chunks, int tiles_x, int ch0,
                int nch) {
  extern __shared__ double smem[];
  double *corner = smem;                                          /* (TILE+1)^2 corner cumulatives */
  float *acc = (float *)(smem + (SPH_TILE + 1) * (SPH_TILE + 1)); /* nch x TILE^2 */
  const sph_chunk c = chunks[blockIdx.x];
  const int px0 = (c.tile % tiles_x) * SPH_TILE, py0 = (c.tile / tiles_x) * SPH_TILE;
  for (int p = threadIdx.x; p < nch * SPH_TILE * SPH_TILE; p += blockDim.x) acc[p] = 0.f;
  __syncthreads();
  const int T = f.table_n;
  if (!c.large) {
    for (int64_t e = c.begin + threadIdx.x; e < c.end; e += blockDim.x) {
      double xc[3], H;
      int lo[3], hi[3];
      if (!sph_locate(f, in, vals[e], xc, &H, lo, hi)) continue;
      const int64_t i = (int64_t)(vals[e] / (uint64_t)f.n_shifts);
      const double m = in.mass ? (double)in.mass[i] : f.unit_mass;
      const double rx = H * f.inv_cell[0], ry = H * f.inv_cell[1];
      const int x0 = max(lo[0], px0), x1 = min(hi[0], px0 + SPH_TILE - 1);
      const int y0 = max(lo[1], py0), y1 = min(hi[1], py0 + SPH_TILE - 1);
      for (int y = y0; y <= y1; ++y)
        for (int x = x0; x <= x1; ++x) {
          const double w = vick_sph_pixel_weight(in.ctab, T, xc[0], xc[1], rx, ry, x, y);
          if (w == 0.0) continue;
          const int p = (y - py0) * SPH_TILE + (x - px0);
          for (int k = 0; k < nch; ++k)
            atomicAdd(&acc[k * SPH_TILE * SPH_TILE + p], (float)(m * w * (double)sph_channel(in, i, ch0 + k)));
        }
    }
  } else {
    for (int64_t e = c.begin; e < c.end; ++e) {
      double xc[3], H;
      int lo[3], hi[3];
      if (!sph_locate(f, in, vals[e], xc, &H, lo, hi)) continue; /* uniform over the block */
      const int64_t i = (int64_t)(vals[e] / (uint64_t)f.n_shifts);
      const double m = in.mass ? (double)in.mass[i] : f.unit_mass;
      const double rx = H * f.inv_cell[0], ry = H * f.inv_cell[1];
      const int x0 = max(lo[0], px0), x1 = min(hi[0], px0 + SPH_TILE - 1);
      const int y0 = max(lo[1], py0), y1 = min(hi[1], py0 + SPH_TILE - 1);
      const int cw = x1 - x0 + 2, chh = y1 - y0 + 2;
      for (int q = threadIdx.x; q < cw * chh; q += blockDim.x)
        corner[q] = vick_sph_corner(in.ctab, T, xc[0], xc[1], rx, ry, x0 + q % cw, y0 + q / cw);
      __syncthreads();
      float v[SPH_PASS_CHANNELS];
      for (int k = 0; k < nch; ++k) v[k] = sph_channel(in, i, ch0 + k);
      for (int q = threadIdx.x; q < (cw - 1) * (chh - 1); q += blockDim.x) {
        const int qx = q % (cw - 1), qy = q / (cw - 1);
        const double *r0 = corner + qy * cw + qx, *r1 = r0 + cw;
        const double w = r1[1] - r1[0] - r0[1] + r0[0];
        if (w == 0.0) continue;
        const int p = (y0 + qy - py0) * SPH_TILE + (x0 + qx - px0);
        for (int k = 0; k < nch; ++k) acc[k * SPH_TILE * SPH_TILE + p] += (float)(m * w * (double)v[k]);
      }
      __syncthreads();
    }
  }
  __syncthreads();
  for (int p = threadIdx.x; p < SPH_TILE * SPH_TILE; p += blockDim.x) {
    const int x = px0 + p % SPH_TILE, y = py0 + p / SPH_TILE;
    if (x >= f.nx || y >= f.ny) continue;
    for (int k = 0; k < nch; ++k) {
      const float v = acc[k * SPH_TILE * SPH_TILE + p];
      if (v != 0.f) atomicAdd(&in.acc[(int64_t)(ch0 + k) * in.cells + (int64_t)y * f.nx + x], (double)v);
    }
  }
}

/* ------------------------------------------------------- slice and volume */
__global__ void sph_direct(vick_sph_frame f, sph_in in) {
  int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= in.n) return;
  const int nch = 1 + in.n_arrays;
  const double m = in.mass ? (double)in.mass[i] : f.unit_mass;
  for (int sh = 0; sh < f.n_shifts; ++sh) {
    double xc[3], H;
    int lo[3], hi[3];
    if (!sph_locate(f, in, (uint64_t)i * f.n_shifts + sh, xc, &H, lo, hi)) continue;
    const int s = vick_sph_subsamples(&f, H);
    double scale = m / (H * H * H);
    if (f.mode == VICK_SPH_VOLUME) {
      if (s > 1) {
        const double norm = vick_sph_volume_norm(&f, in.rtab, xc, H, s);
        if (norm <= 0) {
          const int64_t ci = (int64_t)floor(xc[0]), cj = (int64_t)floor(xc[1]), ck = (int64_t)floor(xc[2]);
          if (ci >= 0 && ci < f.nx && cj >= 0 && cj < f.ny && ck >= 0 && ck < f.nz)
            for (int k = 0; k < nch; ++k)
              atomicAdd(&in.acc[k * in.cells + (ck * f.ny + cj) * f.nx + ci], m * (double)sph_channel(in, i, k));
          continue;
        }
        scale = m / norm;
      } else {
        scale *= f.cell[0] * f.cell[1] * f.cell[2];
      }
    }
    for (int kz = lo[2]; kz <= hi[2]; ++kz)
      for (int y = lo[1]; y <= hi[1]; ++y)
        for (int x = lo[0]; x <= hi[0]; ++x) {
          const double w = vick_sph_cell_mean(&f, in.rtab, xc, H, s, x, y, kz);
          if (w == 0.0) continue;
          const int64_t q = ((int64_t)kz * f.ny + y) * f.nx + x;
          for (int k = 0; k < nch; ++k) atomicAdd(&in.acc[k * in.cells + q], scale * w * (double)sph_channel(in, i, k));
        }
  }
}

/* ------------------------------------------------------------ the call */
static int upload(vick_call *call, sph_ws *w, const vick_sph_frame *f, sph_in *in, const float *rows, int64_t stride,
                  const float *h, const float *mass, int n_arrays, const float *const *arrays, const double *ctab,
                  const double *rtab) {
  const int64_t n = in->n;
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->rows, (size_t)n * stride * sizeof(float), "particle positions"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->h, (size_t)n * sizeof(float), "smoothing lengths"));
  VICK_TRY(vick_copy_to_device(call, &w->env, w->rows.p, rows, (size_t)n * stride * sizeof(float)));
  VICK_TRY(vick_copy_to_device(call, &w->env, w->h.p, h, (size_t)n * sizeof(float)));
  if (mass) {
    VICK_TRY(vick_buf_alloc(call, &w->env, &w->mass, (size_t)n * sizeof(float), "particle masses"));
    VICK_TRY(vick_copy_to_device(call, &w->env, w->mass.p, mass, (size_t)n * sizeof(float)));
  }
  if (n_arrays) {
    VICK_TRY(vick_buf_alloc(call, &w->env, &w->chan, (size_t)n_arrays * n * sizeof(float), "mapped arrays"));
    for (int a = 0; a < n_arrays; ++a)
      VICK_TRY(vick_copy_to_device(call, &w->env, (float *)w->chan.p + (size_t)a * n, arrays[a], (size_t)n * sizeof(float)));
  }
  const size_t ct = (size_t)(f->table_n + 1) * (f->table_n + 1) * sizeof(double), rt = (size_t)(f->radial_n + 1) * sizeof(double);
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->ctab, ct, "projected kernel table"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->rtab, rt, "kernel table"));
  VICK_TRY(vick_copy_to_device(call, &w->env, w->ctab.p, ctab, ct));
  VICK_TRY(vick_copy_to_device(call, &w->env, w->rtab.p, rtab, rt));
  const size_t accb = (size_t)(1 + n_arrays) * in->cells * sizeof(double);
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->acc, accb, "image accumulators"));
  VICK_CUDA(call, cudaMemsetAsync(w->acc.p, 0, accb, w->env.stream));
  in->rows = (const float *)w->rows.p;
  in->h = (const float *)w->h.p;
  in->mass = mass ? (const float *)w->mass.p : NULL;
  in->chan = n_arrays ? (const float *)w->chan.p : NULL;
  in->ctab = (const double *)w->ctab.p;
  in->rtab = (const double *)w->rtab.p;
  in->acc = (double *)w->acc.p;
  return VICK_OK;
}

static int project(vick_call *call, sph_ws *w, const vick_sph_frame *f, sph_in *in) {
  const int64_t n = in->n;
  const int tiles_x = (f->nx + SPH_TILE - 1) / SPH_TILE, tiles_y = (f->ny + SPH_TILE - 1) / SPH_TILE;
  const int64_t tiles = (int64_t)tiles_x * tiles_y, nkeys = 2 * tiles;
  if (nkeys >= ((int64_t)1 << 31)) return vick_fail(call, VICK_ARGUMENT, "SPH projection of %lld tiles is too large", (long long)tiles);
  cudaStream_t st = w->env.stream;
  VICK_TRY(vick_timer_start(call, &w->env));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->counts, (size_t)n * sizeof(int64_t), "tile counts"));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->offsets, (size_t)(n + 1) * sizeof(int64_t), "tile offsets"));
  sph_count<<<vick_blocks(n, SPH_THREADS), SPH_THREADS, 0, st>>>(*f, *in, (int64_t *)w->counts.p);
  VICK_LAUNCH(call, "sph_count");
  size_t tb = 0;
  VICK_CUDA(call, cub::DeviceScan::InclusiveSum(NULL, tb, (const int64_t *)w->counts.p, (int64_t *)w->offsets.p + 1, (int)n, st));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->tmp, tb, "scan workspace"));
  VICK_CUDA(call, cudaMemsetAsync(w->offsets.p, 0, sizeof(int64_t), st));
  VICK_CUDA(call, cub::DeviceScan::InclusiveSum(w->tmp.p, tb, (const int64_t *)w->counts.p, (int64_t *)w->offsets.p + 1, (int)n, st));
  vick_buf_free(&w->env, &w->tmp);
  int64_t total = 0;
  VICK_CUDA(call, cudaMemcpyAsync(&total, (int64_t *)w->offsets.p + n, sizeof total, cudaMemcpyDeviceToHost, st));
  VICK_CUDA(call, cudaStreamSynchronize(st));
  vick_buf_free(&w->env, &w->counts);
  if (total >= ((int64_t)1 << 31))
    return vick_fail(call, VICK_NOMEM, "SPH projection: %lld particle-tile pairs, over the 2^31 of one sort; lower the resolution",
                     (long long)total);
  if (total == 0) return vick_timer_stop(call, &w->env, &call->seconds_kernel, "bin");
  for (int b = 0; b < 2; ++b) {
    VICK_TRY(vick_buf_alloc(call, &w->env, &w->keys[b], (size_t)total * sizeof(uint32_t), "tile keys"));
    VICK_TRY(vick_buf_alloc(call, &w->env, &w->vals[b], (size_t)total * sizeof(uint64_t), "tile entries"));
  }
  sph_fill<<<vick_blocks(n, SPH_THREADS), SPH_THREADS, 0, st>>>(*f, *in, (const int64_t *)w->offsets.p, tiles_x,
                                                                 (uint32_t *)w->keys[0].p, (uint64_t *)w->vals[0].p);
  VICK_LAUNCH(call, "sph_fill");
  vick_buf_free(&w->env, &w->offsets);
  VICK_TRY(vick_timer_stop(call, &w->env, &call->seconds_kernel, "bin"));
  VICK_TRY(vick_poll(call, "sph map", 0.3));

  VICK_TRY(vick_timer_start(call, &w->env));
  int bits = 1;
  while (((int64_t)1 << bits) <= nkeys) ++bits;
  cub::DoubleBuffer<uint32_t> dk((uint32_t *)w->keys[0].p, (uint32_t *)w->keys[1].p);
  cub::DoubleBuffer<uint64_t> dv((uint64_t *)w->vals[0].p, (uint64_t *)w->vals[1].p);
  tb = 0;
  VICK_CUDA(call, cub::DeviceRadixSort::SortPairs(NULL, tb, dk, dv, (int)total, 0, bits, st));
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->tmp, tb, "sort workspace"));
  VICK_CUDA(call, cub::DeviceRadixSort::SortPairs(w->tmp.p, tb, dk, dv, (int)total, 0, bits, st));
  vick_buf_free(&w->env, &w->tmp);
  VICK_TRY(vick_buf_alloc(call, &w->env, &w->bounds, (size_t)(nkeys + 1) * sizeof(int64_t), "tile bounds"));
  sph_bounds<<<vick_blocks(nkeys + 1, SPH_THREADS), SPH_THREADS, 0, st>>>(dk.Current(), total, nkeys, (int64_t *)w->bounds.p);
  VICK_LAUNCH(call, "sph_bounds");
  int64_t *bounds = (int64_t *)malloc((size_t)(nkeys + 1) * sizeof(int64_t));
  if (!bounds) return vick_fail(call, VICK_NOMEM, "no host memory for %lld tile bounds", (long long)nkeys);
  cudaError_t ce = cudaMemcpyAsync(bounds, w->bounds.p, (size_t)(nkeys + 1) * sizeof(int64_t), cudaMemcpyDeviceToHost, st);
  if (ce == cudaSuccess) ce = cudaStreamSynchronize(st);
  if (ce != cudaSuccess) { free(bounds); return vick_cuda_fail(call, ce, "tile bounds to the host", __FILE__, __LINE__); }
  VICK_TRY(vick_timer_stop(call, &w->env, &call->seconds_kernel, "sort"));
  /* chunks: a tile's small list by SPH_CHUNK_SMALL entries, its large one by SPH_CHUNK_LARGE */
  int64_t nchunks = 0;
  for (int64_t k = 0; k < nkeys; ++k) {
    const int64_t len = bounds[k + 1] - bounds[k], per = (k & 1) ? SPH_CHUNK_LARGE : SPH_CHUNK_SMALL;
    nchunks += (len + per - 1) / per;
  }
  sph_chunk *chunks = (sph_chunk *)malloc((size_t)(nchunks ? nchunks : 1) * sizeof *chunks);
  if (!chunks) { free(bounds); return vick_fail(call, VICK_NOMEM, "no host memory for %lld chunks", (long long)nchunks); }
  int64_t q = 0;
  for (int64_t k = 0; k < nkeys; ++k) {
    const int64_t per = (k & 1) ? SPH_CHUNK_LARGE : SPH_CHUNK_SMALL;
    for (int64_t b = bounds[k]; b < bounds[k + 1]; b += per) {
      chunks[q].tile = (int32_t)(k / 2);
      chunks[q].large = (int32_t)(k & 1);
      chunks[q].begin = b;
      chunks[q].end = b + per < bounds[k + 1] ? b + per : bounds[k + 1];
      ++q;
    }
  }
  free(bounds);
  int rc = vick_buf_alloc(call, &w->env, &w->chunks, (size_t)nchunks * sizeof *chunks, "tile chunks");
  if (rc == VICK_OK) rc = vick_copy_to_device(call, &w->env, w->chunks.p, chunks, (size_t)nchunks * sizeof *chunks);
  if (rc == VICK_OK) {
    ce = cudaStreamSynchronize(st); /* the host chunk list is freed next */
    if (ce != cudaSuccess) rc = vick_cuda_fail(call, ce, "chunk upload", __FILE__, __LINE__);
  }
  free(chunks);
  VICK_TRY(rc);
  VICK_TRY(vick_poll(call, "sph map", 0.5));

  VICK_TRY(vick_timer_start(call, &w->env));
  const int nch_all = 1 + in->n_arrays;
  for (int ch0 = 0; ch0 < nch_all; ch0 += SPH_PASS_CHANNELS) {
    const int nch = nch_all - ch0 < SPH_PASS_CHANNELS ? nch_all - ch0 : SPH_PASS_CHANNELS;
    const size_t shm = (SPH_TILE + 1) * (SPH_TILE + 1) * sizeof(double) + (size_t)nch * SPH_TILE * SPH_TILE * sizeof(float);
    VICK_CUDA(call, cudaFuncSetAttribute(sph_tile_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shm));
    for (int64_t c0 = 0; c0 < nchunks; c0 += 0x7fffffff) {
      const unsigned blocks = (unsigned)(nchunks - c0 < 0x7fffffff ? nchunks - c0 : 0x7fffffff);
      sph_tile_kernel<<<blocks, SPH_THREADS, shm, st>>>(*f, *in, dv.Current(), (const sph_chunk *)w->chunks.p + c0,
                                                         tiles_x, ch0, nch);
      VICK_LAUNCH(call, "sph_tile_kernel");
    }
  }
  (void)tiles_y;
  return vick_timer_stop(call, &w->env, &call->seconds_kernel, "deposit");
}

static int run(vick_call *call, sph_ws *w, const vick_sph_frame *f, const float *rows, int64_t n, int64_t stride,
               const float *h, const float *mass, int n_arrays, const float *const *arrays, const double *ctab,
               const double *rtab, double *acc) {
  sph_in in;
  memset(&in, 0, sizeof in);
  in.n = n;
  in.stride = stride;
  in.n_arrays = n_arrays;
  in.cells = (int64_t)f->nx * f->ny * f->nz;
  VICK_TRY(upload(call, w, f, &in, rows, stride, h, mass, n_arrays, arrays, ctab, rtab));
  VICK_TRY(vick_poll(call, "sph map", 0.1));
  if (f->mode == VICK_SPH_PROJECTION) {
    VICK_TRY(project(call, w, f, &in));
  } else {
    VICK_TRY(vick_timer_start(call, &w->env));
    sph_direct<<<vick_blocks(n, SPH_THREADS), SPH_THREADS, 0, w->env.stream>>>(*f, in);
    VICK_LAUNCH(call, "sph_direct");
    VICK_TRY(vick_timer_stop(call, &w->env, &call->seconds_kernel, "deposit"));
  }
  VICK_TRY(vick_copy_to_host(call, &w->env, acc, in.acc, (size_t)(1 + n_arrays) * in.cells * sizeof(double)));
  return vick_poll(call, "sph map", 0.95);
}

extern "C" int vick_sph_deposit(vick_call *call, const vick_sph_frame *f, const float *rows, int64_t n, int64_t stride,
                                const float *h, const float *mass, int n_arrays, const float *const *arrays,
                                const double *ctab, const double *rtab, double *acc) {
  sph_ws w;
  memset(&w, 0, sizeof w);
  int rc = vick_begin(call, &w.env);
  if (rc == VICK_OK) rc = run(call, &w, f, rows, n, stride, h, mass, n_arrays, arrays, ctab, rtab, acc);
  ws_free(&w);
  return vick_end(call, &w.env, rc);
}
