// The MPI glue of the Vicinity filters, in one place.  Under pvbatch or
// pvserver with several processes every rank holds a piece of the data;
// the filters must give the answers of one process.  What happens here is
// plumbing only (the kNN lists, densities and peaks stay the core's):
//
//  - Redistribute: the points are balanced over the ranks by spatial cuts
//    (vtkVicinityKdCuts.h: the kd rounds of vtkDistributedPointCloudFilter,
//    through the public vtkMultiProcessController API; each rank gets a
//    tight region, regions are separated along a cut axis, so a point is
//    owned by exactly one rank) and shipped with the public static
//    vtkDistributedPointCloudFilter::GetPointsInsideBounds, point data
//    included.
//  - Global ids: the input's global point ids when every piece has them,
//    else an exclusive scan of the piece sizes in rank order, so one
//    process and N processes number the points the same way.
//  - Halo: each rank fetches the other ranks' points within a width of its
//    region (GetPointsInsideBounds again) and the filter computes on owned
//    + halo points sorted by global id (so the core's (distance, id)
//    tie-breaks equal one process's).  The width starts from a density
//    estimate and grows until the reach of every owned point (its k-th
//    neighbour distance, times what the filter needs) fits inside it, all
//    ranks agreeing through AllReduce.
//  - Results: owned rows only, neighbour ids as global ids, statistics
//    reduced over the ranks.
#ifndef vtkVicinityDistributedPoints_h
#define vtkVicinityDistributedPoints_h

#include "vtkVicinityFilterSupport.h"

#include <vtkSmartPointer.h>
#include <vtkType.h>

#include <functional>
#include <string>
#include <vector>

class vtkAlgorithm;
class vtkDataArray;
class vtkDataSet;
class vtkFieldData;
class vtkMPIController;
class vtkPolyData;

namespace vtkVicinity
{

// The name of the global point id array the MPI path adds to its outputs.
extern const char* const GlobalIdsName;

// The global controller as an MPI controller when this run has several
// processes, else nullptr (serial runs take the serial path unchanged).
vtkMPIController* MultiProcessController();

// Collective agreement of every rank on how a step went: Failed on any
// rank beats Cancelled beats Done.  Ranks that did not fail themselves say
// so on `self` ("<label>: stopped because MPI rank r failed").
Outcome AgreeOutcome(vtkMPIController* c, vtkAlgorithm* self, const char* label, Outcome mine);

// Collective, before any exchange: the core's validation of this rank's
// rows, numbered by their global ids, agreed over the ranks.  On every
// rank the message is the core's for the lowest-numbered bad row of all
// (what one process says for the same points), and the outcome Failed; a
// problem that is no row's fails as AgreeOutcome does.  Without this a
// NaN point would fall out of every region of the spatial cuts and vanish.
Outcome AgreeValidRows(vtkMPIController* c, vtkAlgorithm* self, const char* label, Context& ctx,
  const vic_data& rows, const vtkIdType* globalIds);
// The same for per-particle masses (vic_masses_validate_numbered).
Outcome AgreeValidMasses(vtkMPIController* c, vtkAlgorithm* self, const char* label, Context& ctx,
  const std::vector<float>& mass, const vtkIdType* globalIds);

// Sums and maxima over all ranks.
double AllSum(vtkMPIController* c, double v);
double AllMax(vtkMPIController* c, double v);
vtkIdType AllSumIds(vtkMPIController* c, vtkIdType v);

// The global ids of a piece: its point data's global ids when every rank
// with points has them, else first + 0 .. n-1 with first the number of
// points on lower ranks.  Collective.
vtkSmartPointer<vtkIdTypeArray> PieceGlobalIds(vtkMPIController* c, vtkDataSet* piece);

class DistributedPoints
{
public:
  explicit DistributedPoints(vtkMPIController* controller);
  ~DistributedPoints();
  DistributedPoints(const DistributedPoints&) = delete;
  DistributedPoints& operator=(const DistributedPoints&) = delete;

