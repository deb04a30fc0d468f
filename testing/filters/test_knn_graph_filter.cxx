// vtkVicinityKnnGraph against the core's exact results: point and feature
// modes (float32 rows read in place, others copied), the line-graph output, field data, empty input, composite input,
// clear errors for bad input, no recompute when nothing changed, abort.
#include "vtkVicinityKnnGraph.h"
#include "filter_test_util.h"
#include "vicinity.h"

#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkCommand.h>
#include <vtkDoubleArray.h>
#include <vtkFieldData.h>
#include <vtkFloatArray.h>
#include <vtkIdTypeArray.h>
#include <vtkIntArray.h>
#include <vtkMultiBlockDataSet.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkStringArray.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

static vtkSmartPointer<vtkPolyData> RandomCloud(vtkIdType n, unsigned seed, std::vector<float>& rows)
{
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  auto pts = vtkSmartPointer<vtkPoints>::New();
  pts->SetDataTypeToFloat();
  pts->SetNumberOfPoints(n);
  rows.resize(3 * n);
  for (vtkIdType i = 0; i < n; ++i)
  {
    for (int j = 0; j < 3; ++j)
      rows[3 * i + j] = u(gen);
    pts->SetPoint(i, rows[3 * i], rows[3 * i + 1], rows[3 * i + 2]);
  }
  auto pd = vtkSmartPointer<vtkPolyData>::New();
  pd->SetPoints(pts);
  return pd;
}

// The core's exact lists (brute force), the reference of every check.
static vic_knn ExactKnn(const std::vector<float>& rows, vtkIdType n, int d, int k)
{
  vic_ctx* c = nullptr;
  vic_ctx_options o;
  vic_ctx_options_init(&o);
  o.backend = VIC_BACKEND_CPU;
  vic_ctx_create(&o, &c);
  vic_data x = { rows.data(), n, d, 0, VIC_L2, nullptr };
  vic_build_options b;
  vic_build_options_init(&b);
  b.method = VIC_METHOD_BRUTE;
  b.k = k;
  vic_knn r;
  vic_status s = vic_knn_build(c, &x, &b, &r);
  if (s != VIC_OK)
  {
    std::fprintf(stderr, "reference failed: %s\n", vic_ctx_error(c));
    std::exit(1);
  }
  vic_ctx_destroy(c);
  return r;
}

// Ids equal the reference's except where the distances tie.
static void CompareLists(vtkDataSet* out, const vic_knn& ref, const char* label)
{
  auto* ids = vtkIdTypeArray::SafeDownCast(out->GetPointData()->GetArray("Neighbor Ids"));
  auto* dist = vtkFloatArray::SafeDownCast(out->GetPointData()->GetArray("Neighbor Distances"));
  auto* dnn1 = vtkFloatArray::SafeDownCast(out->GetPointData()->GetArray("d_nn1"));
  CHECK(ids && dist && dnn1, std::string(label) + ": output arrays missing or of the wrong type");
  if (!ids || !dist || !dnn1)
    return;
  CHECK(ids->GetNumberOfComponents() == ref.k && dist->GetNumberOfComponents() == ref.k, label);
  CHECK(ids->GetNumberOfTuples() == ref.n, label);
  vtkIdType bad = 0;
  for (vtkIdType i = 0; i < ref.n; ++i)
  {
    for (int r = 0; r < ref.k; ++r)
    {
      const float rd = ref.dist[i * ref.k + r];
      const float gd = dist->GetValue(i * ref.k + r);
      const bool idOk = ids->GetValue(i * ref.k + r) == ref.ids[i * ref.k + r];
      const bool dOk = std::fabs(gd - rd) <= 1e-5f * std::max(1.f, rd);
      if (!dOk || (!idOk && !(r + 1 < ref.k && ref.dist[i * ref.k + r + 1] == rd) &&
                     !(r > 0 && ref.dist[i * ref.k + r - 1] == rd)))
        ++bad;
    }
    if (dnn1->GetValue(i) != dist->GetValue(i * ref.k))
      ++bad;
  }
  CHECK(bad == 0, std::string(label) + ": " + std::to_string(bad) + " entries differ from exact");
}

static std::string FieldString(vtkDataObject* d, const char* name)
{
  auto* a = vtkStringArray::SafeDownCast(d->GetFieldData()->GetAbstractArray(name));
  return a && a->GetNumberOfValues() ? a->GetValue(0) : std::string("(missing)");
}

static double FieldNumber(vtkDataObject* d, const char* name)
{
  vtkDataArray* a = d->GetFieldData()->GetArray(name);
  return a && a->GetNumberOfTuples() ? a->GetTuple1(0) : NAN;
}

