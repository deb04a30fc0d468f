/* vic__device_set: the context's device request checked against the
 * devices present, with messages that name both numbers. */
#include "device_set.h"

#include <stdio.h>

vic_status vic__device_set(int first, int requested, int present, int *count, char *msg, size_t size) {
  *count = 0;
  if (msg && size) msg[0] = '\0';
  if (requested < VIC_DEVICES_ALL) {
    snprintf(msg, size, "devices must be 1 (the chosen device), a count >= 2 or VIC_DEVICES_ALL (got %d)", requested);
    return VIC_E_ARGUMENT;
  }
  if (present <= 0) {
    snprintf(msg, size, "no CUDA device found");
    return VIC_E_NODEVICE;
  }
  if (first < 0 || first >= present) {
    snprintf(msg, size, "CUDA device %d was requested but this machine has %d device%s (0..%d)", first, present,
             present == 1 ? "" : "s", present - 1);
    return VIC_E_NODEVICE;
  }
  int avail = present - first;
  int want = requested == VIC_DEVICES_ALL ? avail : (requested < 1 ? 1 : requested);
  if (want > avail) {
    if (first == 0)
      snprintf(msg, size, "%d CUDA devices were requested but this machine has %d", want, present);
    else
      snprintf(msg, size, "%d CUDA devices were requested from device %d on, but this machine has %d (%d from device %d on)",
               want, first, present, avail, first);
    return VIC_E_NODEVICE;
  }
  *count = want;
  return VIC_OK;
}
