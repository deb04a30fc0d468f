/* vic_knn_build_into (lists in the caller's buffers) equals vic_knn_build
 * on the CPU for every exact method and NN-Descent, with int64 and int32
 * ids; bad buffers are refused with a message and nothing is written
 * past the capacity. */
#include "test_util.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* The same lists: ids equal (the int32 ones widened) and distances equal
 * bit for bit. */
static int64_t differing(const vic_knn *ref, const vic_knn_out *got) {
  if (got->n != ref->n || got->k != ref->k) return ref->n > 0 ? ref->n : 1;
  int64_t bad = 0;
  for (int64_t i = 0; i < ref->n * ref->k; ++i) {
    int64_t id = got->id_type == VIC_IDS_INT32 ? (int64_t)((const int32_t *)got->ids)[i] : ((const int64_t *)got->ids)[i];
    bad += id != ref->ids[i] || memcmp(&got->dist[i], &ref->dist[i], sizeof(float)) != 0;
  }
  return bad;
}

/* Buffers of capacity entries with a guard entry after them. */
typedef struct {
  vic_knn_out out;
  int64_t guard_at;
} into_buf;

static void into_alloc(into_buf *b, vic_id_type type, int64_t capacity) {
  memset(b, 0, sizeof *b);
  vic_knn_out_init(&b->out);
  b->out.id_type = type;
  const size_t ib = type == VIC_IDS_INT32 ? 4 : 8;
  b->out.ids = malloc((size_t)(capacity + 1) * ib);
  b->out.dist = malloc((size_t)(capacity + 1) * sizeof(float));
  if (!b->out.ids || !b->out.dist) { fprintf(stderr, "out of memory\n"); exit(1); }
  b->out.capacity = capacity;
  b->guard_at = capacity;
  memset((char *)b->out.ids + capacity * ib, 0x5a, ib);
  memset(&b->out.dist[capacity], 0x5a, sizeof(float));
}

static int guard_intact(const into_buf *b) {
  const size_t ib = b->out.id_type == VIC_IDS_INT32 ? 4 : 8;
  const unsigned char *pi = (const unsigned char *)b->out.ids + b->guard_at * ib;
  const unsigned char *pd = (const unsigned char *)&b->out.dist[b->guard_at];
  for (size_t i = 0; i < ib; ++i)
    if (pi[i] != 0x5a) return 0;
  for (size_t i = 0; i < sizeof(float); ++i)
    if (pd[i] != 0x5a) return 0;
  return 1;
}

static void into_free(into_buf *b) {
  free(b->out.ids);
  free(b->out.dist);
}

static void check_method(vic_ctx *c, const vic_data *x, vic_method m, int32_t k, const char *what) {
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = m;
  o.k = k;
  o.recall_sample = 200;
  vic_knn ref;
  VT_OK(c, vic_knn_build(c, x, &o, &ref));
  for (int t = 0; t < 2; ++t) {
    vic_id_type type = t ? VIC_IDS_INT32 : VIC_IDS_INT64;
    into_buf b;
    into_alloc(&b, type, ref.n * ref.k);
    VT_OK(c, vic_knn_build_into(c, x, &o, &b.out));
    int64_t bad = differing(&ref, &b.out);
    VT_CHECK(bad == 0, "%s, %s ids: %lld entries differ from vic_knn_build", what, t ? "int32" : "int64",
             (long long)bad);
    VT_CHECK(guard_intact(&b), "%s: written past the capacity", what);
    VT_CHECK(b.out.report.method == ref.report.method && b.out.report.k == ref.report.k &&
                 b.out.report.recall_estimate == ref.report.recall_estimate &&
                 b.out.report.dnn1_mean == ref.report.dnn1_mean,
             "%s: the reports differ (method %d/%d, recall %g/%g)", what, (int)b.out.report.method,
             (int)ref.report.method, b.out.report.recall_estimate, ref.report.recall_estimate);
    into_free(&b);
  }
  vic_knn_free(&ref);
}

