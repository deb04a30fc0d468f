/* Large host buffers given back on a thread of their own.  Returning tens
 * of GB of touched pages to the system is the kernel's work page by page;
 * a call whose results are already written need not wait for it. */
#include "internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  size_t count;
  void *p[];
} free_batch;

static void *free_main(void *arg) {
  free_batch *b = arg;
  for (size_t i = 0; i < b->count; ++i) free(b->p[i]);
  free(b);
  return NULL;
}

void vic__free_beside(void *const *p, size_t count) {
  free_batch *b = malloc(sizeof *b + count * sizeof b->p[0]);
  if (b) {
    b->count = count;
    memcpy(b->p, p, count * sizeof b->p[0]);
    pthread_attr_t at;
    pthread_t th;
    int started = 0;
    if (pthread_attr_init(&at) == 0) {
      started = pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED) == 0 &&
                pthread_create(&th, &at, free_main, b) == 0;
      pthread_attr_destroy(&at);
    }
    if (started) return;
    free(b);
  }
  for (size_t i = 0; i < count; ++i) free(p[i]); /* no thread: here */
}
