/* Steps whose host pass follows their device task (steps_beside.h). */
#include "steps_beside.h"
#include "slot_threads.h"

typedef struct {
  vic_step_task task;
  vic_step_pass pass;
  void *arg;
  int q, task_threads, pass_threads, rc;
} beside_job;

/* slot 0: task q (the calling thread); slot 1: pass q - 1 (-1: the work before the passes) */
static void beside_slot(void *arg, int slot) {
  beside_job *b = arg;
  if (slot == 0)
    b->rc = b->task(b->arg, b->q, b->task_threads);
  else
    b->pass(b->arg, b->q - 1, b->pass_threads);
}

int vic__steps_beside(int steps, int threads, vic_step_task task, vic_step_pass pass, void *arg) {
  if (steps < 1) return 0;
  if (threads < 1) threads = 1;
  beside_job b = {task, pass, arg, 0, vic__slot_threads(threads, 2), 0, 0};
  b.pass_threads = threads - b.task_threads > 0 ? threads - b.task_threads : 1;
  for (int q = 0; q < steps; ++q) {
    b.q = q;
    vic__slots_run(2, 1, beside_slot, &b);
    if (b.rc) return b.rc;
  }
  pass(arg, steps - 1, threads);
  return 0;
}
