// The GGNN query cache (paper Sec. 4.1.1, Alg. 1-2) for one warp: a sorted
// best list, a distance-sorted priority-queue ring buffer and a FIFO
// visited ring buffer, all in shared memory and maintained in parallel by
// the 32 lanes.  Every lane holds the same copy of the scalar state (sizes,
// heads) in registers, so no block-wide barrier is needed: one warp = one
// query, packed several to a block for occupancy.
//
// Device functions only (no kernels), so every .cu that includes this
// instantiates what it launches (CUDA 13's static template stubs).
#ifndef VIC_GGNN_CACHE_CUH
#define VIC_GGNN_CACHE_CUH

#include <stdint.h>

#define GGNN_FULL 0xffffffffu
// Longest candidate list of one fetch: a graph row (k <= 96) or a chunk of start points.
#define GGNN_MAX_FETCH 96

__device__ __forceinline__ bool ggnn_before(float da, int32_t ia, float db, int32_t ib) {
  return da < db || (da == db && ia < ib);
}

struct ggnn_cache {
  int32_t *best_id;
  float *best_d;
  int32_t *pq_id;
  float *pq_d;
  int32_t *vis;
  int32_t *cand, *tid, *tbase;  // fetch scratch
  float *td, *td2;
  float *qv, *ev;                // query vector; SYM: e = x_i - z
  int bcap, bcount;
  int pcap, phead, pcount;       // pcap is a power of two
  int vcap, vhead, vcount;
};

// Bytes of one warp's slab: vectors first (16-byte aligned for float4).
__host__ __device__ static inline size_t ggnn_slab_bytes(int d, bool sym, int bcap, int pcap, int vcap) {
  size_t d4 = ((size_t)d + 3) / 4 * 4;
  size_t words = d4 * (sym ? 2 : 1) + 2 * (size_t)bcap + 2 * (size_t)pcap + (size_t)vcap + 5 * GGNN_MAX_FETCH;
  return (words * 4 + 15) / 16 * 16;
}

__device__ static inline void ggnn_cache_init(ggnn_cache &c, char *slab, int d, bool sym, int bcap, int pcap,
                                              int vcap) {
  size_t d4 = ((size_t)d + 3) / 4 * 4;
  float *f = (float *)slab;
  c.qv = f;
  f += d4;
  c.ev = sym ? f : nullptr;
  if (sym) f += d4;
  c.best_id = (int32_t *)f;
  c.best_d = f + bcap;
  c.pq_id = (int32_t *)(f + 2 * bcap);
  c.pq_d = f + 2 * bcap + pcap;
  c.vis = (int32_t *)(f + 2 * bcap + 2 * pcap);
  int32_t *s = c.vis + vcap;
  c.cand = s;
  c.tid = s + GGNN_MAX_FETCH;
  c.tbase = s + 2 * GGNN_MAX_FETCH;
  c.td = (float *)(s + 3 * GGNN_MAX_FETCH);
  c.td2 = (float *)(s + 4 * GGNN_MAX_FETCH);
  c.bcap = bcap;
  c.pcap = pcap;
  c.vcap = vcap;
  c.bcount = c.pcount = c.vcount = 0;
  c.phead = c.vhead = 0;
  const int lane = threadIdx.x & 31;
  for (int j = lane; j < pcap; j += 32) c.pq_id[j] = -1;
  __syncwarp();
}

// Forget what was queued and visited (layer switch of the hierarchical query).
__device__ static inline void ggnn_cache_reset_queues(ggnn_cache &c) {
  const int lane = threadIdx.x & 31;
  for (int j = lane; j < c.pcap; j += 32) c.pq_id[j] = -1;
  __syncwarp();
  c.pcount = c.phead = 0;
  c.vcount = c.vhead = 0;
}

