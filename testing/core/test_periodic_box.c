/* A periodic box that does not hold the data is an error that names the
 * numbers, never a silent fold: a unit box on a 50,000-wide snapshot (the
 * issue's case), points outside a box whose origin the data give; while
 * boxes that hold the data -- offset, with points on the upper face, open
 * axes -- build as before, for the kNN lists and the density. */
#include "test_util.h"

#include <math.h>
#include <string.h>

static void expect_error(vic_ctx *c, const vic_data *x, const char *what, const char *a, const char *b) {
  vic_build_options o;
  vic_build_options_init(&o);
  o.k = 8;
  vic_knn r;
  vic_status s = vic_knn_build(c, x, &o, &r);
  const char *m = vic_ctx_error(c);
  VT_CHECK(s == VIC_E_ARGUMENT && strstr(m, a) && (!b || strstr(m, b)), "%s: status %s, message: %s", what,
           vic_status_name(s), m);
  if (s == VIC_OK) vic_knn_free(&r);
  float *rho = malloc((size_t)x->n * sizeof(float));
  s = vic_knn_density(c, x, 8, NULL, NULL, NULL, rho, NULL, NULL);
  VT_CHECK(s == VIC_E_ARGUMENT && strstr(vic_ctx_error(c), a), "%s (density): status %s, message: %s", what,
           vic_status_name(s), vic_ctx_error(c));
  free(rho);
}

static void expect_ok(vic_ctx *c, const vic_data *x, const char *what) {
  vic_build_options o;
  vic_build_options_init(&o);
  o.k = 8;
  vic_knn r;
  vic_status s = vic_knn_build(c, x, &o, &r);
  VT_CHECK(s == VIC_OK, "%s: %s", what, vic_ctx_error(c));
  if (s == VIC_OK) vic_knn_free(&r);
}

int main(void) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  const int64_t n = 2000;
  float *p = vt_uniform(n, 3, 50000.f, 3);
  double unit[3] = {1, 1, 1}, big[3] = {50000, 50000, 50000};
  vic_data x = {p, n, 3, 0, VIC_L2, unit, NULL};
  /* the case: Box Lengths left at 1 on a 50,000 kpc/h snapshot */
  expect_error(c, &x, "unit box on a 50000 box", "periodic axis 0: the points span", "but the box length is 1;");
  x.box = big;
  expect_ok(c, &x, "the right box");
  double origin0[3] = {0, 0, 0};
  x.origin = origin0;
  expect_ok(c, &x, "the right box and origin");
  double small[3] = {50000, 30000, 50000};
  x.box = small;
  x.origin = NULL;
  expect_error(c, &x, "y too short", "periodic axis 1: the points span", "box length is 30000");
  double open_y[3] = {50000, 0, 50000};
  x.box = open_y;
  expect_ok(c, &x, "an open axis has no length to hold");

  /* an origin from the data (a LAMMPS box [-5, 5) x [0, 20) x [2, 10)) */
  for (int64_t i = 0; i < n; ++i) {
    p[3 * i] = p[3 * i] / 5000.f - 5.f;
    p[3 * i + 1] = p[3 * i + 1] / 2500.f;
    p[3 * i + 2] = p[3 * i + 2] / 7500.f + 2.5f; /* [2.5, 9.17): room below and above */
  }
  double lbox[3] = {10, 20, 8}, lorigin[3] = {-5, 0, 2};
  x.box = lbox;
  x.origin = lorigin;
  expect_ok(c, &x, "points in their offset box");
  p[0] = 5.f; /* on the upper face: the lower face after wrapping */
  expect_ok(c, &x, "a point on the upper face");
  x.origin = NULL;
  expect_ok(c, &x, "the offset box without its origin");
  x.origin = lorigin;
  float keep = p[3 * 7 + 2];
  p[3 * 7 + 2] = 1.5f; /* below z = 2: the extent is still < 8, but the point is outside its box */
  expect_error(c, &x, "a point below the origin", "periodic axis 2: row 7 has coordinate 1.5,",
               "outside the box [2, 10)");
  p[3 * 7 + 2] = keep;
  double shifted[3] = {-5, 0, 4};
  x.origin = shifted;
  expect_error(c, &x, "a wrong origin", "periodic axis 2: row", "outside the box [4, 12)");
  double bad_origin[3] = {-5, NAN, 2};
  x.origin = bad_origin;
  expect_error(c, &x, "a NaN origin", "periodic box origin 1 is nan", NULL);

  free(p);
  vic_ctx_destroy(c);
  return vt_finish("test_periodic_box");
}
