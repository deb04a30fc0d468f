/* What the format readers of vic_snapshot share (not installed). */
#ifndef VSNAP_INTERNAL_H
#define VSNAP_INTERNAL_H

#include "vic_snapshot.h"

#include <stdio.h>

/* One format's reader: open fills s->info and the file list; read_file
 * fills particles [local_first, local_first + count) of file `file` into
 * out's arrays starting at row `row`. */
typedef struct {
  int (*read_file)(vsnap *s, int file, int64_t local_first, int64_t count, vsnap_particles *out,
                   int64_t row, char *err, size_t errsize);
  void (*close)(vsnap *s);
} vsnap_ops;

struct vsnap {
  vsnap_info info;
  const vsnap_ops *ops;
  int nfiles;
  char **files;        /* nfiles paths */
  int64_t *file_n;     /* particles per file (of the selected types) */
  int64_t *file_type_n; /* Gadget / HDF5: nfiles x VSNAP_MAX_TYPES particles per file and type */
  void *impl;          /* the format's per-snapshot state */
};

/* Writes "path: message" into err and returns -1. */
int vsnap__fail(char *err, size_t errsize, const char *path, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Sets up s->files: path alone when nfiles is 1, else the nfiles names
 * made by replacing the last ".<digits>" of the file name by .0 .. .N-1. */
int vsnap__file_set(vsnap *s, const char *path, int nfiles, char *err, size_t errsize);
void vsnap__swap_words(void *p, size_t count, size_t width);
/* info.n and file_n from file_type_n and info.type_selected. */
void vsnap__count_selected(vsnap *s);
int64_t vsnap__file_size(const char *path);

int vsnap__open_gadget(vsnap *s, const char *path, char *err, size_t errsize);
int vsnap__open_hdf5(vsnap *s, const char *path, char *err, size_t errsize);
int vsnap__open_lammps(vsnap *s, const char *path, char *err, size_t errsize);

#endif
