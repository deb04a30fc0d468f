/* The slab planning of the out-of-core density and peaks (slab_plan.h),
 * which needs no GPU: cuts that balance the slabs, regions and gaps that
 * never let a point outside a region come nearer than the gap, the
 * exactness test against kNN lists over all points (brute force here),
 * balls grown from an upper bound of the k-th distance that hold the true
 * neighbours, arcs of periodic axes, the grouping of the rows no slab
 * proves (by position, into regions that fit a device), and the memory
 * arithmetic.  Runs in CI. */
#include "slab_plan.h"
#include "test_util.h"
#include "nbody_models.h"

#include <math.h>
#include <string.h>

static double dist_pbc(const vic_data *x, int64_t a, int64_t b) {
  double s = 0;
  for (int j = 0; j < x->d; ++j) {
    double t = fabs(vic__slab_coord(x, a, j) - vic__slab_coord(x, b, j));
    if (x->box && x->box[j] > 0) t = fmin(t, x->box[j] - t);
    s += t * t;
  }
  return sqrt(s);
}

/* k-th distance of row i among the points where in[] is set (all: NULL). */
static double kth(const vic_data *x, int64_t i, int32_t k, const unsigned char *in, double *buf) {
  int64_t m = 0;
  for (int64_t t = 0; t < x->n; ++t)
    if (t != i && (!in || in[t])) buf[m++] = dist_pbc(x, i, t);
  /* partial selection sort: k is small */
  for (int32_t a = 0; a < k && a < m; ++a) {
    int64_t best = a;
    for (int64_t t = a + 1; t < m; ++t)
      if (buf[t] < buf[best]) best = t;
    double tmp = buf[a]; buf[a] = buf[best]; buf[best] = tmp;
  }
  return m >= k ? buf[k - 1] : INFINITY;
}

/* The plan of S slabs over x, made by a CPU context of its own (the plan
 * keeps nothing of it); the test ends when the plan cannot be made. */
static void make_plan(const vic_data *x, int64_t S, vic_slab_plan *p) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  VT_OK(c, vic__slab_plan_make(c, x, S, p));
  vic_ctx_destroy(c);
}

static void test_cuts(const char *name, const vic_data *x, int64_t S, double tolerance) {
  vic_slab_plan p;
  make_plan(x, S, &p);
  VT_CHECK(p.n_slabs == S && p.axis >= 0 && p.axis < x->d, "%s: plan %lld slabs axis %d", name, (long long)p.n_slabs,
           p.axis);
  for (int64_t s = 0; s < S; ++s) VT_CHECK(p.cut[s] <= p.cut[s + 1], "%s: cuts not ascending at %lld", name, (long long)s);
  int64_t *count = calloc((size_t)S, sizeof *count);
  for (int64_t i = 0; i < x->n; ++i) {
    int64_t s = vic__slab_of(&p, vic__slab_coord(x, i, p.axis));
    VT_CHECK(s >= 0 && s < S, "%s: point %lld in slab %lld", name, (long long)i, (long long)s);
    if (s < 0 || s >= S) continue;
    double v = vic__slab_coord(x, i, p.axis);
    VT_CHECK(v >= p.cut[s] && (v < p.cut[s + 1] || s == S - 1), "%s: point %lld not inside its slab", name,
             (long long)i);
    count[s]++;
  }
  const double want = (double)x->n / (double)S;
  for (int64_t s = 0; s < S; ++s)
    VT_CHECK(fabs((double)count[s] - want) <= tolerance * want, "%s: slab %lld holds %lld of about %.0f points", name,
             (long long)s, (long long)count[s], want);
  free(count);
  vic__slab_plan_free(&p);
}

/* For slab regions with a halo too small for some rows: whenever the
 * test says exact, the k-th distance inside the region equals the one
 * over all points (the region holds the true neighbours); balls from the
 * region's k-th distance hold every true neighbour and pass the test. */
