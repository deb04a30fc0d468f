/* The method table: one record per vic_method saying what the method can
 * do on which backend and which functions do it; its names are in
 * method_list.h.  Every dispatcher (vic_knn_build, vic_index_build /
 * search / save / load / size / free, vic_method_name / parse) reads the
 * table; none switches on a method.  Adding a method: its own files with
 * its record (a const vic_method_ops) and the functions it points to, one
 * line in method_list.h (and, for a public method, its enum value in
 * vicinity.h).  The policy (which method AUTO picks, fallbacks, messages)
 * stays in the dispatchers; a record only says what a method offers. */
#ifndef VIC_METHOD_TABLE_H
#define VIC_METHOD_TABLE_H

#include "index_internal.h"
#include "list_dest.h"

/* kNN lists of every row of x (prepared rows, self excluded): ids / dist of
 * x->n * k, true distances ascending by (distance, id), -1 / +inf for
 * missing entries.  m is the method the record belongs to; stages, times
 * and details of the reason go to rep. */
typedef vic_status (*vic_lists_fn)(vic_ctx *c, const vic_data *x, const vic_build_options *o, vic_method m, int32_t k,
                                   int64_t *ids, float *dist, vic_report *rep);
/* The same lists streamed into the caller's buffers (ids in dst's width). */
typedef vic_status (*vic_lists_into_fn)(vic_ctx *c, const vic_data *x, const vic_build_options *o, int32_t k,
                                        const vic__lists *dst, vic_report *rep);
/* Before a CPU run: refuse bad method options, or hand the work to another
 * method (*m changed, with the warning and the report's reason written). */
typedef vic_status (*vic_cpu_plan_fn)(vic_ctx *c, const vic_data *x, const vic_build_options *o, int32_t k,
                                      vic_report *rep, vic_method *m);

enum {
  VIC_OPS_EXACT = 1u << 0,          /* exact lists: recall 1, never estimated */
  VIC_OPS_LOW_D_L2 = 1u << 1,       /* d <= 3 and the L2 metric only */
  VIC_OPS_INNER_PRODUCT = 1u << 2,  /* also the inner product (not a metric) */
  VIC_OPS_GPU_NO_FALLBACK = 1u << 3 /* a GPU failure is returned, not retried on the CPU */
};

/* The index a method builds (vic_index kind), searched, saved and loaded. */
typedef struct vic_index_ops {
  vic_index_kind kind;  /* written into index files: never renumber */
  int exact;            /* searches are exact (recall 1) */
  int on_gpu;           /* builds on the GPU only; without one the method's index stand-in */
  int raw_queries;      /* search takes the queries as given (no prepared copy) */
  const char *reason;   /* the report's reason when the caller asked for it */
  const char *unsaved;  /* NULL: can be saved; else why it cannot */
  /* optional refusal before anything is allocated */
  vic_status (*admit)(vic_ctx *c, const vic_data *x);
  /* ix->x holds the prepared rows; fills ix's part and ix->report */
  vic_status (*build)(vic_ctx *c, vic_index *ix, const vic_build_options *o);
  /* q prepared like ix->x unless raw_queries; ids/dist q->n * k, true distances */
  vic_status (*search)(vic_ctx *c, const vic_index *ix, const vic_data *q, const vic_search_options *o, int32_t k,
                       int64_t *ids, float *dist, vic_report *rep);
  /* may be NULL; nonzero: this search (q raw, with the index's metric)
   * validates q and checks its results itself, fused into its copies, so
   * vic_index_search leaves both to it */
  int (*fused_io)(const vic_ctx *c, const vic_index *ix, const vic_data *q, int32_t k);
  /* sections, may be NULL; a failure (a device graph's edges not copied back) words its message */
  vic_status (*save)(vic_ctx *c, vic_index_writer *w, const vic_index *ix);
  vic_status (*load)(vic_ctx *c, vic_index_reader *r, vic_index *ix, int32_t degree); /* may be NULL */
  int (*valid)(const vic_index *ix);                /* loaded structure consistent; may be NULL */
  vic_status (*loaded)(vic_ctx *c, vic_index *ix);  /* after a checked load; may be NULL */
  int64_t (*bytes)(const vic_index *ix);            /* memory of ix's part, host or device */
  void (*free)(vic_index *ix);                      /* ix's part */
} vic_index_ops;

typedef struct vic_method_ops {
  unsigned flags;          /* VIC_OPS_* */
  vic_lists_fn cpu_lists;  /* NULL: none on the CPU */
  vic_lists_fn gpu_lists;  /* NULL: none on the GPU (always NULL without CUDA) */
  vic_lists_into_fn gpu_lists_into; /* streamed GPU lists, preferred when present */
  vic_cpu_plan_fn cpu_plan;         /* NULL: none */
  vic_method cpu_stand_in;          /* no CPU lists: the method run instead (AUTO: none) */
  const vic_index_ops *index;       /* NULL: no index of its own */
  vic_method index_stand_in;        /* no usable index: the method whose index is built (AUTO: refuse) */
} vic_method_ops;

/* The record of method m; NULL for AUTO and unknown values. */
const vic_method_ops *vic__method_ops(vic_method m);
/* The method's name in messages ("NN-Descent"; names.c, from method_list.h). */
const char *vic__method_title(vic_method m);
/* 1 when the record has a GPU implementation in this build. */
static inline int vic__method_on_gpu(const vic_method_ops *ops) {
  return ops && (ops->gpu_lists || ops->gpu_lists_into);
}
/* The index ops and method of an index kind; NULL / AUTO when unknown. */
const vic_index_ops *vic__index_ops(vic_index_kind kind);
vic_method vic__index_method(vic_index_kind kind);

#endif
