/* The defaults of vic_search_options (vicinity.h documents each field). */
#include "internal.h"

#include <string.h>

static void defaults(vic_search_options *o) {
  memset(o, 0, sizeof *o);
  o->k = 10;
  o->tau = 0.5f;
  o->max_visits = 0;
  o->occlusion_limit = 0;
  o->entry_points = 0;
}

void vic_search_options_init_sized(vic_search_options *o, size_t struct_size) {
  vic_search_options d;
  defaults(&d);
  vic__init_sized(o, struct_size, &d, sizeof d);
}
