/* Large host buffers given back on a thread of their own.  Returning tens
 * of GB of touched pages to the system is the kernel's work page by page;
 * a call whose results are already written need not wait for it. */
#include "internal.h"

#include <pthread.h>
#include <stdlib.h>

struct vic__free_batch {
  size_t count, capacity;
  void *p[];
};

static void *free_main(void *arg) {
  vic__free_batch *b = arg;
  for (size_t i = 0; i < b->count; ++i) free(b->p[i]);
  free(b);
  return NULL;
}

vic__free_batch *vic__free_batch_new(size_t capacity) {
  vic__free_batch *b = malloc(sizeof *b + capacity * sizeof b->p[0]);
  if (b) {
    b->count = 0;
    b->capacity = capacity;
  }
  return b;
}

void vic__free_batch_add(vic__free_batch *b, void *p) {
  if (b && b->count < b->capacity) b->p[b->count++] = p;
  else free(p); /* no batch, or no room in it: here */
}

void vic__free_batch_go(vic__free_batch *b) {
  if (!b) return;
  pthread_attr_t at;
  pthread_t th;
  int started = 0;
  if (pthread_attr_init(&at) == 0) {
    started = pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED) == 0 &&
              pthread_create(&th, &at, free_main, b) == 0;
    pthread_attr_destroy(&at);
  }
  if (!started) free_main(b); /* no thread: here */
}

void vic__free_beside(void *const *p, size_t count) {
  vic__free_batch *b = vic__free_batch_new(count);
  for (size_t i = 0; i < count; ++i) vic__free_batch_add(b, p[i]);
  vic__free_batch_go(b);
}
