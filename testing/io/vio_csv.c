/* CSV / whitespace text reader: one row per line, numbers separated by
 * commas, semicolons, tabs or spaces.  A first line that is not all numbers
 * is a header and skipped; blank lines and lines starting with '#' are
 * skipped; every data row must have the column count of the first. */
#include "vio_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Reads one line of any length into *buf; returns its length, or -1 at EOF. */
static int64_t read_line(gzFile f, char **buf, size_t *cap) {
  size_t len = 0;
  for (;;) {
    if (len + 2 > *cap) {
      size_t nc = *cap ? *cap * 2 : 4096;
      char *g = realloc(*buf, nc);
      if (!g) return -2;
      *buf = g;
      *cap = nc;
    }
    if (!gzgets(f, *buf + len, (int)(*cap - len))) return len ? (int64_t)len : -1;
    len += strlen(*buf + len);
    if (len && (*buf)[len - 1] == '\n') return (int64_t)len;
  }
}

static int is_sep(char c) { return c == ',' || c == ';' || c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* Parses the numbers of a line into vals (growing it); returns the count,
 * or -1 when a field is not a number (*bad points at it). */
static int64_t parse_line(const char *s, float **vals, size_t *cap, const char **bad) {
  int64_t m = 0;
  const char *p = s;
  for (;;) {
    while (*p && is_sep(*p)) ++p;
    if (!*p) return m;
    errno = 0;
    char *end;
    double v = strtod(p, &end);
    if (end == p || (*end && !is_sep(*end))) { *bad = p; return -1; }
    if ((size_t)m == *cap) {
      size_t nc = *cap ? *cap * 2 : 64;
      float *g = realloc(*vals, nc * sizeof(float));
      if (!g) { *bad = NULL; return -1; }
      *vals = g;
      *cap = nc;
    }
    (*vals)[m++] = (float)v;
    p = end;
  }
}

int vio__load_csv(gzFile f, const char *path, vio_matrix *out, char *err, size_t errsize) {
  char *line = NULL;
  size_t line_cap = 0, vals_cap = 0, rows_cap = 0;
  float *vals = NULL, *rows = NULL;
  int64_t n = 0, d = 0, lineno = 0, len;
  int rc = 0;
  while ((len = read_line(f, &line, &line_cap)) >= 0) {
    ++lineno;
    const char *p = line;
    while (*p && isspace((unsigned char)*p)) ++p;
    if (!*p || *p == '#') continue;
    const char *bad = NULL;
    int64_t m = parse_line(line, &vals, &vals_cap, &bad);
    if (m < 0 && !bad) { rc = vio__fail(err, errsize, path, "out of memory at line %lld", (long long)lineno); break; }
    if (m < 0) {
      if (n == 0 && d == 0) { d = -1; continue; } /* the header line */
      char field[24] = {0};
      size_t i = 0;
      while (bad[i] && !is_sep(bad[i]) && i + 1 < sizeof field) { field[i] = bad[i]; ++i; }
      rc = vio__fail(err, errsize, path, "line %lld: '%s' is not a number", (long long)lineno, field);
      break;
    }
    if (d <= 0) d = m;
    if (m != d) {
      rc = vio__fail(err, errsize, path, "line %lld has %lld columns, the first data line has %lld",
                     (long long)lineno, (long long)m, (long long)d);
      break;
    }
    if ((size_t)(n + 1) * (size_t)d > rows_cap) {
      size_t nc = rows_cap ? rows_cap * 2 : (size_t)d * 1024;
      float *g = realloc(rows, nc * sizeof(float));
      if (!g) { rc = vio__fail(err, errsize, path, "out of memory at line %lld", (long long)lineno); break; }
      rows = g;
      rows_cap = nc;
    }
    memcpy(rows + (size_t)n * (size_t)d, vals, (size_t)d * sizeof(float));
    ++n;
  }
  if (rc == 0 && len == -2) rc = vio__fail(err, errsize, path, "out of memory reading line %lld", (long long)lineno + 1);
  if (rc == 0 && n == 0) rc = vio__fail(err, errsize, path, "no numeric rows found");
  if (rc == 0 && d > INT32_MAX) rc = vio__fail(err, errsize, path, "too many columns");
  free(line);
  free(vals);
  if (rc != 0) { free(rows); return rc; }
  out->rows = rows;
  out->n = n;
  out->d = (int32_t)d;
  return 0;
}
