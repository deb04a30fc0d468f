/* The vectorised distance kernels declared in l2_kernel.h.
 *
 * Compilers do not vectorise a float sum without -ffast-math because that
 * reorders additions.  Here the reordering is written out: ACC independent
 * partial sums, combined in a fixed order at the end, which vectorises into
 * ACC/8 AVX registers with independent dependency chains.  On x86-64 GCC and
 * Clang also emit an AVX2+FMA clone chosen at load time (target_clones), so
 * the default build stays portable and still uses the wide unit. */
#include "l2_kernel.h"

enum { ACC = 16 };

VIC_VECTOR_CLONES
float vic__l2sq_fast(const float *a, const float *b, int32_t d) {
  float acc[ACC] = {0};
  int32_t j = 0;
  for (; j + ACC <= d; j += ACC)
    for (int t = 0; t < ACC; ++t) {
      float u = a[j + t] - b[j + t];
      acc[t] += u * u;
    }
  float s = 0.f;
  for (; j < d; ++j) {
    float u = a[j] - b[j];
    s += u * u;
  }
  for (int t = 0; t < ACC; ++t) s += acc[t];
  return s;
}

VIC_VECTOR_CLONES
float vic__dot_fast(const float *a, const float *b, int32_t d) {
  float acc[ACC] = {0};
  int32_t j = 0;
  for (; j + ACC <= d; j += ACC)
    for (int t = 0; t < ACC; ++t) acc[t] += a[j + t] * b[j + t];
  float s = 0.f;
  for (; j < d; ++j) s += a[j] * b[j];
  for (int t = 0; t < ACC; ++t) s += acc[t];
  return s;
}
