/* The index kinds' operations (method_table.h): for each kind, how it is
 * built, searched, saved, loaded, measured and freed, as adapters from the
 * vic_index struct to the structure that does the work (grid.h, the
 * search graph of index_internal.h, the GPU GGNN graph of backend_cuda.h,
 * the flat graphs of flat_index.h).  Loaded structures are validated here
 * (ranges, monotone offsets) as well as checksummed by index_file.c, so
 * even a consistent but wrong file cannot crash a search. */
#include "backend_cuda.h"
#include "method_table.h"

/* ----------------------------------------------------------- brute force */
static vic_status brute_build(vic_ctx *c, vic_index *ix, const vic_build_options *o) {
  (void)c;
  (void)ix;
  (void)o;
  return VIC_OK; /* the rows are the index */
}

static vic_status brute_search(vic_ctx *c, const vic_index *ix, const vic_data *q, const vic_search_options *o,
                               int32_t k, int64_t *ids, float *dist, vic_report *rep) {
  (void)o;
  vic_status s = vic__cpu_brute_knn(c, &ix->x, q, k, ids, dist);
  vic__report_reason(rep, "exact brute-force index");
  return s;
}

static int64_t no_bytes(const vic_index *ix) {
  (void)ix;
  return 0;
}

static void no_free(vic_index *ix) { (void)ix; }

const vic_index_ops vic__index_ops_brute = {
    .kind = VIC_INDEX_BRUTE, .exact = 1, .reason = "requested by the caller",
    .build = brute_build, .search = brute_search, .bytes = no_bytes, .free = no_free};

/* ------------------------------------------------------------------ grid */
static vic_status grid_build(vic_ctx *c, vic_index *ix, const vic_build_options *o) {
  (void)o;
  double tb = vic__now();
  vic_status s = vic__grid_build(c, &ix->x, &ix->grid);
  if (s == VIC_OK) vic__report_stage(&ix->report, "grid", vic__now() - tb);
  return s;
}

static vic_status grid_search(vic_ctx *c, const vic_index *ix, const vic_data *q, const vic_search_options *o,
                              int32_t k, int64_t *ids, float *dist, vic_report *rep) {
  (void)o;
  vic_status s = vic__grid_query(c, ix->grid, q, k, ids, dist);
  vic__report_reason(rep, "exact grid index");
  return s;
}

/* the grid is a counting sort of the points: rebuilt on load in O(n),
 * cheaper than reading and validating a copy, and its layout stays
 * private to cpu_grid.c */
static vic_status grid_loaded(vic_ctx *c, vic_index *ix) {
  double tg = vic__now();
  vic_status s = vic__grid_build(c, &ix->x, &ix->grid);
  if (s == VIC_OK) vic__report_stage(&ix->report, "grid rebuilt on load", vic__now() - tg);
  return s;
}

static int64_t grid_bytes(const vic_index *ix) { return ix->grid ? (int64_t)vic__grid_bytes(ix->grid) : 0; }

static void grid_free(vic_index *ix) {
  if (ix->grid) vic__grid_free(ix->grid);
  ix->grid = NULL;
}

const vic_index_ops vic__index_ops_grid = {
    .kind = VIC_INDEX_GRID, .exact = 1, .reason = "requested by the caller",
    .build = grid_build, .search = grid_search, .loaded = grid_loaded, .bytes = grid_bytes, .free = grid_free};

/* --------------------------------------------- NN-Descent search graph */
static vic_status graph_admit(vic_ctx *c, const vic_data *x) {
  if (x->n >= INT32_MAX)
    return vic__fail(c, VIC_E_UNSUPPORTED, "the graph index handles up to 2^31 - 2 points (got %lld)", (long long)x->n);
  return VIC_OK;
}

static vic_status graph_build(vic_ctx *c, vic_index *ix, const vic_build_options *o) {
  vic_status s = vic__search_graph_build(c, ix, o);
  ix->report.k = ix->graph.k_build;
  return s;
}

static vic_status graph_search(vic_ctx *c, const vic_index *ix, const vic_data *q, const vic_search_options *o,
                               int32_t k, int64_t *ids, float *dist, vic_report *rep) {
  int64_t visits = 0;
  vic_status s = vic__graph_search(c, ix, q, o, k, ids, dist, &visits);
  vic__report_reason(rep, "graph search, tau = %g: %.1f distances per query", (double)o->tau,
                     q->n ? (double)visits / (double)q->n : 0.0);
  return s;
}

