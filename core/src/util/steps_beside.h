/* Steps whose host pass follows their device task, the host pass of one
 * step beside the device task of the next. */
#ifndef VIC_STEPS_BESIDE_H
#define VIC_STEPS_BESIDE_H

/* task(arg, q, threads) for q = 0 .. steps - 1 in order, writing into
 * buffer q % 2, and pass(arg, q, threads) after it, reading that buffer:
 * pass q runs beside task q + 1 (each with its share of `threads`, on two
 * host threads, the tasks on the calling thread), so task q + 2 reuses
 * pass q's buffer only after pass q has returned.  pass(arg, -1, threads)
 * runs beside task 0: the host's work that the passes need first.  The
 * last pass gets every thread.  A task's nonzero return ends the steps
 * (the pass beside it still finishes) and is returned; 0 when all ran. */
typedef int (*vic_step_task)(void *arg, int q, int threads);
typedef void (*vic_step_pass)(void *arg, int q, int threads);
int vic__steps_beside(int steps, int threads, vic_step_task task, vic_step_pass pass, void *arg);

#endif
