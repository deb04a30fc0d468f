// Deterministic slot assignment of the symmetric links (ggnn_sym with
// deterministic != 0).  The atomic version gives a point's k_sym slots to
// whichever warps reach it first, so two builds of the same data differ;
// sharded builds on 1 and on N GPUs must agree, so here the order is
// fixed: round j offers every open request its j-th candidate, a CUB sort
// of (point, request) groups the offers by point, and each point grants
// its free slots to the lowest request numbers.
#include "ggnn_steps.cuh"
#include "lower_bound.cuh"

#include <cub/device/device_radix_sort.cuh>

#define GGNN_NO_OFFER 0xffffffffffffffffull

__global__ void ggnn_k_offer(const int32_t *req, int rcap, int round, int64_t nreq, const uint8_t *done,
                             uint64_t *key, unsigned long long *open) {
  int64_t r = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= nreq) return;
  int32_t p = done[r] ? -1 : req[r * rcap + round];
  key[r] = p < 0 ? GGNN_NO_OFFER : ((uint64_t)(uint32_t)p << 32 | (uint64_t)r);
  if (p >= 0) atomicAdd(open, 1ull); /* a count: the same whatever the order */
}


// Grant: the offer at sorted position t is the (t - start)-th to point p.
__global__ void ggnn_k_grant(const uint64_t *key, int64_t nreq, int knn, int ksym, const int32_t *symcnt,
                             int32_t *sym, uint8_t *done) {
  int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= nreq || key[t] == GGNN_NO_OFFER) return;
  const int32_t p = (int32_t)(key[t] >> 32);
  const int64_t r = (int64_t)(key[t] & 0xffffffffu);
  const int64_t rank = t - vick_lower_bound(key, (int64_t)0, nreq, (uint64_t)(uint32_t)p << 32);
  const int used = symcnt[p];
  if (rank < ksym - used) {
    sym[(int64_t)p * ksym + used + rank] = (int32_t)(r / knn);
    done[r] = 1;
  }
}

// After the grants (which read the counts): the first offer of each point
// adds what was granted to its count.
__global__ void ggnn_k_count(const uint64_t *key, int64_t nreq, int ksym, int32_t *symcnt) {
  int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= nreq || key[t] == GGNN_NO_OFFER) return;
  const uint32_t p = (uint32_t)(key[t] >> 32);
  if (t > 0 && (uint32_t)(key[t - 1] >> 32) == p) return;
  const int64_t end = vick_lower_bound(key, (int64_t)0, nreq, (uint64_t)(p + 1) << 32);
  const int64_t want = symcnt[p] + (end - t);
  symcnt[p] = (int32_t)(want < ksym ? want : ksym);
}

struct ggnn_place_ws {
  vick_buf key, sorted, done, open, tmp;
};

static int ggnn_place_run(vick_call *call, vick_env *env, ggnn_place_ws *w, const int32_t *req, int rcap, int64_t n,
                          int knn, int ksym, int32_t *symcnt, int32_t *sym) {
  const int64_t nreq = n * knn;
  if (nreq >= ((int64_t)1 << 32))  // request numbers are 32-bit in the keys
    return vick_fail(call, VICK_ARGUMENT, "GGNN: %lld link requests exceed 2^32", (long long)nreq);
  const unsigned blocks = (unsigned)((nreq + 255) / 256);
  const int end_bit = 64;
  size_t tmp_bytes = 0;
  VICK_TRY(vick_buf_alloc(call, env, &w->key, nreq * sizeof(uint64_t), "GGNN link offers"));
  VICK_TRY(vick_buf_alloc(call, env, &w->sorted, nreq * sizeof(uint64_t), "GGNN link offers"));
  VICK_TRY(vick_buf_alloc(call, env, &w->done, nreq, "GGNN link flags"));
  VICK_TRY(vick_buf_alloc(call, env, &w->open, sizeof(unsigned long long), "GGNN link counter"));
  uint64_t *key = (uint64_t *)w->key.p, *sorted = (uint64_t *)w->sorted.p;
  uint8_t *done = (uint8_t *)w->done.p;
  unsigned long long *open = (unsigned long long *)w->open.p;
  VICK_CUDA(call, cudaMemset(done, 0, nreq));
  VICK_CUDA(call, cub::DeviceRadixSort::SortKeys(nullptr, tmp_bytes, key, sorted, nreq, 0, end_bit));
  VICK_TRY(vick_buf_alloc(call, env, &w->tmp, tmp_bytes, "GGNN sort temporaries"));
  for (int round = 0; round < rcap; ++round) {
    unsigned long long open_h = 0;
    VICK_CUDA(call, cudaMemset(open, 0, sizeof *open));
    ggnn_k_offer<<<blocks, 256>>>(req, rcap, round, nreq, done, key, open);
    VICK_LAUNCH(call, "ggnn_k_offer");
    VICK_CUDA(call, cudaMemcpy(&open_h, open, sizeof open_h, cudaMemcpyDeviceToHost));
    if (open_h == 0) break;
    size_t b = tmp_bytes;
    VICK_CUDA(call, cub::DeviceRadixSort::SortKeys(w->tmp.p, b, key, sorted, nreq, 0, end_bit));
    ggnn_k_grant<<<blocks, 256>>>(sorted, nreq, knn, ksym, symcnt, sym, done);
    VICK_LAUNCH(call, "ggnn_k_grant");
    ggnn_k_count<<<blocks, 256>>>(sorted, nreq, ksym, symcnt);
    VICK_LAUNCH(call, "ggnn_k_count");
  }
  return VICK_OK;
}

int ggnn_sym_place(vick_call *call, vick_env *env, const int32_t *req, int rcap, int64_t n, int knn, int ksym,
                   int32_t *symcnt, int32_t *sym) {
  ggnn_place_ws w = {};
  int rc = ggnn_place_run(call, env, &w, req, rcap, n, knn, ksym, symcnt, sym);
  vick_buf *b[] = {&w.key, &w.sorted, &w.done, &w.open, &w.tmp};
  for (size_t i = 0; i < sizeof b / sizeof b[0]; ++i) vick_buf_free(env, b[i]);
  return rc;
}
