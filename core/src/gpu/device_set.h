/* Which CUDA devices a call uses when the context asks for several
 * (vic_ctx_options.devices).  A pure function of the numbers, in every
 * build, so its messages are tested where no GPU is present. */
#ifndef VIC_DEVICE_SET_H
#define VIC_DEVICE_SET_H

#include "vicinity.h"

#include <stddef.h>

/* Devices first, first+1, ... of `present`: requested = 0 or 1 is the
 * first alone, N >= 2 is N of them, VIC_DEVICES_ALL every one from first
 * on.  VIC_OK with *count set, or VIC_E_NODEVICE (none present, first not
 * present, more requested than present) / VIC_E_ARGUMENT (requested
 * below VIC_DEVICES_ALL) with the reason in msg. */
vic_status vic__device_set(int first, int requested, int present, int *count, char *msg, size_t size);

/* Shard s of a sharded build runs on device first + (s mod count): the
 * mapping a 1-device and an N-device run share, so they build the same
 * shards with the same seeds. */
static inline int vic__shard_device(int first, int count, int64_t shard) {
  return first + (int)(shard % (count > 0 ? count : 1));
}

#endif