static void TestPoints()
{
  const vtkIdType n = 3000;
  const int k = 8;
  std::vector<float> rows;
  auto cloud = RandomCloud(n, 7, rows);
  vic_knn ref = ExactKnn(rows, n, 3, k);

  vtkNew<vtkVicinityKnnGraph> f;
  vtkNew<MessageLog> log;
  f->AddObserver(vtkCommand::ErrorEvent, log);
  f->AddObserver(vtkCommand::WarningEvent, log);
  f->SetInputData(cloud);
  f->SetK(k);
  f->SetBackend(VIC_BACKEND_CPU);
  f->Update();
  CHECK(log.Get()->Errors.empty(), "points: unexpected error");
  auto* out = vtkPolyData::SafeDownCast(f->GetOutputDataObject(0));
  CHECK(out && out->GetNumberOfPoints() == n, "points: output 0 is the input");
  CompareLists(out, ref, "points (auto)");
  CHECK(FieldNumber(out, "k") == k, "field data k");
  CHECK(FieldString(out, "Backend") == "cpu", FieldString(out, "Backend"));
  CHECK(FieldString(out, "Method") != "(missing)" && FieldString(out, "Method") != "auto",
    "field data Method: " + FieldString(out, "Method"));
  CHECK(!FieldString(out, "Method Reason").empty(), "field data Method Reason");
  CHECK(FieldNumber(out, "Recall Estimate") == 1.0, "exact methods report recall 1");
  CHECK(FieldNumber(out, "Seconds Total") >= 0.0, "field data Seconds Total");
  CHECK(std::fabs(FieldNumber(out, "d_nn1 Mean") - ref.report.dnn1_mean) < 1e-6, "d_nn1 mean");
  CHECK(std::fabs(FieldNumber(out, "d_nn1 Max") - ref.report.dnn1_max) < 1e-6, "d_nn1 max");

  // The graph: one line per directed edge, in (point, rank) order.
  auto* graph = vtkPolyData::SafeDownCast(f->GetOutputDataObject(1));
  CHECK(graph && graph->GetNumberOfLines() == n * k, "graph: n*k line cells");
  auto* gd = vtkFloatArray::SafeDownCast(graph->GetCellData()->GetArray("Distance"));
  auto* gr = vtkIntArray::SafeDownCast(graph->GetCellData()->GetArray("Rank"));
  CHECK(gd && gr, "graph: Distance and Rank cell arrays");
  if (graph && gd && gr)
  {
    vtkIdType bad = 0;
    vtkNew<vtkIdList> pts;
    for (vtkIdType c = 0; c < graph->GetNumberOfCells(); ++c)
    {
      const vtkIdType i = c / k;
      const int r = static_cast<int>(c % k);
      graph->GetCellPoints(c, pts);
      bad += pts->GetNumberOfIds() != 2 || pts->GetId(0) != i ||
        std::fabs(gd->GetValue(c) - ref.dist[i * k + r]) > 1e-5f || gr->GetValue(c) != r;
    }
    CHECK(bad == 0, std::to_string(bad) + " graph cells differ");
  }

  // Unchanged inputs: a second Update must not execute again.
  const vtkMTimeType before = out->GetMTime();
  f->Update();
  CHECK(f->GetOutputDataObject(0)->GetMTime() == before, "re-executed with unchanged inputs");
  // Brute force, forced, agrees with the reference too.
  f->SetMethod(VIC_METHOD_BRUTE);
  f->Update();
  CHECK(f->GetOutputDataObject(0)->GetMTime() != before, "a changed property re-executes");
  CompareLists(vtkDataSet::SafeDownCast(f->GetOutputDataObject(0)), ref, "points (brute)");
  CHECK(FieldString(f->GetOutputDataObject(0), "Method") == "brute", "forced brute");
  vic_knn_free(&ref);
}

