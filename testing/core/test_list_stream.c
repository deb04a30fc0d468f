/* The host side of the streamed lists: the chunk plan of
 * vic_kernels_stream.h (every row in exactly one chunk and one piece,
 * pieces within their chunk and their pinned slot, the ring within the
 * device bytes) and the core's writers (list_dest.h: scattering pieces
 * into rows with many threads, narrowing ids, d_nn1 of any id width;
 * slot_threads.h: one thread per device, each writing with a team). */
#include "list_dest.h"
#include "slot_threads.h"
#include "test_util.h"
#include "vic_kernels_stream.h"

#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static void check_plan(int64_t m, int64_t row_bytes, size_t device_bytes, size_t piece_bytes, int64_t chunk_rows) {
  vick_stream_plan p;
  int rc = vick_stream_plan_make(m, row_bytes, device_bytes, piece_bytes, chunk_rows, &p);
  if ((int64_t)(device_bytes / (size_t)row_bytes) < 2 && (int64_t)(device_bytes / (size_t)row_bytes) < m) {
    VT_CHECK(rc != 0, "m %lld: a device of %zu bytes cannot hold two rows, yet planned", (long long)m, device_bytes);
    return;
  }
  VT_CHECK(rc == 0, "m %lld, row %lld B, device %zu B: no plan", (long long)m, (long long)row_bytes, device_bytes);
  if (rc != 0) return;
  VT_CHECK(p.chunk_rows >= 1 && p.piece_rows >= 1 && p.piece_rows <= p.chunk_rows, "m %lld: rows per chunk %lld, piece %lld",
           (long long)m, (long long)p.chunk_rows, (long long)p.piece_rows);
  VT_CHECK(p.ring_chunks >= 1 && p.ring_chunks <= p.chunks, "m %lld: ring %lld of %lld chunks", (long long)m,
           (long long)p.ring_chunks, (long long)p.chunks);
  VT_CHECK(p.ring_chunks == p.chunks || p.ring_chunks >= 2, "m %lld: a ring of one chunk cannot overlap",
           (long long)m);
  const int64_t ring_rows = p.ring_chunks * p.chunk_rows < m ? p.ring_chunks * p.chunk_rows : m;
  VT_CHECK((size_t)ring_rows * (size_t)row_bytes <= device_bytes || p.ring_chunks == p.chunks,
           "m %lld: ring of %lld rows exceeds %zu device bytes", (long long)m, (long long)ring_rows, device_bytes);
  VT_CHECK((size_t)ring_rows * (size_t)row_bytes <= device_bytes, "m %lld: ring exceeds the device bytes", (long long)m);
  VT_CHECK((size_t)p.piece_rows * (size_t)row_bytes <= piece_bytes || p.piece_rows == 1,
           "m %lld: a piece of %lld rows exceeds its slot", (long long)m, (long long)p.piece_rows);
  if (chunk_rows > 0 && (size_t)(2 * chunk_rows) * (size_t)row_bytes <= device_bytes)
    VT_CHECK(p.chunk_rows == (chunk_rows < m ? chunk_rows : m), "m %lld: forced chunk rows %lld became %lld",
             (long long)m, (long long)chunk_rows, (long long)p.chunk_rows);
  /* every row once, in order, pieces inside their chunks */
  int64_t next = 0;
  for (int64_t c = 0; c < p.chunks; ++c) {
    int64_t a, b;
    vick_stream_chunk(&p, c, &a, &b);
    VT_CHECK(a == next && b > a && b - a <= p.chunk_rows, "m %lld: chunk %lld is [%lld, %lld)", (long long)m,
             (long long)c, (long long)a, (long long)b);
    int64_t covered = 0;
    for (int64_t j = 0; j < vick_stream_pieces(&p, c); ++j) {
      int64_t len = a + (j + 1) * p.piece_rows < b ? p.piece_rows : b - a - j * p.piece_rows;
      VT_CHECK(len >= 1 && len <= p.piece_rows, "m %lld: piece %lld of chunk %lld has %lld rows", (long long)m,
               (long long)j, (long long)c, (long long)len);
      covered += len;
    }
    VT_CHECK(covered == b - a, "m %lld: the pieces of chunk %lld cover %lld of %lld rows", (long long)m, (long long)c,
             (long long)covered, (long long)(b - a));
    next = b;
  }
  VT_CHECK(next == m, "m %lld: the chunks end at %lld", (long long)m, (long long)next);
}

/* Rows in a permuted order (a piece of sorted-order lists) or consecutive
 * (a piece in row order, rows == NULL: one block per thread). */
