/* Writes the index fuzzer's seed files: one saved index of every kind the
 * CPU builds (brute force, grid, graph, TSDG) over the fuzzers' fixed data
 * set.  Run by hand when the file format changes:
 *   fuzz_seeds testing/fuzz/corpus/index */
#include "fuzz_data.h"

#include <string.h>

int main(int argc, char **argv) {
  if (argc != 2) { fprintf(stderr, "usage: fuzz_seeds DIR\n"); return 2; }
  static float pts[FUZZ_N * FUZZ_D];
  fuzz_points(pts);
  vic_data x = {pts, FUZZ_N, FUZZ_D, 0, VIC_L2, NULL};
  vic_ctx_options o;
  vic_ctx_options_init(&o);
  o.backend = VIC_BACKEND_CPU;
  o.threads = 1;
  vic_ctx *c = NULL;
  if (vic_ctx_create(&o, &c) != VIC_OK) return 1;
  const vic_method methods[] = {VIC_METHOD_BRUTE, VIC_METHOD_NNDESCENT, VIC_METHOD_TSDG};
  const char *names[] = {"brute", "graph", "tsdg"};
  for (int i = 0; i < 3; ++i) {
    vic_build_options b;
    vic_build_options_init(&b);
    b.method = methods[i];
    b.k = 6;
    b.gnnd.k_build = 6;
    vic_index *ix = NULL;
    char path[512];
    snprintf(path, sizeof path, "%s/%s.vicindex", argv[1], names[i]);
    if (vic_index_build(c, &x, &b, &ix) != VIC_OK || vic_index_save(c, ix, path) != VIC_OK) {
      fprintf(stderr, "%s: %s\n", names[i], vic_ctx_error(c));
      return 1;
    }
    vic_index_free(ix);
  }
  vic_ctx_destroy(c);
  return 0;
}
