/* vic_knn_build's GNND over several GPUs (core/src/gpu/cuda_gnnd_multi.c):
 * shard_size forces the shards on 2+ devices; recall against exact lists
 * within 0.01 of the one-device build, true ascending distances without
 * repeats, the report's shards and devices, a cancelled build returning
 * nothing.  With one device the call must stay the one-device build.
 * VIC_TEST_SMALL: the compute-sanitizer size. */
#include "../core/ggm_cases.h"
#include "vic_kernels.h"

int main(int argc, char **argv) {
  const int small = vt_gpu_start(argc, argv);
  char msg[256];
  const int present = vick_device_count(msg, sizeof msg);
  if (present <= 0) vt_skip("no CUDA device");
  ggm_case t = {VIC_BACKEND_CUDA, 1, small ? 4000 : 40000, 32, 10, small ? 0.85 : 0.93, "gpu_test_gnnd_multi"};
  float *rows = vt_clusters(t.n, t.d, 24, 13);
  vic_data x = gc_view(rows, t.n, t.d);
  vic_knn exact = {0}, one = {0}, many = {0};
  gc_exact(&t, rows, &exact);

  vic_ctx *c1 = gc_ctx(&t);
  vic_build_options o = gc_options(&t);
  VT_OK(c1, vic_knn_build(c1, &x, &o, &one));
  const double r1 = gc_recall(&one, &exact, t.n);
  printf("one device: recall %.4f, %.3f s (%s)\n", r1, one.report.seconds_total, one.report.reason);

  t.devices = VIC_DEVICES_ALL;
  vic_ctx *c = gc_ctx(&t);
  o.shard_size = t.n / 4;
  VT_OK(c, vic_knn_build(c, &x, &o, &many));
  const double r = gc_recall(&many, &exact, t.n);
  printf("%d device(s), shard_size n/4: recall %.4f, %.3f s, %d shards on %d devices (%s)\n", present, r,
         many.report.seconds_total, (int)many.report.slabs, (int)many.report.devices_used, many.report.reason);
  gc_lists_exact(&many, rows, t.d, "multi-GPU GNND");
  VT_CHECK(many.n == t.n && many.k == t.k, "lists %lld x %d", (long long)many.n, (int)many.k);
  if (present >= 2) {
    const int S = (4 + present - 1) / present * present;
    VT_CHECK(strstr(many.report.reason, "GPUs") && strstr(many.report.reason, "graph search"), "reason: %s",
             many.report.reason);
    VT_CHECK(many.report.slabs == S && many.report.devices_used == (S < present ? S : present),
             "%d shards on %d devices (want %d shards)", (int)many.report.slabs, (int)many.report.devices_used, S);
    VT_CHECK(vic_report_stage_seconds(&many.report, "shard builds") >= 0 &&
                 vic_report_stage_seconds(&many.report, "cross searches") >= 0,
             "stages missing");
    VT_CHECK(r >= r1 - 0.01, "multi-GPU recall %.4f, one device %.4f", r, r1);
    VT_CHECK(r >= t.min_recall, "multi-GPU recall %.4f", r);

    /* cancelled: nothing returned */
    vic_knn none = {0};
    gc_any_cancel = 1;
    const vic_status s = vic_knn_build(c, &x, &o, &none);
    gc_any_cancel = 0;
    VT_CHECK(s == VIC_E_CANCELLED && none.ids == NULL, "cancel: %s %s", vic_status_name(s), vic_ctx_error(c));
  } else {
    VT_CHECK(!strstr(many.report.reason, "cross"), "one device took the multi-GPU path: %s", many.report.reason);
    printf("one device present: the multi-GPU path is not taken (checked); its recall is checked on 2+ GPUs\n");
  }
  vic_knn_free(&one);
  vic_knn_free(&many);
  vic_knn_free(&exact);
  vic_ctx_destroy(c1);
  vic_ctx_destroy(c);
  free(rows);
  return vt_finish("gpu_test_gnnd_multi");
}
