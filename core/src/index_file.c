/* vic_index_save / vic_index_load: the saved index file.
 *
 * Layout (little endian):
 *   header, 96 bytes:
 *     0  "VICINDEX"          8  u32 format version   12 u32 kind
 *     16 i64 n               24 i32 d                 28 i32 metric
 *     32 i32 graph degree K  36 u32 section count     40 u64 data fingerprint
 *     48 u64 payload bytes   56 u64 payload checksum  64 u32 flags (1: box)
 *     68..87 zero            88 u64 checksum of bytes 0..87
 *   payload: sections, each  u32 id, u32 0, u64 bytes, then the bytes.
 * The payload checksum chains every section's 16-byte head and content hash,
 * so a section is hashed while it is written or read and never copied.
 *
 * The rows are not stored (the index refers to the caller's data); the
 * fingerprint of n, d, metric, box and every value makes loading against
 * other data fail instead of answering wrongly.  A grid index stores no
 * section: its grid is a counting sort of the points, rebuilt on load in
 * O(n), which is cheaper than reading and validating a copy of the points
 * and keeps the grid's layout private to grid.c.  A graph index stores its
 * edges and routing tree, which take NN-Descent to rebuild.  Loaded
 * structures are validated (ranges, monotone offsets) as well as
 * checksummed, so even a consistent but wrong file cannot crash a search. */
#include "hash64.h"
#include "index_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

enum { FORMAT_VERSION = 1, HEADER_BYTES = 96, REPORT_BYTES = 4 * 4 + 160 + 3 * 8 + 4 + VIC_MAX_STAGES * 40 + 8 + 8 + 16 + 4 };
enum { SEC_REPORT = 1, SEC_OFFSETS = 2, SEC_EDGES = 3, SEC_ORDER = 4, SEC_LEAVES = 5, SEC_NODES = 6,
       SEC_FLAT_EDGES = 7, SEC_FLAT_OCCLUSION = 8 };
static const char MAGIC[8] = {'V', 'I', 'C', 'I', 'N', 'D', 'E', 'X'};

static int little_endian(void) {
  const uint16_t one = 1;
  return *(const unsigned char *)&one == 1;
}

/* --------------------------------------------------- scalar (de)coding */
static void put_u32(unsigned char *p, uint32_t v) { for (int i = 0; i < 4; ++i) p[i] = (unsigned char)(v >> (8 * i)); }
static void put_u64(unsigned char *p, uint64_t v) { for (int i = 0; i < 8; ++i) p[i] = (unsigned char)(v >> (8 * i)); }
static void put_f64(unsigned char *p, double v) { uint64_t u; memcpy(&u, &v, 8); put_u64(p, u); }
static uint32_t get_u32(const unsigned char *p) { uint32_t v = 0; for (int i = 0; i < 4; ++i) v |= (uint32_t)p[i] << (8 * i); return v; }
static uint64_t get_u64(const unsigned char *p) { uint64_t v = 0; for (int i = 0; i < 8; ++i) v |= (uint64_t)p[i] << (8 * i); return v; }
static double get_f64(const unsigned char *p) { uint64_t u = get_u64(p); double v; memcpy(&v, &u, 8); return v; }

static void encode_report(const vic_report *r, unsigned char *p) {
  memset(p, 0, REPORT_BYTES);
  put_u32(p, (uint32_t)r->method); put_u32(p + 4, (uint32_t)r->backend);
  put_u32(p + 8, (uint32_t)r->k_requested); put_u32(p + 12, (uint32_t)r->k);
  memcpy(p + 16, r->reason, 160);
  p += 176;
  put_f64(p, r->seconds_total); put_f64(p + 8, r->seconds_transfer); put_f64(p + 16, r->seconds_kernel);
  put_u32(p + 24, (uint32_t)r->n_stages);
  p += 28;
  for (int s = 0; s < VIC_MAX_STAGES; ++s, p += 40) {
    memcpy(p, r->stages[s].name, 32);
    put_f64(p + 32, r->stages[s].seconds);
  }
  put_f64(p, r->recall_estimate); put_u64(p + 8, (uint64_t)r->recall_sample);
  put_f64(p + 16, r->dnn1_mean); put_f64(p + 24, r->dnn1_max); put_u32(p + 32, (uint32_t)r->warnings);
}

