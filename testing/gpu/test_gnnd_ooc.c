/* vic_knn_build's out-of-core GNND on one device (core/src/gpu/
 * cuda_gnnd_multi.c, vic__cuda_gnnd_one_device): under a device budget that
 * neither the fp32 build nor the half-row build fits, the rows are cut into
 * shards joined by one graph search per ordered pair.  Recall against exact
 * lists within 0.01 of the in-memory build, true ascending distances
 * without repeats, the reason and stages, the device memory held within
 * the budget, a cancelled build returning nothing, a budget nothing fits
 * failing with a message.  VIC_TEST_SMALL: the compute-sanitizer size. */
#include "../core/ggm_cases.h"
#include "vic_kernels.h"
#include "vic_kernels_gnnd.h"

int main(int argc, char **argv) {
  const int small = vt_gpu_start(argc, argv);
  char msg[256];
  if (vick_device_count(msg, sizeof msg) <= 0) vt_skip("no CUDA device");
  ggm_case t = {VIC_BACKEND_CUDA, 1, small ? 20000 : 40000, 128, 10, small ? 0.85 : 0.93, "gpu_test_gnnd_ooc"};
  float *rows = vt_clusters(t.n, t.d, 24, 17);
  vic_data x = gc_view(rows, t.n, t.d);
  vic_knn exact = {0}, mem = {0}, ooc = {0};
  gc_exact(&t, rows, &exact);

  vic_ctx *c = gc_ctx(&t);
  vic_build_options o = gc_options(&t);
  VT_OK(c, vic_knn_build(c, &x, &o, &mem));
  const double rm = gc_recall(&mem, &exact, t.n);
  printf("in memory: recall %.4f, %.3f s (%s)\n", rm, mem.report.seconds_total, mem.report.reason);

  /* just under the smallest half-row build the core would plan (lists
   * narrowed to 32, 8 samples), so that neither in-memory build fits */
  vick_gnnd_params q = {32, 8, 20, 0.001f, 0, 0, 1};
  const size_t compact = vick_gnnd_compact_bytes(t.n, t.d, t.k, &q);
  o.device_memory_budget = compact / 100 * 97;
  VT_OK(c, vic_knn_build(c, &x, &o, &ooc));
  const double r = gc_recall(&ooc, &exact, t.n);
  printf("budget %.1f MiB (half-row build %.1f): recall %.4f, %.3f s, %d shards, peak %.1f MiB (%s)\n",
         o.device_memory_budget / 1048576.0, compact / 1048576.0, r, ooc.report.seconds_total, (int)ooc.report.slabs,
         ooc.report.device_peak_bytes / 1048576.0, ooc.report.reason);
  VT_CHECK(strstr(ooc.report.reason, "out of core, one GPU") && strstr(ooc.report.reason, "ordered pair"),
           "not the graph-search plan: %s", ooc.report.reason);
  VT_CHECK(ooc.report.slabs >= 2 && ooc.report.devices_used == 1, "%d shards on %d devices", (int)ooc.report.slabs,
           (int)ooc.report.devices_used);
  VT_CHECK(vic_report_stage_seconds(&ooc.report, "shard builds") >= 0 &&
               vic_report_stage_seconds(&ooc.report, "cross searches") >= 0,
           "stages missing");
  VT_CHECK(ooc.report.device_peak_bytes > 0 && (size_t)ooc.report.device_peak_bytes <= o.device_memory_budget,
           "held %lld bytes of a budget of %zu", (long long)ooc.report.device_peak_bytes, o.device_memory_budget);
  VT_CHECK(ooc.n == t.n && ooc.k == t.k, "lists %lld x %d", (long long)ooc.n, (int)ooc.k);
  VT_CHECK(r >= rm - 0.01, "out-of-core recall %.4f, in memory %.4f", r, rm);
  VT_CHECK(r >= t.min_recall, "out-of-core recall %.4f", r);
  gc_lists_exact(&ooc, rows, t.d, "out-of-core GNND");

  /* cancelled: nothing returned, the reason said */
  vic_knn none = {0};
  gc_any_cancel = 1;
  vic_status s = vic_knn_build(c, &x, &o, &none);
  gc_any_cancel = 0;
  VT_CHECK(s == VIC_E_CANCELLED && none.ids == NULL, "cancel: %s %s", vic_status_name(s), vic_ctx_error(c));

  /* a budget no shard plan fits: an error that names the budget, nothing returned */
  o.device_memory_budget = (size_t)1 << 20;
  s = vic_knn_build(c, &x, &o, &none);
  printf("budget 1 MiB: %s: %s\n", vic_status_name(s), vic_ctx_error(c));
  VT_CHECK(s != VIC_OK && none.ids == NULL && strstr(vic_ctx_error(c), "budget"), "1 MiB: %s %s", vic_status_name(s),
           vic_ctx_error(c));

  vic_knn_free(&mem);
  vic_knn_free(&ooc);
  vic_knn_free(&exact);
  vic_ctx_destroy(c);
  free(rows);
  return vt_finish("gpu_test_gnnd_ooc");
}
