/* Steps whose host pass follows their device task (steps_beside.h), as
 * the one-device out-of-core GNND merges a cross search's lists while the
 * next search runs: every task runs on the calling thread in order, each
 * pass reads its own task's buffer (task q + 2 has not yet written over
 * it), the passes run in order, pass q beside task q + 1 and pass -1
 * beside task 0, the threads are shared as documented, and a failing task
 * ends the steps with its code.
 * Runs in CI. */
#include "steps_beside.h"
#include "test_util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

enum { CELLS = 4096, MAXQ = 16 };

typedef struct {
  int buf[2][CELLS];
  int steps, fail_at;          /* steps asked for; the task that returns 7, or -1 */
  pthread_t caller;
  int tasks, passes;           /* counts so far */
  int task_order[MAXQ], pass_order[MAXQ], task_threads[MAXQ], pass_threads[MAXQ];
  int bad_cells, off_caller;
  int before, before_threads, before_after_pass; /* pass -1: runs, threads, runs after pass 0 */
  atomic_int before_started;
  int task0_saw_before, before_saw_task0;
  atomic_int task_started[MAXQ], pass_started[MAXQ];
  int task_saw_pass[MAXQ], pass_saw_task[MAXQ];
} job;

/* wait up to ten seconds for *flag (the other side of a pair started) */
static int saw(atomic_int *flag) {
  for (int i = 0; i < 10000; ++i) {
    if (atomic_load(flag)) return 1;
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  return 0;
}

static int task(void *arg, int q, int threads) {
  job *j = arg;
  if (!pthread_equal(pthread_self(), j->caller)) j->off_caller++;
  atomic_store(&j->task_started[q], 1);
  j->task_order[j->tasks++] = q;
  j->task_threads[q] = threads;
  int *b = j->buf[q % 2];
#pragma omp parallel for num_threads(threads)
  for (int i = 0; i < CELLS; ++i) b[i] = 1000 * q + i;
  if (q > 0) j->task_saw_pass[q] = saw(&j->pass_started[q - 1]);
  else j->task0_saw_before = saw(&j->before_started);
  return q == j->fail_at ? 7 : 0;
}

static void pass(void *arg, int q, int threads) {
  job *j = arg;
  if (q < 0) { /* the work before the passes, beside task 0 */
    atomic_store(&j->before_started, 1);
    j->before++;
    j->before_threads = threads;
    j->before_after_pass += j->passes > 0;
    j->before_saw_task0 = saw(&j->task_started[0]);
    return;
  }
  atomic_store(&j->pass_started[q], 1);
  j->pass_order[j->passes++] = q;
  j->pass_threads[q] = threads;
  /* beside task q + 1, which writes the other buffer */
  if (q + 1 < j->steps) j->pass_saw_task[q] = saw(&j->task_started[q + 1]);
  const int *b = j->buf[q % 2];
  int bad = 0;
#pragma omp parallel for num_threads(threads) reduction(+ : bad)
  for (int i = 0; i < CELLS; ++i) bad += b[i] != 1000 * q + i;
  j->bad_cells += bad;
}

static job *fresh(int steps, int fail_at) {
  static job j;
  memset(&j, 0, sizeof j);
  j.steps = steps;
  j.fail_at = fail_at;
  j.caller = pthread_self();
  return &j;
}

int main(void) {
  /* six steps on four threads: the order, the buffers, the shares */
  job *j = fresh(6, -1);
  VT_CHECK(vic__steps_beside(6, 4, task, pass, j) == 0, "six steps did not all run");
  VT_CHECK(j->tasks == 6 && j->passes == 6, "tasks %d, passes %d", j->tasks, j->passes);
  for (int q = 0; q < 6; ++q) {
    VT_CHECK(j->task_order[q] == q && j->pass_order[q] == q, "step %d: task %d, pass %d", q, j->task_order[q],
             j->pass_order[q]);
    VT_CHECK(j->task_threads[q] == 2, "task %d got %d threads", q, j->task_threads[q]);
    VT_CHECK(j->pass_threads[q] == (q == 5 ? 4 : 2), "pass %d got %d threads", q, j->pass_threads[q]);
  }
  VT_CHECK(j->bad_cells == 0, "%d cells of a pass's buffer were not its task's", j->bad_cells);
  VT_CHECK(j->off_caller == 0, "%d tasks ran off the calling thread", j->off_caller);
  VT_CHECK(j->before == 1 && j->before_threads == 2 && j->before_after_pass == 0,
           "pass -1: %d runs, %d threads, %d after pass 0", j->before, j->before_threads, j->before_after_pass);
#ifdef _OPENMP
  VT_CHECK(j->task0_saw_before && j->before_saw_task0, "pass -1 did not run beside task 0");
  for (int q = 1; q < 6; ++q) {
    VT_CHECK(j->task_saw_pass[q], "task %d did not run beside pass %d", q, q - 1);
    VT_CHECK(j->pass_saw_task[q - 1], "pass %d did not run beside task %d", q - 1, q);
  }
#endif

  /* one step: its task beside pass -1 (three threads: one and two), then its pass with every thread */
  j = fresh(1, -1);
  VT_CHECK(vic__steps_beside(1, 3, task, pass, j) == 0, "one step failed");
  VT_CHECK(j->tasks == 1 && j->passes == 1 && j->before == 1 && j->task_threads[0] == 1 && j->before_threads == 2 &&
               j->pass_threads[0] == 3 && j->bad_cells == 0,
           "one step: tasks %d, passes %d, pass -1 %d, threads %d / %d / %d", j->tasks, j->passes, j->before,
           j->task_threads[0], j->before_threads, j->pass_threads[0]);

  /* one thread: both sides still get one */
  j = fresh(3, -1);
  VT_CHECK(vic__steps_beside(3, 1, task, pass, j) == 0 && j->passes == 3 && j->bad_cells == 0 &&
               j->task_threads[1] == 1 && j->pass_threads[0] == 1, "one thread: passes %d, threads %d / %d",
           j->passes, j->task_threads[1], j->pass_threads[0]);

  /* task 2 fails: its code back, no task after it, pass 1 (beside it) done, pass 2 not */
  j = fresh(5, 2);
  VT_CHECK(vic__steps_beside(5, 4, task, pass, j) == 7, "a failing task's code was not returned");
  VT_CHECK(j->tasks == 3 && j->passes == 2 && j->pass_order[1] == 1, "after the failure: tasks %d, passes %d",
           j->tasks, j->passes);
  /* the first task fails: pass -1 (beside it) done, no other pass */
  j = fresh(4, 0);
  VT_CHECK(vic__steps_beside(4, 4, task, pass, j) == 7 && j->tasks == 1 && j->passes == 0 && j->before == 1,
           "first task failing: tasks %d, passes %d, pass -1 %d", j->tasks, j->passes, j->before);
  /* no steps */
  j = fresh(0, -1);
  VT_CHECK(vic__steps_beside(0, 4, task, pass, j) == 0 && j->tasks == 0 && j->passes == 0 && j->before == 0,
           "no steps ran something");
  return vt_finish("test_steps_beside");
}
