// Which GPU an MPI rank uses: ranks share the node's devices round-robin,
// starting from the filter's Device property, so with Device 0 rank r
// takes device r mod count.  A pure function (no CUDA, no MPI) so that the
// mapping is unit-tested on machines without GPUs
// (testing/filters/test_device_for_rank.cxx).
#ifndef vtkVicinityDeviceForRank_h
#define vtkVicinityDeviceForRank_h

namespace vtkVicinity
{
// rank >= 0; base: the Device property; count: devices visible to this
// process (0 when none: base is returned and the core reports the missing
// device as it does in one process).
inline int DeviceForRank(int rank, int base, int count)
{
  if (count <= 0 || rank < 0 || base < 0)
  {
    return base;
  }
  return (base % count + rank % count) % count;
}
} // namespace vtkVicinity

#endif