// Insert into an ascending list (ids, ds) of count entries and capacity cap.
// All lanes call with the same arguments; the worst entry falls off when full.
__device__ static inline void ggnn_list_insert(int32_t *ids, float *ds, int cap, int &count, int32_t id, float d) {
  const int lane = threadIdx.x & 31;
  int pos = 0;
  for (int b = 0; b < count; b += 32) {
    int j = b + lane;
    bool less = j < count && ggnn_before(ds[j], ids[j], d, id);
    pos += __popc(__ballot_sync(GGNN_FULL, less));
  }
  if (pos >= cap) return;
  if (pos < count && ids[pos] == id) return;  // already there (same id implies same distance)
  int nc = count < cap ? count + 1 : cap;
  for (int hi = nc - 1; hi > pos; hi -= 32) {
    int j = hi - lane;
    bool mv = j > pos;
    int32_t vi = mv ? ids[j - 1] : 0;
    float vd = mv ? ds[j - 1] : 0.f;
    __syncwarp();
    if (mv) { ids[j] = vi; ds[j] = vd; }
    __syncwarp();
  }
  if (lane == 0) { ids[pos] = id; ds[pos] = d; }
  __syncwarp();
  count = nc;
}

// The same for the priority queue, a ring whose logical slot j is physical (head + j) & (cap-1).
__device__ static inline void ggnn_ring_insert(int32_t *ids, float *ds, int cap, int head, int &count, int32_t id,
                                               float d) {
  const int lane = threadIdx.x & 31;
  const int mask = cap - 1;
  int pos = 0;
  for (int b = 0; b < count; b += 32) {
    int j = b + lane;
    int p = (head + j) & mask;
    bool less = j < count && ggnn_before(ds[p], ids[p], d, id);
    pos += __popc(__ballot_sync(GGNN_FULL, less));
  }
  if (pos >= cap) return;
  if (pos < count && ids[(head + pos) & mask] == id) return;
  int nc = count < cap ? count + 1 : cap;
  for (int hi = nc - 1; hi > pos; hi -= 32) {
    int j = hi - lane;
    bool mv = j > pos;
    int pj = (head + j) & mask, ps = (head + j - 1) & mask;
    int32_t vi = mv ? ids[ps] : 0;
    float vd = mv ? ds[ps] : 0.f;
    __syncwarp();
    if (mv) { ids[pj] = vi; ds[pj] = vd; }
    __syncwarp();
  }
  if (lane == 0) { ids[(head + pos) & mask] = id; ds[(head + pos) & mask] = d; }
  __syncwarp();
  count = nc;
}

// Remove id from an ascending list if present (the query point itself).
__device__ static inline void ggnn_list_remove(int32_t *ids, float *ds, int &count, int32_t id) {
  const int lane = threadIdx.x & 31;
  int at = -1;
  for (int b = 0; b < count; b += 32) {
    int j = b + lane;
    unsigned m = __ballot_sync(GGNN_FULL, j < count && ids[j] == id);
    if (m && at < 0) at = b + __ffs(m) - 1;
  }
  if (at < 0) return;
  for (int lo = at; lo < count - 1; lo += 32) {
    int j = lo + lane;
    bool mv = j < count - 1;
    int32_t vi = mv ? ids[j + 1] : 0;
    float vd = mv ? ds[j + 1] : 0.f;
    __syncwarp();
    if (mv) { ids[j] = vi; ds[j] = vd; }
    __syncwarp();
  }
  count--;
}

// Stopping criterion (Eq. 2): a distance is worth keeping while
// d <= d_best_k + tau * min(d_best_1, d_nn1); +inf until best is full.
__device__ static inline float ggnn_bound(const ggnn_cache &c, float tau, float dnn1) {
  if (c.bcount < c.bcap) return __int_as_float(0x7f800000);
  float b1 = c.best_d[0];
  return c.best_d[c.bcap - 1] + tau * fminf(b1, dnn1);
}

