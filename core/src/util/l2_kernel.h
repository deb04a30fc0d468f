/* Squared Euclidean distance for the approximate methods' inner loops
 * (NN-Descent, random projection trees, graph search), where nearly all of
 * their time goes.  Unlike vic__l2sq it has no periodic-box branch and is
 * compiled for the best vector unit found at run time. */
#ifndef VIC_L2_KERNEL_H
#define VIC_L2_KERNEL_H

#include "internal.h"

/* The definitions (l2_kernel.c) carry VIC_VECTOR_CLONES.  Clang refuses
 * to make a function multiversioned after a plain declaration has been
 * used (the inline vic__approx_dist below), so for Clang the declarations
 * carry it too; GCC would then emit a resolver in every file that
 * includes this one, so for GCC they do not. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__)) && \
    !defined(__INTEL_COMPILER)
#define VIC_VECTOR_CLONES __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define VIC_VECTOR_CLONES
#endif
#if defined(__clang__)
#define VIC_VECTOR_CLONES_DECL VIC_VECTOR_CLONES
#else
#define VIC_VECTOR_CLONES_DECL
#endif

/* Sum of (a_j - b_j)^2.  Exactly symmetric in a and b, so d(a,b) == d(b,a)
 * bit for bit, and the summation order is fixed, so results repeat. */
VIC_VECTOR_CLONES_DECL float vic__l2sq_fast(const float *a, const float *b, int32_t d);

/* Dot product with the same vectorisation (projection-tree margins). */
VIC_VECTOR_CLONES_DECL float vic__dot_fast(const float *a, const float *b, int32_t d);

/* The working distance of the approximate methods: the fast kernel for L2
 * and for cosine (unit rows, see vic__prepare_rows), the general one when a
 * periodic box needs minimum-image wrapping. */
static inline float vic__approx_dist(const vic_data *x, const float *a, const float *b) {
  return x->box ? vic__l2sq(a, b, x->d, x->box) : vic__l2sq_fast(a, b, x->d);
}

#endif