static int decode_report(const unsigned char *p, vic_report *r) {
  vic__report_clear(r);
  r->method = (vic_method)get_u32(p); r->backend = (vic_backend)get_u32(p + 4);
  r->k_requested = (int32_t)get_u32(p + 8); r->k = (int32_t)get_u32(p + 12);
  memcpy(r->reason, p + 16, 160);
  r->reason[159] = '\0';
  p += 176;
  r->seconds_total = get_f64(p); r->seconds_transfer = get_f64(p + 8); r->seconds_kernel = get_f64(p + 16);
  r->n_stages = (int)get_u32(p + 24);
  p += 28;
  for (int s = 0; s < VIC_MAX_STAGES; ++s, p += 40) {
    memcpy(r->stages[s].name, p, 32);
    r->stages[s].name[31] = '\0';
    r->stages[s].seconds = get_f64(p + 32);
  }
  r->recall_estimate = get_f64(p); r->recall_sample = (int64_t)get_u64(p + 8);
  r->dnn1_mean = get_f64(p + 16); r->dnn1_max = get_f64(p + 24); r->warnings = (int)get_u32(p + 32);
  return (unsigned)r->method <= VIC_METHOD_TSDG && r->n_stages >= 0 && r->n_stages <= VIC_MAX_STAGES;
}

/* ------------------------------------------------------------- saving */
typedef struct {
  FILE *f;
  uint64_t bytes, checksum;
  uint32_t sections;
  int failed;
} writer;

static void write_section(writer *w, uint32_t id, const void *data, uint64_t bytes) {
  unsigned char head[16] = {0};
  put_u32(head, id);
  put_u64(head + 8, bytes);
  w->checksum = vic__hash_bytes(w->checksum, head, 16);
  w->checksum = vic__hash_word(w->checksum, vic__hash_bytes(VIC_HASH_SEED, data, (size_t)bytes));
  if (fwrite(head, 1, 16, w->f) != 16 || (bytes && fwrite(data, 1, (size_t)bytes, w->f) != bytes)) w->failed = 1;
  w->bytes += 16 + bytes;
  w->sections++;
}

static void encode_header(const vic_index *ix, uint64_t fingerprint, uint32_t sections, uint64_t payload,
                          uint64_t checksum, unsigned char *h) {
  memset(h, 0, HEADER_BYTES);
  memcpy(h, MAGIC, 8);
  put_u32(h + 8, FORMAT_VERSION);
  put_u32(h + 12, (uint32_t)ix->kind);
  put_u64(h + 16, (uint64_t)ix->x.n);
  put_u32(h + 24, (uint32_t)ix->x.d);
  put_u32(h + 28, (uint32_t)ix->x.metric);
  put_u32(h + 32, (uint32_t)ix->graph.k_build);
  put_u32(h + 36, sections);
  put_u64(h + 40, fingerprint);
  put_u64(h + 48, payload);
  put_u64(h + 56, checksum);
  put_u32(h + 64, ix->x.box ? 1u : 0u);
  put_u64(h + 88, vic__hash_bytes(VIC_HASH_SEED, h, 88));
}