static void test_exactness(const char *name, const vic_data *x, int32_t k, int64_t S, double h) {
  vic_slab_plan p;
  make_plan(x, S, &p);
  const int64_t n = x->n;
  unsigned char *in = malloc((size_t)n);
  double *buf = malloc((size_t)n * sizeof *buf);
  int64_t exact = 0, retried = 0;
  for (int64_t s = 0; s < S; ++s) {
    vic_region r;
    vic__slab_region(x, &p, s, h, &r);
    for (int64_t t = 0; t < n; ++t) in[t] = (unsigned char)vic__region_holds(&r, x, t);
    for (int64_t i = 0; i < n; ++i) {
      if (vic__slab_of(&p, vic__slab_coord(x, i, p.axis)) != s) continue;
      VT_CHECK(in[i], "%s: point %lld outside its own slab's region", name, (long long)i);
      const double g = vic__region_gap(&r, x, i);
      /* no point outside comes nearer than the gap */
      for (int64_t t = 0; t < n; t += 7)
        if (!in[t]) VT_CHECK(dist_pbc(x, i, t) >= g * (1 - 1e-9), "%s: point %lld outside at %.9g < gap %.9g", name,
                             (long long)t, dist_pbc(x, i, t), g);
      const double local = kth(x, i, k, in, buf), all = kth(x, i, k, NULL, buf);
      VT_CHECK(local >= all, "%s: a subset's k-th distance below the whole set's", name);
      if (vic__region_exact(&r, x, i, (float)local)) {
        ++exact;
        VT_CHECK(local == all, "%s: row %lld passed the gap test with k-th %.9g, true %.9g", name, (long long)i, local,
                 all);
        continue;
      }
      ++retried;
      vic_region b;
      vic__ball_region(x, i, local, &b);
      for (int64_t t = 0; t < n; ++t) in[t] = in[t] | (unsigned char)(vic__region_holds(&b, x, t) << 1);
      const double ball = kth(x, i, k, NULL, buf); /* the true neighbours ... */
      int64_t inside = 0;
      for (int64_t t = 0; t < n; ++t)
        if (t != i && dist_pbc(x, i, t) <= ball) inside += (in[t] >> 1) & 1;
      VT_CHECK(inside >= k, "%s: the ball of row %lld holds %lld of its %d true neighbours", name, (long long)i,
               (long long)inside, k);
      VT_CHECK(vic__region_exact(&b, x, i, (float)all), "%s: row %lld fails the test in its own ball", name,
               (long long)i);
      for (int64_t t = 0; t < n; ++t) in[t] &= 1;
    }
  }
  printf("%s: %lld rows exact in their slab, %lld need a larger region\n", name, (long long)exact, (long long)retried);
  VT_CHECK(exact > 0 && retried > 0, "%s: the halo should leave both kinds (%lld / %lld)", name, (long long)exact,
           (long long)retried);
  free(in);
  free(buf);
  vic__slab_plan_free(&p);
}

static void test_arcs(void) {
  const double box[3] = {10, 10, 10};
  float pts[3] = {9.5f, 0.5f, 5.0f};
  vic_data x = {pts, 3, 1, 0, VIC_L2, box};
  vic_region a, b;
  vic__ball_region(&x, 0, 0.2, &a); /* around 9.5 */
  vic__ball_region(&x, 1, 0.2, &b); /* around 0.5, across the wrap */
  vic__region_union(&a, &b);
  VT_CHECK(vic__region_holds(&a, &x, 0) && vic__region_holds(&a, &x, 1), "union of arcs across the wrap");
  VT_CHECK(!vic__region_holds(&a, &x, 2), "the union took the long way round the circle");
  VT_CHECK(isfinite(a.lo[0]) && a.hi[0] - a.lo[0] < 2, "union arc of length %.3g", a.hi[0] - a.lo[0]);
  vic__ball_region(&x, 2, 6, &b); /* wider than the box: the whole circle */
  VT_CHECK(!isfinite(b.lo[0]) && isinf(vic__region_gap(&b, &x, 2)), "a ball wider than the box");
}

