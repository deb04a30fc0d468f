/* Jobs side by side, one host thread per slot (slot_threads.h). */
#include "slot_threads.h"

#ifdef _OPENMP
#include <omp.h>
#endif

void vic__slots_run(int slots, int teams, void (*job)(void *arg, int slot), void *arg) {
  /* one slot: on the calling thread, so that the job's own parallel
   * regions are not nested in a team of one */
  if (slots == 1) {
    job(arg, 0);
    return;
  }
#ifdef _OPENMP
  const int levels = omp_get_max_active_levels(), raise = teams && levels < omp_get_level() + 2;
  if (raise) omp_set_max_active_levels(omp_get_level() + 2);
  /* one thread per slot; should the runtime give fewer (nested regions),
   * the threads it gives take the slots in turn */
#pragma omp parallel num_threads(slots)
  {
    const int nth = omp_get_num_threads();
    for (int s = omp_get_thread_num(); s < slots; s += nth) job(arg, s);
  }
  if (raise) omp_set_max_active_levels(levels);
#else
  (void)teams;
  for (int s = 0; s < slots; ++s) job(arg, s);
#endif
}
