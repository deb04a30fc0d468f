// The rank-to-GPU mapping of MPI runs: rank r with Device property b on a
// node with c devices uses (b + r) mod c; with no device the property is
// passed through unchanged (the core then reports that no device exists).
#include "vtkVicinityDeviceForRank.h"

#include <cstdio>

static int failures = 0;

static void expect(int rank, int base, int count, int want)
{
  const int got = vtkVicinity::DeviceForRank(rank, base, count);
  if (got != want)
  {
    std::printf("FAIL: DeviceForRank(rank %d, base %d, count %d) = %d, expected %d\n", rank, base,
      count, got, want);
    ++failures;
  }
}

int main()
{
  // Two GPUs, four ranks: 0 1 0 1 (rank mod device count).
  expect(0, 0, 2, 0);
  expect(1, 0, 2, 1);
  expect(2, 0, 2, 0);
  expect(3, 0, 2, 1);
  // One GPU: every rank shares device 0.
  for (int r = 0; r < 5; ++r)
  {
    expect(r, 0, 1, 0);
  }
  // Eight GPUs, more ranks than devices: wraps around.
  expect(7, 0, 8, 7);
  expect(8, 0, 8, 0);
  expect(13, 0, 8, 5);
  // A base device shifts the round-robin and is itself taken modulo count.
  expect(0, 1, 2, 1);
  expect(1, 1, 2, 0);
  expect(0, 3, 2, 1);
  // No device (CPU build or no GPU): the property passes through.
  expect(3, 0, 0, 0);
  expect(3, 2, 0, 2);
  // Every device of a 4-GPU node is used exactly once by 4 ranks.
  int used[4] = { 0, 0, 0, 0 };
  for (int r = 0; r < 4; ++r)
  {
    ++used[vtkVicinity::DeviceForRank(r, 0, 4)];
  }
  for (int d = 0; d < 4; ++d)
  {
    if (used[d] != 1)
    {
      std::printf("FAIL: device %d used %d times by 4 ranks on 4 devices\n", d, used[d]);
      ++failures;
    }
  }
  if (failures == 0)
  {
    std::printf("PASS: rank-to-device mapping\n");
  }
  return failures == 0 ? 0 : 1;
}