static void test_memory(void) {
  const int64_t n = 100000000;
  const size_t gib = (size_t)1 << 30;
  int64_t last = -1;
  for (size_t b = 4 * gib; b <= 64 * gib; b *= 2) {
    int64_t s = vic__slab_count(n, 32, 3, b);
    VT_CHECK(s >= 2, "slabs %lld at %zu GiB", (long long)s, b / gib);
    VT_CHECK(last < 0 || s <= last, "more slabs with a larger budget");
    const int64_t own = (n + s - 1) / s;
    VT_CHECK(vic__slab_bytes(own + own / 2, own, 32, 3) <= b / 2 + ((size_t)8 << 20), "a slab of %lld slabs at %zu "
             "GiB does not leave half the budget", (long long)s, b / gib);
    last = s;
  }
  VT_CHECK(vic__slab_count(n, 32, 3, 1 << 20) == 0, "a 1 MiB budget accepted");
  VT_CHECK(vic__in_core_bytes(2 * n, 32, 3, 1) > vic__in_core_bytes(n, 32, 3, 1) &&
               vic__in_core_bytes(n, 32, 3, 1) > vic__in_core_bytes(n, 32, 3, 0),
           "in-core estimate not monotone");
  VT_CHECK(vic__peaks_lists_bytes(n, 32) < vic__in_core_bytes(n, 32, 3, 1), "out of core needs more than in core");
}

/* A later pass's task split with the true k-th distances known: every
 * row lands once; the rows put first are those the region proves exact,
 * the others sit in the half of the slab they belong to, and their new
 * region proves each of them exact and holds its true neighbours. */
static void test_split(const char *name, const vic_data *x, int32_t k, int64_t S, double halo) {
  vic_slab_plan p;
  make_plan(x, S, &p);
  const int64_t n = x->n;
  double *buf = malloc((size_t)n * sizeof *buf);
  float *rk = malloc((size_t)n * sizeof *rk);
  for (int64_t i = 0; i < n; ++i) rk[i] = (float)kth(x, i, k, NULL, buf);
  int64_t *rows = malloc((size_t)n * sizeof *rows), *tmp = malloc((size_t)n * sizeof *tmp);
  unsigned char *flags = malloc((size_t)n), *seen = malloc((size_t)n);
  int64_t split = 0;
  for (int64_t s = 0; s < S; ++s) {
    int64_t m = 0;
    for (int64_t i = 0; i < n; ++i)
      if (vic__slab_of(&p, vic__slab_coord(x, i, p.axis)) == s) rows[m++] = i;
    vic_region reg, lo, hi;
    vic__slab_region(x, &p, s, halo, &reg);
    const double mid = 0.5 * (p.cut[s] + p.cut[s + 1]);
    /* the outer slabs' regions are open on one side only: two slabs away
     * nothing is held (without periodic wrap) */
    if (S >= 4 && (s == 0 || s == S - 1) && !(x->box && x->box[p.axis] > 0)) {
      int64_t held = 0;
      for (int64_t i = 0; i < n; ++i)
        held += vic__slab_of(&p, vic__slab_coord(x, i, p.axis)) == (s == 0 ? S - 1 : 0) && vic__region_holds(&reg, x, i);
      VT_CHECK(held == 0, "%s: slab %lld's region holds %lld points of the far end", name, (long long)s, (long long)held);
    }
    int64_t ne = -1, lo_n = -1, hi_n = -1;
    vic__slab_split(x, rk, &reg, p.axis, mid, rows, m, tmp, flags, &ne, &lo_n, &lo, &hi_n, &hi);
    VT_CHECK(ne >= 0 && lo_n >= 0 && hi_n >= 0 && ne + lo_n + hi_n == m, "%s slab %lld: %lld + %lld + %lld of %lld rows",
             name, (long long)s, (long long)ne, (long long)lo_n, (long long)hi_n, (long long)m);
    memset(seen, 0, (size_t)n);
    for (int64_t t = 0; t < m; ++t) {
      const int64_t i = rows[t];
      VT_CHECK(!seen[i] && vic__slab_of(&p, vic__slab_coord(x, i, p.axis)) == s, "%s: row %lld twice or astray", name,
               (long long)i);
      seen[i] = 1;
      const int exact = vic__region_exact(&reg, x, i, rk[i]);
      VT_CHECK(exact == (t < ne), "%s: row %lld at %lld is %sexact in the slab's region", name, (long long)i,
               (long long)t, exact ? "" : "not ");
      if (t < ne) continue;
      const int low = t < ne + lo_n;
      const double v = vic__slab_coord(x, i, p.axis);
      VT_CHECK(low == (isfinite(mid) && v < mid), "%s: row %lld on the wrong side of the slab's middle", name, (long long)i);
      const vic_region *g = low ? &lo : &hi;
      VT_CHECK(vic__region_holds(g, x, i) && vic__region_exact(g, x, i, rk[i]),
               "%s: row %lld not proven exact in its ball region", name, (long long)i);
      /* the true neighbours lie inside that region */
      for (int64_t q = 0; q < n; ++q)
        if (q != i && dist_pbc(x, i, q) <= rk[i])
          VT_CHECK(vic__region_holds(g, x, q), "%s: neighbour %lld of row %lld outside its region", name, (long long)q,
                   (long long)i);
    }
    split += lo_n + hi_n;
  }
  printf("%s: %lld of %lld rows set apart for ball regions (halo %.2f)\n", name, (long long)split, (long long)n, halo);
  VT_CHECK(split > 0, "%s: the halo proved every row (the test meant some to fail)", name);
  free(buf);
  free(rk);
  free(rows);
  free(tmp);
  free(flags);
  free(seen);
  vic__slab_plan_free(&p);
}