/* edges and routing tree: they take NN-Descent to rebuild */
static vic_status graph_save(vic_ctx *c, vic_index_writer *w, const vic_index *ix) {
  (void)c;
  const vic_search_graph *g = &ix->graph;
  int64_t n = ix->x.n;
  vic__index_write_section(w, VIC_SEC_OFFSETS, g->offsets, (uint64_t)(n + 1) * sizeof(int64_t));
  vic__index_write_section(w, VIC_SEC_EDGES, g->edges, (uint64_t)g->offsets[n] * sizeof(int32_t));
  vic__index_write_section(w, VIC_SEC_ORDER, g->tree.order, (uint64_t)n * sizeof(int32_t));
  vic__index_write_section(w, VIC_SEC_LEAVES, g->tree.leaf_start, ((uint64_t)g->tree.n_leaves + 1) * sizeof(int32_t));
  vic__index_write_section(w, VIC_SEC_NODES, g->tree.nodes, (uint64_t)g->tree.n_nodes * sizeof(vic_rp_node));
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

static vic_status load_graph(vic_ctx *c, vic_index_reader *r, vic_index *ix, int32_t k_build) {
  vic_search_graph *g = &ix->graph;
  const int64_t n = ix->x.n;
  uint64_t bytes = 0;
  void *p;
  vic_status s;
  g->k_build = k_build;
  if ((s = vic__index_read_section(c, r, VIC_SEC_OFFSETS, (uint64_t)(n + 1) * sizeof(int64_t), &p, NULL)) != VIC_OK) return s;
  g->offsets = p;
  if (g->offsets[n] < 0 || (uint64_t)g->offsets[n] > r->left / sizeof(int32_t))
    return vic__fail(c, VIC_E_FORMAT, "'%s' is corrupt: %lld edges do not fit the file", r->path, (long long)g->offsets[n]);
  if ((s = vic__index_read_section(c, r, VIC_SEC_EDGES, (uint64_t)g->offsets[n] * sizeof(int32_t), &p, NULL)) != VIC_OK) return s;
  g->edges = p;
  if ((s = vic__index_read_section(c, r, VIC_SEC_ORDER, (uint64_t)n * sizeof(int32_t), &p, NULL)) != VIC_OK) return s;
  g->tree.order = p;
  if ((s = vic__index_read_section(c, r, VIC_SEC_LEAVES, UINT64_MAX, &p, &bytes)) != VIC_OK) return s;
  g->tree.leaf_start = p;
  if (bytes < 2 * sizeof(int32_t) || bytes % sizeof(int32_t) || bytes / sizeof(int32_t) > (uint64_t)n + 1)
    return vic__fail(c, VIC_E_FORMAT, "'%s' is corrupt: bad routing-tree leaf table", r->path);
  g->tree.n_leaves = (int32_t)(bytes / sizeof(int32_t) - 1);
  if ((s = vic__index_read_section(c, r, VIC_SEC_NODES, UINT64_MAX, &p, &bytes)) != VIC_OK) return s;
  g->tree.nodes = p;
  if (bytes % sizeof(vic_rp_node) || bytes / sizeof(vic_rp_node) >= (uint64_t)n)
    return vic__fail(c, VIC_E_FORMAT, "'%s' is corrupt: bad routing-tree node table", r->path);
  g->tree.n_nodes = (int32_t)(bytes / sizeof(vic_rp_node));
  return VIC_OK;
}

/* GRNND / TSDG: the edge table of n x degree ids (and TSDG's factors). */
static vic_status load_flat(vic_ctx *c, vic_index_reader *r, vic_index *ix, int32_t degree) {
  const int64_t n = ix->x.n;
  void *p;
  vic_status s;
  if (degree < 1 || degree > 4096 || (uint64_t)n * (uint64_t)degree > r->left / sizeof(int32_t))
    return vic__fail(c, VIC_E_FORMAT, "'%s' is corrupt: graph degree %d does not fit the file", r->path, (int)degree);
  ix->flat.degree = degree;
  ix->graph.k_build = degree;
  const uint64_t cells = (uint64_t)n * (uint64_t)degree;
  if ((s = vic__index_read_section(c, r, VIC_SEC_FLAT_EDGES, cells * sizeof(int32_t), &p, NULL)) != VIC_OK) return s;
  ix->flat.ids = p;
  if (ix->kind == VIC_INDEX_TSDG) {
    if ((s = vic__index_read_section(c, r, VIC_SEC_FLAT_OCCLUSION, cells, &p, NULL)) != VIC_OK) return s;
    ix->flat.occl = p;
  }
  return VIC_OK;
}

static int graph_index_valid(const vic_index *ix) { return graph_valid(&ix->graph, ix->x.n); }

static int64_t graph_bytes(const vic_index *ix) { return vic__search_graph_bytes(&ix->graph, ix->x.n); }

static void graph_free(vic_index *ix) { vic__search_graph_free(&ix->graph); }

const vic_index_ops vic__index_ops_graph = {
    .kind = VIC_INDEX_GRAPH, .raw_queries = 1 /* the graph search normalises per query */,
    .reason = "requested by the caller", .admit = graph_admit, .build = graph_build, .search = graph_search,
    .save = graph_save, .load = load_graph, .valid = graph_index_valid, .bytes = graph_bytes, .free = graph_free};

/* ------------------------------------------------------ GGNN on the GPU */
static vic_status ggnn_build(vic_ctx *c, vic_index *ix, const vic_build_options *o) {
  double tb = vic__now();
  vic_status s = vic__cuda_ggnn_index_build(c, &ix->x, o, &ix->gpu, &ix->report, ix->rows_unchecked);
  if (s == VIC_OK) vic__report_stage(&ix->report, "ggnn", vic__now() - tb);
  return s;
}

static int ggnn_fused_io(const vic_ctx *c, const vic_index *ix, const vic_data *q, int32_t k) {
  (void)c;
  return ix->gpu && vic__cuda_ggnn_index_fused(ix->gpu, ix->x.metric, q->n, k);
}

static vic_status ggnn_search(vic_ctx *c, const vic_index *ix, const vic_data *q, const vic_search_options *o,
                              int32_t k, int64_t *ids, float *dist, vic_report *rep) {
  /* the reason names the procedure (GGNN's query, or the bottom layer's
   * small-batch search): cuda_ggnn_index.c writes it */
  if (ggnn_fused_io(c, ix, q, k))
    return vic__cuda_ggnn_index_search_fused(c, ix->gpu, q, k, o->tau, o->max_visits, ids, dist, rep);
  return vic__cuda_ggnn_index_search(c, ix->gpu, q, k, o->tau, o->max_visits, ids, dist, rep);
}

static int64_t ggnn_bytes(const vic_index *ix) { return ix->gpu ? vic__cuda_ggnn_index_bytes(ix->gpu) : 0; }

static void ggnn_free(vic_index *ix) {
  if (ix->gpu) vic__cuda_ggnn_index_free(ix->gpu);
  ix->gpu = NULL;
}

const vic_index_ops vic__index_ops_ggnn = {
    .kind = VIC_INDEX_GGNN, .on_gpu = 1, .reason = "requested by the caller: GGNN search graph on the GPU",
    .unsaved = "a GGNN (GPU) index cannot be saved yet: its graph lives on the device; rebuild it after loading the "
               "data, or save a CPU graph index (method nndescent)",
    .build = ggnn_build, .search = ggnn_search, .fused_io = ggnn_fused_io, .bytes = ggnn_bytes, .free = ggnn_free};

/* ------------------------------------------- GRNND and TSDG flat graphs */
static vic_status flat_search(vic_ctx *c, const vic_index *ix, const vic_data *q, const vic_search_options *o,
                              int32_t k, int64_t *ids, float *dist, vic_report *rep) {
  if (vic__flat_fused_io(c, ix, q, k)) return vic__flat_search_fused(c, ix, q, o, k, ids, dist, rep);
  return vic__flat_search(c, ix, q, o, k, ids, dist, rep);
}

/* the fixed-width edge table (degree in the header's K field), and TSDG's
 * occlusion factor of every edge; a graph built on the device has its
 * edges copied back for the file */
static vic_status flat_save(vic_ctx *c, vic_index_writer *w, const vic_index *ix) {
  const uint64_t cells = (uint64_t)ix->x.n * (uint64_t)ix->flat.degree;
  const int32_t *ids = NULL;
  const uint8_t *occl = NULL;
  void *owned = NULL;
  vic_status s = vic__flat_edges(c, &ix->flat, ix->x.n, ix->kind == VIC_INDEX_TSDG, &ids, &occl, &owned);
  if (s != VIC_OK) return s;
  vic__index_write_section(w, VIC_SEC_FLAT_EDGES, ids, cells * sizeof(int32_t));
  if (ix->kind == VIC_INDEX_TSDG) vic__index_write_section(w, VIC_SEC_FLAT_OCCLUSION, occl, cells);
  free(owned);
  return VIC_OK;
}

static int flat_valid(const vic_index *ix) { return vic__flat_valid(&ix->flat, ix->x.n); }

/* a device copy when one is usable, else searches on the CPU */
static vic_status flat_loaded(vic_ctx *c, vic_index *ix) {
  vic__flat_attach_gpu(c, ix);
  return VIC_OK;
}

static int64_t flat_bytes(const vic_index *ix) { return vic__flat_bytes(&ix->flat, ix->x.n); }

static void flat_free(vic_index *ix) { vic__flat_free(&ix->flat); }

const vic_index_ops vic__index_ops_grnnd = {
    .kind = VIC_INDEX_GRNND, .on_gpu = 1, .reason = "requested by the caller: GRNND graph on the GPU",
    .build = vic__flat_build, .search = flat_search, .fused_io = vic__flat_fused_io, .save = flat_save, .load = load_flat, .valid = flat_valid,
    .loaded = flat_loaded, .bytes = flat_bytes, .free = flat_free};

/* on the GPU when one is usable, else on the CPU (grnnd_tsdg_index.c) */
const vic_index_ops vic__index_ops_tsdg = {
    .kind = VIC_INDEX_TSDG, .reason = "requested by the caller: TSDG graph",
    .build = vic__flat_build, .search = flat_search, .fused_io = vic__flat_fused_io, .save = flat_save, .load = load_flat, .valid = flat_valid,
    .loaded = flat_loaded, .bytes = flat_bytes, .free = flat_free};
