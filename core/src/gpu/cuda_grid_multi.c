/* The exact grid kNN on one or several GPUs in one process: every device
 * holds all points and its own grid and answers one contiguous range of
 * rows (vick_grid_knn_stream), one host thread per device; each device's
 * lists stream into the destination as they are computed.  A row's list does
 * not depend on the range it is answered in, so the lists equal one
 * device's.  The figures reported overall are the slowest device's (they
 * run side by side); each device's own go into the report's stages. */
#include "cuda_internal.h"
#include "slot_threads.h"
#include "vic_kernels_exact.h"

#include <stdio.h>
#include <string.h>

typedef struct {
  vic_ctx *c;
  const vick_points *p;
  int32_t k;
  const vic__lists *dst;
  int threads; /* host threads writing each device's pieces */
  vick_call *call; /* one per device */
  int *rc;
  int count;
} grid_job;

static int64_t range_start(int64_t n, int slot, int count) { return n * slot / count; }

/* One device's pieces into the destination, at its range's first row. */
typedef struct {
  const grid_job *job;
  int64_t row0;
} grid_piece_sink;

static int write_piece(void *user, int64_t first, const uint32_t *rows, int64_t m, int32_t k, const void *ids,
                       const float *dist) {
  const grid_piece_sink *ps = user;
  vic__lists_scatter(ps->job->dst, ps->job->threads, ps->row0 + first, rows, m, k, ids, dist);
  return vic__cancelled(ps->job->c);
}

static void grid_slot(void *arg, int slot) {
  grid_job *j = arg;
  int64_t q0 = range_start(j->p->n, slot, j->count), q1 = range_start(j->p->n, slot + 1, j->count);
  grid_piece_sink ps = {j, q0};
  vick_sink sink;
  memset(&sink, 0, sizeof sink);
  sink.id_bytes = j->dst->id_bytes;
  sink.true_l2 = 1;
  /* launches over ranges of the sorted order (by_rows = 0): a warp of
   * neighbouring queries shares its cells, which ranges of rows lose, while
   * the host's writes into fresh memory cost about the same either way */
  sink.by_rows = 0;
  sink.write = write_piece;
  sink.user = &ps;
  j->rc[slot] = vick_grid_knn_stream(&j->call[slot], j->p, j->k, q0, q1, &sink);
}

/* The larger of a stage's seconds and s (devices run side by side). */
static void stage_max(vic_report *rep, const char *name, double s) {
  for (int i = 0; i < rep->n_stages; ++i)
    if (strcmp(rep->stages[i].name, name) == 0) {
      if (s > rep->stages[i].seconds) rep->stages[i].seconds = s;
      return;
    }
  vic__report_stage(rep, name, s);
}

vic_status vic__cuda_grid_multi(vic_ctx *c, const vick_points *p, const vic_build_options *o, int first, int count,
                                int32_t k, const vic__lists *dst, vic_report *rep) {
  if ((int64_t)count > p->n) count = (int)p->n;
  vick_call *call = vic__calloc(c, (size_t)count, sizeof *call, "per-device calls");
  int *rc = call ? vic__calloc(c, (size_t)count, sizeof *rc, "per-device codes") : NULL;
  if (!rc) {
    free(call);
    return VIC_E_NOMEM;
  }
  /* each device's pieces are written by a team of its own, the devices
   * sharing the list writers (its staged copies too) */
  const int threads = vic__slot_threads(vic__list_writers(vic__threads(c)), count);
  /* one device: its job runs on the calling thread, which may report progress */
  for (int s = 0; s < count; ++s) {
    vic__cuda_call_init(c, &call[s], first + s, o->device_memory_budget, count > 1);
    call[s].threads = threads;
  }
  grid_job job = {c, p, k, dst, threads, call, rc, count};
  vic_status st = vic__progress(c, "grid", 0.0);
  /* the destination's pages are faulted in by the writers themselves: its
   * huge-page advice makes that cheap, and threads mapping them ahead
   * took the CPU from the devices' set-up */
  if (st == VIC_OK) vic__slots_run(count, 1, grid_slot, &job);
  for (int s = 0; st == VIC_OK && s < count; ++s)
    if (rc[s] != VICK_OK) st = vic__cuda_translate(c, rc[s], &call[s], VIC_METHOD_GRID);
  if (st == VIC_OK) st = vic__progress(c, "grid", 1.0);
  double tr = 0, tk = 0;
  for (int s = 0; st == VIC_OK && s < count; ++s) {
    const vick_call *cs = &call[s];
    if (cs->seconds_transfer > tr) tr = cs->seconds_transfer;
    if (cs->seconds_kernel > tk) tk = cs->seconds_kernel;
    for (int i = 0; i < cs->n_stages; ++i) stage_max(rep, cs->stages[i].name, cs->stages[i].seconds);
    if (count == 1) {
      vic__kernel_log(c, cs, "grid");
      continue;
    }
    /* one stage per device, after the shared stage names: the report's
     * fixed room keeps those first, and each device's kernel and transfer
     * seconds are in its log line */
    char name[32];
    snprintf(name, sizeof name, "dev%d total", cs->device);
    vic__report_stage(rep, name, cs->seconds_total);
    char dev[128] = "";
    vick_device_info(cs->device, dev, sizeof dev, NULL, NULL);
    int64_t q0 = range_start(p->n, s, count), q1 = range_start(p->n, s + 1, count);
    vic__log(c, VIC_LOG_INFO, "GPU grid on %s (device %d of %d), rows [%lld, %lld): %.3f s total, %.3f s kernels, %.3f s transfers",
             dev, cs->device, count, (long long)q0, (long long)q1, cs->seconds_total, cs->seconds_kernel,
             cs->seconds_transfer);
  }
  if (st == VIC_OK) {
    rep->seconds_transfer += tr;
    rep->seconds_kernel += tk;
  }
  free(call);
  free(rc);
  return st;
}

vic_status vic__cuda_grid_into(vic_ctx *c, const vic_data *x, const vic_build_options *o, int32_t k,
                               const vic__lists *dst, vic_report *rep) {
  if (k > VICK_EXACT_MAX_K)
    return vic__fail(c, VIC_E_UNSUPPORTED, "GPU grid supports k <= %d (got k = %d)", VICK_EXACT_MAX_K, (int)k);
  /* sorted point order and (distance, id) keys hold 32-bit ids */
  if (x->n >= ((int64_t)1 << 31))
    return vic__fail(c, VIC_E_UNSUPPORTED,
                     "the GPU grid takes at most 2^31 - 1 points (got %lld); the CPU grid has no such limit",
                     (long long)x->n);
  int first, count;
  vic_status s = vic__cuda_devices(c, &first, &count);
  if (s != VIC_OK) return s;
  vick_points p = {x->rows, x->n, x->d, x->stride ? x->stride : x->d, VICK_METRIC_L2, x->box};
  return vic__cuda_grid_multi(c, &p, o, first, count, k, dst, rep);
}
