/* Data-file loaders shared by the tests and the bench program (not part of
 * the Vicinity library: the core reads no files).  Every loader returns 0 on
 * success and -1 with a message naming the file and the problem in err;
 * a malformed file never crashes and never yields a silent wrong matrix.
 *
 * Formats read by vio_load (detected by content first, then extension):
 *  - NumPy .npy v1/v2/v3, float32 or float64, little endian, C order, 1-d
 *    (n x 1) or 2-d (n x d);
 *  - .fvecs (per row: int32 d, then d float32), as in the TEXMEX sets;
 *  - IDX as MNIST (magic 0x00000803 / 0x00000801, uint8 -> float), plain
 *    or gzip-compressed;
 *  - Gadget format 1 snapshots (.dat/.gadget): the positions of all
 *    particle types, concatenated in type order;
 *  - .csv / .txt: numbers separated by commas, semicolons or blanks, one
 *    row per line, optional header line; columns give d.  Strict: an empty
 *    field, a NUL byte or a number outside float's range (above 3.4e38, or
 *    nonzero below 1.2e-38) is an error; a UTF-8 byte-order mark is skipped.
 * A header that declares more data than the file holds fails before the
 * allocation (plain files) or after reading what is there (compressed
 * files, whose buffers grow as the data arrive). */
#ifndef VIC_IO_H
#define VIC_IO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  float *rows; /* n x d, row-major, malloc'ed */
  int64_t n;
  int32_t d;
} vio_matrix;

typedef struct {
  int32_t *rows; /* n x d, row-major, malloc'ed (e.g. exact neighbour ids) */
  int64_t n;
  int32_t d;
} vio_imatrix;

int vio_load(const char *path, vio_matrix *out, char *err, size_t errsize);

/* Gadget format 1 or 2 (through the snapshot library, snapshot/), either
 * byte order, one file or a multi-file set.  pos and vel are n x 3 over all
 * particle types in type order (file by file); *mass gets n floats taken
 * from the MASS block for types whose massarr entry is 0 and from massarr
 * otherwise.  vel and mass may be NULL when not wanted. */
int vio_load_gadget(const char *path, vio_matrix *pos, vio_matrix *vel, float **mass, char *err,
                    size_t errsize);

int vio_save_fvecs(const char *path, const vio_matrix *m, char *err, size_t errsize);
/* .ivecs: per row int32 d, then d int32 (ground-truth neighbour lists). */
int vio_load_ivecs(const char *path, vio_imatrix *out, char *err, size_t errsize);
int vio_save_ivecs(const char *path, const vio_imatrix *m, char *err, size_t errsize);

void vio_free(vio_matrix *m);
void vio_ifree(vio_imatrix *m);

#ifdef __cplusplus
}
#endif
#endif /* VIC_IO_H */