static void TestFeatureArray()
{
  const vtkIdType n = 1500;
  const int d = 5, k = 6;
  std::vector<float> unused;
  auto cloud = RandomCloud(n, 11, unused);
  std::mt19937 gen(3);
  std::normal_distribution<double> g;
  vtkNew<vtkDoubleArray> feat;
  feat->SetName("descriptor");
  feat->SetNumberOfComponents(d);
  feat->SetNumberOfTuples(n);
  std::vector<float> rows(n * d);
  for (vtkIdType i = 0; i < n * d; ++i)
  {
    const double v = g(gen);
    feat->SetValue(i, v);
    rows[i] = static_cast<float>(v);
  }
  cloud->GetPointData()->AddArray(feat);
  vic_knn ref = ExactKnn(rows, n, d, k);

  vtkNew<vtkVicinityKnnGraph> f;
  vtkNew<MessageLog> log;
  f->AddObserver(vtkCommand::ErrorEvent, log);
  f->SetInputData(cloud);
  f->SetK(k);
  f->SetBackend(VIC_BACKEND_CPU);
  f->UseFeatureArrayOn();
  f->SetInputArrayToProcess(0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, "descriptor");
  f->Update();
  CHECK(log.Get()->Errors.empty(), "feature: unexpected error");
  CompareLists(vtkDataSet::SafeDownCast(f->GetOutputDataObject(0)), ref, "feature array");
  CHECK(FieldString(f->GetOutputDataObject(0), "Rows") == "descriptor", "field data Rows");
  CHECK(FieldNumber(f->GetOutputDataObject(0), "Dimension") == d, "field data Dimension");

  // A 5-component row cannot live in a 3-length periodic box: clear error.
  f->PeriodicOn();
  f->Update();
  CHECK(log.Get()->ErrorContains("periodic box"), "periodic box with d = 5 must be refused");
  f->PeriodicOff();
  // A missing array: clear error, no crash.
  log.Get()->Clear();
  f->SetInputArrayToProcess(0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, "no such array");
  f->Update();
  CHECK(log.Get()->ErrorContains("feature array"), "missing feature array must be refused");
  // A string array chosen as feature: said to be not numeric, not missing.
  vtkNew<vtkStringArray> labels;
  labels->SetName("labels");
  labels->SetNumberOfValues(n);
  for (vtkIdType i = 0; i < n; ++i)
  {
    labels->SetValue(i, "p");
  }
  cloud->GetPointData()->AddArray(labels);
  log.Get()->Clear();
  f->SetInputArrayToProcess(0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, "labels");
  f->Update();
  CHECK(log.Get()->ErrorContains("'labels' is not numeric"), "a string feature array must be named as not numeric");
  vic_knn_free(&ref);
}

// float32 points and float feature arrays are read in place, double ones
// through a float copy: the same lists either way, and the input's values
// untouched by any metric (cosine normalises in the core's own copy).
static void TestRowsInPlace()
{
  const vtkIdType n = 2000;
  const int k = 7;
  std::vector<float> rows;
  auto cloud = RandomCloud(n, 5, rows);
  vic_knn ref = ExactKnn(rows, n, 3, k);
  auto dcloud = vtkSmartPointer<vtkPolyData>::New();
  vtkNew<vtkPoints> dpts;
  dpts->SetDataTypeToDouble();
  dpts->SetNumberOfPoints(n);
  for (vtkIdType i = 0; i < n; ++i)
  {
    dpts->SetPoint(i, rows[3 * i], rows[3 * i + 1], rows[3 * i + 2]);
  }
  dcloud->SetPoints(dpts);
  vtkNew<vtkFloatArray> feat; // the coordinates again, as a float feature array
  feat->SetName("xyz");
  feat->SetNumberOfComponents(3);
  feat->SetNumberOfTuples(n);
  std::copy(rows.begin(), rows.end(), feat->GetPointer(0));
  cloud->GetPointData()->AddArray(feat);

  for (int mode = 0; mode < 3; ++mode)
  {
    const char* label = mode == 0 ? "float points" : mode == 1 ? "double points" : "float feature array";
    vtkNew<vtkVicinityKnnGraph> f;
    vtkNew<MessageLog> log;
    f->AddObserver(vtkCommand::ErrorEvent, log);
    f->SetInputData(mode == 1 ? dcloud : cloud);
    f->SetK(k);
    f->SetBackend(VIC_BACKEND_CPU);
    f->SetMethodToGrid();
    f->GenerateGraphOff();
    if (mode == 2)
    {
      f->UseFeatureArrayOn();
      f->SetInputArrayToProcess(0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, "xyz");
    }
    f->Update();
    CHECK(log.Get()->Errors.empty(), std::string(label) + ": unexpected error");
    CompareLists(vtkDataSet::SafeDownCast(f->GetOutputDataObject(0)), ref, label);
    f->SetMethodToAuto();
    f->SetMetricToCosine(); // the core's normalised copy, not the input, changes
    f->Update();
    CHECK(log.Get()->Errors.empty(), std::string(label) + ", cosine: unexpected error");
  }
  auto* fp = vtkFloatArray::SafeDownCast(cloud->GetPoints()->GetData());
  CHECK(fp && std::equal(rows.begin(), rows.end(), fp->GetPointer(0)), "the float points were changed");
  CHECK(std::equal(rows.begin(), rows.end(), feat->GetPointer(0)), "the float feature array was changed");
  vic_knn_free(&ref);
}

