/* The ABI's moving parts: the run-time version, the fixed sizes of the
 * result structs, and reading a caller's struct_size-first options over
 * this library's defaults. */
#include "internal.h"

#include <stddef.h>
#include <string.h>

#define VIC__STR2(x) #x
#define VIC__STR(x) VIC__STR2(x)

int vic_version(void) { return VIC_VERSION; }
const char *vic_version_string(void) {
  return VIC__STR(VIC_VERSION_MAJOR) "." VIC__STR(VIC_VERSION_MINOR) "." VIC__STR(VIC_VERSION_PATCH);
}

/* A result struct that outgrows its reserve would move everything after
 * it in the structs that embed it: append fields only while these hold. */
#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(vic_report) == VIC_REPORT_BYTES, "vic_report outgrew its reserve");
_Static_assert(sizeof(vic_knn) == VIC_KNN_BYTES, "vic_knn outgrew its reserve");
_Static_assert(sizeof(vic_peaks) == VIC_PEAKS_BYTES, "vic_peaks outgrew its reserve");
_Static_assert(sizeof(vic_halos) == VIC_HALOS_BYTES, "vic_halos outgrew its reserve");
_Static_assert(sizeof(vic_sph_image) == VIC_SPH_IMAGE_BYTES, "vic_sph_image outgrew its reserve");
#endif

/* The bytes of each result struct this library fills: the end of its last
 * field (update with every appended field). */
#ifdef VIC_ABI_TEST_EXTRA_FIELD
enum { REPORT_KNOWN = offsetof(vic_report, abi_test_extra) + sizeof(double) };
#else
enum { REPORT_KNOWN = offsetof(vic_report, devices_used) + sizeof(int32_t) };
#endif
enum { KNN_KNOWN = offsetof(vic_knn, report) + VIC_REPORT_BYTES,
       PEAKS_KNOWN = offsetof(vic_peaks, report) + VIC_REPORT_BYTES,
       HALOS_KNOWN = offsetof(vic_halos, report) + VIC_REPORT_BYTES,
       SPH_IMAGE_KNOWN = offsetof(vic_sph_image, report) + VIC_REPORT_BYTES };

void vic__report_clear(vic_report *r) {
  memset(r, 0, sizeof *r);
  r->struct_size = REPORT_KNOWN;
}
void vic__knn_clear(vic_knn *k) {
  memset(k, 0, sizeof *k);
  k->struct_size = KNN_KNOWN;
  k->report.struct_size = REPORT_KNOWN;
}
void vic__peaks_clear(vic_peaks *p) {
  memset(p, 0, sizeof *p);
  p->struct_size = PEAKS_KNOWN;
  p->report.struct_size = REPORT_KNOWN;
}

void vic__halos_clear(vic_halos *h) {
  memset(h, 0, sizeof *h);
  h->struct_size = HALOS_KNOWN;
  h->report.struct_size = REPORT_KNOWN;
}
void vic__sph_image_clear(vic_sph_image *im) {
  memset(im, 0, sizeof *im);
  im->struct_size = SPH_IMAGE_KNOWN;
  im->report.struct_size = REPORT_KNOWN;
}

void vic__init_sized(void *o, size_t struct_size, const void *defaults, size_t full_size) {
  if (!o || struct_size < sizeof(size_t)) return;
  memset(o, 0, struct_size);
  memcpy(o, defaults, struct_size < full_size ? struct_size : full_size);
  memcpy(o, &struct_size, sizeof struct_size);
}

/* A struct_size beyond this much more than this library's size is taken
 * for an options struct that no *_init call set. */
enum { NEWER_SLACK = 4096 };

vic_status vic__options_in(vic_ctx *c, const void *given, void *full, size_t full_size, const char *what) {
  size_t n;
  memcpy(&n, given, sizeof n);
  if (n < sizeof(size_t) || n > full_size + NEWER_SLACK) {
    if (!c) return VIC_E_ARGUMENT;
    return vic__fail(c, VIC_E_ARGUMENT, "%s: struct_size %zu is not a size of these options (set it with %s_init)",
                     what, n, what);
  }
  const unsigned char *g = given;
  for (size_t i = full_size; i < n; ++i)
    if (g[i]) {
      if (!c) return VIC_E_UNSUPPORTED;
      return vic__fail(c, VIC_E_UNSUPPORTED,
                       "%s: a field at byte %zu is set, but this library (version %s) knows only the first %zu bytes",
                       what, i, vic_version_string(), full_size);
    }
  const size_t take = n < full_size ? n : full_size;
  memcpy((unsigned char *)full + sizeof(size_t), g + sizeof(size_t), take - sizeof(size_t));
  return VIC_OK;
}
