/* A new vic_index struct over prepared rows, before any kind's part is
 * built or loaded (index_build.c, index_file.c, and the flat graphs'
 * for-all lists in grnnd_tsdg_index.c). */
#include "hash64.h"
#include "index_internal.h"

vic_status vic__index_new(vic_ctx *c, const vic_data *x, vic_index_kind kind, vic_index **out) {
  vic_index *ix = vic__calloc(c, 1, sizeof *ix, "index");
  if (!ix) return VIC_E_NOMEM;
  ix->kind = kind;
  vic_status s = vic__prepare_rows(c, x, &ix->x, &ix->owned_rows);
  if (s != VIC_OK) { free(ix); return s; }
  /* a pass over every value: only where the index keeps no view of the
   * caller's rows to take it from later (saving and loading need it, a
   * build and a search do not) */
  ix->fingerprint_later = ix->owned_rows == NULL;
  if (!ix->fingerprint_later) ix->fingerprint = vic__data_fingerprint(c, x);
  *out = ix;
  return VIC_OK;
}

uint64_t vic__index_fingerprint(vic_ctx *c, const vic_index *ix) {
  return ix->fingerprint_later ? vic__data_fingerprint(c, &ix->x) : ix->fingerprint;
}
