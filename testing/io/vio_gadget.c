/* vio_load_gadget over the snapshot library's Gadget reader (one copy of
 * the format's parsing, in snapshot/src/snap_gadget.c). */
#include "vio_internal.h"

#include "vic_snapshot.h"

#include <stdlib.h>
#include <string.h>

int vio_load_gadget(const char *path, vio_matrix *pos, vio_matrix *vel, float **mass, char *err,
                    size_t errsize) {
  if (!pos) return vio__fail(err, errsize, path, "no position matrix given");
  memset(pos, 0, sizeof *pos);
  if (vel) memset(vel, 0, sizeof *vel);
  if (mass) *mass = NULL;
  vsnap_format f = vsnap_detect(path);
  if (f != VSNAP_GADGET1 && f != VSNAP_GADGET2) {
    FILE *probe = path ? fopen(path, "rb") : NULL;
    if (!probe) return vio__fail(err, errsize, path, "cannot open for reading");
    fclose(probe);
    return vio__fail(err, errsize, path, "not a Gadget snapshot (no header record marker 256, or 8 before HEAD)");
  }
  vsnap *s;
  if (vsnap_open(path, &s, err, errsize) != 0) return -1;
  vsnap_particles p;
  int rc = vsnap_read(s, 0, vsnap_get_info(s)->n, &p, err, errsize);
  vsnap_close(s);
  if (rc != 0) return -1;
  pos->rows = p.pos; pos->n = p.n; pos->d = 3; p.pos = NULL;
  if (vel) { vel->rows = p.vel; vel->n = p.n; vel->d = 3; p.vel = NULL; }
  if (mass) { *mass = p.mass; p.mass = NULL; }
  vsnap_particles_free(&p);
  return 0;
}