vic_status vic_index_save(vic_ctx *c, const vic_index *ix, const char *path) {
  if (!c) return VIC_E_ARGUMENT;
  c->error[0] = '\0';
  vic__begin_call(c);
  if (!ix || !path || !*path) return vic__fail(c, VIC_E_ARGUMENT, "saving needs an index and a file name");
  if (!little_endian()) return vic__fail(c, VIC_E_UNSUPPORTED, "index files are little endian; this host is not");
  if (ix->kind == VIC_INDEX_GGNN)
    return vic__fail(c, VIC_E_UNSUPPORTED,
                     "a GGNN (GPU) index cannot be saved yet: its graph lives on the device; rebuild it after "
                     "loading the data, or save a CPU graph index (method nndescent)");
  /* written beside the target and renamed, so a failed save never leaves a
   * half-written file under the real name */
  size_t len = strlen(path);
  char *tmp = vic__malloc(c, len + 6, "file name");
  if (!tmp) return VIC_E_NOMEM;
  memcpy(tmp, path, len);
  memcpy(tmp + len, ".part", 6);
  writer w = {fopen(tmp, "wb"), 0, VIC_HASH_SEED, 0, 0};
  if (!w.f) {
    vic_status s = vic__fail(c, VIC_E_IO, "cannot create '%s': %s", tmp, strerror(errno));
    free(tmp);
    return s;
  }
  unsigned char header[HEADER_BYTES] = {0};
  if (fwrite(header, 1, HEADER_BYTES, w.f) != HEADER_BYTES) w.failed = 1; /* provisional header: rewritten with the final sizes and checksums below */
  unsigned char rep[REPORT_BYTES];
  encode_report(&ix->report, rep);
  write_section(&w, SEC_REPORT, rep, REPORT_BYTES);
  if (ix->kind == VIC_INDEX_GRAPH) {
    const vic_search_graph *g = &ix->graph;
    int64_t n = ix->x.n;
    write_section(&w, SEC_OFFSETS, g->offsets, (uint64_t)(n + 1) * sizeof(int64_t));
    write_section(&w, SEC_EDGES, g->edges, (uint64_t)g->offsets[n] * sizeof(int32_t));
    write_section(&w, SEC_ORDER, g->tree.order, (uint64_t)n * sizeof(int32_t));
    write_section(&w, SEC_LEAVES, g->tree.leaf_start, ((uint64_t)g->tree.n_leaves + 1) * sizeof(int32_t));
    write_section(&w, SEC_NODES, g->tree.nodes, (uint64_t)g->tree.n_nodes * sizeof(vic_rp_node));
  } else if (ix->kind == VIC_INDEX_GRNND || ix->kind == VIC_INDEX_TSDG) {
    /* the fixed-width edge table (degree in the header's K field), and
     * TSDG's occlusion factor of every edge */
    const uint64_t cells = (uint64_t)ix->x.n * (uint64_t)ix->flat.degree;
    const int32_t *ids = NULL;
    const uint8_t *occl = NULL;
    void *owned = NULL; /* a graph built on the device: its edges copied back for the file */
    vic_status es = vic__flat_edges(c, &ix->flat, ix->x.n, ix->kind == VIC_INDEX_TSDG, &ids, &occl, &owned);
    if (es != VIC_OK) { /* its message stands */
      fclose(w.f);
      remove(tmp);
      free(tmp);
      return es;
    }
    write_section(&w, SEC_FLAT_EDGES, ids, cells * sizeof(int32_t));
    if (ix->kind == VIC_INDEX_TSDG) write_section(&w, SEC_FLAT_OCCLUSION, occl, cells);
    free(owned);
  }
  encode_header(ix, vic__index_fingerprint(c, ix), w.sections, w.bytes, w.checksum, header);
  if (fseek(w.f, 0, SEEK_SET) != 0 || fwrite(header, 1, HEADER_BYTES, w.f) != HEADER_BYTES) w.failed = 1;
  if (fclose(w.f) != 0) w.failed = 1;
  vic_status s = VIC_OK;
  if (w.failed) s = vic__fail(c, VIC_E_IO, "writing '%s' failed (disk full or not writable?)", tmp);
  else if (rename(tmp, path) != 0) s = vic__fail(c, VIC_E_IO, "cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
  if (s != VIC_OK) remove(tmp);
  free(tmp);
  return s;
}

/* ------------------------------------------------------------ loading */
typedef struct {
  FILE *f;
  const char *path;
  uint64_t left, checksum; /* payload bytes not yet read; running checksum */
} reader;

/* Read the next section, which must be `id`, into a new buffer of exactly
 * `bytes` (or any size when bytes == UINT64_MAX; *got receives it). */
static vic_status read_section(vic_ctx *c, reader *r, uint32_t id, uint64_t bytes, void **out, uint64_t *got) {
  unsigned char head[16];
  *out = NULL;
  if (r->left < 16 || fread(head, 1, 16, r->f) != 16)
    return vic__fail(c, VIC_E_FORMAT, "'%s' is truncated: section %u is missing", r->path, id);
  r->left -= 16;
  uint32_t fid = get_u32(head);
  uint64_t fb = get_u64(head + 8);
  if (fid != id) return vic__fail(c, VIC_E_FORMAT, "'%s' is corrupt: expected section %u, found %u", r->path, id, fid);
  if ((bytes != UINT64_MAX && fb != bytes) || fb > r->left)
    return vic__fail(c, VIC_E_FORMAT, "'%s' is corrupt: section %u has %llu bytes, expected %llu (%llu left in the file)",
                     r->path, id, (unsigned long long)fb, (unsigned long long)(bytes == UINT64_MAX ? fb : bytes),
                     (unsigned long long)r->left);
  void *buf = vic__malloc(c, fb ? (size_t)fb : 1, "index section");
  if (!buf) return VIC_E_NOMEM;
  if (fb && fread(buf, 1, (size_t)fb, r->f) != fb) {
    free(buf);
    return vic__fail(c, VIC_E_FORMAT, "'%s' is truncated inside section %u", r->path, id);
  }
  r->left -= fb;
  r->checksum = vic__hash_bytes(r->checksum, head, 16);
  r->checksum = vic__hash_word(r->checksum, vic__hash_bytes(VIC_HASH_SEED, buf, (size_t)fb));
  *out = buf;
  if (got) *got = fb;
  return VIC_OK;
}

/* Every id and offset in range, offsets monotone, children after parents
 * (so routing always ends): a search over a loaded graph cannot go astray. */
static int graph_valid(const vic_search_graph *g, int64_t n) {
  if (g->offsets[0] != 0) return 0;
  for (int64_t i = 0; i < n; ++i)
    if (g->offsets[i + 1] < g->offsets[i]) return 0;
  for (int64_t e = 0; e < g->offsets[n]; ++e)
    if (g->edges[e] < 0 || g->edges[e] >= n) return 0;
  for (int64_t i = 0; i < n; ++i)
    if (g->tree.order[i] < 0 || g->tree.order[i] >= n) return 0;
  const vic_rp_tree *t = &g->tree;
  if (t->n_leaves < 1 || t->leaf_start[0] != 0 || t->leaf_start[t->n_leaves] != n) return 0;
  for (int32_t l = 0; l < t->n_leaves; ++l)
    if (t->leaf_start[l + 1] <= t->leaf_start[l]) return 0;
  if (t->n_nodes != t->n_leaves - 1 && !(t->n_nodes == 0 && t->n_leaves == 1)) return 0;
  for (int32_t v = 0; v < t->n_nodes; ++v) {
    const vic_rp_node *nd = &t->nodes[v];
    if (nd->near_left < -1 || nd->near_left >= n || nd->near_right < -1 || nd->near_right >= n) return 0;
    if ((nd->near_left < 0) != (nd->near_right < 0)) return 0;
    for (int s = 0; s < 2; ++s) {
      int32_t ch = nd->child[s];
      if (ch >= 0 ? (ch <= v || ch >= t->n_nodes) : (-(int64_t)ch - 1 >= n)) return 0;
    }
  }
  return 1;
}

static vic_status load_graph(vic_ctx *c, reader *r, vic_index *ix, int32_t k_build) {
  vic_search_graph *g = &ix->graph;
  const int64_t n = ix->x.n;
  uint64_t bytes = 0;
  void *p;
  vic_status s;
  g->k_build = k_build;
  if ((s = read_section(c, r, SEC_OFFSETS, (uint64_t)(n + 1) * sizeof(int64_t), &p, NULL)) != VIC_OK) return s;
  g->offsets = p;
  if (g->offsets[n] < 0 || (uint64_t)g->offsets[n] > r->left / sizeof(int32_t))
    return vic__fail(c, VIC_E_FORMAT, "'%s' is corrupt: %lld edges do not fit the file", r->path, (long long)g->offsets[n]);
  if ((s = read_section(c, r, SEC_EDGES, (uint64_t)g->offsets[n] * sizeof(int32_t), &p, NULL)) != VIC_OK) return s;
  g->edges = p;
  if ((s = read_section(c, r, SEC_ORDER, (uint64_t)n * sizeof(int32_t), &p, NULL)) != VIC_OK) return s;
  g->tree.order = p;
  if ((s = read_section(c, r, SEC_LEAVES, UINT64_MAX, &p, &bytes)) != VIC_OK) return s;
  g->tree.leaf_start = p;
  if (bytes < 2 * sizeof(int32_t) || bytes % sizeof(int32_t) || bytes / sizeof(int32_t) > (uint64_t)n + 1)
    return vic__fail(c, VIC_E_FORMAT, "'%s' is corrupt: bad routing-tree leaf table", r->path);
  g->tree.n_leaves = (int32_t)(bytes / sizeof(int32_t) - 1);
  if ((s = read_section(c, r, SEC_NODES, UINT64_MAX, &p, &bytes)) != VIC_OK) return s;
  g->tree.nodes = p;
  if (bytes % sizeof(vic_rp_node) || bytes / sizeof(vic_rp_node) >= (uint64_t)n)
    return vic__fail(c, VIC_E_FORMAT, "'%s' is corrupt: bad routing-tree node table", r->path);
  g->tree.n_nodes = (int32_t)(bytes / sizeof(vic_rp_node));
  return VIC_OK;
}

/* GRNND / TSDG: the edge table of n x degree ids (and TSDG's factors). */
static vic_status load_flat(vic_ctx *c, reader *r, vic_index *ix, int32_t degree) {
  const int64_t n = ix->x.n;
  void *p;
  vic_status s;
  if (degree < 1 || degree > 4096 || (uint64_t)n * (uint64_t)degree > r->left / sizeof(int32_t))
    return vic__fail(c, VIC_E_FORMAT, "'%s' is corrupt: graph degree %d does not fit the file", r->path, (int)degree);
  ix->flat.degree = degree;
  ix->graph.k_build = degree;
  const uint64_t cells = (uint64_t)n * (uint64_t)degree;
  if ((s = read_section(c, r, SEC_FLAT_EDGES, cells * sizeof(int32_t), &p, NULL)) != VIC_OK) return s;
  ix->flat.ids = p;
  if (ix->kind == VIC_INDEX_TSDG) {
    if ((s = read_section(c, r, SEC_FLAT_OCCLUSION, cells, &p, NULL)) != VIC_OK) return s;
    ix->flat.occl = p;
  }
  return VIC_OK;
}

static vic_status check_header(vic_ctx *c, const char *path, const unsigned char *h, const vic_data *x) {
  if (memcmp(h, MAGIC, 8) != 0)
    return vic__fail(c, VIC_E_FORMAT, "'%s' is not a Vicinity index file (no VICINDEX magic)", path);
  uint32_t version = get_u32(h + 8);
  if (version > FORMAT_VERSION)
    return vic__fail(c, VIC_E_FORMAT, "'%s' has index format version %u, newer than this library reads (%d); update Vicinity",
                     path, version, FORMAT_VERSION);
  if (get_u64(h + 88) != vic__hash_bytes(VIC_HASH_SEED, h, 88) || version == 0)
    return vic__fail(c, VIC_E_FORMAT, "'%s' has a corrupt header (checksum mismatch)", path);
  int64_t n = (int64_t)get_u64(h + 16);
  int32_t d = (int32_t)get_u32(h + 24);
  vic_metric m = (vic_metric)get_u32(h + 28);
  if (n != x->n || d != x->d || m != x->metric || (get_u32(h + 64) & 1u) != (x->box != NULL))
    return vic__fail(c, VIC_E_FORMAT,
                     "'%s' indexes %lld x %d rows (metric %s%s) but the data given is %lld x %d (metric %s%s); "
                     "load it with the data it was built over",
                     path, (long long)n, (int)d, vic_metric_name(m), (get_u32(h + 64) & 1u) ? ", periodic box" : "",
                     (long long)x->n, (int)x->d, vic_metric_name(x->metric), x->box ? ", periodic box" : "");
  return VIC_OK;
}

vic_status vic_index_load(vic_ctx *c, const char *path, const vic_data *x, vic_index **out) {
  if (!c) return VIC_E_ARGUMENT;
  c->error[0] = '\0';
  c->warnings = 0;
  vic__begin_call(c);
  if (!out) return vic__fail(c, VIC_E_ARGUMENT, "no place for the index (out is NULL)");
  *out = NULL;
  if (!path || !*path) return vic__fail(c, VIC_E_ARGUMENT, "no file name");
  if (!little_endian()) return vic__fail(c, VIC_E_UNSUPPORTED, "index files are little endian; this host is not");
  vic_status s = vic_data_validate(c, x);
  if (s != VIC_OK) return s;
  double t0 = vic__now();
  /* a directory opens for reading on POSIX systems and then reads nothing */
  struct stat st;
  if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
    return vic__fail(c, VIC_E_IO, "'%s' is a directory, not an index file; choose the index file inside it", path);
  FILE *f = fopen(path, "rb");
  if (!f) return vic__fail(c, VIC_E_IO, "cannot open '%s': %s", path, strerror(errno));
  unsigned char h[HEADER_BYTES];
  vic_index *ix = NULL;
  void *rep = NULL;
  reader r = {f, path, 0, VIC_HASH_SEED};
  if (fread(h, 1, HEADER_BYTES, f) != HEADER_BYTES) {
    s = vic__fail(c, VIC_E_FORMAT, "'%s' is too short for an index header (truncated or not an index)", path);
    goto done;
  }
  if ((s = check_header(c, path, h, x)) != VIC_OK) goto done;
  vic_index_kind kind = (vic_index_kind)get_u32(h + 12);
  if (kind != VIC_INDEX_BRUTE && kind != VIC_INDEX_GRID && kind != VIC_INDEX_GRAPH && kind != VIC_INDEX_GRNND &&
      kind != VIC_INDEX_TSDG) {
    s = vic__fail(c, VIC_E_FORMAT, "'%s' holds an index kind %d this library does not know", path, (int)kind);
    goto done;
  }
  /* the payload must be exactly what the header announces */
  r.left = get_u64(h + 48);
  long here = ftell(f);
  if (fseek(f, 0, SEEK_END) != 0) { s = vic__fail(c, VIC_E_IO, "cannot seek in '%s'", path); goto done; }
  long end = ftell(f);
  if (here < 0 || end < 0 || fseek(f, here, SEEK_SET) != 0) { s = vic__fail(c, VIC_E_IO, "cannot seek in '%s'", path); goto done; }
  if ((uint64_t)(end - here) != r.left) {
    s = vic__fail(c, VIC_E_FORMAT, "'%s' is %s: the header announces %llu payload bytes, the file has %lld", path,
                  (uint64_t)(end - here) < r.left ? "truncated" : "corrupt (trailing bytes)",
                  (unsigned long long)r.left, (long long)(end - here));
    goto done;
  }
  if ((s = vic__index_new(c, x, kind, &ix)) != VIC_OK) goto done;
  if (vic__index_fingerprint(c, ix) != get_u64(h + 40)) {
    s = vic__fail(c, VIC_E_FORMAT, "'%s' was built over different data: the rows given do not match the index's "
                                   "fingerprint (same shape, other values)", path);
    goto done;
  }
  if ((s = read_section(c, &r, SEC_REPORT, REPORT_BYTES, &rep, NULL)) != VIC_OK) goto done;
  if (kind == VIC_INDEX_GRAPH && (s = load_graph(c, &r, ix, (int32_t)get_u32(h + 32))) != VIC_OK) goto done;
  if ((kind == VIC_INDEX_GRNND || kind == VIC_INDEX_TSDG) && (s = load_flat(c, &r, ix, (int32_t)get_u32(h + 32))) != VIC_OK)
    goto done;
  if (r.left != 0 || r.checksum != get_u64(h + 56)) {
    s = vic__fail(c, VIC_E_FORMAT, "'%s' is corrupt: payload checksum mismatch", path);
    goto done;
  }
  if (!decode_report(rep, &ix->report) || (kind == VIC_INDEX_GRAPH && !graph_valid(&ix->graph, ix->x.n)) ||
      ((kind == VIC_INDEX_GRNND || kind == VIC_INDEX_TSDG) && !vic__flat_valid(&ix->flat, ix->x.n))) {
    s = vic__fail(c, VIC_E_FORMAT, "'%s' is corrupt: its structure is inconsistent", path);
    goto done;
  }
  if (kind == VIC_INDEX_GRID) {
    double tg = vic__now();
    if ((s = vic__grid_build(c, &ix->x, &ix->grid)) != VIC_OK) goto done;
    vic__report_stage(&ix->report, "grid rebuilt on load", vic__now() - tg);
  }
  if (kind == VIC_INDEX_GRNND || kind == VIC_INDEX_TSDG) vic__flat_attach_gpu(c, ix); /* else CPU search */
  vic__log(c, VIC_LOG_INFO, "loaded %s index from '%s' in %.3f s", vic_method_name(ix->report.method), path,
           vic__now() - t0);
done:
  fclose(f);
  free(rep);
  if (s != VIC_OK) { vic_index_free(ix); return s; }
  *out = ix;
  return VIC_OK;
}
