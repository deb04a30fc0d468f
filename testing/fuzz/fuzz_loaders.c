/* libFuzzer target of the data loaders (testing/io): the first byte picks
 * the file name's extension (which decides the format where the content
 * has no magic number), the rest is the file.  A loader may refuse any
 * input but must neither crash nor leak nor leave a half-filled matrix. */
#include "fuzz_data.h"
#include "vic_io.h"

#include <string.h>

static const char *const EXT[] = {".csv", ".npy", ".fvecs", ".idx", ".dat", ".txt", ".fvecs.gz", ".ivecs"};
enum { N_EXT = sizeof EXT / sizeof *EXT };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  const char *ext = EXT[data[0] % N_EXT];
  char path[256];
  fuzz_scratch(ext, path, sizeof path);
  if (fuzz_write(path, data + 1, size - 1) != 0) return 0;
  char err[512];
  if (strcmp(ext, ".ivecs") == 0) {
    vio_imatrix m;
    if (vio_load_ivecs(path, &m, err, sizeof err) == 0) {
      if (m.n <= 0 || m.d <= 0 || !m.rows) abort();
      vio_ifree(&m);
    } else if (m.rows || m.n || m.d) {
      abort(); /* a failure leaves the matrix zeroed */
    }
  } else {
    vio_matrix m;
    if (vio_load(path, &m, err, sizeof err) == 0) {
      if (m.n <= 0 || m.d <= 0 || !m.rows) abort();
      volatile float sink = 0;
      for (int64_t i = 0; i < m.n * m.d; ++i) sink += m.rows[i]; /* every value was written */
      vio_free(&m);
    } else if (m.rows || m.n || m.d) {
      abort();
    }
  }
  unlink(path);
  return 0;
}
