/* Jobs side by side, one host thread per slot (one per device). */
#ifndef VIC_SLOT_THREADS_H
#define VIC_SLOT_THREADS_H

/* job(arg, s) for every slot s in [0, slots), each on its own thread; one
 * slot runs on the calling thread.  teams != 0: the parallel regions a job
 * opens get real teams -- OpenMP makes a region nested in another team
 * inactive (one thread) unless max-active-levels allows two levels, so it
 * is raised for the call and set back after -- and each job should ask for
 * vic__slot_threads(total, slots) threads so that the slots share the cores. */
void vic__slots_run(int slots, int teams, void (*job)(void *arg, int slot), void *arg);

/* Threads of each slot's team when slots share total threads (at least 1). */
static inline int vic__slot_threads(int total, int slots) {
  return slots > 0 && total / slots > 1 ? total / slots : 1;
}

#endif
