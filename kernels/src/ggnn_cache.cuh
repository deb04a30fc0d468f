// The GGNN query cache (paper Sec. 4.1.1, Alg. 1-2) for one warp: a sorted
// best list, a distance-sorted priority-queue ring buffer and a FIFO
// visited ring buffer, all in shared memory and maintained in parallel by
// the 32 lanes.  Every lane holds the same copy of the scalar state (sizes,
// heads) in registers, so no block-wide barrier is needed: one warp = one
// query, packed several to a block for occupancy.  Beside the paper's
// three lists the slab holds a hash set of the ids already computed
// (prims/visited.cuh), which answers the duplicate check, and a 32-entry
// batch buffer for parallel insertion (ggnn_batch.cuh).
//
// The hash set replaces one serial scan of best, prioq and the visited ring
// per lane and fetch (the cost that dominated both the build and the
// queries) by one or two probes per candidate.  A computed id that was not
// kept stays in the set as well: the stopping bound only tightens, so it
// could never qualify again and its distance is not worth recomputing.
// When the set would pass half full it is rebuilt from best, prioq and the
// newest visited points, so it always holds every id of best and prioq (no
// id enters either twice) and the visited ring keeps its FIFO role.
//
// Device functions only (no kernels), so every .cu that includes this
// instantiates what it launches (CUDA 13's static template stubs).
#ifndef VIC_GGNN_CACHE_CUH
#define VIC_GGNN_CACHE_CUH

#include <stdint.h>

#include "ggnn_batch.cuh"
#include "prims/dist.cuh"
#include "prims/visited.cuh"
#include "prims/warp.cuh"

#define GGNN_FULL VICK_FULL_MASK

// Sizes of one warp's cache, chosen on the host (appendix C, Table 6).
struct ggnn_dims {
  int bcap;   // best list
  int pcap;   // prioq ring, a power of two
  int vcap;   // visited ring
  int hbits;  // hash set of 2^hbits ids
  int fcap;   // longest candidate list of one fetch (rows per step x k), a multiple of 32
};

struct ggnn_cache {
  int32_t *best_id;
  float *best_d;
  int32_t *pq_id;
  float *pq_d;
  int32_t *vis;
  int32_t *hs;                   // hash set (prims/visited.cuh)
  int32_t *cand, *tid, *tbase;   // fetch scratch, fcap each
  float *td, *td2;               // td2: sym only
  int32_t *bat_id;               // sorted batch, 32
  float *bat_d;
  float *qv, *ev;                // query vector; SYM: e = x_i - z
  int bcap, bcount;
  int pcap, phead, pcount;
  int vcap, vhead, vcount;
  int hbits, hcount;
  int fcap;
};

// Smallest hash set (log2) that keeps ggnn_hash_rebuild's guarantee: best +
// prioq fill at most a quarter of it, and so does one fetch; at least
// 2^min_bits so that the computed-but-rejected ids are remembered a while.
__host__ __device__ static inline int ggnn_hash_bits(const ggnn_dims &m, int min_bits) {
  int b = min_bits;
  while ((1 << b) < 4 * (m.bcap + m.pcap) || (1 << b) < 4 * m.fcap) b++;
  return b;
}

// Bytes of one warp's slab: vectors first (16-byte aligned for float4).
__host__ __device__ static inline size_t ggnn_slab_bytes(int d, bool sym, ggnn_dims m) {
  size_t d4 = ((size_t)d + 3) / 4 * 4;
  size_t words = d4 * (sym ? 2 : 1) + 2 * (size_t)m.bcap + 2 * (size_t)m.pcap + (size_t)m.vcap +
                 ((size_t)1 << m.hbits) + (sym ? 5 : 4) * (size_t)m.fcap + 64;
  return (words * 4 + 15) / 16 * 16;
}

__device__ static inline void ggnn_hash_clear(ggnn_cache &c) {
  const int lane = threadIdx.x & 31;
  vick_visited_clear(c.hs, c.hbits, lane);
  __syncwarp();
  c.hcount = 0;
}

__device__ static inline void ggnn_cache_init(ggnn_cache &c, char *slab, int d, bool sym, ggnn_dims m) {
  size_t d4 = ((size_t)d + 3) / 4 * 4;
  float *f = (float *)slab;
  c.qv = f;
  f += d4;
  c.ev = sym ? f : nullptr;
  if (sym) f += d4;
  c.best_id = (int32_t *)f;
  c.best_d = f + m.bcap;
  c.pq_id = (int32_t *)(f + 2 * m.bcap);
  c.pq_d = f + 2 * m.bcap + m.pcap;
  c.vis = (int32_t *)(f + 2 * m.bcap + 2 * m.pcap);
  c.hs = c.vis + m.vcap;
  int32_t *s = c.hs + (1 << m.hbits);
  c.cand = s;
  c.tid = s + m.fcap;
  c.tbase = s + 2 * m.fcap;
  c.td = (float *)(s + 3 * m.fcap);
  // td2 (distances to the midpoint) only for sym's searches
  c.td2 = sym ? (float *)(s + 4 * m.fcap) : nullptr;
  s += (sym ? 5 : 4) * m.fcap;
  c.bat_id = s;
  c.bat_d = (float *)(s + 32);
  c.bcap = m.bcap;
  c.pcap = m.pcap;
  c.vcap = m.vcap;
  c.hbits = m.hbits;
  c.fcap = m.fcap;
  c.bcount = c.pcount = c.vcount = 0;
  c.phead = c.vhead = 0;
  ggnn_hash_clear(c);
}

