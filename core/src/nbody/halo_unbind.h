/* The energy cut of the halo catalogue (halos.c): which members of one
 * halo are bound. */
#ifndef VIC_HALO_UNBIND_H
#define VIC_HALO_UNBIND_H

#include <stdint.h>

typedef struct {
  int64_t m;           /* members, sorted by ascending r */
  const double *r;     /* their distances from the centre */
  const double *dx;    /* m x 3 offsets from the centre (minimum image) */
  const double *v;     /* m x 3 velocities */
  const double *mass;  /* m masses */
} vic__halo_members;

/* Clears keep[i] for the members with positive energy per unit mass,
 * |v_i - v_bulk|^2 / 2 + phi_i (v_bulk and phi over the kept members),
 * repeating until no member is removed.  phi is the direct pair sum
 * -G sum_j m_j / sqrt(r_ij^2 + eps^2) for at most direct_max kept
 * members, else the potential of the spherically averaged kept mass,
 * -G (M(<r_i) / r_i + sum_{r_j > r_i} m_j / r_j).  keep starts as the
 * members to consider (all 1).  Returns the number removed. */
int64_t vic__unbind(const vic__halo_members *h, double G, double eps, int64_t direct_max, unsigned char *keep);

#endif
