/* The check of per-particle masses (finite, >= 0) for one part of a larger
 * set, its particles numbered as in the whole (the MPI filters' ranks
 * check their pieces with it before any exchange).  The words are
 * vic_density's (test_data_numbered compares them). */
#include "internal.h"

#include <math.h>
#include <stdint.h>

vic_status vic_masses_validate_numbered(vic_ctx *c, const float *mass, int64_t n, const int64_t *numbers,
                                        int64_t *bad_particle) {
  if (bad_particle) *bad_particle = -1;
  if (!c) return VIC_E_ARGUMENT;
  if (!mass && n > 0) return vic__fail(c, VIC_E_ARGUMENT, "no masses (NULL)");
  int64_t first = -1; /* the bad particle with the lowest number */
  if (numbers) {
    for (int64_t i = 0; i < n; ++i)
      if ((!(mass[i] >= 0) || !isfinite(mass[i])) && (first < 0 || numbers[i] < numbers[first])) first = i;
  } else {
    int64_t low = INT64_MAX;
#pragma omp parallel for reduction(min : low) schedule(static) num_threads(vic__threads(c))
    for (int64_t i = 0; i < n; ++i)
      if (!(mass[i] >= 0) || !isfinite(mass[i])) low = i < low ? i : low;
    first = low == INT64_MAX ? -1 : low;
  }
  if (first < 0) return VIC_OK;
  const int64_t number = numbers ? numbers[first] : first;
  if (bad_particle) *bad_particle = number;
  return vic__fail(c, VIC_E_ARGUMENT, "mass of particle %lld is %g; masses must be finite and >= 0", (long long)number,
                   (double)mass[first]);
}
