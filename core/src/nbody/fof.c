/* Friends-of-friends groups from kNN lists (vic_fof in vicinity.h): a
 * union-find over the list pairs nearer than the linking length. */
#include "nbody_internal.h"

#include <string.h>

static int64_t find(int64_t *up, int64_t i) {
  while (up[i] != i) { up[i] = up[up[i]]; i = up[i]; }
  return i;
}

typedef struct {
  int64_t size, first, root;
} group;

static int by_size(const void *a, const void *b) {
  const group *p = a, *q = b;
  if (p->size != q->size) return p->size > q->size ? -1 : 1;
  return p->first < q->first ? -1 : (p->first > q->first);
}

vic_status vic_fof(vic_ctx *c, const vic_data *x, const vic_knn *nn, double b, int64_t min_members, int64_t *group_of,
                   int64_t *n_groups, double *linking_length) {
  if (!c) return VIC_E_ARGUMENT;
  c->error[0] = '\0';
  c->warnings = 0;
  vic_status s = vic__check_lists_of(c, x, nn, "friends-of-friends");
  if (s != VIC_OK) return s;
  if (!group_of || !n_groups) return vic__fail(c, VIC_E_ARGUMENT, "friends-of-friends needs group and count outputs");
  if (!(b > 0) || !isfinite(b) || min_members < 1)
    return vic__fail(c, VIC_E_ARGUMENT, "friends-of-friends needs b > 0 (got %g) and min_members >= 1 (got %lld)", b,
                     (long long)min_members);
  double volume = 0;
  if ((s = vic__data_volume(c, x, &volume)) != VIC_OK) return s;
  const int64_t n = x->n, k = nn->k;
  const double ell = b * pow(volume / (double)n, 1.0 / x->d);
  if ((s = vic__progress(c, "fof", 0.0)) != VIC_OK) return s;
  int64_t *up = vic__malloc(c, (size_t)n * sizeof *up, "friends-of-friends forest");
  group *g = up ? vic__calloc(c, (size_t)n, sizeof *g, "friends-of-friends groups") : NULL;
  if (!g) { free(up); return VIC_E_NOMEM; }
  for (int64_t i = 0; i < n; ++i) up[i] = i;
  int64_t short_lists = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t t = 0; t < k; ++t) {
      const int64_t j = nn->ids[i * k + t];
      if (j < 0 || j >= n || !((double)nn->dist[i * k + t] <= ell)) break; /* lists ascend */
      int64_t a = find(up, i), r = find(up, j);
      if (a != r) up[a < r ? r : a] = a < r ? a : r; /* the lower id roots: a group's root is its first point */
    }
    short_lists += nn->ids[i * k + k - 1] >= 0 && (double)nn->dist[i * k + k - 1] <= ell;
    if ((i & 0xFFFF) == 0 && vic__cancelled(c)) break;
  }
  if (vic__cancelled(c)) { free(up); free(g); return vic__fail(c, VIC_E_CANCELLED, "cancelled during stage 'fof'"); }
  if (short_lists > 0)
    vic__log(c, VIC_LOG_WARNING,
             "friends-of-friends: %lld of %lld points have all %lld neighbours inside the linking length %g, so links "
             "beyond their lists are missed and groups may be split; raise k",
             (long long)short_lists, (long long)n, (long long)k, ell);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = find(up, i);
    if (g[r].size++ == 0) { g[r].first = r; g[r].root = r; }
  }
  int64_t m = 0;
  for (int64_t i = 0; i < n; ++i)
    if (g[i].size >= min_members) g[m++] = g[i]; /* g[i].size > 0 only at roots; m <= i, so in place */
  qsort(g, (size_t)m, sizeof *g, by_size);
  int64_t *number = up; /* reuse: roots -> group numbers, after every find */
  int64_t *root = vic__malloc(c, (size_t)n * sizeof *root, "friends-of-friends roots");
  if (!root) { free(up); free(g); return VIC_E_NOMEM; }
  for (int64_t i = 0; i < n; ++i) root[i] = find(up, i);
  for (int64_t i = 0; i < n; ++i) number[i] = -1;
  for (int64_t q = 0; q < m; ++q) number[g[q].root] = q;
  for (int64_t i = 0; i < n; ++i) group_of[i] = number[root[i]];
  *n_groups = m;
  if (linking_length) *linking_length = ell;
  free(root);
  free(up);
  free(g);
  return vic__progress(c, "fof", 1.0);
}