/* Plummer points of scale 1 at the origin, the mass fraction below umax
 * (tails out to u < 0.999, as the billion-point generator keeps them). */
static float *plummer(int64_t n, double umax, uint64_t seed) {
  float *p = malloc((size_t)n * 3 * sizeof *p);
  if (p) nb_plummer(p, n, 1.0, (const double[3]){0, 0, 0}, umax, seed);
  return p;
}

typedef struct {
  const vic_data *x;
  int64_t cap, calls;
} group_test;

static void count_all(const vic_region *reg, int n_reg, int64_t *points, void *user) {
  group_test *gt = user;
  ++gt->calls;
  for (int g = 0; g < n_reg; ++g) {
    points[g] = 0;
    for (int64_t i = 0; i < gt->x->n; ++i) points[g] += vic__region_holds(&reg[g], gt->x, i);
  }
}

static int fits_cap(int64_t points, int64_t rows, void *user) {
  (void)rows;
  return points <= ((group_test *)user)->cap;
}

/* The leftover rows' grouping (vic__leftover_groups): rows that their
 * slab's region (a narrow halo) does not prove, with the k-th distances
 * that region gave (upper bounds); every group's region holds every
 * point within each of its rows' balls and proves the row exact with its
 * true k-th distance, the groups partition the rows; with a small
 * device the groups' regions stay far below the whole set (where one
 * region of all the rows, or runs along the cut axis, would not), with a
 * large one all rows go in one group, and with one too small for a
 * single row's ball the grouping gives up (0). */