static void check_scatter(int id_bytes, int threads, int32_t k, int contiguous, int misalign) {
  const int64_t n = 5000, row0 = 1000, m = 3000;
  /* misalign: the distances 4 bytes off a 16-byte boundary (plain copies) */
  float *dist_mem = calloc((size_t)n * k + 4, sizeof(float));
  vic__lists d = {id_bytes, calloc((size_t)n * k, (size_t)id_bytes), dist_mem ? dist_mem + (misalign ? 1 : 0) : NULL};
  uint32_t *rows = malloc((size_t)m * 4);
  void *ids = malloc((size_t)m * k * (size_t)id_bytes);
  float *dist = malloc((size_t)m * k * sizeof(float));
  if (!d.ids || !d.dist || !rows || !ids || !dist) { fprintf(stderr, "out of memory\n"); exit(1); }
  /* a permutation of [0, m): the rows of a piece come in sorted-point order */
  for (int64_t r = 0; r < m; ++r) rows[r] = contiguous ? (uint32_t)r : (uint32_t)((r * 1237) % m);
  for (int64_t r = 0; r < m; ++r)
    for (int32_t t = 0; t < k; ++t) {
      int64_t v = (int64_t)rows[r] * 100 + t - 1; /* -1 in the first slot of row 0 */
      if (id_bytes == 4) ((int32_t *)ids)[r * k + t] = (int32_t)v;
      else ((int64_t *)ids)[r * k + t] = v;
      dist[r * k + t] = (float)rows[r] + 0.01f * (float)t;
    }
  vic__lists_scatter(&d, threads, row0, contiguous ? NULL : rows, m, k, ids, dist);
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int32_t t = 0; t < k; ++t) {
      int64_t got = vic__lists_id(&d, i * k + t);
      float gd = d.dist[i * k + t];
      int inside = i >= row0 && i < row0 + m;
      int64_t want = inside ? (i - row0) * 100 + t - 1 : 0;
      float wd = inside ? (float)(i - row0) + 0.01f * (float)t : 0.f;
      bad += got != want || gd != wd;
    }
  VT_CHECK(bad == 0, "%s of %d-byte ids, k = %d, %d threads%s: %lld entries wrong",
           contiguous ? "blocks" : "scatter", id_bytes, (int)k, threads, misalign ? ", misaligned" : "",
           (long long)bad);
  free(d.ids);
  free(dist_mem);
  free(rows);
  free(ids);
  free(dist);
}

static void check_narrow_dnn1(void) {
  const int64_t n = 100000;
  const int32_t k = 3;
  int64_t *w = malloc((size_t)n * k * 8);
  int32_t *nw = malloc((size_t)n * k * 4);
  float *dist = malloc((size_t)n * k * 4);
  if (!w || !nw || !dist) { fprintf(stderr, "out of memory\n"); exit(1); }
  for (int64_t i = 0; i < n * k; ++i) {
    w[i] = i % 17 == 0 ? -1 : (int64_t)INT32_MAX - i;
    dist[i] = (float)(i % 1000);
  }
  vic__ids_narrow(4, w, nw, n * k);
  int64_t bad = 0;
  for (int64_t i = 0; i < n * k; ++i) bad += (int64_t)nw[i] != w[i];
  VT_CHECK(bad == 0, "narrowing: %lld ids changed", (long long)bad);
  vic__lists a = {8, w, dist}, b = {4, nw, dist};
  vic_report ra, rb;
  memset(&ra, 0, sizeof ra);
  memset(&rb, 0, sizeof rb);
  vic__lists_dnn1(&a, n, k, 4, &ra);
  vic__lists_dnn1(&b, n, k, 1, &rb);
  double sum = 0, mx = 0;
  int64_t cnt = 0;
  for (int64_t i = 0; i < n; ++i)
    if (w[i * k] >= 0) {
      sum += dist[i * k];
      if (dist[i * k] > mx) mx = dist[i * k];
      cnt++;
    }
  VT_CHECK(ra.dnn1_mean == sum / (double)cnt && ra.dnn1_max == mx, "d_nn1 of int64 lists: %g %g, want %g %g",
           ra.dnn1_mean, ra.dnn1_max, sum / (double)cnt, mx);
  VT_CHECK(rb.dnn1_mean == ra.dnn1_mean && rb.dnn1_max == ra.dnn1_max, "d_nn1 differs between id widths");
  free(w);
  free(nw);
  free(dist);
}

/* Slots side by side, each scattering its range of rows with a team of
 * its own (as the exact lists of several devices): every entry written,
 * the teams real where asked (teams = 0: one thread each, OpenMP's
 * default for a nested region), max-active-levels as it was after. */
typedef struct {
  const vic__lists *d;
  int slots, threads;
  int64_t n;
  int32_t k;
  int team[8];
} slot_job;

static void slot_write(void *arg, int slot) {
  slot_job *j = arg;
  const int64_t a = j->n * slot / j->slots, b = j->n * (slot + 1) / j->slots, m = b - a;
  int64_t *ids = malloc((size_t)(m > 0 ? m : 1) * (size_t)j->k * sizeof *ids);
  float *dist = malloc((size_t)(m > 0 ? m : 1) * (size_t)j->k * sizeof *dist);
  uint32_t *rows = malloc((size_t)(m > 0 ? m : 1) * sizeof *rows);
  if (!ids || !dist || !rows) { fprintf(stderr, "out of memory\n"); exit(1); }
  for (int64_t r = 0; r < m; ++r) {
    rows[r] = (uint32_t)((r * 7919) % m);
    for (int32_t t = 0; t < j->k; ++t) {
      ids[r * j->k + t] = (a + rows[r]) * 1000 + t;
      dist[r * j->k + t] = (float)(a + rows[r]) + 0.5f * (float)t;
    }
  }
  int team = 1;
#pragma omp parallel num_threads(j->threads)
  {
#ifdef _OPENMP
#pragma omp single
    team = omp_get_num_threads();
#endif
  }
  j->team[slot] = team;
  vic__lists_scatter(j->d, j->threads, a, rows, m, j->k, ids, dist);
  free(ids);
  free(dist);
  free(rows);
}

