/* A GGM workspace kept across the pair merges of a sharded build (part of
 * vicinity_kernels): allocated once for shards of up to m rows, every merge
 * then only copies the pair's rows (skipped for a shard whose rows are
 * still on the device) and own graphs in through pinned slots and the
 * merged k lists out.  The flat input lists share the memory of the
 * set-aside halves, so a pair needs what an in-memory build of its 2m rows
 * needs plus its k-wide result. */
#ifndef VIC_KERNELS_GGM_PAIRS_H
#define VIC_KERNELS_GGM_PAIRS_H

#include "vic_kernels_gnnd.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vick_ggm_pairs vick_ggm_pairs;

/* Device bytes of a workspace for shards of up to m rows and k-wide results. */
size_t vick_ggm_pairs_bytes(int64_t m, int32_t d, const vick_gnnd_params *p, int32_t k);

/* Workspace on call->device (the call's seed seeds every merge). */
int vick_ggm_pairs_open(vick_call *call, int64_t m, int32_t d, const vick_gnnd_params *p, int32_t k,
                        vick_ggm_pairs **out);

/* vick_gnnd_merge_blocks through the workspace: n1, n2 <= m, g1 and g2 K
 * wide, out (n1 + n2 lists of the workspace's k). */
int vick_ggm_pairs_merge(vick_call *call, vick_ggm_pairs *s, const float *rows1, int64_t n1, const float *rows2,
                         int64_t n2, const vick_gnnd_graph *g1, const vick_gnnd_graph *g2, vick_gnnd_graph *out);

void vick_ggm_pairs_close(vick_ggm_pairs *s);

#ifdef __cplusplus
}
#endif
#endif