// Pop the head of the priority queue if it satisfies d <= bound, moving it
// to the visited ring; -1 when the queue is empty or the criterion stops.
__device__ static inline int32_t ggnn_pop(ggnn_cache &c, float bound) {
  if (c.pcount == 0) return -1;
  int32_t id = c.pq_id[c.phead];
  float d = c.pq_d[c.phead];
  if (!(d <= bound)) return -1;
  __syncwarp();
  if ((threadIdx.x & 31) == 0) {
    c.pq_id[c.phead] = -1;
    c.vis[c.vhead] = id;
  }
  __syncwarp();
  c.phead = (c.phead + 1) & (c.pcap - 1);
  c.pcount--;
  c.vhead = c.vhead + 1 == c.vcap ? 0 : c.vhead + 1;
  c.vcount++;
  return id;
}

// Bit t set when candidate a[t] is already in best, prioq or visited.
__device__ static inline unsigned ggnn_known3(const ggnn_cache &c, int32_t a0, int32_t a1, int32_t a2) {
  unsigned m = 0;
  for (int j = 0; j < c.bcount; ++j) {
    int32_t v = c.best_id[j];
    m |= (v == a0) | ((v == a1) << 1) | ((v == a2) << 2);
  }
  const int mask = c.pcap - 1;
  for (int j = 0; j < c.pcount; ++j) {
    int32_t v = c.pq_id[(c.phead + j) & mask];
    m |= (v == a0) | ((v == a1) << 1) | ((v == a2) << 2);
  }
  int nv = c.vcount < c.vcap ? c.vcount : c.vcap;
  for (int j = 0; j < nv; ++j) {
    int32_t v = c.vis[j];
    m |= (v == a0) | ((v == a1) << 1) | ((v == a2) << 2);
  }
  return m;
}

// Lanes per candidate in the distance computation: enough lanes for
// coalesced float4 loads of a row, enough candidates for memory parallelism.
__device__ static inline int ggnn_team(int d) { return d >= 256 ? 16 : (d >= 64 ? 8 : 4); }

// Distances of the nt compacted candidates (rows tbase[]) to c.qv into td;
// SYM also the distance to the midpoint q_m = z + 0.4 (x_i - z) into td2,
// from the same pass: |p - q_m|^2 = |p - z|^2 - 0.8 (p - z).e + 0.16 |e|^2.
template <bool SYM>
__device__ static inline void ggnn_distances(ggnn_cache &c, int nt, const float *__restrict__ x, int d, float e2) {
  const int lane = threadIdx.x & 31;
  const int T = ggnn_team(d), teams = 32 / T, tm = lane / T, tl = lane % T;
  const bool vec = (d & 3) == 0;
  for (int r = 0; r < nt; r += teams) {
    int ci = r + tm;
    float acc = 0.f, acc_e = 0.f;
    if (ci < nt) {
      const float *p = x + (size_t)c.tbase[ci] * (size_t)d;
      if (vec) {
        for (int j = tl * 4; j < d; j += T * 4) {
          float4 a = __ldg((const float4 *)(p + j));
          float4 b = *(const float4 *)(c.qv + j);
          float t0 = a.x - b.x, t1 = a.y - b.y, t2 = a.z - b.z, t3 = a.w - b.w;
          acc += t0 * t0 + t1 * t1 + t2 * t2 + t3 * t3;
          if (SYM) {
            float4 e = *(const float4 *)(c.ev + j);
            acc_e += t0 * e.x + t1 * e.y + t2 * e.z + t3 * e.w;
          }
        }
      } else {
        for (int j = tl; j < d; j += T) {
          float t = __ldg(p + j) - c.qv[j];
          acc += t * t;
          if (SYM) acc_e += t * c.ev[j];
        }
      }
    }
    for (int off = T / 2; off > 0; off >>= 1) {
      acc += __shfl_xor_sync(GGNN_FULL, acc, off);
      if (SYM) acc_e += __shfl_xor_sync(GGNN_FULL, acc_e, off);
    }
    if (ci < nt && tl == 0) {
      c.td[ci] = sqrtf(acc);
      if (SYM) c.td2[ci] = sqrtf(fmaxf(0.f, acc - 0.8f * acc_e + 0.16f * e2));
    }
  }
  __syncwarp();
}