static void test_groups(const char *name, const vic_data *x, int32_t k, int64_t S, double halo, int spread) {
  vic_slab_plan p;
  make_plan(x, S, &p);
  const int64_t n = x->n;
  unsigned char *in = malloc((size_t)n);
  double *buf = malloc((size_t)n * sizeof *buf);
  float *rk = malloc((size_t)n * sizeof *rk), *tk = malloc((size_t)n * sizeof *tk);
  int64_t *rows = malloc((size_t)n * sizeof *rows), L = 0;
  int64_t side[2] = {0, 0}, off_axis = 0; /* rows in the outer slabs; rows of inner slabs far off the axis */
  for (int64_t s = 0; s < S; ++s) {
    vic_region r;
    vic__slab_region(x, &p, s, halo, &r);
    for (int64_t t = 0; t < n; ++t) in[t] = (unsigned char)vic__region_holds(&r, x, t);
    for (int64_t i = 0; i < n; ++i) {
      if (vic__slab_of(&p, vic__slab_coord(x, i, p.axis)) != s) continue;
      rk[i] = (float)kth(x, i, k, in, buf);
      if (vic__region_exact(&r, x, i, rk[i])) continue;
      rows[L++] = i;
      tk[i] = (float)kth(x, i, k, NULL, buf);
      if (s == 0) side[0]++;
      else if (s == S - 1) side[1]++;
      else off_axis++;
    }
  }
  printf("%s: %lld leftover rows (%lld / %lld in the outer slabs, %lld in inner ones)\n", name, (long long)L,
         (long long)side[0], (long long)side[1], (long long)off_axis);
  VT_CHECK(L > 8 && side[0] > 0 && side[1] > 0 && off_axis > 0, "%s: the halo should leave rows on both outer sides "
           "and in the inner slabs", name);
  enum { MAXG = 64 };
  int64_t off[MAXG + 1], most = -1;
  vic_region reg[MAXG];
  unsigned char *seen = calloc((size_t)n, 1);

  /* (c) a device that holds everything: one group of all rows */
  group_test gt = {x, n, 0};
  int G = vic__leftover_groups(x, rk, rows, L, MAXG, count_all, fits_cap, &gt, off, reg, &most);
  VT_CHECK(G == 1 && off[0] == 0 && off[1] == L && gt.calls == 1, "%s: %d groups, %lld counts with room for all", name,
           G, (long long)gt.calls);
  const int64_t whole = most;
  VT_CHECK(whole > 0 && whole <= n, "%s: one region of %lld points", name, (long long)whole);

  /* (a), (b) a device for a fifth of the set */
  gt.cap = n / 5;
  gt.calls = 0;
  G = vic__leftover_groups(x, rk, rows, L, MAXG, count_all, fits_cap, &gt, off, reg, &most);
  printf("%s: one region of all leftover rows holds %lld of %lld points; %d groups of at most %lld (%lld counts)\n",
         name, (long long)whole, (long long)n, G, (long long)most, (long long)gt.calls);
  VT_CHECK(G >= 1 && most <= gt.cap, "%s: %d groups, most %lld over %lld", name, G, (long long)most, (long long)gt.cap);
  if (spread) {
    VT_CHECK(whole > gt.cap && G > 1, "%s: the spread-out rows should need several groups (%lld points, %d groups)",
             name, (long long)whole, G);
    /* runs along the cut axis, as many as the groups, reach across the set */
    int64_t *byax = malloc((size_t)L * sizeof *byax);
    memcpy(byax, rows, (size_t)L * sizeof *byax);
    for (int64_t a = 1; a < L; ++a) /* insertion sort by the axis coordinate: L is small */
      for (int64_t b = a; b > 0 && vic__slab_coord(x, byax[b], p.axis) < vic__slab_coord(x, byax[b - 1], p.axis); --b) {
        int64_t t = byax[b]; byax[b] = byax[b - 1]; byax[b - 1] = t;
      }
    int64_t runs_most = 0;
    for (int g = 0; g < G; ++g) {
      vic_region rr;
      int64_t cnt;
      const int64_t a = L * g / G, b = L * (g + 1) / G;
      for (int64_t t = a; t < b; ++t) {
        vic_region ball;
        vic__ball_region(x, byax[t], rk[byax[t]], &ball);
        if (t == a) rr = ball; else vic__region_union(&rr, &ball);
      }
      if (b > a) { count_all(&rr, 1, &cnt, &gt); if (cnt > runs_most) runs_most = cnt; }
    }
    printf("%s: %d runs along the cut axis instead: at most %lld points\n", name, G, (long long)runs_most);
    VT_CHECK(runs_most > gt.cap && most * 2 < runs_most, "%s: groups by position (%lld) should beat runs along the "
             "axis (%lld)", name, (long long)most, (long long)runs_most);
    free(byax);
  }
  int64_t covered = 0;
  for (int g = 0; g < G; ++g) {
    VT_CHECK(off[g] < off[g + 1], "%s: group %d empty", name, g);
    for (int64_t t = off[g]; t < off[g + 1]; ++t) {
      const int64_t i = rows[t];
      VT_CHECK(!seen[i], "%s: row %lld in two groups", name, (long long)i);
      seen[i] = 1;
      ++covered;
      VT_CHECK(vic__region_holds(&reg[g], x, i) && vic__region_exact(&reg[g], x, i, tk[i]),
               "%s: row %lld not proven exact in its group's region", name, (long long)i);
      for (int64_t q = 0; q < n; ++q)
        if (q != i && dist_pbc(x, i, q) <= rk[i])
          VT_CHECK(vic__region_holds(&reg[g], x, q), "%s: point %lld within row %lld's ball outside group %d's region",
                   name, (long long)q, (long long)i, g);
    }
  }
  VT_CHECK(G > 0 && off[0] == 0 && off[G] == L && covered == L, "%s: groups cover %lld of %lld rows", name,
           (long long)covered, (long long)L);

  /* a device smaller than any single row's region: no grouping */
  gt.cap = 0;
  G = vic__leftover_groups(x, rk, rows, L, MAXG, count_all, fits_cap, &gt, off, reg, &most);
  VT_CHECK(G == 0, "%s: %d groups with room for no point", name, G);
  free(seen);
  free(in);
  free(buf);
  free(rk);
  free(tk);
  free(rows);
  vic__slab_plan_free(&p);
}