static void TestEmptyAndBad()
{
  vtkNew<vtkVicinityKnnGraph> f;
  vtkNew<MessageLog> log;
  f->AddObserver(vtkCommand::ErrorEvent, log);
  f->AddObserver(vtkCommand::WarningEvent, log);
  vtkNew<vtkPolyData> empty;
  empty->SetPoints(vtkNew<vtkPoints>());
  f->SetInputData(empty);
  f->Update();
  CHECK(log.Get()->Errors.empty() && log.Get()->Warnings.empty(), "empty input: no message");
  CHECK(vtkDataSet::SafeDownCast(f->GetOutputDataObject(0))->GetNumberOfPoints() == 0, "empty out");
  CHECK(vtkPolyData::SafeDownCast(f->GetOutputDataObject(1))->GetNumberOfCells() == 0, "empty graph");

  // A NaN coordinate: the core's message (naming the row) reaches the user.
  std::vector<float> rows;
  auto cloud = RandomCloud(100, 5, rows);
  cloud->GetPoints()->SetPoint(42, NAN, 0, 0);
  f->SetInputData(cloud);
  f->Update();
  CHECK(log.Get()->ErrorContains("42"), "NaN: the error names the row");

  // k larger than n: clamped by the core with a warning, k = n-1 delivered.
  log.Get()->Clear();
  auto small = RandomCloud(5, 9, rows);
  f->SetInputData(small);
  f->SetK(10);
  f->Update();
  CHECK(log.Get()->Errors.empty() && !log.Get()->Warnings.empty(), "k > n: a warning, no error");
  auto* ids = f->GetOutput(0) ? vtkDataSet::SafeDownCast(f->GetOutputDataObject(0))
                                  ->GetPointData()->GetArray("Neighbor Ids")
                              : nullptr;
  CHECK(ids && ids->GetNumberOfComponents() == 4, "k clamped to n-1");

  // 64 GPUs asked for the GPU backend on a machine without them: the
  // core's message (no CUDA backend / device, or the counts) reaches the user.
  log.Get()->Clear();
  f->SetBackend(VIC_BACKEND_CUDA);
  f->SetDevices(64);
  f->Update();
  CHECK(log.Get()->ErrorContains("CUDA"), "64 GPUs must be refused");
  f->SetDevices(-5);
  CHECK(f->GetDevices() == -1, "Devices clamped to -1 (every device)");
}

static void TestComposite()
{
  std::vector<float> ra, rb;
  auto a = RandomCloud(400, 21, ra);
  auto b = RandomCloud(300, 22, rb);
  vtkNew<vtkMultiBlockDataSet> mb;
  mb->SetNumberOfBlocks(3);
  mb->SetBlock(0, a);
  mb->SetBlock(2, b); // block 1 stays empty
  vtkNew<vtkVicinityKnnGraph> f;
  f->SetInputData(mb);
  f->SetK(4);
  f->SetBackend(VIC_BACKEND_CPU);
  f->Update();
  auto* out = vtkMultiBlockDataSet::SafeDownCast(f->GetOutputDataObject(0));
  auto* graph = vtkMultiBlockDataSet::SafeDownCast(f->GetOutputDataObject(1));
  CHECK(out && graph && out->GetNumberOfBlocks() == 3, "composite in, composite out");
  if (!out || !graph)
    return;
  vic_knn refA = ExactKnn(ra, 400, 3, 4), refB = ExactKnn(rb, 300, 3, 4);
  CompareLists(vtkDataSet::SafeDownCast(out->GetBlock(0)), refA, "block 0");
  CompareLists(vtkDataSet::SafeDownCast(out->GetBlock(2)), refB, "block 2");
  auto* g2 = vtkPolyData::SafeDownCast(graph->GetBlock(2));
  CHECK(g2 && g2->GetNumberOfLines() == 300 * 4, "graph of block 2");
  vic_knn_free(&refA);
  vic_knn_free(&refB);
}

static void TestAbort()
{
  std::vector<float> rows;
  auto cloud = RandomCloud(20000, 13, rows);
  vtkNew<vtkVicinityKnnGraph> f;
  vtkNew<MessageLog> log;
  vtkNew<AbortOnProgress> abort;
  f->AddObserver(vtkCommand::ErrorEvent, log);
  f->AddObserver(vtkCommand::WarningEvent, log);
  f->AddObserver(vtkCommand::ProgressEvent, abort);
  f->SetInputData(cloud);
  f->SetMethod(VIC_METHOD_BRUTE);
  f->SetBackend(VIC_BACKEND_CPU);
  f->Update();
  CHECK(log.Get()->Errors.empty(), "abort is not an error");
  CHECK(!log.Get()->Warnings.empty() && log.Get()->Warnings.back().find("cancelled") != std::string::npos,
    "abort: a 'cancelled' warning");
  CHECK(vtkDataSet::SafeDownCast(f->GetOutputDataObject(0))->GetNumberOfPoints() == 0,
    "abort: empty output");
}

int main()
{
  TestPoints();
  TestFeatureArray();
  TestRowsInPlace();
  TestEmptyAndBad();
  TestComposite();
  TestAbort();
  if (failures)
  {
    std::fprintf(stderr, "test_knn_graph_filter: %d checks failed\n", failures);
    return 1;
  }
  std::printf("test_knn_graph_filter: all checks passed\n");
  return 0;
}
