/* Prints, as JSON, the sizes of vicinity.h's structs and the offsets of
 * the fields the Python module mirrors, for test_python_module.py to
 * compare with its ctypes layouts. */
#include <vicinity.h>

#include <stddef.h>
#include <stdio.h>

static int first = 1;
static void put(const char *key, size_t v) {
  printf("%s\"%s\": %zu", first ? "{" : ", ", key, v);
  first = 0;
}
#define SIZE(T) put(#T, sizeof(T))
#define FIELD(T, f) put(#T "." #f, offsetof(T, f))

int main(void) {
  SIZE(vic_ctx_options); FIELD(vic_ctx_options, struct_size); FIELD(vic_ctx_options, backend);
  FIELD(vic_ctx_options, device); FIELD(vic_ctx_options, devices); FIELD(vic_ctx_options, threads);
  FIELD(vic_ctx_options, seed); FIELD(vic_ctx_options, log); FIELD(vic_ctx_options, progress);
  FIELD(vic_ctx_options, user);
  SIZE(vic_build_options); FIELD(vic_build_options, method); FIELD(vic_build_options, k);
  FIELD(vic_build_options, recall_sample); FIELD(vic_build_options, brute_max_n); FIELD(vic_build_options, nndescent);
  SIZE(vic_search_options); FIELD(vic_search_options, k); FIELD(vic_search_options, tau);
  FIELD(vic_search_options, max_visits); FIELD(vic_search_options, occlusion_limit);
  FIELD(vic_search_options, entry_points);
  SIZE(vic_density_options); FIELD(vic_density_options, sph); FIELD(vic_density_options, total_mass);
  SIZE(vic_peak_options); FIELD(vic_peak_options, min_density); FIELD(vic_peak_options, min_delta);
  FIELD(vic_peak_options, min_members); FIELD(vic_peak_options, delta_factor); FIELD(vic_peak_options, min_prominence);
  SIZE(vic_data); FIELD(vic_data, rows); FIELD(vic_data, n); FIELD(vic_data, d); FIELD(vic_data, stride);
  FIELD(vic_data, metric); FIELD(vic_data, box);
  SIZE(vic_report); FIELD(vic_report, method); FIELD(vic_report, reason); FIELD(vic_report, backend);
  FIELD(vic_report, k_requested); FIELD(vic_report, k); FIELD(vic_report, seconds_total);
  FIELD(vic_report, seconds_transfer); FIELD(vic_report, seconds_kernel); FIELD(vic_report, n_stages);
  FIELD(vic_report, stages); FIELD(vic_report, recall_estimate); FIELD(vic_report, recall_sample);
  FIELD(vic_report, dnn1_mean); FIELD(vic_report, dnn1_max); FIELD(vic_report, warnings);
  SIZE(vic_knn); FIELD(vic_knn, n); FIELD(vic_knn, k); FIELD(vic_knn, ids); FIELD(vic_knn, dist);
  FIELD(vic_knn, report);
  SIZE(vic_peaks); FIELD(vic_peaks, n); FIELD(vic_peaks, parent); FIELD(vic_peaks, delta); FIELD(vic_peaks, saliency);
  FIELD(vic_peaks, peak_id); FIELD(vic_peaks, n_peaks); FIELD(vic_peaks, peak_point); FIELD(vic_peaks, peak_members);
  FIELD(vic_peaks, peak_centre); FIELD(vic_peaks, report);
  SIZE(vic_shard_options); FIELD(vic_shard_options, shard_rows); FIELD(vic_shard_options, work_dir);
  FIELD(vic_shard_options, resume);
  printf("}\n");
  return 0;
}
