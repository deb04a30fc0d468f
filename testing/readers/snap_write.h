/* Test-only writers of particle snapshots (Gadget 1/2 in either byte order
 * and precision, split over several files; HDF5 in the Gadget-4 layout),
 * written from the format descriptions independently of the readers, so
 * that the tests make their own files.  Particles are given type by type. */
#ifndef SNAP_WRITE_H
#define SNAP_WRITE_H

#include <stdint.h>

typedef struct {
  int64_t npart[6];
  double mass_table[6];
  double box, time, redshift;
  const float *pos;   /* n x 3 */
  const float *vel;   /* n x 3 */
  const float *mass;  /* n (used for types whose mass_table entry is 0) */
  const int64_t *ids; /* n */
} sw_snapshot;

typedef struct {
  int format2;   /* labelled blocks */
  int swap;      /* other byte order than this machine's */
  int dbl;       /* float64 positions, velocities, masses */
  int id64;      /* 64-bit ids */
  int nfiles;    /* > 1: path must end in ".0" style; files path-with-.i */
} sw_gadget_options;

/* The particles of file f of nfiles, type t: [*first, *first + *count) of
 * that type (an even split). */
void sw_split(int64_t n, int f, int nfiles, int64_t *first, int64_t *count);

/* base: the file name up to the file number, e.g. "dir/snap" writes
 * dir/snap (nfiles 1) or dir/snap.0 .. dir/snap.<N-1>; suffix follows the
 * number (".hdf5"). Return 0 or -1. */
int sw_write_gadget(const char *base, const sw_snapshot *s, const sw_gadget_options *o);
int sw_write_hdf5(const char *base, const char *suffix, const sw_snapshot *s, int nfiles, int with_units);

#endif
