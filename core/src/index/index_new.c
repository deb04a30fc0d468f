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
  ix->fingerprint = vic__data_fingerprint(c, x);
  *out = ix;
  return VIC_OK;
}
