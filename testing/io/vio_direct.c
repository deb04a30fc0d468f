/* The values of an uncompressed file read by several threads at once
 * (vio_internal.h): each thread reads its own stretch with pread into
 * its own part of the destination, so that the copies out of the page
 * cache and the page faults of the fresh buffer are spread over cores. */
#define _XOPEN_SOURCE 700 /* pread */
#include "vio_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DIRECT_THREADS 32
#define DIRECT_PIECE ((int64_t)1 << 16) /* values a thread reads at least */
#define DIRECT_BUF ((int64_t)1 << 20)   /* float64 values converted at a time */

typedef struct {
  int fd;
  int64_t offset, a, b; /* values [a, b) of the file's, from byte offset */
  int itemsize;
  float *rows;
  int failed; /* 1: read error, 2: end of file, 3: no memory */
} direct_part;

/* bytes at byte position at into dst, however many preads it takes */
static int read_all(int fd, void *dst, int64_t bytes, int64_t at) {
  char *p = dst;
  while (bytes > 0) {
    const size_t ask = bytes > ((int64_t)1 << 30) ? (size_t)1 << 30 : (size_t)bytes;
    const ssize_t got = pread(fd, p, ask, (off_t)at);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return 1;
    if (got == 0) return 2;
    p += got;
    at += got;
    bytes -= got;
  }
  return 0;
}

static void *direct_main(void *arg) {
  direct_part *t = arg;
  const int64_t m = t->b - t->a;
  if (t->itemsize == 4) {
    t->failed = read_all(t->fd, t->rows + t->a, m * 4, t->offset + t->a * 4);
    return NULL;
  }
  const int64_t chunk = m < DIRECT_BUF ? m : DIRECT_BUF;
  double *buf = malloc((size_t)(chunk > 0 ? chunk : 1) * sizeof *buf);
  if (!buf) { t->failed = 3; return NULL; }
  for (int64_t i = t->a; i < t->b && !t->failed; i += chunk) {
    const int64_t c = t->b - i < chunk ? t->b - i : chunk;
    t->failed = read_all(t->fd, buf, c * 8, t->offset + i * 8);
    for (int64_t q = 0; !t->failed && q < c; ++q) t->rows[i + q] = (float)buf[q];
  }
  free(buf);
  return NULL;
}

int vio__read_direct(const char *path, int64_t offset, int64_t count, int itemsize, float **rows, char *err,
                     size_t errsize) {
  *rows = NULL;
  const int fd = open(path, O_RDONLY);
  if (fd < 0) return vio__fail(err, errsize, path, "cannot open for reading");
  float *out = malloc((size_t)(count > 0 ? count : 1) * sizeof *out);
  if (!out) {
    close(fd);
    return vio__fail(err, errsize, path, "out of memory for %lld values", (long long)count);
  }
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  int threads = cpus < 1 ? 1 : cpus > DIRECT_THREADS ? DIRECT_THREADS : (int)cpus;
  if ((int64_t)threads > count / DIRECT_PIECE) threads = count / DIRECT_PIECE > 1 ? (int)(count / DIRECT_PIECE) : 1;
  direct_part part[DIRECT_THREADS];
  pthread_t th[DIRECT_THREADS];
  unsigned char created[DIRECT_THREADS] = {0};
  for (int t = 0; t < threads; ++t)
    part[t] = (direct_part){fd, offset, count * t / threads, count * (t + 1) / threads, itemsize, out, 0};
  for (int t = 1; t < threads; ++t) created[t] = pthread_create(&th[t], NULL, direct_main, &part[t]) == 0;
  direct_main(&part[0]); /* the first part on this thread */
  int failed = part[0].failed;
  for (int t = 1; t < threads; ++t) {
    if (created[t]) pthread_join(th[t], NULL);
    else direct_main(&part[t]); /* no thread for it: read here */
    if (part[t].failed > failed) failed = part[t].failed;
  }
  close(fd);
  if (failed) {
    free(out);
    return failed == 3 ? vio__fail(err, errsize, path, "out of memory")
           : failed == 2 ? vio__fail(err, errsize, path, "truncated data: fewer than %lld values", (long long)count)
                         : vio__fail(err, errsize, path, "read error");
  }
  *rows = out;
  return 0;
}
