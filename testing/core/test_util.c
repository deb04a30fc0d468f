#include "test_util.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

int vt_failures = 0;
char vt_last_log[1024];
int vt_warnings = 0;

int vt_finish(const char *name) {
  if (vt_failures) fprintf(stderr, "%s: %d check(s) failed\n", name, vt_failures);
  else printf("%s: all checks passed\n", name);
  return vt_failures ? 1 : 0;
}

void vt_skip(const char *reason) {
  printf("SKIP: %s\n", reason);
  exit(77);
}

static void collect(void *user, vic_log_level level, const char *msg) {
  (void)user;
  if (level == VIC_LOG_WARNING) vt_warnings++;
  snprintf(vt_last_log, sizeof vt_last_log, "%s", msg);
}

vic_ctx *vt_ctx_make(const vic_ctx_options *o) {
  vic_ctx *c = NULL;
  if (vic_ctx_create(o, &c) != VIC_OK) { fprintf(stderr, "cannot create context\n"); exit(1); }
  return c;
}

vic_ctx *vt_ctx(vic_backend backend, uint64_t seed) {
  vic_ctx_options o;
  vic_ctx_options_init(&o);
  o.backend = backend;
  o.seed = seed;
  o.log = collect;
  return vt_ctx_make(&o);
}

vic_ctx *vt_ctx_threads(int threads, uint64_t seed) {
  vic_ctx_options o;
  vic_ctx_options_init(&o);
  o.backend = VIC_BACKEND_CPU;
  o.seed = seed;
  o.threads = threads;
  return vt_ctx_make(&o);
}

