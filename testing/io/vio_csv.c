/* CSV / whitespace text reader: one row per line, numbers separated by
 * commas, semicolons, tabs or spaces.  A first line with a field that is
 * not a number is a header and skipped; blank lines and lines starting
 * with '#' are skipped; every data row must have the column count of the
 * first.  Strict where a lenient reader would answer wrongly:
 *  - a UTF-8 byte-order mark at the start is skipped (it is not a header);
 *  - an empty field (",,", a leading or trailing comma or semicolon) is an
 *    error naming the line and the field, not a shorter row;
 *  - a NUL byte is an error (binary data, or UTF-16 text);
 *  - a number a float cannot hold (magnitude above 3.4e38, or nonzero
 *    below 1.2e-38, where it would become infinite or lose its digits to a
 *    subnormal or zero) is an error naming it: rescale the column. */
#include "vio_internal.h"

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { LINE_EOF = -1, LINE_NOMEM = -2, LINE_NUL = -3 };

/* Reads one line of any length into *buf (NUL-terminated); returns its
 * length, LINE_EOF at the end, LINE_NUL when the line holds a NUL byte. */
static int64_t read_line(gzFile f, char **buf, size_t *cap) {
  size_t len = 0;
  for (;;) {
    if (len + 2 > *cap) {
      size_t nc = *cap ? *cap * 2 : 4096;
      char *g = realloc(*buf, nc);
      if (!g) return LINE_NOMEM;
      *buf = g;
      *cap = nc;
    }
    int ch = gzgetc(f);
    if (ch < 0) {
      (*buf)[len] = '\0';
      return len ? (int64_t)len : LINE_EOF;
    }
    if (ch == 0) return LINE_NUL;
    (*buf)[len++] = (char)ch;
    if (ch == '\n') {
      (*buf)[len] = '\0';
      return (int64_t)len;
    }
  }
}

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
static int is_delim(char c) { return c == ',' || c == ';'; }
static int is_sep(char c) { return is_blank(c) || is_delim(c); }

enum { PARSE_TEXT = -1, PARSE_EMPTY = -2, PARSE_RANGE = -3, PARSE_NOMEM = -4 };

/* Parses the numbers of a line into vals (growing it); returns the count,
 * or PARSE_TEXT (a field that is not a number, at *bad), PARSE_EMPTY (an
 * empty field; *field is its 1-based position), PARSE_RANGE (a number a
 * float cannot hold, at *bad) or PARSE_NOMEM. */
static int64_t parse_line(const char *s, float **vals, size_t *cap, const char **bad, int64_t *field) {
  int64_t m = 0;
  const char *p = s;
  int need_field = 1, delims = 0; /* a delimiter must follow a field */
  for (;;) {
    while (is_blank(*p)) ++p;
    if (!*p) {
      if (need_field && delims) { *field = m + 1; return PARSE_EMPTY; } /* trailing delimiter */
      return m;
    }
    if (is_delim(*p)) {
      if (need_field) { *field = m + 1; return PARSE_EMPTY; }
      need_field = 1;
      ++delims;
      ++p;
      continue;
    }
    char *end;
    double v = strtod(p, &end);
    if (end == p || (*end && !is_sep(*end))) { *bad = p; return PARSE_TEXT; }
    if (isfinite(v) && (fabs(v) > FLT_MAX || (v != 0 && fabs(v) < FLT_MIN))) { *bad = p; return PARSE_RANGE; }
    if ((size_t)m == *cap) {
      size_t nc = *cap ? *cap * 2 : 64;
      float *g = realloc(*vals, nc * sizeof(float));
      if (!g) return PARSE_NOMEM;
      *vals = g;
      *cap = nc;
    }
    (*vals)[m++] = (float)v;
    need_field = 0;
    p = end;
  }
}

/* The field at p, for messages. */
static void field_text(const char *p, char *out, size_t size) {
  size_t i = 0;
  while (p[i] && !is_sep(p[i]) && i + 1 < size) { out[i] = p[i]; ++i; }
  out[i] = '\0';
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
    if (lineno == 1 && (unsigned char)p[0] == 0xEF && (unsigned char)p[1] == 0xBB && (unsigned char)p[2] == 0xBF)
      p += 3; /* UTF-8 byte-order mark */
    const char *start = p;
    while (*p && isspace((unsigned char)*p)) ++p;
    if (!*p || *p == '#') continue;
    const char *bad = NULL;
    int64_t field = 0;
    int64_t m = parse_line(start, &vals, &vals_cap, &bad, &field);
    if (m == PARSE_NOMEM) { rc = vio__fail(err, errsize, path, "out of memory at line %lld", (long long)lineno); break; }
    if (m == PARSE_EMPTY) {
      rc = vio__fail(err, errsize, path, "line %lld: field %lld is empty; every field must hold a number",
                     (long long)lineno, (long long)field);
      break;
    }
    if (m == PARSE_RANGE) {
      char text[32];
      field_text(bad, text, sizeof text);
      rc = vio__fail(err, errsize, path,
                     "line %lld: '%s' is outside what a float holds (magnitudes 1.2e-38 .. 3.4e38, or 0); rescale "
                     "the column",
                     (long long)lineno, text);
      break;
    }
    if (m == PARSE_TEXT) {
      if (n == 0 && d == 0) { d = -1; continue; } /* the header line */
      char text[24];
      field_text(bad, text, sizeof text);
      rc = vio__fail(err, errsize, path, "line %lld: '%s' is not a number", (long long)lineno, text);
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
  if (rc == 0 && len == LINE_NOMEM)
    rc = vio__fail(err, errsize, path, "out of memory reading line %lld", (long long)lineno + 1);
  if (rc == 0 && len == LINE_NUL)
    rc = vio__fail(err, errsize, path, "line %lld holds a NUL byte: not a text file (binary, or UTF-16 text?)",
                   (long long)lineno + 1);
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
