/* vic__topk_merge_row: a cursor per list, each step takes the smallest
 * head by (distance, id).  The lists are few (shards of one index), so a
 * linear scan of the heads beats a heap. */
#include "topk_merge.h"
#include "topk.h"

#include <math.h>

void vic__topk_merge_row(int lists, const int64_t *const *ids, const float *const *dist, const int32_t *len, int32_t k,
                         int64_t *out_ids, float *out_dist) {
  int32_t pos[VIC_MERGE_MAX_LISTS];
  int32_t got = 0;
  if (lists > VIC_MERGE_MAX_LISTS) lists = VIC_MERGE_MAX_LISTS; /* documented limit, checked by the callers */
  for (int t = 0; t < lists; ++t) pos[t] = 0;
  while (got < k) {
    int best = -1;
    for (int t = 0; t < lists; ++t) {
      while (pos[t] < len[t] && ids[t][pos[t]] < 0) pos[t]++;
      if (pos[t] >= len[t]) continue;
      if (best < 0 || vic__worse(dist[best][pos[best]], ids[best][pos[best]], dist[t][pos[t]], ids[t][pos[t]]))
        best = t;
    }
    if (best < 0) break;
    int64_t id = ids[best][pos[best]];
    float d = dist[best][pos[best]];
    pos[best]++;
    /* the same point from two lists arrives at the same distance, so
     * back to back in (distance, id) order */
    if (got > 0 && out_ids[got - 1] == id) continue;
    out_ids[got] = id;
    out_dist[got] = d;
    got++;
  }
  for (; got < k; ++got) {
    out_ids[got] = -1;
    out_dist[got] = INFINITY;
  }
}
