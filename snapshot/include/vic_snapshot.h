/* Particle snapshot readers: Gadget format 1 and 2 (single and multi-file,
 * either byte order), HDF5 snapshots in the Gadget-4 / SWIFT / AREPO layout,
 * and LAMMPS text dumps.  A small C11 library beside the core (the core
 * reads no files); the ParaView reader classes and the test loaders are thin
 * layers over it.
 *
 * Particles are numbered globally file by file, and within a file type by
 * type (PartType0 first), so that a reader can hand any contiguous range to
 * one MPI rank.  Every call returns 0 on success and -1 with a message that
 * names the file and the problem in err; a damaged file never crashes and
 * never yields silently wrong particles. */
#ifndef VIC_SNAPSHOT_H
#define VIC_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VSNAP_MAX_TYPES 16
#define VSNAP_MAX_EXTRA 32
#define VSNAP_NAME_LEN 32

typedef enum {
  VSNAP_UNKNOWN = 0,
  VSNAP_GADGET1 = 1,
  VSNAP_GADGET2 = 2,
  VSNAP_HDF5 = 3,
  VSNAP_LAMMPS = 4
} vsnap_format;

typedef struct {
  vsnap_format format;
  int nfiles;
  int ntypes;                          /* particle types the format has */
  int64_t npart[VSNAP_MAX_TYPES];      /* per type, over all files */
  int64_t n;                           /* the particles of the selected types, all files */
  int type_selected[VSNAP_MAX_TYPES];  /* 1: read (all, until vsnap_select_types) */
  double mass_table[VSNAP_MAX_TYPES];  /* 0: masses come per particle */
  int has_box;
  double box[3];                       /* lengths of the box */
  double origin[3];                    /* its lower corner (0 for Gadget / HDF5) */
  int periodic[3];                     /* LAMMPS boundary flags; 1 elsewhere */
  int has_time, has_redshift, has_cosmology, has_units, has_timestep;
  double time;                         /* Gadget: the scale factor in cosmological runs */
  double redshift;
  double hubble_param, omega0, omega_lambda;
  double unit_length_cm, unit_mass_g, unit_velocity_cm_s;
  int64_t timestep;                    /* LAMMPS ITEM: TIMESTEP */
  int has_velocities, has_ids, has_masses, has_types;
  int nextra;                          /* LAMMPS columns kept as named arrays */
  char extra_names[VSNAP_MAX_EXTRA][VSNAP_NAME_LEN];
} vsnap_info;

/* A range of particles; arrays the snapshot lacks stay NULL. */
typedef struct {
  int64_t first, n;
  float *pos;     /* n x 3 */
  float *vel;     /* n x 3 */
  float *mass;    /* n */
  int64_t *ids;   /* n */
  int32_t *type;  /* n */
  double *extra;  /* n x info.nextra, row-major */
} vsnap_particles;

typedef struct vsnap vsnap;

/* Opens a snapshot, reading headers only (of every file of a multi-file
 * snapshot: `snap.3` finds snap.0 .. snap.<N-1>, `snap.0.hdf5` the same
 * with its suffix).  The format is told by the content, not the name. */
int vsnap_open(const char *path, vsnap **out, char *err, size_t errsize);
const vsnap_info *vsnap_get_info(const vsnap *s);
/* Reads only the types t with selected[t] != 0 (types past count stay
 * selected); info.n and the range reads then count those particles only.
 * Gadget and HDF5 snapshots (a LAMMPS type is a column: an error). */
int vsnap_select_types(vsnap *s, const int *selected, int count, char *err, size_t errsize);
/* Reads particles [first, first + count) into out (which the caller frees
 * with vsnap_particles_free). */
int vsnap_read(vsnap *s, int64_t first, int64_t count, vsnap_particles *out, char *err, size_t errsize);
void vsnap_particles_free(vsnap_particles *p);
void vsnap_close(vsnap *s);

/* The share [*first, *first + *count) of particles that piece `piece` of
 * `pieces` reads: contiguous, sizes differing by at most one. */
void vsnap_piece_range(int64_t n, int piece, int pieces, int64_t *first, int64_t *count);

/* The content-told format of a file (without reading it all), or
 * VSNAP_UNKNOWN. */
vsnap_format vsnap_detect(const char *path);
const char *vsnap_format_name(vsnap_format f);
/* 1 when this build reads HDF5 snapshots. */
int vsnap_have_hdf5(void);

#ifdef __cplusplus
}
#endif
#endif /* VIC_SNAPSHOT_H */