  // Collective.  Checks every rank's coordinates (AgreeValidRows) and,
  // with useMass, its masses (mass: GetInputArrayToProcess's answer on
  // `input`; SelectMass, then AgreeValidMasses), then balances `input`'s
  // points over the ranks (this rank's owned points, float coordinates as
  // the core reads them, all point arrays, plus GlobalIdsName).  k: the
  // neighbours wanted, for the first halo width.  Failed (the message said
  // on `self`) when some rank's points are bad.
  Outcome Redistribute(vtkAlgorithm* self, const char* label, Context& ctx, vtkDataSet* input, int k,
    bool useMass = false, vtkDataArray* mass = nullptr, int massAssociation = -1);

  // The reach the owned point at a local row needs inside the halo, given
  // its k-th neighbour distance (default: that distance itself); +inf
  // when it cannot tell yet (the halo doubles).  A reach measured on the
  // local rows bounds the true one from above, so the next round fits.
  using ReachFunction = std::function<double(vtkIdType localRow, double kthDistance)>;
  // The filter's kNN lists over the local rows (owned + halo, sorted by
  // global id); Done with *lists set, or the outcome of the core call.
  using BuildFunction = std::function<Outcome(vtkPolyData* local, const vic_knn** lists)>;

  // Collective.  Fetches the halo, builds, checks that every owned point's
  // reach fits (and that it got min(k, N-1) neighbours), and grows the
  // halo until it does on every rank.  Outcomes are agreed over ranks.
  Outcome BuildWithHalo(vtkAlgorithm* self, const char* label, int k, const BuildFunction& build,
    const ReachFunction& reach = nullptr);

  vtkMPIController* Controller() const { return this->Ctrl; }
  vtkPolyData* Local() const { return this->LocalPoints; }
  // Local row numbers of the owned points (ascending global id).
  const std::vector<vtkIdType>& OwnedRows() const { return this->Owned; }
  bool IsOwned(vtkIdType localRow) const { return this->OwnedFlag[localRow] != 0; }
  const vtkIdType* LocalGlobalIds() const;
  vtkIdType GlobalPoints() const { return this->TotalPoints; }
  double HaloWidth() const { return this->Width; }
  vtkIdType HaloPoints() const;
  int HaloRounds() const { return this->Rounds; }

  // The owned points as a point cloud (one vertex each) with the local
  // rows' point data: the skeleton of a filter's port-0 output.
  vtkSmartPointer<vtkPolyData> OwnedCloud() const;
  // Owned rows of a local per-point array of `components` floats.
  std::vector<float> OwnedValues(const float* local, int components) const;
  // Owned rows of local kNN lists, neighbour ids as global ids (a
  // vic_knn the caller frees with vic_knn_free; the report is copied).
  vic_knn OwnedLists(const vic_knn& local) const;
  // The report of owned lists with d_nn1 mean/max and the recall estimate
  // reduced over all ranks (collective).
  vic_report GlobalReport(const vic_knn& owned) const;

  // Collective.  Field data of the MPI run: ranks, halo width and rounds,
  // and per rank (one value each, in rank order) the owned points, the
  // halo points and the seconds from Redistribute to the end of the build.
  void WriteHaloReport(vtkFieldData* fd) const;

private:
  void FetchHalo(double width);
  double Started = 0, Finished = 0; // steady-clock seconds

  vtkMPIController* Ctrl;
  vtkSmartPointer<vtkPolyData> OwnedPoints; // after Redistribute, any order
  vtkSmartPointer<vtkPolyData> LocalPoints; // owned + halo, by global id
  std::vector<vtkIdType> Owned;
  std::vector<char> OwnedFlag;
  double Region[6] = { 1, 0, 1, 0, 1, 0 }; // the tight box of the owned points (empty: lo > hi)
  double Domain[6] = { 1, 0, 1, 0, 1, 0 }; // the box of all points
  double Width = 0;
  int Rounds = 0;
  vtkIdType TotalPoints = 0;
};

} // namespace vtkVicinity

#endif
