/* Names of enums and their parsing, for logs, reports and filter
 * properties; method names come from method_list.h. */
#include "internal.h"
#include "method_list.h"
#include "method_table.h"

#include <string.h>
#include <strings.h>

const char *vic_status_name(vic_status s) {
  static const char *const names[] = {"ok", "invalid argument", "non-finite value", "out of memory",
                                      "no GPU device", "GPU error", "cancelled", "i/o error",
                                      "bad file format", "unsupported"};
  return (unsigned)s < sizeof names / sizeof *names ? names[s] : "unknown status";
}

static const char *const backend_names[] = {"auto", "cpu", "cuda"};
static const char *const metric_names[] = {"l2", "cosine", "inner_product"};

#define COUNT(a) (int)(sizeof a / sizeof *a)

const char *vic_backend_name(vic_backend b) { return (unsigned)b < 3u ? backend_names[b] : "?"; }
const char *vic_metric_name(vic_metric m) { return (unsigned)m < 3u ? metric_names[m] : "?"; }
#define NAME(e, name, a1, a2, title, record) [e] = {name, a1, a2, title},
static const char *const method_names[][4] = {[VIC_METHOD_AUTO] = {"auto", NULL, NULL, "auto"},
                                              VIC_METHOD_LIST(NAME)};
#undef NAME

const char *vic_method_name(vic_method m) {
  return (unsigned)m < (unsigned)COUNT(method_names) && method_names[m][0] ? method_names[m][0] : "?";
}

const char *vic__method_title(vic_method m) {
  return (unsigned)m < (unsigned)COUNT(method_names) && method_names[m][3] ? method_names[m][3] : "?";
}

static int lookup(const char *name, const char *const *names, int count) {
  if (!name) return -1;
  for (int i = 0; i < count; ++i)
    if (strcasecmp(name, names[i]) == 0) return i;
  return -1;
}

vic_status vic_method_parse(const char *name, vic_method *out) {
  if (!name) return VIC_E_ARGUMENT;
  /* names first, then aliases, so an alias never shadows a name */
  for (int pass = 0; pass < 2; ++pass)
    for (int m = 0; m < COUNT(method_names); ++m)
      for (int a = pass ? 1 : 0; a < (pass ? 3 : 1); ++a)
        if (method_names[m][a] && !strcasecmp(name, method_names[m][a])) {
          *out = (vic_method)m;
          return VIC_OK;
        }
  return VIC_E_ARGUMENT;
}

vic_status vic_metric_parse(const char *name, vic_metric *out) {
  int i = lookup(name, metric_names, COUNT(metric_names));
  if (i < 0 && name) {
    if (!strcasecmp(name, "euclidean")) i = VIC_L2;
    else if (!strcasecmp(name, "ip") || !strcasecmp(name, "dot")) i = VIC_INNER_PRODUCT;
  }
  if (i < 0) return VIC_E_ARGUMENT;
  *out = (vic_metric)i;
  return VIC_OK;
}

vic_status vic_backend_parse(const char *name, vic_backend *out) {
  int i = lookup(name, backend_names, COUNT(backend_names));
  if (i < 0 && name && (!strcasecmp(name, "gpu"))) i = VIC_BACKEND_CUDA;
  if (i < 0) return VIC_E_ARGUMENT;
  *out = (vic_backend)i;
  return VIC_OK;
}
