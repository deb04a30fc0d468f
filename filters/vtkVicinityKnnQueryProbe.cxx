#include "vtkVicinityKnnQueryProbe.h"
#include "vtkVicinityCoreOptions.h"
#include "vtkVicinityDistributedPoints.h"
#include "vtkVicinityFilterSupport.h"
#include "vtkVicinityIndexCache.h"

#include <vtkCellArray.h>
#include <vtkDataArray.h>
#include <vtkDataSet.h>
#include <vtkFieldData.h>
#include <vtkFloatArray.h>
#include <vtkIdTypeArray.h>
#include <vtkInformation.h>
#include <vtkInformationVector.h>
#include <vtkIntArray.h>
#include <vtkObjectFactory.h>
#include <vtkPointData.h>
#include <vtkPointSet.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>

#include <chrono>
#include <string>
#include <thread>

vtkStandardNewMacro(vtkVicinityKnnQueryProbe);

namespace
{
const char* const Label = "kNN Query Probe";

double Now()
{
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

const char* ModeName(int mode)
{
  return mode == vtkVicinityKnnQueryProbe::HANDLE ? "Handle"
    : mode == vtkVicinityKnnQueryProbe::QUERY_POINTS ? "Query Points"
                                                     : "Point Id";
}

// One neighbour kept for the output.
struct Hit
{
  vtkIdType Query;
  int Rank;
  vtkIdType Id;
  float Distance;
};

// The neighbours to show: missing entries (-1) dropped and, in Point Id
// mode, the query point itself (searched with k + 1 for that reason),
// then at most k per query, renumbered from rank 0.
std::vector<Hit> KeptHits(const vic_knn& knn, vtkIdType self, int k)
{
  std::vector<Hit> hits;
  hits.reserve(static_cast<size_t>(knn.n) * static_cast<size_t>(k));
  for (vtkIdType q = 0; q < knn.n; ++q)
  {
    int rank = 0;
    for (int r = 0; r < knn.k && rank < k; ++r)
    {
      const int64_t id = knn.ids[q * knn.k + r];
      if (id < 0 || id == self)
      {
        continue;
      }
      hits.push_back({ q, rank++, static_cast<vtkIdType>(id), knn.dist[q * knn.k + r] });
    }
  }
  return hits;
}

// Neighbour points (with the neighbours' input point data and the probe
// arrays), then query points, a vertex per point and a line from each
// query to each of its neighbours.  Only k points per query are touched:
// nothing here is proportional to the size of the data.
void Assemble(vtkDataSet* input, const std::vector<Hit>& hits, const std::vector<double>& queryPos,
  vtkIdType self, vtkPolyData* output)
{
  const vtkIdType m = static_cast<vtkIdType>(hits.size());
  const vtkIdType q = static_cast<vtkIdType>(queryPos.size() / 3);
  const vtkIdType total = m + q;
  auto points = vtkSmartPointer<vtkPoints>::New();
  points->SetDataTypeToDouble();
  points->SetNumberOfPoints(total);
  vtkPointData* inPD = input->GetPointData();
  vtkPointData* outPD = output->GetPointData();
  outPD->CopyAllocate(inPD, total);

  auto queryId = vtkSmartPointer<vtkIdTypeArray>::New();
  queryId->SetName("Query Id");
  queryId->SetNumberOfValues(total);
  auto rank = vtkSmartPointer<vtkIntArray>::New();
  rank->SetName("Rank");
  rank->SetNumberOfValues(total);
  auto distance = vtkSmartPointer<vtkFloatArray>::New();
  distance->SetName("Distance");
  distance->SetNumberOfValues(total);
  auto neighborId = vtkSmartPointer<vtkIdTypeArray>::New();
  neighborId->SetName("Neighbor Id");
  neighborId->SetNumberOfValues(total);

  double p[3];
  for (vtkIdType i = 0; i < m; ++i)
  {
    const Hit& h = hits[i];
    input->GetPoint(h.Id, p);
    points->SetPoint(i, p);
    outPD->CopyData(inPD, h.Id, i);
    queryId->SetValue(i, h.Query);
    rank->SetValue(i, h.Rank);
    distance->SetValue(i, h.Distance);
    neighborId->SetValue(i, h.Id);
  }
  for (vtkIdType j = 0; j < q; ++j)
  {
    const vtkIdType i = m + j;
    points->SetPoint(i, &queryPos[3 * j]);
    if (self >= 0)
    {
      outPD->CopyData(inPD, self, i);
    }
    else
    {
      outPD->NullData(i); // a free position has no data of its own
    }
    queryId->SetValue(i, j);
    rank->SetValue(i, -1);
    distance->SetValue(i, 0.f);
    neighborId->SetValue(i, self);
  }
  outPD->AddArray(queryId);
  outPD->AddArray(rank);
  outPD->AddArray(distance);
  outPD->AddArray(neighborId);

  auto verts = vtkSmartPointer<vtkCellArray>::New();
  verts->AllocateExact(total, total);
  auto lines = vtkSmartPointer<vtkCellArray>::New();
  lines->AllocateExact(m, 2 * m);
  for (vtkIdType i = 0; i < total; ++i)
  {
    verts->InsertNextCell(1, &i);
  }
  for (vtkIdType i = 0; i < m; ++i)
  {
    const vtkIdType line[2] = { m + hits[i].Query, i };
    lines->InsertNextCell(2, line);
  }
  output->SetPoints(points);
  output->SetVerts(verts);
  output->SetLines(lines);
}
} // namespace

vtkVicinityKnnQueryProbe::vtkVicinityKnnQueryProbe()
  : Cache(new vtkVicinity::IndexCache)
{
  this->SetNumberOfInputPorts(2);
  this->SetNumberOfOutputPorts(1);
  this->SetInputArrayToProcess(
    0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, vtkDataSetAttributes::SCALARS);
  // Defaults are the core's, so the filter never drifts from it.
  this->BuildOptions = vtkSmartPointer<vtkVicinityBuildOptions>::New();
  vic_search_options so;
  vic_search_options_init(&so);
  this->SearchTau = so.tau;
  this->MaxVisits = so.max_visits;
  this->EntryPoints = so.entry_points;
}

vtkVicinityKnnQueryProbe::~vtkVicinityKnnQueryProbe()
{
  this->SetIndexFileName(nullptr);
}

void vtkVicinityKnnQueryProbe::SetBuildOptions(vtkVicinityBuildOptions* options)
{
  if (vtkVicinity::AssignBuildOptions(this->BuildOptions, options))
  {
    this->Modified();
  }
}

vtkMTimeType vtkVicinityKnnQueryProbe::GetMTime()
{
  // An edit of the build options re-executes the filter; whether it
  // rebuilds the index is the key's business (MakeKey).
  return vtkVicinity::LaterMTime(this->Superclass::GetMTime(), this->BuildOptions);
}

int vtkVicinityKnnQueryProbe::FillInputPortInformation(int port, vtkInformation* info)
{
  info->Set(vtkAlgorithm::INPUT_REQUIRED_DATA_TYPE(), "vtkDataSet");
  if (port == 1)
  {
    info->Set(vtkAlgorithm::INPUT_IS_OPTIONAL(), 1);
  }
  return 1;
}

vtkVicinity::IndexKey vtkVicinityKnnQueryProbe::MakeKey(vtkDataSet* input, vtkDataArray* array) const
{
  vtkVicinity::IndexKey key;
  auto* ps = vtkPointSet::SafeDownCast(input);
  if (array)
  {
    key.Source = array;
    key.SourceMTime = array->GetMTime();
    key.N = array->GetNumberOfTuples();
    key.D = array->GetNumberOfComponents();
    key.RowsName = array->GetName() ? array->GetName() : "(unnamed array)";
  }
  else if (ps && ps->GetPoints())
  {
    // vtkPoints' MTime covers its data array's.
    key.Source = ps->GetPoints()->GetData();
    key.SourceMTime = ps->GetPoints()->GetMTime();
    key.N = ps->GetNumberOfPoints();
    key.D = 3;
    key.RowsName = "Point Coordinates";
  }
  else
  {
    key.Source = input; // implicit points (image data): the data set's MTime
    key.SourceMTime = input->GetMTime();
    key.N = input->GetNumberOfPoints();
    key.D = 3;
    key.RowsName = "Point Coordinates";
  }
  key.Metric = this->Metric;
  key.Backend = this->Backend;
  key.Device = this->Device;
  key.Seed = static_cast<uint64_t>(static_cast<uint32_t>(this->Seed));
  // k stays the core's default (the key's own): the graph's degree follows
  // from the build options, and the k of the searches must not reach into
  // the build.
  key.Build = vtkVicinity::CoreBuildOptions(this->BuildOptions, this->Method, key.Build.k);
  if (this->IndexFileMode == INDEX_LOAD)
  {
    key.LoadPath = this->IndexFileName;
  }
  return key;
}

vtkVicinity::Outcome vtkVicinityKnnQueryProbe::UpdateIndex(vtkVicinity::Context& ctx, vtkDataSet* input)
{
  using vtkVicinity::Outcome;
  this->RebuiltNow = false;
  const bool useFile = this->IndexFileMode != INDEX_IN_MEMORY;
  if (useFile && (!this->IndexFileName || !*this->IndexFileName))
  {
    vtkErrorMacro(<< Label << ": Index File is '"
                  << (this->IndexFileMode == INDEX_LOAD ? "Load" : "Build and Save")
                  << "' but no index file name is set.");
    return Outcome::Failed;
  }
  vtkDataArray* array = nullptr;
  int association = -1;
  if (this->UseFeatureArray)
  {
    array = this->GetInputArrayToProcess(0, input, association);
  }
  const vtkVicinity::IndexKey key = this->MakeKey(input, array);
  if (!this->Cache->Matches(key))
  {
    const double t0 = Now();
    vtkVicinity::Rows rows;
    std::string source;
    if (!vtkVicinity::SelectRows(
          this, Label, input, this->UseFeatureArray, array, association, rows, source))
    {
      this->Cache->Clear();
      return Outcome::Failed;
    }
    ctx.SetCallRange(0.0, 0.95);
    const vic_status s = this->Cache->Make(ctx.Get(), key, std::move(rows));
    const Outcome made = vtkVicinity::CheckCall(this, Label, ctx, s);
    if (made != Outcome::Done)
    {
      return made;
    }
    this->LastBuildSeconds = Now() - t0;
    this->RebuiltNow = true;
  }
  if (this->IndexFileMode == INDEX_BUILD_AND_SAVE)
  {
    return vtkVicinity::CheckCall(
      this, Label, ctx, this->Cache->Save(ctx.Get(), this->IndexFileName));
  }
  return Outcome::Done;
}

bool vtkVicinityKnnQueryProbe::GatherQueries(vtkDataSet* input, vtkDataSet* queries,
  std::vector<float>& rows, std::vector<double>& positions)
{
  const vic_data x = this->Cache->View();
  switch (this->QueryMode)
  {
    case HANDLE:
      if (this->UseFeatureArray)
      {
        vtkErrorMacro(<< Label << ": the handle is a position in 3-d space, but the index is in "
                                  "feature space; choose Query Mode 'Point Id' (points most like a "
                                  "data point) or 'Query Points'.");
        return false;
      }
      rows.assign(this->ProbePosition, this->ProbePosition + 3);
      positions.assign(this->ProbePosition, this->ProbePosition + 3);
      return true;
    case QUERY_POINTS:
    {
      if (!queries)
      {
        vtkErrorMacro(<< Label << ": Query Mode is 'Query Points' but nothing is connected to the "
                                  "Queries input.");
        return false;
      }
      vtkVicinity::Rows q;
      if (this->UseFeatureArray)
      {
        int association = -1;
        vtkDataArray* array = this->GetInputArrayToProcess(0, input, association);
        const char* name = array ? array->GetName() : nullptr;
        vtkDataArray* qa = name ? queries->GetPointData()->GetArray(name) : nullptr;
        if (!qa || qa->GetNumberOfComponents() != x.d)
        {
          vtkErrorMacro(<< Label << ": the query points need a point-data array '"
                        << (name ? name : "") << "' with " << x.d
                        << " components, like the data's feature array.");
          return false;
        }
        vtkVicinity::ExtractArrayRows(qa, q);
      }
      else
      {
        vtkVicinity::ExtractPointRows(queries, q);
      }
      rows.swap(q.Values);
      positions.resize(3 * static_cast<size_t>(queries->GetNumberOfPoints()));
      for (vtkIdType i = 0; i < queries->GetNumberOfPoints(); ++i)
      {
        queries->GetPoint(i, &positions[3 * i]);
      }
      return true;
    }
    default:
    {
      if (this->QueryPointId >= x.n)
      {
        vtkErrorMacro(<< Label << ": Query Point Id " << this->QueryPointId
                      << " is out of range; the data have " << x.n << " points (ids 0 to "
                      << x.n - 1 << ").");
        return false;
      }
      const float* row = x.rows + this->QueryPointId * x.d;
      rows.assign(row, row + x.d);
      positions.resize(3);
      input->GetPoint(this->QueryPointId, positions.data());
      return true;
    }
  }
}

int vtkVicinityKnnQueryProbe::RequestData(
  vtkInformation*, vtkInformationVector** inputVector, vtkInformationVector* outputVector)
{
  using vtkVicinity::Outcome;
  const double t0 = Now();
  vtkDataSet* input = vtkDataSet::GetData(inputVector[0], 0);
  vtkDataSet* queries = vtkDataSet::GetData(inputVector[1], 0);
  vtkPolyData* output = vtkPolyData::GetData(outputVector, 0);
  if (!input || !output)
  {
    vtkErrorMacro(<< Label << ": the input must be a data set.");
    return 0;
  }
  // Every rank holds the same k, so this early return is collective.
  if (this->K < 1 || this->K > 4096)
  {
    vtkErrorMacro(<< Label << ": k = " << this->K << " is out of range: k must be between 1 and 4096.");
    return 0;
  }
  // Several MPI processes: every rank answers from its own piece
  // (vtkVicinityKnnQueryProbeMPI.cxx), before any early return here.
  if (vtkMPIController* c = vtkVicinity::MultiProcessController())
  {
    return this->RequestDistributed(c, input, queries, output);
  }
  if (input->GetNumberOfPoints() == 0)
  {
    return 1; // nothing to search: empty in, empty out
  }

  vtkVicinity::Context ctx(this);
  if (!ctx.Create(static_cast<vic_backend>(this->Backend), this->Device, this->Threads,
        static_cast<uint64_t>(static_cast<uint32_t>(this->Seed))))
  {
    vtkErrorMacro(<< Label << ": " << ctx.Error());
    return 0;
  }
  const Outcome indexed = this->UpdateIndex(ctx, input);
  if (indexed != Outcome::Done)
  {
    return indexed == Outcome::Cancelled ? 1 : 0;
  }

  std::vector<float> rows;
  std::vector<double> positions;
  if (!this->GatherQueries(input, queries, rows, positions))
  {
    return 0;
  }
  const vic_data x = this->Cache->View();
  const vtkIdType self = this->QueryMode == POINT_ID ? this->QueryPointId : -1;
  vic_data q = x;
  q.rows = rows.data();
  q.n = static_cast<int64_t>(rows.size() / x.d);
  q.stride = 0;
  vic_knn knn = {};
  double querySeconds = 0.0;
  if (q.n > 0)
  {
    vic_search_options so;
    vic_search_options_init(&so);
    // Point Id mode: one more, as the point finds itself (dropped below).
    const vtkIdType want = this->K + (self >= 0 ? 1 : 0);
    so.k = static_cast<int32_t>(want < x.n ? want : x.n);
    so.tau = static_cast<float>(this->SearchTau);
    so.max_visits = this->MaxVisits;
    so.entry_points = this->EntryPoints;
    // The core parallelises a search over queries, never within one, so
    // more threads than queries only add a thread team's start and
    // barrier, which for one probe costs far more than the search itself
    // (most of all on a loaded machine).  The search gets its own context.
    const int64_t all = this->Threads > 0 ? this->Threads : std::thread::hardware_concurrency();
    const int threads = q.n < all ? static_cast<int>(q.n) : this->Threads; // Threads 0 = all
    vtkVicinity::Context searchCtx(this);
    if (!searchCtx.Create(static_cast<vic_backend>(this->Backend), this->Device, threads, 0))
    {
      vtkErrorMacro(<< Label << ": " << searchCtx.Error());
      return 0;
    }
    searchCtx.SetCallRange(0.95, 1.0);
    const vic_status s = vic_index_search(searchCtx.Get(), this->Cache->Get(), &q, &so, &knn);
    const Outcome searched = vtkVicinity::CheckCall(this, Label, searchCtx, s);
    if (searched != Outcome::Done)
    {
      return searched == Outcome::Cancelled ? 1 : 0;
    }
    querySeconds = knn.report.seconds_total;
  }

  Assemble(input, KeptHits(knn, self, this->K), positions, self, output);

  const vic_report* built = vic_index_report(this->Cache->Get());
  vtkFieldData* fd = output->GetFieldData();
  vtkVicinity::AddFieldInt(fd, "Index Builds", this->Cache->Builds());
  vtkVicinity::AddFieldInt(fd, "Index Loads", this->Cache->Loads());
  vtkVicinity::AddFieldInt(fd, "Index Rebuilt", this->RebuiltNow ? 1 : 0);
  vtkVicinity::AddFieldDouble(fd, "Seconds Index Build", this->LastBuildSeconds);
  vtkVicinity::AddFieldDouble(fd, "Seconds Query", querySeconds);
  vtkVicinity::AddFieldString(fd, "Index Method", vic_method_name(built->method));
  vtkVicinity::AddFieldString(fd, "Index Reason", built->reason);
  vtkVicinity::AddFieldInt(fd, "Index Points", x.n);
  vtkVicinity::AddFieldInt(fd, "Dimension", x.d);
  vtkVicinity::AddFieldString(fd, "Metric", vic_metric_name(x.metric));
  vtkVicinity::AddFieldString(fd, "Query Mode", ModeName(this->QueryMode));
  vtkVicinity::AddFieldInt(fd, "Queries", q.n);
  vtkVicinity::AddFieldInt(fd, "k", this->K);
  if (q.n > 0)
  {
    vtkVicinity::AddFieldString(fd, "Search Reason", knn.report.reason);
  }
  vtkVicinity::AddFieldDouble(fd, "Seconds Execute", Now() - t0);
  vic_knn_free(&knn);
  return 1;
}

void vtkVicinityKnnQueryProbe::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "QueryMode: " << ModeName(this->QueryMode) << "\n";
  os << indent << "ProbePosition: (" << this->ProbePosition[0] << ", " << this->ProbePosition[1]
     << ", " << this->ProbePosition[2] << ")\n";
  os << indent << "QueryPointId: " << this->QueryPointId << "\n";
  os << indent << "K: " << this->K << "\n";
  os << indent << "SearchTau: " << this->SearchTau << "\n";
  os << indent << "MaxVisits: " << this->MaxVisits << "\n";
  os << indent << "EntryPoints: " << this->EntryPoints << "\n";
  os << indent << "Threads: " << this->Threads << "\n";
  os << indent << "UseFeatureArray: " << this->UseFeatureArray << "\n";
  os << indent << "Metric: " << vic_metric_name(static_cast<vic_metric>(this->Metric)) << "\n";
  os << indent << "Method: " << vic_method_name(static_cast<vic_method>(this->Method)) << "\n";
  os << indent << "Backend: " << vic_backend_name(static_cast<vic_backend>(this->Backend)) << "\n";
  os << indent << "Device: " << this->Device << "\n";
  os << indent << "Seed: " << this->Seed << "\n";
  os << indent << "BuildOptions:\n";
  this->BuildOptions->PrintSelf(os, indent.GetNextIndent());
  os << indent << "IndexFileMode: " << this->IndexFileMode << "\n";
  os << indent << "IndexFileName: " << (this->IndexFileName ? this->IndexFileName : "(none)")
     << "\n";
  os << indent << "Index Builds: " << this->Cache->Builds() << ", Loads: " << this->Cache->Loads()
     << "\n";
}
