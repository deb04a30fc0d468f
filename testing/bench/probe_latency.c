/* Core-level latency of an interactive probe: what the kNN Query Probe
 * filter does per handle move, without ParaView (so it also runs on the GPU
 * machine).  Builds an index once over a data file, then answers single
 * queries at random rows' positions, one call each, and prints one JSON
 * line: build seconds and the median / p90 / max per-probe seconds.
 *
 *   probe_latency --data FILE [--method M] [--backend B] [--k K] [--probes P]
 */
#include "vicinity.h"
#include "vic_io.h"
#include "bench_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  const char *path = NULL, *method = "auto", *backend = "auto";
  int k = 32, probes = 200;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--data")) path = argv[i + 1];
    else if (!strcmp(argv[i], "--method")) method = argv[i + 1];
    else if (!strcmp(argv[i], "--backend")) backend = argv[i + 1];
    else if (!strcmp(argv[i], "--k")) k = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--probes")) probes = atoi(argv[i + 1]);
    else { fprintf(stderr, "probe_latency: unknown option %s\n", argv[i]); return 2; }
  }
  vic_build_options bo;
  vic_build_options_init(&bo);
  vic_ctx_options co;
  vic_ctx_options_init(&co);
  if (!path || k <= 0 || probes <= 0 || vic_method_parse(method, &bo.method) != VIC_OK ||
      vic_backend_parse(backend, &co.backend) != VIC_OK) {
    fprintf(stderr, "usage: probe_latency --data FILE [--method M] [--backend B] [--k K] [--probes P]\n");
    return 2;
  }
  char err[256];
  vio_matrix m;
  if (vio_load(path, &m, err, sizeof err) != 0) { fprintf(stderr, "probe_latency: %s\n", err); return 1; }
  vic_ctx *c;
  if (vic_ctx_create(&co, &c) != VIC_OK) return 1;
  vic_data x = {m.rows, m.n, m.d, 0, VIC_L2, NULL};
  bo.recall_sample = 0;
  vic_index *ix = NULL;
  double t0 = bench_now();
  if (vic_index_build(c, &x, &bo, &ix) != VIC_OK) {
    fprintf(stderr, "probe_latency: build: %s\n", vic_ctx_error(c));
    return 1;
  }
  double build = bench_now() - t0;
  vic_search_options so;
  vic_search_options_init(&so);
  so.k = k;
  double *lat = malloc((size_t)probes * sizeof *lat);
  uint64_t s = 12345;
  for (int p = -5; p < probes; ++p) { /* five untimed probes warm caches and the device */
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    int64_t row = (int64_t)((s >> 17) % (uint64_t)m.n);
    vic_data q = {m.rows + row * m.d, 1, m.d, 0, VIC_L2, NULL};
    vic_knn r;
    double t1 = bench_now();
    if (vic_index_search(c, ix, &q, &so, &r) != VIC_OK) {
      fprintf(stderr, "probe_latency: search: %s\n", vic_ctx_error(c));
      return 1;
    }
    if (p >= 0) lat[p] = bench_now() - t1;
    vic_knn_free(&r);
  }
  bench_sort(lat, probes);
  const vic_report *rep = vic_index_report(ix);
  printf("{\"bench\":\"probe_latency\",\"data\":\"%s\",\"n\":%lld,\"d\":%d,\"k\":%d,\"method\":\"%s\",\"backend\":\"%s\","
         "\"build_seconds\":%.4f,\"probes\":%d,\"probe_median_ms\":%.4f,\"probe_p90_ms\":%.4f,\"probe_max_ms\":%.4f}\n",
         path, (long long)m.n, m.d, k, vic_method_name(rep->method), vic_backend_name(rep->backend), build, probes,
         1e3 * lat[probes / 2], 1e3 * lat[probes * 9 / 10], 1e3 * lat[probes - 1]);
  free(lat);
  vic_index_free(ix);
  vic_ctx_destroy(c);
  vio_free(&m);
  return 0;
}
