/* Error formatting, chunked reading and size arithmetic for the readers. */
#include "vio_internal.h"

#include <stdarg.h>
#include <sys/stat.h>

int vio__fail(char *err, size_t errsize, const char *path, const char *fmt, ...) {
  if (err && errsize) {
    int used = snprintf(err, errsize, "%s: ", path ? path : "(no path)");
    if (used < 0) used = 0;
    if ((size_t)used < errsize) {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(err + used, errsize - (size_t)used, fmt, ap);
      va_end(ap);
    }
  }
  return -1;
}

int64_t vio__read(gzFile f, void *buf, size_t bytes) {
  unsigned char *p = buf;
  size_t done = 0;
  while (done < bytes) {
    size_t want = bytes - done;
    if (want > (1u << 30)) want = 1u << 30;
    int got = gzread(f, p + done, (unsigned)want);
    if (got < 0) return -1;
    if (got == 0) break;
    done += (size_t)got;
  }
  return (int64_t)done;
}

int64_t vio__file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? (int64_t)st.st_size : -1;
}

int64_t vio__mul(int64_t a, int64_t b, int64_t limit) {
  if (a < 0 || b < 0) return -1;
  if (a != 0 && b > limit / a) return -1;
  return a * b;
}

uint32_t vio__bswap32(uint32_t v) {
  return (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);
}