// Drop invalid, excluded and already known proposals of c.cand[0..ncand)
// and compact the rest into tid/tbase; returns how many remain.
__device__ static inline int ggnn_filter(ggnn_cache &c, int ncand, int32_t exclude, const int32_t *__restrict__ base) {
  const int lane = threadIdx.x & 31;
  int32_t a[3];
#pragma unroll
  for (int t = 0; t < 3; ++t) {
    int j = lane + 32 * t;
    a[t] = j < ncand ? c.cand[j] : -1;
    if (a[t] == exclude) a[t] = -1;
  }
  unsigned known = ggnn_known3(c, a[0], a[1], a[2]);
  int nt = 0;
  const unsigned lt = (1u << lane) - 1u;
#pragma unroll
  for (int t = 0; t < 3; ++t) {
    bool keep = a[t] >= 0 && !((known >> t) & 1u);
    unsigned bal = __ballot_sync(GGNN_FULL, keep);
    if (keep) {
      int at = nt + __popc(bal & lt);
      c.tid[at] = a[t];
      c.tbase[at] = base ? base[a[t]] : a[t];
    }
    nt += __popc(bal);
  }
  __syncwarp();
  return nt;
}

// fetch (Alg. 2) for a query: distances of new proposals, push those that
// satisfy the criterion into prioq, and into best when they improve it.
__device__ static inline void ggnn_fetch(ggnn_cache &c, int ncand, int32_t exclude, const int32_t *__restrict__ base,
                                         const float *__restrict__ x, int d, float tau, float dnn1) {
  int nt = ggnn_filter(c, ncand, exclude, base);
  if (nt == 0) return;
  ggnn_distances<false>(c, nt, x, d, 0.f);
  for (int i = 0; i < nt; ++i) {
    float dd = c.td[i];
    int32_t id = c.tid[i];
    if (!(dd <= ggnn_bound(c, tau, dnn1))) continue;
    ggnn_list_insert(c.best_id, c.best_d, c.bcap, c.bcount, id, dd);
    ggnn_ring_insert(c.pq_id, c.pq_d, c.pcap, c.phead, c.pcount, id, dd);
  }
}

// Load a graph row (or any id list) of len <= GGNN_MAX_FETCH into c.cand.
__device__ static inline void ggnn_load_cand(ggnn_cache &c, const int32_t *__restrict__ src, int len) {
  const int lane = threadIdx.x & 31;
  for (int j = lane; j < len; j += 32) c.cand[j] = src[j];
  __syncwarp();
}

// Alg. 1's loop: pop, fetch the neighbours, until the criterion stops it.
__device__ static inline void ggnn_search(ggnn_cache &c, const int32_t *__restrict__ graph, int k,
                                          const int32_t *__restrict__ base, const float *__restrict__ x, int d,
                                          float tau, float dnn1, int max_iter, int32_t exclude) {
  for (int it = 0; it < max_iter; ++it) {
    int32_t a = ggnn_pop(c, ggnn_bound(c, tau, dnn1));
    if (a < 0) break;
    ggnn_load_cand(c, graph + (size_t)a * k, k);
    ggnn_fetch(c, k, exclude, base, x, d, tau, dnn1);
  }
}

// Copy a vector of d floats into shared memory (the query, z, ...).
__device__ static inline void ggnn_load_vec(float *dst, const float *__restrict__ src, int d) {
  const int lane = threadIdx.x & 31;
  for (int j = lane; j < d; j += 32) dst[j] = src[j];
  __syncwarp();
}

#endif