/* The whole set's grid of cells for the leftover rows (slab_cells.c):
 * the cells list every id once, ascending within a cell; a region's
 * bound is at least its points; its gather is its own rows in order,
 * then exactly the other points inside it (none flagged), each with its
 * id -- for balls of leftover-like rows, slabs, open and periodic regions,
 * with a grid of many cells and of one. */
static void test_cells(const char *name, const vic_data *x, int64_t max_cells) {
  const int64_t n = x->n;
  vic_slab_cells g;
  VT_CHECK(vic__slab_cells_make(x, max_cells, &g) == 0, "%s: no grid", name);
  VT_CHECK(g.cells >= 1 && g.cells <= max_cells && g.start[0] == 0 && g.start[g.cells] == n, "%s: %lld cells, %lld ids",
           name, (long long)g.cells, (long long)g.start[g.cells]);
  unsigned char *seen = calloc((size_t)n, 1), *flag = calloc((size_t)n, 1);
  int64_t bad = 0;
  for (int64_t c = 0; c < g.cells; ++c)
    for (int64_t t = g.start[c]; t < g.start[c + 1]; ++t) {
      const int64_t i = g.order[t];
      bad += i < 0 || i >= n || seen[i] || (t > g.start[c] && g.order[t - 1] >= i);
      if (i >= 0 && i < n) seen[i] = 1;
    }
  VT_CHECK(bad == 0, "%s: %lld ids out of place in the cells", name, (long long)bad);
  int64_t most = 0;
  for (int64_t c = 0; c < g.cells; ++c)
    if (g.start[c + 1] - g.start[c] > most) most = g.start[c + 1] - g.start[c];
  if (g.cells > 1) VT_CHECK(most < n / 2, "%s: a cell of %lld of %lld points", name, (long long)most, (long long)n);
  uint64_t s = 77;
  int64_t small = 0, tries = 0;
  /* the slab plan the slab-like regions below are cut from, made once */
  vic_slab_plan p;
  make_plan(x, 4, &p);
  for (int trial = 0; trial < 60; ++trial) {
    vic_region r;
    const int64_t i = (int64_t)(vt_unif(&s) * (double)n) % n;
    if (trial % 6 == 5) { /* a slab-like region: one axis bounded */
      vic__slab_region(x, &p, trial % 4, 0.1, &r);
    } else {
      vic__ball_region(x, i, 0.05 + 2.0 * vt_unif(&s) * vt_unif(&s), &r);
      if (trial % 6 == 4) { vic_region b; vic__ball_region(x, (i * 7 + 3) % n, 0.3, &b); vic__region_union(&r, &b); }
    }
    /* own rows: a few points, inside or not, flagged */
    int64_t rows[5], nr = 0;
    for (int t = 0; t < 5; ++t) {
      const int64_t q = (i + (int64_t)t * 9973) % n;
      if (!flag[q]) { rows[nr++] = q; flag[q] = 1; }
    }
    int64_t inside = 0;
    for (int64_t q = 0; q < n; ++q) inside += !flag[q] && vic__region_holds(&r, x, q);
    const int64_t bound = vic__slab_cells_bound(&g, &r);
    float *pts = NULL;
    uint32_t *gid = NULL;
    int64_t m = -1;
    VT_CHECK(vic__slab_cells_gather(&g, x, &r, rows, nr, flag, 2, &pts, &gid, &m) == 0, "%s: gather failed", name);
    VT_CHECK(bound >= inside, "%s, region %d: bound %lld below its %lld points", name, trial, (long long)bound,
             (long long)inside);
    VT_CHECK(m == nr + inside, "%s, region %d: gathered %lld, want %lld + %lld", name, trial, (long long)m, (long long)nr,
             (long long)inside);
    int64_t wrong = 0;
    memset(seen, 0, (size_t)n);
    for (int64_t t = 0; pts && t < m && t < nr + inside; ++t) {
      const int64_t q = gid[t];
      const int64_t stride = x->stride ? x->stride : x->d;
      wrong += q < 0 || q >= n || seen[q];
      if (q < 0 || q >= n) continue;
      seen[q] = 1;
      wrong += t < nr ? q != rows[t] : flag[q] || !vic__region_holds(&r, x, q);
      for (int j = 0; j < x->d; ++j) wrong += pts[t * x->d + j] != x->rows[q * stride + j];
    }
    VT_CHECK(wrong == 0, "%s, region %d: %lld gathered points wrong", name, trial, (long long)wrong);
    small += bound < n / 4;
    ++tries;
    for (int64_t t = 0; t < nr; ++t) flag[rows[t]] = 0;
    free(pts);
    free(gid);
  }
  vic__slab_plan_free(&p);
  /* the grid has to narrow small regions down (one cell: all points) */
  if (g.cells >= 200) VT_CHECK(small * 2 > tries, "%s: only %lld of %lld regions bound below a quarter of the set", name,
                              (long long)small, (long long)tries);
  vic__slab_cells_free(&g);
  free(seen);
  free(flag);
}

