/* The energy cut of the halo catalogue (halo_unbind.h).  Runs inside the
 * catalogue's parallel loop over halos, one halo per thread, so it is
 * serial itself. */
#include "halo_unbind.h"

#include <math.h>
#include <stdlib.h>

static void bulk_velocity(const vic__halo_members *h, const unsigned char *keep, double vb[3]) {
  double M = 0, s[3] = {0, 0, 0};
  for (int64_t i = 0; i < h->m; ++i) {
    if (!keep[i]) continue;
    M += h->mass[i];
    for (int j = 0; j < 3; ++j) s[j] += h->mass[i] * h->v[3 * i + j];
  }
  for (int j = 0; j < 3; ++j) vb[j] = M > 0 ? s[j] / M : 0.0;
}

static double direct_phi(const vic__halo_members *h, const unsigned char *keep, int64_t i, double G, double eps2) {
  double phi = 0;
  const double *a = h->dx + 3 * i;
  for (int64_t j = 0; j < h->m; ++j) {
    if (!keep[j] || j == i) continue;
    const double *b = h->dx + 3 * j;
    const double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    const double r2 = dx * dx + dy * dy + dz * dz + eps2;
    if (r2 > 0) phi -= h->mass[j] / sqrt(r2);
  }
  return G * phi;
}

/* phi of every kept member from the spherically averaged kept mass; the
 * members are in ascending r, so M(<r_i) is a prefix sum and the outer
 * shells' sum a suffix sum. */
static void spherical_phi(const vic__halo_members *h, const unsigned char *keep, double G, double eps, double *phi) {
  double outer = 0;
  for (int64_t i = h->m - 1; i >= 0; --i) {
    phi[i] = outer;
    if (keep[i]) outer += h->mass[i] / sqrt(h->r[i] * h->r[i] + eps * eps);
  }
  double inner = 0;
  for (int64_t i = 0; i < h->m; ++i) {
    const double r = sqrt(h->r[i] * h->r[i] + eps * eps);
    phi[i] = -G * (phi[i] + (r > 0 ? inner / r : 0.0));
    if (keep[i]) inner += h->mass[i];
  }
}

int64_t vic__unbind(const vic__halo_members *h, double G, double eps, int64_t direct_max, unsigned char *keep) {
  int64_t removed = 0, kept = 0;
  for (int64_t i = 0; i < h->m; ++i) kept += keep[i] != 0;
  double *phi = malloc((size_t)(h->m > 0 ? h->m : 1) * sizeof *phi);
  unsigned char *drop = malloc((size_t)(h->m > 0 ? h->m : 1));
  if (!phi || !drop) { free(phi); free(drop); return -1; }
  for (;;) {
    double vb[3];
    bulk_velocity(h, keep, vb);
    if (kept > direct_max) spherical_phi(h, keep, G, eps, phi);
    else
      for (int64_t i = 0; i < h->m; ++i) phi[i] = keep[i] ? direct_phi(h, keep, i, G, eps * eps) : 0.0;
    int64_t now = 0;
    for (int64_t i = 0; i < h->m; ++i) {
      drop[i] = 0;
      if (!keep[i]) continue;
      const double *v = h->v + 3 * i;
      const double ux = v[0] - vb[0], uy = v[1] - vb[1], uz = v[2] - vb[2];
      if (0.5 * (ux * ux + uy * uy + uz * uz) + phi[i] > 0) { drop[i] = 1; ++now; }
    }
    if (now == 0) break;
    for (int64_t i = 0; i < h->m; ++i)
      if (drop[i]) keep[i] = 0;
    removed += now;
    kept -= now;
    if (kept == 0) break;
  }
  free(phi);
  free(drop);
  return removed;
}