// Refill the hash set with best, prioq and the newest visited points (as
// many as keep it at most a quarter full), forgetting what was only
// computed.  Needed before it would pass half full, and after the lists
// were changed behind its back (layer switch, a new sym search).
__device__ static inline void ggnn_hash_rebuild(ggnn_cache &c) {
  const int lane = threadIdx.x & 31;
  ggnn_hash_clear(c);
  int added = 0;
  for (int j = lane; j < c.bcount; j += 32) added += vick_visited_add(c.hs, c.hbits, c.best_id[j]);
  const int mask = c.pcap - 1;
  for (int j = lane; j < c.pcount; j += 32) added += vick_visited_add(c.hs, c.hbits, c.pq_id[(c.phead + j) & mask]);
  int nv = c.vcount < c.vcap ? c.vcount : c.vcap;
  int room = (1 << c.hbits) / 4 - c.bcount - c.pcount;
  if (nv > room) nv = room > 0 ? room : 0;
  for (int j = lane; j < nv; j += 32) {
    int p = c.vhead - 1 - j;  // newest first
    if (p < 0) p += c.vcap;
    added += vick_visited_add(c.hs, c.hbits, c.vis[p]);
  }
  __syncwarp();
  c.hcount = vick_warp_sum(added);
}

// Forget what was queued and visited (layer switch, a new sym search); the
// caller refills the lists and then rebuilds the hash set.
__device__ static inline void ggnn_cache_reset_queues(ggnn_cache &c) {
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
    bool less = j < count && vick_before(ds[j], ids[j], d, id);
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
    bool less = j < count && vick_before(ds[p], ids[p], d, id);
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

// Lanes per candidate in the distance computation: enough lanes for
// coalesced float4 loads of a row, enough candidates for memory parallelism.
__device__ static inline int ggnn_team(int d) { return d >= 256 ? 16 : (d >= 64 ? 8 : 4); }

// Candidates one team carries per round of ggnn_distances: their row
// loads are all in flight before the first reduction waits on them (more
// candidates cost registers, and the lost occupancy more than they save).
#ifndef GGNN_DIST_ILP
#define GGNN_DIST_ILP 2
#endif

// Distances of the nt compacted candidates (rows tbase[]) to c.qv into td;
// SYM also the distance to the midpoint q_m = z + 0.4 (x_i - z) into td2,
// from the same pass: |p - q_m|^2 = |p - z|^2 - 0.8 (p - z).e + 0.16 |e|^2.
template <bool SYM>
__device__ static inline void ggnn_distances(ggnn_cache &c, int nt, const float *__restrict__ x, int d, float e2) {
  constexpr int NC = GGNN_DIST_ILP;
  const int lane = threadIdx.x & 31;
  const int T = ggnn_team(d), teams = 32 / T, tm = lane / T, tl = lane % T;
  const bool vec = (d & 3) == 0;
  for (int r = 0; r < nt; r += NC * teams) {
    const float *p[NC];
    float acc[NC], ace[NC];
#pragma unroll
    for (int u = 0; u < NC; ++u) {
      int ci = r + u * teams + tm;
      // a lane past the end reads row tbase[0] (valid, cached) and discards it
      p[u] = x + (size_t)c.tbase[ci < nt ? ci : 0] * (size_t)d;
      acc[u] = ace[u] = 0.f;
    }
    if (vec) {
      for (int j = tl * 4; j < d; j += T * 4) {
        float4 v[NC];
#pragma unroll
        for (int u = 0; u < NC; ++u) v[u] = __ldg((const float4 *)(p[u] + j));
        float4 b = *(const float4 *)(c.qv + j);
        float4 e = SYM ? *(const float4 *)(c.ev + j) : b;
#pragma unroll
        for (int u = 0; u < NC; ++u) {
          acc[u] += vick_sq4(v[u], b);
          if (SYM) ace[u] += (v[u].x - b.x) * e.x + (v[u].y - b.y) * e.y + (v[u].z - b.z) * e.z + (v[u].w - b.w) * e.w;
        }
      }
    } else {
      for (int j = tl; j < d; j += T) {
#pragma unroll
        for (int u = 0; u < NC; ++u) {
          float s = __ldg(p[u] + j) - c.qv[j];
          acc[u] += s * s;
          if (SYM) ace[u] += s * c.ev[j];
        }
      }
    }
#pragma unroll
    for (int u = 0; u < NC; ++u) {
      acc[u] = vick_group_sum(acc[u], T);
      if (SYM) ace[u] = vick_group_sum(ace[u], T);
      int ci = r + u * teams + tm;
      if (tl == 0 && ci < nt) {
        c.td[ci] = sqrtf(acc[u]);
        if (SYM) c.td2[ci] = sqrtf(fmaxf(0.f, acc[u] - 0.8f * ace[u] + 0.16f * e2));
      }
    }
  }
  __syncwarp();
}

// Drop invalid, excluded and already computed proposals of c.cand[0..ncand)
// (ncand <= fcap) and compact the rest into tid/tbase; returns how many.
__device__ static inline int ggnn_filter(ggnn_cache &c, int ncand, int32_t exclude, const int32_t *__restrict__ base) {
  const int lane = threadIdx.x & 31;
  if (c.hcount + ncand > (1 << c.hbits) / 2) ggnn_hash_rebuild(c);
  int nt = 0;
  const unsigned lt = (1u << lane) - 1u;
  for (int b = 0; b < ncand; b += 32) {
    int j = b + lane;
    int32_t a = j < ncand ? c.cand[j] : -1;
    bool keep = a >= 0 && a != exclude && vick_visited_add(c.hs, c.hbits, a);
    unsigned bal = __ballot_sync(GGNN_FULL, keep);
    if (keep) {
      int at = nt + __popc(bal & lt);
      c.tid[at] = a;
      c.tbase[at] = base ? base[a] : a;
    }
    nt += __popc(bal);
  }
  c.hcount += nt;
  __syncwarp();
  return nt;
}

// fetch (Alg. 2) for a query: distances of new proposals, then those that
// satisfy the criterion go into best and prioq together, 32 at a time
// (the bound is taken once per batch, so a batch may admit a little more
// than one-by-one insertion would; best and prioq stay exact).
__device__ static inline void ggnn_fetch(ggnn_cache &c, int ncand, int32_t exclude, const int32_t *__restrict__ base,
                                         const float *__restrict__ x, int d, float tau, float dnn1) {
  const int lane = threadIdx.x & 31;
  int nt = ggnn_filter(c, ncand, exclude, base);
  if (nt == 0) return;
  ggnn_distances<false>(c, nt, x, d, 0.f);
  for (int r = 0; r < nt; r += 32) {
    const float bound = ggnn_bound(c, tau, dnn1);
    int32_t id = -1;
    float dd = __int_as_float(0x7f800000);
    if (r + lane < nt) {
      dd = c.td[r + lane];
      if (dd <= bound) id = c.tid[r + lane];
    }
    int nb = ggnn_batch_sort(id, dd, c.bat_id, c.bat_d);
    if (nb == 0) continue;
    ggnn_batch_merge<false>(c.best_id, c.best_d, c.bcap, 0, c.bcount, nb, id, dd, c.bat_id, c.bat_d);
    ggnn_batch_merge<true>(c.pq_id, c.pq_d, c.pcap, c.phead, c.pcount, nb, id, dd, c.bat_id, c.bat_d);
  }
}

// Load a graph row (or any id list) of len <= fcap into c.cand.
__device__ static inline void ggnn_load_cand(ggnn_cache &c, const int32_t *__restrict__ src, int len) {
  const int lane = threadIdx.x & 31;
  for (int j = lane; j < len; j += 32) c.cand[j] = src[j];
  __syncwarp();
}

// Alg. 1's loop: pop, fetch the neighbours, until the criterion stops it.
// WIDTH > 1 pops up to WIDTH points under the same bound and fetches their
// rows as one candidate list (fcap >= WIDTH * k): the rows, the distance
// loads and the batch insertion of several pops share one wait each, which
// is what a latency-bound query pays for; max_iter still counts pops.
template <int WIDTH>
__device__ static inline void ggnn_search(ggnn_cache &c, const int32_t *__restrict__ graph, int k,
                                          const int32_t *__restrict__ base, const float *__restrict__ x, int d,
                                          float tau, float dnn1, int max_iter, int32_t exclude) {
  const int lane = threadIdx.x & 31;
  for (int it = 0; it < max_iter; it += WIDTH) {
    const float bound = ggnn_bound(c, tau, dnn1);
    int32_t a[WIDTH];
    int na = 0;
#pragma unroll
    for (int w = 0; w < WIDTH; ++w) {
      a[w] = na == w ? ggnn_pop(c, bound) : -1;
      na += a[w] >= 0;
    }
    if (na == 0) break;
    const int n = na * k;
    for (int j = lane; j < n; j += 32) {
      int w = j / k;
      int32_t row = a[0];
#pragma unroll
      for (int t = 1; t < WIDTH; ++t) row = w == t ? a[t] : row;
      c.cand[j] = graph[(size_t)row * k + (j - w * k)];
    }
    __syncwarp();
    ggnn_fetch(c, n, exclude, base, x, d, tau, dnn1);
  }
}

// Copy a vector of d floats into shared memory (the query, z, ...).
__device__ static inline void ggnn_load_vec(float *dst, const float *__restrict__ src, int d) {
  const int lane = threadIdx.x & 31;
  for (int j = lane; j < d; j += 32) dst[j] = src[j];
  __syncwarp();
}

#endif
