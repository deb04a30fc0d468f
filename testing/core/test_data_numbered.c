/* vic_data_validate_numbered: a part of a data set, its rows numbered as
 * in the whole, gives the message vic_data_validate gives for the whole
 * (the lowest-numbered bad row, under its number), whatever order the part
 * holds its rows in and however the whole is split (the MPI filters check
 * each rank's piece this way before any exchange); the same for masses
 * (vic_masses_validate_numbered against vic_density). */
#include "test_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { N = 60, D = 3 };

/* The message of vic_data_validate on rows[0 .. n) (a copy of it). */
static void whole_message(vic_ctx *c, const float *rows, int64_t n, vic_metric m, char *out, size_t size) {
  vic_data x = {rows, n, D, 0, m, NULL};
  VT_CHECK(vic_data_validate(c, &x) != VIC_OK, "the whole must fail");
  snprintf(out, size, "%s", vic_ctx_error(c));
}

/* Rows [a, b) of the whole in reverse order, numbered as in the whole. */
static vic_status part(vic_ctx *c, const float *rows, int64_t a, int64_t b, vic_metric m, int64_t *bad) {
  float part_rows[N * D];
  int64_t numbers[N];
  for (int64_t i = a; i < b; ++i) {
    memcpy(part_rows + (b - 1 - i) * D, rows + i * D, D * sizeof(float));
    numbers[b - 1 - i] = i;
  }
  vic_data x = {part_rows, b - a, D, 0, m, NULL};
  return vic_data_validate_numbered(c, &x, numbers, bad);
}

