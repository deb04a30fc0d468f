/* Error formatting, chunked reading and size arithmetic for the readers. */
#include "vio_internal.h"

#include <stdarg.h>
#include <stdlib.h>
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

int vio__check_remaining(gzFile f, const char *path, int64_t bytes, const char *what, char *err, size_t errsize) {
  if (!gzdirect(f)) return 0;
  const int64_t size = vio__file_size(path), at = (int64_t)gztell(f);
  if (size < 0 || at < 0 || size - at >= bytes) return 0;
  return vio__fail(err, errsize, path, "truncated: the header declares %s, %lld bytes, but only %lld bytes follow", what,
                   (long long)bytes, (long long)(size - at));
}

int vio__grow(void **buf, size_t *cap, size_t need, size_t total) {
  if (need <= *cap) return 0;
  size_t nc = *cap < ((size_t)1 << 20) ? (size_t)1 << 20 : 2 * *cap;
  if (nc > total) nc = total;
  if (nc < need) nc = need;
  void *g = realloc(*buf, nc ? nc : 1);
  if (!g) return -1;
  *buf = g;
  *cap = nc;
  return 0;
}

uint32_t vio__bswap32(uint32_t v) {
  return (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);
}
