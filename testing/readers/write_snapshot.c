/* write_snapshot: the test writers as a program, so that the pvpython
 * tests can make HDF5 snapshots without h5py.
 *   write_snapshot FORMAT BASE SPEC
 * FORMAT: hdf5 | gadget1 | gadget2; BASE as in snap_write.h (hdf5 adds
 * ".hdf5").  SPEC is text: "box B", "time T", "redshift Z", "nfiles N",
 * "masstable m0..m5", "npart n0..n5", then one line per particle in type
 * order: x y z vx vy vz id mass. */
#include "snap_write.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
  if (argc != 4) { fprintf(stderr, "usage: write_snapshot hdf5|gadget1|gadget2 BASE SPEC\n"); return 2; }
  FILE *f = fopen(argv[3], "r");
  if (!f) { fprintf(stderr, "cannot read %s\n", argv[3]); return 1; }
  sw_snapshot s;
  memset(&s, 0, sizeof s);
  int nfiles = 1;
  char key[32];
  int64_t n = 0;
  while (fscanf(f, "%31s", key) == 1) {
    if (!strcmp(key, "box")) { if (fscanf(f, "%lf", &s.box) != 1) return 1; }
    else if (!strcmp(key, "time")) { if (fscanf(f, "%lf", &s.time) != 1) return 1; }
    else if (!strcmp(key, "redshift")) { if (fscanf(f, "%lf", &s.redshift) != 1) return 1; }
    else if (!strcmp(key, "nfiles")) { if (fscanf(f, "%d", &nfiles) != 1) return 1; }
    else if (!strcmp(key, "masstable")) { for (int t = 0; t < 6; ++t) if (fscanf(f, "%lf", &s.mass_table[t]) != 1) return 1; }
    else if (!strcmp(key, "npart")) {
      for (int t = 0; t < 6; ++t) { long long v; if (fscanf(f, "%lld", &v) != 1) return 1; s.npart[t] = v; n += v; }
      break;
    } else { fprintf(stderr, "unknown key %s\n", key); return 1; }
  }
  float *pos = malloc((size_t)(n + 1) * 12), *vel = malloc((size_t)(n + 1) * 12), *mass = malloc((size_t)(n + 1) * 4);
  int64_t *ids = malloc((size_t)(n + 1) * 8);
  for (int64_t i = 0; i < n; ++i) {
    long long id;
    if (fscanf(f, "%f %f %f %f %f %f %lld %f", &pos[3 * i], &pos[3 * i + 1], &pos[3 * i + 2], &vel[3 * i],
               &vel[3 * i + 1], &vel[3 * i + 2], &id, &mass[i]) != 8) {
      fprintf(stderr, "particle line %lld is malformed\n", (long long)i + 1);
      return 1;
    }
    ids[i] = id;
  }
  fclose(f);
  s.pos = pos; s.vel = vel; s.mass = mass; s.ids = ids;
  int rc;
  if (!strcmp(argv[1], "hdf5")) rc = sw_write_hdf5(argv[2], ".hdf5", &s, nfiles, 1);
  else {
    sw_gadget_options o = {!strcmp(argv[1], "gadget2"), 0, 0, 0, nfiles};
    rc = sw_write_gadget(argv[2], &s, &o);
  }
  free(pos); free(vel); free(mass); free(ids);
  if (rc != 0) fprintf(stderr, "writing %s failed\n", argv[2]);
  return rc != 0;
}
