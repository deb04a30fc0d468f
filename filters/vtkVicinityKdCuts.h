// The spatial cuts that balance points over MPI ranks, through the public
// vtkMultiProcessController API only.  The ranks are halved recursively
// (sub-controllers from PartitionController); in each round the group's
// points are cut along the longest axis of their bounds at the bin of a
// 1024-bin histogram where the lower ranks' share of the points is
// reached, and each rank hands the points of the other side to a partner
// there.  These are the rules of vtkDistributedPointCloudFilter's kd
// rounds (whose own entry points are protected), so the regions -- and
// every rank's owned points -- are the ones the filters have always had.
// Only coordinates travel here: the region is what a rank keeps; the
// points themselves are shipped afterwards with their data.
#ifndef vtkVicinityKdCuts_h
#define vtkVicinityKdCuts_h

class vtkMultiProcessController;
class vtkPointSet;

namespace vtkVicinity
{
// Collective over `controller`.  region: the tight box (xmin, xmax, ymin,
// ...) of the points this rank ends with; empty (min > max) when none.
// Regions of different ranks are separated along the axis of the cut that
// parted them, so a point lies in exactly one region.
void KdRegion(vtkMultiProcessController* controller, vtkPointSet* points, double region[6]);
} // namespace vtkVicinity

#endif