uint64_t vt_splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
double vt_unif(uint64_t *s) { return (vt_splitmix(s) >> 11) * (1.0 / 9007199254740992.0); }
double vt_gauss(uint64_t *s) {
  double u = vt_unif(s), v = vt_unif(s);
  return sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v);
}
uint64_t vt_xorshift(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

float *vt_uniform(int64_t n, int32_t d, float scale, uint64_t seed) {
  float *x = malloc((size_t)n * (size_t)d * sizeof(float));
  uint64_t s = seed;
  for (int64_t i = 0; i < n * d; ++i) x[i] = (float)(vt_unif(&s) * scale);
  return x;
}

float *vt_blobs(int64_t n, int32_t d, int clusters, double spread, uint64_t seed, uint64_t centre_seed) {
  uint64_t s = seed, cs = centre_seed;
  uint64_t *from = centre_seed ? &cs : &s;
  float *centres = malloc((size_t)clusters * (size_t)d * sizeof(float));
  for (int64_t i = 0; i < (int64_t)clusters * d; ++i) centres[i] = (float)(spread * vt_gauss(from));
  float *x = malloc((size_t)n * (size_t)d * sizeof(float));
  for (int64_t i = 0; i < n; ++i) {
    int c = (int)(vt_splitmix(&s) % (uint64_t)clusters);
    for (int32_t j = 0; j < d; ++j) x[i * d + j] = centres[c * d + j] + (float)vt_gauss(&s);
  }
  free(centres);
  return x;
}

float *vt_clusters(int64_t n, int32_t d, int clusters, uint64_t seed) { return vt_blobs(n, d, clusters, 3.0, seed, 0); }

float *vt_digits(int64_t n, int32_t d, uint64_t seed) {
  enum { CLASSES = 10, STROKES = 16 };
  uint64_t s = seed;
  float *mean = malloc((size_t)CLASSES * (size_t)d * sizeof(float));
  float *stroke = malloc((size_t)CLASSES * STROKES * (size_t)d * sizeof(float));
  float *x = malloc((size_t)n * (size_t)d * sizeof(float));
  if (!mean || !stroke || !x) {
    fprintf(stderr, "vt_digits: out of memory\n");
    exit(1);
  }
  for (int64_t i = 0; i < (int64_t)CLASSES * d; ++i) mean[i] = (float)(255.0 * (double)(vt_splitmix(&s) >> 11) / 9007199254740992.0);
  for (int64_t i = 0; i < (int64_t)CLASSES * STROKES * d; ++i) stroke[i] = (float)(20.0 * vt_gauss(&s));
  for (int64_t i = 0; i < n; ++i) {
    const int c = (int)(vt_splitmix(&s) % CLASSES);
    double z[STROKES];
    for (int t = 0; t < STROKES; ++t) z[t] = vt_gauss(&s);
    for (int32_t j = 0; j < d; ++j) {
      double v = mean[(int64_t)c * d + j] + 12.0 * vt_gauss(&s);
      for (int t = 0; t < STROKES; ++t) v += z[t] * stroke[((int64_t)c * STROKES + t) * d + j];
      x[i * d + j] = (float)v;
    }
  }
  free(mean);
  free(stroke);
  return x;
}

void vt_write_gadget(const char *path, const float *xyz, const float *mass, int64_t n) {
  FILE *f = fopen(path, "wb");
  unsigned char hdr[256] = {0};
  int32_t npart[6] = {0, (int32_t)n, 0, 0, 0, 0};
  uint32_t total[6] = {0, (uint32_t)n, 0, 0, 0, 0};
  int32_t num_files = 1;
  memcpy(hdr, npart, sizeof npart);         /* massarr (bytes 24..71) stays 0: masses per particle */
  memcpy(hdr + 96, total, sizeof total);    /* npartTotal */
  memcpy(hdr + 160, &num_files, 4);
  float *vel = calloc((size_t)n * 3, sizeof(float));
  uint32_t *ids = malloc((size_t)n * sizeof(uint32_t));
  int ok = f && vel && ids;
  for (int64_t i = 0; ok && i < n; ++i) ids[i] = (uint32_t)(i + 1);
  const void *block[5] = {hdr, xyz, vel, ids, mass};
  const uint32_t bytes[5] = {256, (uint32_t)(12 * n), (uint32_t)(12 * n), (uint32_t)(4 * n), (uint32_t)(4 * n)};
  for (int b = 0; ok && b < 5; ++b)
    ok = fwrite(&bytes[b], 4, 1, f) == 1 && fwrite(block[b], 1, bytes[b], f) == bytes[b] && fwrite(&bytes[b], 4, 1, f) == 1;
  if (f && fclose(f) != 0) ok = 0;
  free(vel);
  free(ids);
  if (!ok) {
    fprintf(stderr, "vt_write_gadget: cannot write %s\n", path);
    exit(1);
  }
}

static double ref_dist(const vic_data *x, const float *a, const float *b) {
  double s = 0;
  if (x->metric == VIC_INNER_PRODUCT) {
    for (int32_t j = 0; j < x->d; ++j) s += (double)a[j] * b[j];
    return -s;
  }
  if (x->metric == VIC_COSINE) {
    double na = 0, nb = 0;
    for (int32_t j = 0; j < x->d; ++j) { s += (double)a[j] * b[j]; na += (double)a[j] * a[j]; nb += (double)b[j] * b[j]; }
    return 1.0 - s / sqrt(na * nb);
  }
  for (int32_t j = 0; j < x->d; ++j) {
    double t = fabs((double)a[j] - b[j]);
    if (x->box && x->box[j] > 0) { t = fmod(t, x->box[j]); if (t > 0.5 * x->box[j]) t = x->box[j] - t; }
    s += t * t;
  }
  return sqrt(s);
}

void vt_naive_knn(const vic_data *x, const vic_data *q, int32_t k, int64_t *ids, double *dist) {
  int64_t m = q ? q->n : x->n;
  int64_t xs = x->stride ? x->stride : x->d;
  for (int64_t i = 0; i < m; ++i) {
    const float *a = q ? q->rows + i * (q->stride ? q->stride : q->d) : x->rows + i * xs;
    int64_t *ri = ids + i * k;
    double *rd = dist + i * k;
    int32_t size = 0;
    for (int64_t p = 0; p < x->n; ++p) {
      if (!q && p == i) continue;
      double dd = ref_dist(x, a, x->rows + p * xs);
      if (size == k && !(dd < rd[k - 1])) continue; /* ties keep the lower id already in */
      int32_t pos = size < k ? size++ : k - 1;
      while (pos > 0 && rd[pos - 1] > dd) { rd[pos] = rd[pos - 1]; ri[pos] = ri[pos - 1]; pos--; }
      rd[pos] = dd;
      ri[pos] = p;
    }
    for (int32_t t = size; t < k; ++t) { ri[t] = -1; rd[t] = INFINITY; }
  }
}

int64_t vt_naive_mismatch(const vic_knn *got, const vic_data *x, const vic_data *q, int32_t k, double rel) {
  const int64_t rows = q ? q->n : x->n;
  if (got->n != rows || got->k != k) return rows;
  int64_t *ref = malloc((size_t)rows * k * sizeof *ref);
  double *refd = malloc((size_t)rows * k * sizeof *refd);
  if (!ref || !refd) { fprintf(stderr, "vt_naive_mismatch: out of memory\n"); exit(1); }
  vt_naive_knn(x, q, k, ref, refd);
  const int64_t bad = vt_compare_knn(got, ref, refd, rel);
  free(ref);
  free(refd);
  return bad;
}

double vt_recall(const vic_knn *got, const vic_knn *ref) {
  int64_t hit = 0;
  for (int64_t i = 0; i < ref->n; ++i)
    for (int32_t t = 0; t < ref->k; ++t)
      for (int32_t u = 0; u < got->k; ++u)
        if (got->ids[i * got->k + u] == ref->ids[i * ref->k + t]) { hit++; break; }
  return (double)hit / (double)(ref->n * ref->k);
}

int64_t vt_order_violations(const vic_knn *r) {
  int64_t bad = 0;
  for (int64_t i = 0; i < r->n; ++i)
    for (int32_t t = 1; t < r->k; ++t) {
      float a = r->dist[i * r->k + t - 1], b = r->dist[i * r->k + t];
      int64_t ia = r->ids[i * r->k + t - 1], ib = r->ids[i * r->k + t];
      if (ib < 0) continue;
      bad += a > b || (a == b && ia > ib) || ia < 0;
    }
  return bad;
}

int64_t vt_compare_knn(const vic_knn *got, const int64_t *ref_ids, const double *ref_dist, double rel) {
  int64_t bad = 0;
  int32_t k = got->k;
  for (int64_t i = 0; i < got->n; ++i) {
    int row_bad = 0;
    for (int32_t t = 0; t < k; ++t) {
      double r = ref_dist[i * k + t], g = got->dist[i * k + t];
      if (ref_ids[i * k + t] < 0) { row_bad |= got->ids[i * k + t] != -1; continue; }
      double tol = rel * (fabs(r) > 1e-3 ? fabs(r) : 1e-3);
      if (fabs(g - r) > tol) row_bad = 1;
      if (got->ids[i * k + t] != ref_ids[i * k + t]) {
        /* a different id is fine only where the reference has a tie */
        int64_t id = got->ids[i * k + t];
        int ok = 0;
        if (id >= 0) {
          /* its true distance must equal this rank's distance */
          ok = fabs(g - r) <= tol;
        }
        if (!ok) row_bad = 1;
      }
    }
    if (row_bad && bad < 3) {
      fprintf(stderr, "row %lld differs: got", (long long)i);
      for (int32_t t = 0; t < k && t < 6; ++t) fprintf(stderr, " %lld(%g)", (long long)got->ids[i * k + t], got->dist[i * k + t]);
      fprintf(stderr, " ref");
      for (int32_t t = 0; t < k && t < 6; ++t) fprintf(stderr, " %lld(%g)", (long long)ref_ids[i * k + t], ref_dist[i * k + t]);
      fprintf(stderr, "\n");
    }
    bad += row_bad;
  }
  return bad;
}

const char *vt_data_path(const char *relative, char *buf, size_t size) {
  const char *dir = getenv("VICINITY_DATA_DIR");
  snprintf(buf, size, "%s/%s", dir && *dir ? dir : "../shared/data", relative);
  return access(buf, R_OK) == 0 ? buf : NULL;
}

int vt_load_data(const char *relative, vio_matrix *m) {
  char buf[1024], err[256];
  const char *path = vt_data_path(relative, buf, sizeof buf);
  if (!path) {
    printf("%s absent (set VICINITY_DATA_DIR): that part skipped\n", relative);
    return 0;
  }
  if (vio_load(path, m, err, sizeof err) != 0) {
    VT_CHECK(0, "load %s: %s", path, err);
    return 0;
  }
  return 1;
}

int vt_small(void) {
  const char *s = getenv("VIC_TEST_SMALL");
  return s && *s && *s != '0';
}

int vt_gpu_start(int argc, char **argv) {
  vic_ctx *probe = vt_ctx(VIC_BACKEND_AUTO, 1);
  const int have = vic_cuda_available(probe);
  vic_ctx_destroy(probe);
  if (!have) vt_skip("no usable CUDA device");
  return (argc > 1 && strcmp(argv[1], "small") == 0) || vt_small();
}

const char *vt_tmp_path(const char *test, const char *name, char *buf, size_t size) {
  const char *dir = getenv("TMPDIR");
  snprintf(buf, size, "%s/vic_test_%s_%d_%s", dir && *dir ? dir : "/tmp", test, (int)getpid(), name);
  return buf;
}

unsigned char *vt_read_file(const char *path, long *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *len = ftell(f);
  fseek(f, 0, SEEK_SET);
  unsigned char *b = malloc(*len > 0 ? (size_t)*len : 1);
  if (fread(b, 1, (size_t)*len, f) != (size_t)*len) { free(b); b = NULL; }
  fclose(f);
  return b;
}

void vt_write_file(const char *path, const void *bytes, long len) {
  FILE *f = fopen(path, "wb");
  if (!f) { perror(path); exit(1); }
  int ok = fwrite(bytes, 1, (size_t)len, f) == (size_t)len;
  if (fclose(f) != 0) ok = 0;
  if (!ok) { fprintf(stderr, "cannot write %s\n", path); exit(1); }
}