int main(void) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 7);
  const int64_t n = vt_small() ? 800 : 3000;

  float *p3 = vt_uniform(n, 3, 1.f, 1);
  vic_data x3 = {p3, n, 3, 0, VIC_L2, NULL};
  check_method(c, &x3, VIC_METHOD_GRID, 12, "grid 3-d");
  check_method(c, &x3, VIC_METHOD_BRUTE, 5, "brute 3-d");
  double box[3] = {1, 1, 1};
  vic_data xp = {p3, n, 3, 0, VIC_L2, box};
  check_method(c, &xp, VIC_METHOD_GRID, 8, "grid periodic");

  float *p16 = vt_clusters(n, 16, 8, 2);
  vic_data x16 = {p16, n, 16, 0, VIC_L2, NULL};
  check_method(c, &x16, VIC_METHOD_BRUTE, 10, "brute 16-d");
  check_method(c, &x16, VIC_METHOD_NNDESCENT, 10, "nndescent 16-d");
  vic_data xc = {p16, n, 16, 0, VIC_COSINE, NULL};
  check_method(c, &xc, VIC_METHOD_BRUTE, 4, "brute cosine");

  /* k >= n: clamped to n - 1, which the capacity must hold */
  vic_data tiny = {p3, 9, 3, 0, VIC_L2, NULL};
  check_method(c, &tiny, VIC_METHOD_GRID, 50, "clamped k");

  /* refusals: nothing written, n and k zero, a message */
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = VIC_METHOD_GRID;
  o.k = 6;
  into_buf b;
  into_alloc(&b, VIC_IDS_INT64, n * 6 - 1);
  vic_status s = vic_knn_build_into(c, &x3, &o, &b.out);
  VT_CHECK(s == VIC_E_ARGUMENT && strstr(vic_ctx_error(c), "entries"), "a short capacity: %s (%s)",
           vic_status_name(s), vic_ctx_error(c));
  VT_CHECK(b.out.n == 0 && b.out.k == 0 && guard_intact(&b), "a refused call left n/k or wrote past the capacity");
  void *keep = b.out.ids;
  b.out.ids = NULL;
  b.out.capacity = n * 6;
  s = vic_knn_build_into(c, &x3, &o, &b.out);
  VT_CHECK(s == VIC_E_ARGUMENT && strstr(vic_ctx_error(c), "buffer"), "no ids buffer: %s (%s)", vic_status_name(s),
           vic_ctx_error(c));
  b.out.ids = keep;
  b.out.id_type = (vic_id_type)7;
  s = vic_knn_build_into(c, &x3, &o, &b.out);
  VT_CHECK(s == VIC_E_ARGUMENT && strstr(vic_ctx_error(c), "id type"), "an unknown id type: %s (%s)",
           vic_status_name(s), vic_ctx_error(c));
  b.out.id_type = VIC_IDS_INT64;
  VT_CHECK(vic_knn_build_into(c, &x3, &o, NULL) == VIC_E_ARGUMENT, "a NULL output accepted");
  into_free(&b);

  /* the ABI: a struct no vic_knn_out_init set is refused; the library
   * reads and writes only the caller's struct_size bytes; a newer
   * program's unknown fields are accepted at zero and refused when set */
  union {
    vic_knn_out out;
    unsigned char raw[sizeof(vic_knn_out) + 64];
  } u;
  into_alloc(&b, VIC_IDS_INT64, n * 6);
  b.out.struct_size = 0;
  s = vic_knn_build_into(c, &x3, &o, &b.out);
  VT_CHECK(s == VIC_E_ARGUMENT && strstr(vic_ctx_error(c), "vic_knn_out_init") && b.out.n == 0,
           "an uninitialised vic_knn_out: %s (%s)",
           vic_status_name(s), vic_ctx_error(c));
  memset(&u, 0xAB, sizeof u);
  vic_knn_out_init(&u.out);
  VT_CHECK(u.out.struct_size == sizeof(vic_knn_out) && u.out.id_type == VIC_IDS_INT64 && !u.out.ids && !u.out.dist &&
               u.out.capacity == 0 && u.out.n == 0 && u.out.k == 0,
           "vic_knn_out_init: not the defaults");
  u.out.ids = b.out.ids;
  u.out.dist = b.out.dist;
  u.out.capacity = b.out.capacity;
  VT_OK(c, vic_knn_build_into(c, &x3, &o, &u.out));
  VT_CHECK(u.out.n == n && u.out.k == 6 && u.out.report.struct_size >= offsetof(vic_report, warnings) + sizeof(int),
           "the lists' n %lld, k %d, report.struct_size %zu", (long long)u.out.n, (int)u.out.k,
           u.out.report.struct_size);
  int touched = 0;
  for (size_t i = sizeof(vic_knn_out); i < sizeof u; ++i) touched += u.raw[i] != 0xAB;
  VT_CHECK(touched == 0, "%d bytes past the caller's struct_size were written", touched);
  memset(u.raw + sizeof(vic_knn_out), 0, 16);
  u.out.struct_size = sizeof(vic_knn_out) + 16;
  VT_OK(c, vic_knn_build_into(c, &x3, &o, &u.out));
  u.raw[sizeof(vic_knn_out) + 3] = 1;
  s = vic_knn_build_into(c, &x3, &o, &u.out);
  VT_CHECK(s == VIC_E_UNSUPPORTED && u.out.n == 0 && u.out.k == 0 && u.raw[sizeof(vic_knn_out) + 3] == 1,
           "a set unknown field: %s (%s)",
           vic_status_name(s), vic_ctx_error(c));
  into_free(&b);

  free(p3);
  free(p16);
  vic_ctx_destroy(c);
  return vt_finish("test_knn_into");
}
