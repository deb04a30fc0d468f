/* Several GPUs, the parts that need none: the device-count option and its
 * messages, the shard-to-device mapping, and the k-way merge of shard
 * lists against a sort of their union.  Runs in CI. */
#include "device_set.h"
#include "test_util.h"
#include "topk_merge.h"

#include <math.h>
#include <string.h>

static void test_device_set(void) {
  char msg[256];
  int n = -7;
  VT_CHECK(vic__device_set(0, 1, 2, &n, msg, sizeof msg) == VIC_OK && n == 1, "one device of two: %d", n);
  VT_CHECK(vic__device_set(0, 0, 2, &n, msg, sizeof msg) == VIC_OK && n == 1, "0 reads as 1: %d", n);
  VT_CHECK(vic__device_set(0, 2, 2, &n, msg, sizeof msg) == VIC_OK && n == 2, "two of two: %d", n);
  VT_CHECK(vic__device_set(1, VIC_DEVICES_ALL, 4, &n, msg, sizeof msg) == VIC_OK && n == 3, "all from 1 of 4: %d", n);
  VT_CHECK(vic__device_set(0, VIC_DEVICES_ALL, 1, &n, msg, sizeof msg) == VIC_OK && n == 1, "all of one: %d", n);

  /* more than present: the message names both numbers */
  VT_CHECK(vic__device_set(0, 3, 2, &n, msg, sizeof msg) == VIC_E_NODEVICE && n == 0, "3 of 2 accepted");
  VT_CHECK(strstr(msg, "3 CUDA devices") && strstr(msg, "has 2"), "message: %s", msg);
  VT_CHECK(vic__device_set(1, 2, 2, &n, msg, sizeof msg) == VIC_E_NODEVICE, "2 from device 1 of 2 accepted");
  VT_CHECK(strstr(msg, "2 CUDA devices") && strstr(msg, "device 1") && strstr(msg, "has 2"), "message: %s", msg);
  /* the chosen device absent, no device at all, a bad count */
  VT_CHECK(vic__device_set(2, 1, 2, &n, msg, sizeof msg) == VIC_E_NODEVICE && strstr(msg, "device 2"), "message: %s",
           msg);
  VT_CHECK(vic__device_set(0, 1, 0, &n, msg, sizeof msg) == VIC_E_NODEVICE && strstr(msg, "no CUDA device"),
           "message: %s", msg);
  VT_CHECK(vic__device_set(0, -2, 2, &n, msg, sizeof msg) == VIC_E_ARGUMENT && strstr(msg, "-2"), "message: %s", msg);

  /* shard s on device first + s mod count, the same rule for every count */
  VT_CHECK(vic__shard_device(0, 1, 5) == 0 && vic__shard_device(0, 2, 5) == 1 && vic__shard_device(1, 2, 4) == 1,
           "shard mapping");
}

static void test_context_option(void) {
  vic_ctx_options o;
  vic_ctx_options_init(&o);
  VT_CHECK(o.devices == 1, "default devices %d", o.devices);
  vic_ctx *c = NULL;
  o.devices = -2;
  VT_CHECK(vic_ctx_create(&o, &c) == VIC_E_ARGUMENT && !c, "devices = -2 accepted");
  o.devices = VIC_DEVICES_ALL;
  VT_CHECK(vic_ctx_create(&o, &c) == VIC_OK && c, "devices = all refused");
  vic_ctx_destroy(c);

  /* Asking the GPU for more devices than exist (here none, or a build
   * without CUDA) is refused with the no-device status and a message. */
  o.backend = VIC_BACKEND_CUDA;
  o.devices = 64;
  c = NULL;
  VT_OK(NULL, vic_ctx_create(&o, &c));
  float *x = vt_uniform(500, 3, 1.f, 3);
  vic_data d = {x, 500, 3, 0, VIC_L2, NULL};
  vic_build_options b;
  vic_build_options_init(&b);
  b.k = 8;
  vic_knn r;
  vic_status s = vic_knn_build(c, &d, &b, &r);
  if (vic_cuda_available(c)) {
    VT_CHECK(0, "a machine with 64 CUDA devices: this check assumes fewer");
  } else {
    VT_CHECK(s == VIC_E_NODEVICE, "status %s", vic_status_name(s));
    VT_CHECK(strlen(vic_ctx_error(c)) > 10, "message '%s'", vic_ctx_error(c));
  }
  vic_knn_free(&r);
  vic_ctx_destroy(c);
  free(x);
}

