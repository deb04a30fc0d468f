/* The validation of one part of a larger data set, its rows numbered as in
 * the whole (vic_data_validate_numbered): processes that each hold a part
 * (the MPI filters' ranks) agree on the message one process would give.
 * The words are vic_data_validate's (test_data_numbered compares them). */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int row_ok(const vic_data *x, int64_t i) {
  const float *r = vic__row(x, i);
  for (int32_t j = 0; j < x->d; ++j)
    if (!isfinite(r[j])) return 0;
  return x->metric != VIC_COSINE || vic__dot(r, r, x->d) != 0.f;
}

/* Row i's problem, named as row `number`. */
static vic_status fail_row(vic_ctx *c, const vic_data *x, int64_t i, int64_t number) {
  const float *r = vic__row(x, i);
  for (int32_t j = 0; j < x->d; ++j)
    if (!isfinite(r[j]))
      return vic__fail(c, VIC_E_NONFINITE, "row %lld, component %d is %s; remove or fix non-finite values first",
                       (long long)number, (int)j, isnan(r[j]) ? "NaN" : "infinite");
  return vic__fail(c, VIC_E_ARGUMENT, "row %lld is the zero vector; the cosine metric is undefined for it",
                   (long long)number);
}

vic_status vic_data_validate_numbered(vic_ctx *c, const vic_data *x, const int64_t *numbers, int64_t *bad_row) {
  if (bad_row) *bad_row = -1;
  if (!c) return VIC_E_ARGUMENT;
  if (!numbers || !bad_row) return vic__fail(c, VIC_E_ARGUMENT, "no row numbers (NULL)");
  const vic_status s = vic_data_validate(c, x);
  /* The rows can be read only where the view itself is sound. */
  if (s == VIC_OK || !x || !x->rows || x->n <= 0 || x->d <= 0 || (x->stride != 0 && x->stride < x->d)) return s;
  int64_t local = -1, first = -1; /* the bad rows with the lowest index and the lowest number */
  for (int64_t i = 0; i < x->n; ++i) {
    if (row_ok(x, i)) continue;
    if (local < 0) local = i;
    if (first < 0 || numbers[i] < numbers[first]) first = i;
  }
  if (first < 0) return s;
  /* Was the failure a row's?  Then it named the first bad row by index;
   * a problem of the view (metric, box, ...) keeps its own message. */
  char said[512];
  snprintf(said, sizeof said, "%s", vic_ctx_error(c));
  fail_row(c, x, local, local);
  if (strcmp(vic_ctx_error(c), said) != 0) return vic_data_validate(c, x);
  *bad_row = numbers[first];
  return fail_row(c, x, first, numbers[first]);
}