static void check_slot_teams(int slots, int teams) {
  const int64_t n = 40000;
  const int32_t k = 16;
  vic__lists d = {8, calloc((size_t)n * k, 8), calloc((size_t)n * k, sizeof(float))};
  if (!d.ids || !d.dist) { fprintf(stderr, "out of memory\n"); exit(1); }
  slot_job j = {&d, slots, vic__slot_threads(2 * slots, slots), n, k, {0}};
#ifdef _OPENMP
  const int levels = omp_get_max_active_levels();
#endif
  vic__slots_run(slots, teams, slot_write, &j);
  int64_t bad = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int32_t t = 0; t < k; ++t) bad += vic__lists_id(&d, i * k + t) != i * 1000 + t || d.dist[i * k + t] != (float)i + 0.5f * (float)t;
  VT_CHECK(bad == 0, "%d slots (teams %d): %lld entries wrong", slots, teams, (long long)bad);
#ifdef _OPENMP
  VT_CHECK(omp_get_max_active_levels() == levels, "%d slots: max-active-levels %d after, %d before", slots,
           omp_get_max_active_levels(), levels);
  /* one slot runs on the calling thread: its region is the outermost one;
   * without teams, one thread each unless the environment allows nesting */
  const int want = teams || slots == 1 || levels >= 2 ? j.threads : 1;
  for (int s = 0; s < slots; ++s)
    VT_CHECK(j.team[s] == want, "%d slots (teams %d): slot %d wrote with %d threads, not %d", slots, teams, s,
             j.team[s], want);
#endif
  free(d.ids);
  free(d.dist);
}

int main(void) {
  const int64_t sizes[] = {1, 2, 7, 1000, 262143, 262144, 262145, 10000000, 60000000, 2147483647};
  const int64_t rows_b[] = {4 + 12, 4 + 32 * 12, 4 + 32 * 8, 4 + 256 * 12};
  const size_t devs[] = {0, 100, 1 << 20, (size_t)64 << 20, (size_t)80 << 30};
  const size_t pieces[] = {1, 4096, (size_t)32 << 20};
  const int64_t forced[] = {0, 1, 1000};
  const double walk = vt_small() ? 2e4 : 2e5;
  for (size_t a = 0; a < sizeof sizes / sizeof sizes[0]; ++a)
    for (size_t b = 0; b < sizeof rows_b / sizeof rows_b[0]; ++b)
      for (size_t c = 0; c < sizeof devs / sizeof devs[0]; ++c)
        for (size_t e = 0; e < sizeof pieces / sizeof pieces[0]; ++e)
          for (size_t f = 0; f < sizeof forced / sizeof forced[0]; ++f) {
            /* the walk below visits every piece and chunk: keep them few */
            if ((double)sizes[a] * (double)rows_b[b] / (double)pieces[e] > walk) continue;
            if (forced[f] > 0 && (double)sizes[a] / (double)forced[f] > walk) continue;
            check_plan(sizes[a], rows_b[b], devs[c], pieces[e], forced[f]);
          }
  vick_stream_plan p;
  VT_CHECK(vick_stream_plan_make(0, 16, 1 << 20, 1 << 20, 0, &p) != 0, "an empty plan accepted");
  VT_CHECK(vick_stream_plan_make(10, 0, 1 << 20, 1 << 20, 0, &p) != 0, "rows of 0 bytes accepted");
  /* a large problem on a large device: about VICK_STREAM_TARGET_CHUNKS launches, all of it on the device */
  VT_CHECK(vick_stream_plan_make(60000000, 388, (size_t)60 << 30, (size_t)32 << 20, 0, &p) == 0 &&
               p.chunks == VICK_STREAM_TARGET_CHUNKS && p.ring_chunks == p.chunks,
           "60M rows: %lld chunks, ring %lld", (long long)p.chunks, (long long)p.ring_chunks);
  for (int contiguous = 0; contiguous < 2; ++contiguous) {
    check_scatter(8, 1, 7, contiguous, 0);
    check_scatter(8, 4, 7, contiguous, 0);
    check_scatter(4, 3, 7, contiguous, 0);
    check_scatter(8, 7, 32, contiguous, 0);
    check_scatter(4, 3, 32, contiguous, 0);
    check_scatter(8, 4, 16, contiguous, 0);
    check_scatter(4, 2, 16, contiguous, 1);
    check_scatter(8, 3, 32, contiguous, 1);
  }
  check_narrow_dnn1();
  for (int slots = 1; slots <= 4; ++slots) {
    check_slot_teams(slots, 1);
    check_slot_teams(slots, 0);
  }
  return vt_finish("test_list_stream");
}
