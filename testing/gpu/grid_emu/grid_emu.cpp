// Host emulation of kernels/src/grid.cu's grid kNN (no GPU needed): the device code,
// turned into host C++ by gen_body.py, runs query by query with counters of
// the work per query; rows are checked against brute force.  See run.sh.
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <algorithm>
#include <vector>
#include <chrono>
struct float4 { float x, y, z, w; };
static inline float4 make_float4(float a, float b, float c, float d) { return float4{a, b, c, d}; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline uint32_t __float_as_uint(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float __uint_as_float(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
using std::max; using std::min;
struct dim { int64_t x; };
static dim blockIdx, blockDim = {1}, threadIdx = {0};
static uint64_t C_DIST, C_LB, C_CELL, C_ITER; static int C_R, C_LEVEL;
#define VICK_EXACT_MAX_K 256
static inline float vick_min_image(float a, float b, float L) {
  float t = fabsf(__fsub_rn(a, b));
  if (L > 0.f) { t = fmodf(t, L); if (t > 0.5f * L) t = __fsub_rn(L, t); }
  return t;
}
static inline uint32_t vick_float_order(float f) { uint32_t u = __float_as_uint(f); return (u & 0x80000000u) ? ~u : (u | 0x80000000u); }
static inline float vick_float_unorder(uint32_t u) { return __uint_as_float((u & 0x80000000u) ? (u & 0x7fffffffu) : ~u); }
static inline uint64_t vick_key(float dist, uint32_t id) { return ((uint64_t)vick_float_order(dist) << 32) | id; }
#define VICK_KEY_NONE 0xffffffffffffffffull
#include BODY

static uint64_t mix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static double unif(uint64_t *s) { return (mix(s) >> 11) * (1.0 / 9007199254740992.0); }
static double gauss(uint64_t *s) { double u = unif(s), v = unif(s); return sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v); }

/* host copy of grid_geometry's quantisation */
static void geometry(const float *x, int64_t n, int d, const double *box, grid_geom *g) {
  memset(g, 0, sizeof *g);
  g->d = d;
  float h[6];
  for (int j = 0; j < d; ++j) {
    float lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0; i < n; ++i) { lo = fminf(lo, x[i * d + j]); hi = fmaxf(hi, x[i * d + j]); }
    h[2 * j] = lo; h[2 * j + 1] = hi;
  }
  double ext = 0;
  for (int j = 0; j < d; ++j)
    if (!(box && box[j] > 0) && (double)h[2 * j + 1] - h[2 * j] > ext) ext = (double)h[2 * j + 1] - h[2 * j];
  for (int j = 0; j < d; ++j) {
    double lo, len;
    if (box && box[j] > 0) { g->box[j] = (float)box[j]; lo = 0; len = box[j]; g->qmax[j] = GRID_SIDE - 1; }
    else {
      lo = h[2 * j]; len = ext > 0 ? ext : 1.0;
      double span = ((double)h[2 * j + 1] - lo) / len * GRID_SIDE;
      g->qmax[j] = span >= GRID_SIDE - 1 ? (int)GRID_SIDE - 1 : (int)span + 1;
    }
    g->lo[j] = (float)lo;
    g->scale[j] = (float)(GRID_SIDE / len);
    double mag = fabs(lo) + len;
    g->eps[j] = (float)(4.0 * len / GRID_SIDE + 8.0 * mag * ldexp(1.0, -23));
  }
}

/* one case: returns rows differing from brute force (on a sample) */
static int run_case(const char *name, const float *rows, int64_t n, int d, int64_t stride, const double *box, int k, int64_t nq_check) {
  std::vector<float> x((size_t)n * d);
  for (int64_t i = 0; i < n; ++i) for (int j = 0; j < d; ++j) x[i * d + j] = rows[i * stride + j];
  grid_geom g;
  geometry(x.data(), n, d, box, &g);
  std::vector<uint64_t> codes(n); std::vector<uint32_t> ids(n);
  for (int64_t i = 0; i < n; ++i) { blockIdx.x = i; code_kernel(x.data(), n, g, codes.data(), ids.data()); }
  std::vector<std::pair<uint64_t, uint32_t>> pr(n);
  for (int64_t i = 0; i < n; ++i) pr[i] = {codes[i], ids[i]};
  std::stable_sort(pr.begin(), pr.end(), [](const std::pair<uint64_t,uint32_t>&a, const std::pair<uint64_t,uint32_t>&b){return a.first < b.first;});
  for (int64_t i = 0; i < n; ++i) { codes[i] = pr[i].first; ids[i] = pr[i].second; }
  std::vector<float4> sp(n);
  for (int64_t i = 0; i < n; ++i) { blockIdx.x = i; gather_kernel(x.data(), n, d, ids.data(), sp.data()); }
  std::vector<int64_t> oi((size_t)n * k); std::vector<float> od((size_t)n * k);
  int target = k / 4 > 2 ? k / 4 : 2;
  C_DIST = C_LB = C_CELL = 0;
  uint64_t maxdist = 0, maxiter = 0, maxlb = 0; int maxr = 0; double sumr = 0, sumlev = 0; C_ITER = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (int64_t p = 0; p < n; ++p) {
    blockIdx.x = p;
    uint64_t before = C_DIST, bi = C_ITER, bl = C_LB;
    if (k <= 16) grid_query_kernel<16>(codes.data(), ids.data(), sp.data(), n, g, k, target, oi.data(), od.data());
    else if (k <= 32) grid_query_kernel<32>(codes.data(), ids.data(), sp.data(), n, g, k, target, oi.data(), od.data());
    else grid_query_kernel<256>(codes.data(), ids.data(), sp.data(), n, g, k, target, oi.data(), od.data());
    if (C_DIST - before > maxdist) maxdist = C_DIST - before;
    if (C_R > maxr) maxr = C_R;
    if (C_ITER - bi > maxiter) maxiter = C_ITER - bi;
    if (C_LB - bl > maxlb) maxlb = C_LB - bl;
    sumr += C_R; sumlev += C_LEVEL;
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const uint64_t cd = C_DIST, cc = C_CELL, cl = C_LB;
  printf("  shell loop iterations per query %.1f (max %llu), binary searches max %llu, mean r %.2f (max %d), mean final level %.2f\n", (double)C_ITER / n, (unsigned long long)maxiter, (unsigned long long)maxlb, sumr / n, maxr, sumlev / n);
  /* brute-force check on a sample of rows (same float arithmetic) */
  int bad = 0;
  int64_t step = nq_check >= n ? 1 : n / nq_check;
  std::vector<uint64_t> keys(n);
  for (int64_t i = 0; i < n; i += step) {
    keys.clear();
    float4 q = make_float4(x[i * d], d > 1 ? x[i * d + 1] : 0.f, d > 2 ? x[i * d + 2] : 0.f, 0.f);
    for (int64_t t = 0; t < n; ++t) if (t != i) {
      float4 b = make_float4(x[t * d], d > 1 ? x[t * d + 1] : 0.f, d > 2 ? x[t * d + 2] : 0.f, 0.f);
      keys.push_back(vick_key(grid_dist(g, q, b), (uint32_t)t));
    }
    int kk = (int)std::min<int64_t>(k, n - 1);
    std::partial_sort(keys.begin(), keys.begin() + kk, keys.end());
    for (int t = 0; t < kk; ++t)
      if (oi[i * k + t] != (int64_t)(keys[t] & 0xffffffffu)) { ++bad; break; }
  }
  printf("%-24s n=%-8lld d=%d k=%-3d  per query: dist %.1f (max %llu), cell tests %.1f, binary searches %.1f; host %.2f s; sample rows differing %d\n",
         name, (long long)n, d, k, (double)cd / n, (unsigned long long)maxdist, (double)cc / n, (double)cl / n, secs, bad);
  return bad;
}

int main(int argc, char **argv) {
  int64_t n = argc > 1 ? atoll(argv[1]) : 60000;
  int only = argc > 2 ? atoi(argv[2]) : 0;
  uint64_t s = 21;
  std::vector<float> u((size_t)n * 3);
  for (auto &v : u) v = (float)unif(&s);
  s = 22;
  std::vector<float> cl((size_t)n * 3);
  { int clusters = 6, dd = 3; std::vector<float> c(clusters * dd); for (auto &v : c) v = (float)(3.0 * gauss(&s));
    for (int64_t i = 0; i < n; ++i) { int ci = (int)(unif(&s) * clusters); for (int j = 0; j < dd; ++j) cl[i * dd + j] = c[ci * dd + j] + (float)(0.2 * gauss(&s)); } }
  int bad = 0;
  if (only == 4) { /* every row checked */
    double bx[3] = {1, 1, 1}, bxz[3] = {1, 0, 1};
    std::vector<float> pr((size_t)n * 3);
    for (int64_t i = 0; i < n; ++i) for (int j = 0; j < 3; ++j) pr[i * 3 + j] = u[(i / 2) * 3 + j] + (i & 1) * 1e-6f * (j + 1);
    bad += run_case("all rows: d=2", u.data(), n, 2, 3, NULL, 10, n);
    bad += run_case("all rows: d=2 periodic", u.data(), n, 2, 3, bx, 10, n);
    bad += run_case("all rows: close pairs 2-d", pr.data(), n, 2, 3, NULL, 10, n);
    bad += run_case("all rows: close pairs 3-d per x,z", pr.data(), n, 3, 3, bxz, 10, n);
    bad += run_case("all rows: d=1", u.data(), n, 1, 3, NULL, 6, n);
    bad += run_case("all rows: uniform3 periodic", u.data(), n, 3, 3, bx, 32, n);
    printf("%s\n", bad ? "EMULATION: rows differ" : "EMULATION: all rows equal brute force");
    return bad != 0;
  }
  if (only == 3) {
    const double cen[5][3] = {{50, 50, 50}, {52.5, 51, 50.5}, {20, 70, 30}, {75, 25, 65}, {30, 20, 80}};
    const double sc[5] = {4, 0.5, 2, 1, 6}, fr[5] = {0.4, 0.05, 0.2, 0.1, 0.1};
    std::vector<float> pl((size_t)n * 3);
    uint64_t t = 99;
    int64_t at = 0;
    for (int c = 0; c < 5; ++c)
      for (int64_t i = 0; i < (int64_t)(n * fr[c]); ++i, ++at) {
        double uu = 1e-6 + unif(&t) * (0.999 - 1e-6), rad = sc[c] / sqrt(pow(uu, -2.0 / 3.0) - 1.0);
        double v[3] = {gauss(&t), gauss(&t), gauss(&t)}, nv = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        for (int j = 0; j < 3; ++j) pl[at * 3 + j] = (float)(cen[c][j] + rad * v[j] / nv);
      }
    for (; at < n; ++at) for (int j = 0; j < 3; ++j) pl[at * 3 + j] = (float)(100 * unif(&t));
    bad += run_case("plummer3", pl.data(), n, 3, 3, NULL, 32, 200);
    bad += run_case("plummer3 projected 2-d", pl.data(), n, 2, 3, NULL, 10, 200);
    return bad != 0;
  }
  double box[3] = {1, 1, 1}, box2[3] = {1, 0, 1}, box1[3] = {1, 1, 1};
  bad += run_case("grid d=2 (strided)", u.data(), n, 2, 3, NULL, 10, 2000);
  if (only == 2) return bad != 0;
  bad += run_case("grid d=2 periodic", u.data(), n, 2, 3, box, 10, 2000);
  bad += run_case("grid d=2 periodic x", u.data(), n, 2, 3, box2 + 0, 10, 2000);
  bad += run_case("grid d=2 k=200", u.data(), n, 2, 3, NULL, 200, 500);
  bad += run_case("grid d=1", u.data(), n, 1, 3, NULL, 6, 2000);
  bad += run_case("grid d=1 periodic", u.data(), n, 1, 3, box1, 6, 2000);
  bad += run_case("grid uniform3", u.data(), n, 3, 3, NULL, 32, 2000);
  bad += run_case("grid uniform3 k=1", u.data(), n, 3, 3, NULL, 1, 2000);
  bad += run_case("grid periodic unit box", u.data(), n, 3, 3, box, 32, 2000);
  bad += run_case("grid periodic x,z", u.data(), n, 3, 3, box2, 16, 2000);
  bad += run_case("grid clustered 3-d", cl.data(), n, 3, 3, NULL, 32, 2000);
  bad += run_case("grid clustered 2-d", cl.data(), n, 2, 3, NULL, 16, 2000);
  for (int64_t i = n / 2; i < n; ++i) memcpy(&cl[i * 3], &cl[(i - n / 2) * 3], 12);
  bad += run_case("grid duplicates", cl.data(), n, 3, 3, NULL, 12, 2000);
  bad += run_case("grid duplicates 2-d", cl.data(), n, 2, 3, NULL, 12, 2000);
  bad += run_case("grid tiny periodic", u.data(), 40, 3, 3, box, 30, 40);
  bad += run_case("grid tiny periodic 2-d", u.data(), 40, 2, 3, box, 30, 40);
  bad += run_case("grid tiny open 2-d", u.data(), 40, 2, 3, NULL, 39, 40);
  /* close pairs: every point with a twin 1e-6 away; k = 10 and k = 3 */
  std::vector<float> pr((size_t)n * 3);
  for (int64_t i = 0; i < n; ++i) for (int j = 0; j < 3; ++j) pr[i * 3 + j] = u[(i / 2) * 3 + j] + (i & 1) * 1e-6f * (j + 1);
  bad += run_case("close pairs 2-d", pr.data(), n, 2, 3, NULL, 10, 2000);
  bad += run_case("close pairs 3-d", pr.data(), n, 3, 3, NULL, 10, 2000);
  bad += run_case("close pairs 2-d periodic", pr.data(), n, 2, 3, box, 10, 2000);
  bad += run_case("close pairs 1-d", pr.data(), n, 1, 3, NULL, 10, 2000);
  /* a 2-d set on a line (y constant) and on the diagonal */
  std::vector<float> ln((size_t)n * 2);
  for (int64_t i = 0; i < n; ++i) { ln[i * 2] = u[i * 3]; ln[i * 2 + 1] = 0.25f; }
  bad += run_case("2-d on a line", ln.data(), n, 2, 2, NULL, 10, 2000);
  for (int64_t i = 0; i < n; ++i) ln[i * 2 + 1] = ln[i * 2];
  bad += run_case("2-d on the diagonal", ln.data(), n, 2, 2, NULL, 10, 2000);
  /* a dense blob and a sparse background in 2-d */
  std::vector<float> bl((size_t)n * 2);
  for (int64_t i = 0; i < n; ++i) { float sc = i % 10 ? 1e-3f : 1.f; bl[i * 2] = u[i * 3] * sc; bl[i * 2 + 1] = u[i * 3 + 1] * sc; }
  bad += run_case("2-d blob + background", bl.data(), n, 2, 2, NULL, 16, 2000);
  printf("%s\n", bad ? "EMULATION: rows differ" : "EMULATION: all sampled rows equal brute force");
  return bad != 0;
}