int main(void) {
  vic_ctx *c = vt_ctx(VIC_BACKEND_CPU, 1);
  float *rows = vt_uniform(N, D, 1.f, 3);
  int64_t bad = 0;
  /* All finite: OK, no row. */
  VT_CHECK(part(c, rows, 0, N, VIC_L2, &bad) == VIC_OK && bad == -1, "finite rows: bad %lld", (long long)bad);

  rows[41 * D + 1] = NAN;
  rows[45 * D + 0] = INFINITY;
  rows[52 * D + 2] = -INFINITY;
  char whole[512];
  whole_message(c, rows, N, VIC_L2, whole, sizeof whole);
  VT_CHECK(strstr(whole, "row 41, component 1 is NaN") != NULL, "whole: %s", whole);
  /* Split into 1, 2 and 3 parts: exactly the part holding row 41 names it,
   * with the whole's words; the part [45, 60) names row 45; [0, 20) passes. */
  VT_CHECK(part(c, rows, 0, 20, VIC_L2, &bad) == VIC_OK && bad == -1, "clean part: bad %lld", (long long)bad);
  VT_CHECK(part(c, rows, 20, 60, VIC_L2, &bad) == VIC_E_NONFINITE && bad == 41, "part 20..60: bad %lld", (long long)bad);
  VT_CHECK(strcmp(vic_ctx_error(c), whole) == 0, "part message '%s' differs from '%s'", vic_ctx_error(c), whole);
  VT_CHECK(part(c, rows, 0, N, VIC_L2, &bad) == VIC_E_NONFINITE && bad == 41, "all, reversed: bad %lld", (long long)bad);
  VT_CHECK(strcmp(vic_ctx_error(c), whole) == 0, "reversed message '%s'", vic_ctx_error(c));
  VT_CHECK(part(c, rows, 45, N, VIC_L2, &bad) == VIC_E_NONFINITE && bad == 45, "part 45..60: bad %lld", (long long)bad);
  VT_CHECK(strstr(vic_ctx_error(c), "row 45, component 0 is infinite") != NULL, "%s", vic_ctx_error(c));

  /* The cosine metric's zero vector is a row's problem too. */
  for (int j = 0; j < D; ++j) rows[41 * D + j] = 0.f;
  rows[45 * D + 0] = 1.f;
  rows[52 * D + 2] = 1.f;
  whole_message(c, rows, N, VIC_COSINE, whole, sizeof whole);
  VT_CHECK(part(c, rows, 30, N, VIC_COSINE, &bad) == VIC_E_ARGUMENT && bad == 41, "zero vector: bad %lld", (long long)bad);
  VT_CHECK(strcmp(vic_ctx_error(c), whole) == 0, "zero vector message '%s' vs '%s'", vic_ctx_error(c), whole);

  /* A problem that is no row's: vic_data_validate's message, no row. */
  vic_data empty = {rows, 0, D, 0, VIC_L2, NULL};
  int64_t numbers[1] = {0};
  VT_CHECK(vic_data_validate_numbered(c, &empty, numbers, &bad) == VIC_E_ARGUMENT && bad == -1, "empty: bad %lld", (long long)bad);
  VT_CHECK(vic_data_validate_numbered(c, &empty, NULL, &bad) == VIC_E_ARGUMENT, "NULL numbers accepted");
  /* A problem of the view comes first, as in vic_data_validate, even
   * where a row is bad too (row 41 is still the zero vector). */
  const double box[D] = {1, 1, 1};
  vic_data bad_metric = {rows, N, D, 0, VIC_COSINE, box}; /* boxes need L2 */
  VT_CHECK(vic_data_validate(c, &bad_metric) == VIC_E_ARGUMENT && strstr(vic_ctx_error(c), "periodic") != NULL,
           "a cosine box: %s", vic_ctx_error(c));
  snprintf(whole, sizeof whole, "%s", vic_ctx_error(c));
  int64_t numbers_n[N];
  for (int i = 0; i < N; ++i) numbers_n[i] = i;
  VT_CHECK(vic_data_validate_numbered(c, &bad_metric, numbers_n, &bad) == VIC_E_ARGUMENT && bad == -1 &&
               strcmp(vic_ctx_error(c), whole) == 0,
           "cosine box: bad %lld, '%s'", (long long)bad, vic_ctx_error(c));

  /* Masses: vic_density's message for the whole, from any part holding the
   * lowest-numbered bad mass; a part without one passes. */
  float mass[N];
  int64_t numbers_all[N];
  for (int i = 0; i < N; ++i) { mass[i] = 1.f; numbers_all[i] = N - 1 - i; } /* reversed numbering */
  VT_CHECK(vic_masses_validate_numbered(c, mass, N, numbers_all, &bad) == VIC_OK && bad == -1, "good masses: %lld",
           (long long)bad);
  mass[N - 1 - 17] = NAN;  /* particle 17 */
  mass[N - 1 - 33] = -2.f; /* particle 33 */
  VT_CHECK(vic_masses_validate_numbered(c, mass, N, numbers_all, &bad) == VIC_E_ARGUMENT && bad == 17, "NaN mass: %lld",
           (long long)bad);
  VT_CHECK(strstr(vic_ctx_error(c), "mass of particle 17 is nan") != NULL, "%s", vic_ctx_error(c));
  VT_CHECK(vic_masses_validate_numbered(c, mass, N - 1 - 17, numbers_all, &bad) == VIC_E_ARGUMENT && bad == 33,
           "the part without particle 17: %lld", (long long)bad);
  VT_CHECK(strstr(vic_ctx_error(c), "mass of particle 33 is -2") != NULL, "%s", vic_ctx_error(c));
  /* vic_density says the same for the whole, numbered 0 .. n-1. */
  float xyz[N * 3], rho[N];
  for (int i = 0; i < N * 3; ++i) xyz[i] = (float)((i * 37) % 101) / 101.f;
  float whole_mass[N];
  for (int i = 0; i < N; ++i) whole_mass[i] = mass[N - 1 - i];
  vic_data x3 = {xyz, N, 3, 0, VIC_L2, NULL};
  vic_knn nn;
  vic_build_options o;
  vic_build_options_init(&o);
  o.k = 4;
  VT_OK(c, vic_knn_build(c, &x3, &o, &nn));
  VT_CHECK(vic_masses_validate_numbered(c, mass, N, numbers_all, &bad) == VIC_E_ARGUMENT, "NaN mass again");
  snprintf(whole, sizeof whole, "%s", vic_ctx_error(c));
  VT_CHECK(vic_density(c, &x3, &nn, whole_mass, NULL, rho, NULL, NULL) == VIC_E_ARGUMENT &&
               strcmp(vic_ctx_error(c), whole) == 0,
           "vic_density says '%s', the numbered check '%s'", vic_ctx_error(c), whole);
  vic_knn_free(&nn);
  free(rows);
  vic_ctx_destroy(c);
  return vt_finish("test_data_numbered");
}