int main(void) {
  const int64_t n = vt_small() ? 1200 : 2000;
  float *u = vt_uniform(n, 3, 10.f, 5);
  vic_data xu = {u, n, 3, 0, VIC_L2, NULL};
  test_cuts("uniform", &xu, 7, 0.05);
  float *cl = vt_clusters(n, 3, 5, 6);
  vic_data xc = {cl, n, 3, 0, VIC_L2, NULL};
  test_cuts("clusters", &xc, 4, 0.2);
  test_exactness("uniform", &xu, 16, 4, 0.3);
  test_exactness("clusters", &xc, 16, 3, 0.05);
  const double box[3] = {10, 10, 10};
  vic_data xb = {u, n, 3, 0, VIC_L2, box};
  test_cuts("uniform periodic", &xb, 5, 0.05);
  test_exactness("uniform periodic", &xb, 12, 5, 0.3);
  float *u2 = vt_uniform(n, 2, 1.f, 8);
  vic_data x2 = {u2, n, 2, 0, VIC_L2, NULL};
  test_exactness("uniform 2-d", &x2, 8, 6, 0.01);
  test_split("uniform", &xu, 16, 5, 0.3);
  test_split("clusters", &xc, 16, 3, 0.05);
  test_split("uniform periodic", &xb, 12, 5, 0.3);
  float *pl = plummer(n, 0.95, 41);
  vic_data xp = {pl, n, 3, 0, VIC_L2, NULL};
  test_groups("plummer tails", &xp, 16, 4, 0.5, 1);
  test_groups("uniform periodic", &xb, 12, 5, 0.3, 0);
  const int64_t nb = vt_small() ? 20000 : 60000;
  float *plb = plummer(nb, 0.999, 43);
  vic_data xpb = {plb, nb, 3, 0, VIC_L2, NULL};
  test_cells("plummer tails", &xpb, 1 << 18);
  test_cells("plummer tails, 64 cells at most", &xpb, 64);
  test_cells("plummer tails, one cell", &xp, 1);
  test_cells("uniform periodic", &xb, 1 << 18);
  test_cells("uniform 2-d", &x2, 1 << 18);
  test_arcs();
  test_memory();
  free(pl);
  free(plb);
  free(u);
  free(cl);
  free(u2);
  return vt_finish("test_slab_plan");
}
