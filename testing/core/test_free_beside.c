/* Host buffers given back beside the caller (free_beside.c): an array's
 * pointers (NULL among them) and a batch's are all freed, on the detached
 * thread or, with no batch or no room left in it, at once on the caller's
 * thread.  The bytes the allocator holds show each release; under
 * AddressSanitizer a double or stray free fails the test as well.
 * Runs in CI. */
#include "internal.h"
#include "test_util.h"

#include <string.h>
#include <time.h>
#ifdef __SANITIZE_ADDRESS__
/* the runtime's count (sanitizer/allocator_interface.h, not installed
 * with every compiler) */
size_t __sanitizer_get_current_allocated_bytes(void);
#else
#include <malloc.h>
#endif

enum { BUF = 4 << 20, N = 4 };

/* the bytes the allocator hands out now */
static size_t held(void) {
#ifdef __SANITIZE_ADDRESS__
  return __sanitizer_get_current_allocated_bytes();
#else
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
#endif
}

static void *buffer(void) {
  void *p = malloc(BUF);
  if (p) memset(p, 1, BUF);
  return p;
}

/* wait up to ten seconds for the allocator to hold less than below */
static int released_to(size_t below) {
  for (int i = 0; i < 10000; ++i) {
    if (held() < below) return 1;
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
  }
  return 0;
}

int main(void) {
  const size_t base = held(), slack = BUF / 4;

  /* an array, a NULL among its pointers */
  void *p[N + 1];
  for (int i = 0; i < N; ++i) p[i] = buffer();
  p[N] = NULL;
  VT_CHECK(held() >= base + (size_t)N * BUF, "the test's buffers were not counted");
  vic__free_beside(p, N + 1);
  VT_CHECK(released_to(base + slack), "an array's buffers were not all freed");

  /* a batch with room for two of three: the third is freed at once */
  vic__free_batch *b = vic__free_batch_new(2);
  VT_CHECK(b != NULL, "no batch of two pointers");
  void *q[3] = {buffer(), buffer(), buffer()};
  const size_t before = held();
  vic__free_batch_add(b, q[0]);
  vic__free_batch_add(b, q[1]);
  VT_CHECK(held() + slack > before, "a pointer within the batch's room was freed at once");
  vic__free_batch_add(b, q[2]);
  VT_CHECK(held() + BUF <= before, "a pointer past the batch's room was not freed at once");
  vic__free_batch_go(b);
  VT_CHECK(released_to(base + slack), "a batch's buffers were not all freed");

  /* no batch (what vic__free_batch_new gives without memory): each
   * pointer is freed at once, and go has nothing to do */
  for (int i = 0; i < N; ++i) p[i] = buffer();
  for (int i = 0; i < N; ++i) {
    const size_t now = held();
    vic__free_batch_add(NULL, p[i]);
    VT_CHECK(held() + BUF <= now, "pointer %d handed to no batch was not freed at once", i);
  }
  vic__free_batch_add(NULL, NULL);
  vic__free_batch_go(NULL);
  VT_CHECK(held() < base + slack, "the buffers handed to no batch were not all freed");

  /* an empty batch */
  vic__free_batch_go(vic__free_batch_new(0));
  return vt_finish("free_beside");
}
