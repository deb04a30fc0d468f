/* The search index behind vic_index_*: one of four kinds, chosen by
 * vic_index_build, all answering vic_index_search with exact or
 * approximate k nearest neighbours of query rows. */
#ifndef VIC_INDEX_INTERNAL_H
#define VIC_INDEX_INTERNAL_H

#include "internal.h"
#include "grid.h"
#include "rp_forest.h"
#include "flat_index.h"

#include <stdio.h>

typedef enum {
  VIC_INDEX_BRUTE = 1, /* exact scan of the rows; nothing stored */
  VIC_INDEX_GRID = 2,  /* exact cell grid (d <= 3, L2) */
  VIC_INDEX_GRAPH = 3, /* NN-Descent graph + best-first search */
  VIC_INDEX_GGNN = 4,  /* GGNN hierarchical graph on the GPU (not saved to files) */
  VIC_INDEX_GRNND = 5, /* GRNND graph (flat_index.h), searched on the GPU or the CPU */
  VIC_INDEX_TSDG = 6   /* TSDG-diversified kNN graph with occlusion factors (flat_index.h) */
} vic_index_kind;

/* The graph of a graph index: every point's out-edges in CSR form (its
 * kNN list, reverse edges, a few random long links) and one routing tree
 * whose leaf gives each query entry points near it. */
typedef struct {
  int64_t *offsets;  /* n + 1 */
  int32_t *edges;    /* offsets[n] */
  int32_t k_build;   /* NN-Descent list length used */
  vic_rp_tree tree;  /* with routing nodes */
} vic_search_graph;

struct vic_index {
  vic_index_kind kind;
  vic_data x;          /* the rows searched: the caller's view, or owned unit rows for cosine */
  float *owned_rows;   /* NULL unless the index normalised the rows */
  uint64_t fingerprint;/* of the caller's view, checked by vic_index_load (vic__index_fingerprint) */
  int fingerprint_later; /* x is the caller's own view: fingerprinted when a file needs it, not in the build */
  vic_report report;   /* of the build (or of the build recorded in a loaded file) */
  vic_grid *grid;      /* VIC_INDEX_GRID */
  vic_search_graph graph; /* VIC_INDEX_GRAPH */
  void *gpu;           /* VIC_INDEX_GGNN: the device graph (backend_cuda.h) */
  vic_flat_graph flat; /* VIC_INDEX_GRNND, VIC_INDEX_TSDG */
  int rows_unchecked;  /* the build validates x itself (a GGNN build, in its upload) */
};

/* Sections of an index file (index_file.c has the layout); each index
 * kind's ops write and read their own.  Never renumber. */
enum { VIC_SEC_REPORT = 1, VIC_SEC_OFFSETS = 2, VIC_SEC_EDGES = 3, VIC_SEC_ORDER = 4, VIC_SEC_LEAVES = 5,
       VIC_SEC_NODES = 6, VIC_SEC_FLAT_EDGES = 7, VIC_SEC_FLAT_OCCLUSION = 8 };

/* An index file being written: sections are hashed as they are written. */
typedef struct vic_index_writer {
  FILE *f;
  uint64_t bytes, checksum;
  uint32_t sections;
  int failed;
} vic_index_writer;

/* An index file being read: payload bytes not yet read, running checksum. */
typedef struct vic_index_reader {
  FILE *f;
  const char *path;
  uint64_t left, checksum;
} vic_index_reader;

void vic__index_write_section(vic_index_writer *w, uint32_t id, const void *data, uint64_t bytes);
/* Read the next section, which must be `id`, into a new buffer of exactly
 * `bytes` (or any size when bytes == UINT64_MAX; *got receives it). */
vic_status vic__index_read_section(vic_ctx *c, vic_index_reader *r, uint32_t id, uint64_t bytes, void **out,
                                   uint64_t *got);

/* Allocate the struct, validate x, prepare the rows (and fingerprint them
 * when the index owns normalised rows, the caller's being gone later). */
vic_status vic__index_new(vic_ctx *c, const vic_data *x, vic_index_kind kind, vic_index **out);
/* The fingerprint of the caller's view that the index was made over. */
uint64_t vic__index_fingerprint(vic_ctx *c, const vic_index *ix);

/* Build the search graph of ix (kind GRAPH, rows prepared). */
vic_status vic__search_graph_build(vic_ctx *c, vic_index *ix, const vic_build_options *o);
void vic__search_graph_free(vic_search_graph *g);
int64_t vic__search_graph_bytes(const vic_search_graph *g, int64_t n);

/* Approximate k nearest rows of ix->x for every row of q (prepared like
 * ix->x): best-first search, see nndescent_graph_search.c.  ids/dist: q->n * k, true
 * distances, ascending by (distance, id). */
vic_status vic__graph_search(vic_ctx *c, const vic_index *ix, const vic_data *q, const vic_search_options *o,
                             int32_t k, int64_t *ids, float *dist, int64_t *visits);

#endif