/* (distance, id) order of the merge's inputs and outputs */
static int before(float da, int64_t ia, float db, int64_t ib) { return da < db || (da == db && ia < ib); }

static int cmp_pair(const void *a, const void *b) {
  const float *pa = a, *pb = b;
  int64_t ia, ib;
  memcpy(&ia, pa + 2, sizeof ia);
  memcpy(&ib, pb + 2, sizeof ib);
  return before(pa[0], ia, pb[0], ib) ? -1 : before(pb[0], ib, pa[0], ia) ? 1 : 0;
}

/* Random ascending lists with shared distances (ties) and -1 tails; the
 * merge must equal the first k of the sorted union. */
static void test_merge(void) {
  enum { LISTS = 5, LEN = 12, K = 20 };
  uint64_t st = 12345;
  for (int trial = 0; trial < 200; ++trial) {
    int64_t ids[LISTS][LEN];
    float dist[LISTS][LEN];
    int32_t len[LISTS];
    float all[LISTS * LEN][4]; /* distance, pad, id as two floats' bytes */
    int total = 0;
    int lists = 1 + trial % LISTS;
    for (int t = 0; t < lists; ++t) {
      st = st * 6364136223846793005ull + 1442695040888963407ull;
      len[t] = LEN;
      int valid = (int)(st >> 33) % (LEN + 1);
      float dd[LEN];
      for (int u = 0; u < valid; ++u) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        dd[u] = (float)((st >> 40) % 16) * 0.25f; /* few values: many ties */
      }
      /* ascending by (distance, id): ids rise with u, unique across lists */
      for (int u = 0; u < valid; ++u)
        for (int v = u + 1; v < valid; ++v)
          if (dd[v] < dd[u]) { float tmp = dd[u]; dd[u] = dd[v]; dd[v] = tmp; }
      for (int u = 0; u < LEN; ++u) {
        ids[t][u] = u < valid ? (int64_t)(t + lists * u) : -1;
        dist[t][u] = u < valid ? dd[u] : INFINITY;
        if (u < valid) {
          all[total][0] = dd[u];
          memcpy(&all[total][2], &ids[t][u], sizeof(int64_t));
          total++;
        }
      }
    }
    /* the first list repeats one id of the second list at its distance:
     * kept once */
    if (lists > 1 && ids[1][0] >= 0 && ids[0][LEN - 1] < 0) {
      int u = 0;
      while (ids[0][u] >= 0 && before(dist[0][u], ids[0][u], dist[1][0], ids[1][0])) u++;
      for (int v = LEN - 1; v > u; --v) { ids[0][v] = ids[0][v - 1]; dist[0][v] = dist[0][v - 1]; }
      ids[0][u] = ids[1][0];
      dist[0][u] = dist[1][0];
    }
    qsort(all, (size_t)total, sizeof all[0], cmp_pair);
    const int64_t *li[LISTS];
    const float *ld[LISTS];
    for (int t = 0; t < lists; ++t) { li[t] = ids[t]; ld[t] = dist[t]; }
    int64_t oi[K];
    float od[K];
    vic__topk_merge_row(lists, li, ld, len, K, oi, od);
    for (int u = 0; u < K; ++u) {
      int64_t want = -1;
      float wd = INFINITY;
      if (u < total) {
        memcpy(&want, &all[u][2], sizeof want);
        wd = all[u][0];
      }
      VT_CHECK(oi[u] == want && (od[u] == wd || (isinf(od[u]) && isinf(wd))),
               "trial %d slot %d: got (%g, %lld) want (%g, %lld)", trial, u, od[u], (long long)oi[u], wd,
               (long long)want);
    }
  }
}

int main(void) {
  test_device_set();
  test_context_option();
  test_merge();
  return vt_finish("test_multigpu");
}
