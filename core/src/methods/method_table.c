/* The method table (method_table.h): the records named by method_list.h,
 * indexed by their enum values.  Nothing to edit here for a new method. */
#include "method_list.h"
#include "method_table.h"

#define DECLARE(e, name, a1, a2, title, record) extern const vic_method_ops record;
VIC_METHOD_LIST(DECLARE)
#undef DECLARE

#define ENTRY(e, name, a1, a2, title, record) [e] = &record,
static const vic_method_ops *const table[] = {VIC_METHOD_LIST(ENTRY)};
#undef ENTRY

#define COUNT (int)(sizeof table / sizeof *table)

const vic_method_ops *vic__method_ops(vic_method m) {
  return (int)m > 0 && (int)m < COUNT ? table[m] : NULL;
}

vic_method vic__index_method(vic_index_kind kind) {
  for (int m = 1; m < COUNT; ++m)
    if (table[m] && table[m]->index && table[m]->index->kind == kind) return (vic_method)m;
  return VIC_METHOD_AUTO;
}

const vic_index_ops *vic__index_ops(vic_index_kind kind) {
  const vic_method m = vic__index_method(kind);
  return m == VIC_METHOD_AUTO ? NULL : table[m]->index;
}
