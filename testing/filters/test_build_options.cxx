// The build options the filters share (vtkVicinityBuildOptions): defaults
// are the core's, one object shared by kNN Graph, kNN Density and the Query
// Probe reaches them all (their MTimes follow it, kNN Graph and kNN Density
// re-execute and the core receives the value), nullptr restores a default object, and the
// named setters (SetMethodToGGNN() ...) give the core's enumeration values.
#include "filter_test_util.h"
#include "vtkVicinityBuildOptions.h"
#include "vtkVicinityCoreOptions.h"
#include "vtkVicinityKnnDensity.h"
#include "vtkVicinityKnnGraph.h"
#include "vtkVicinityKnnQueryProbe.h"

#include <vtkDataObject.h>
#include <vtkFieldData.h>
#include <vtkFloatArray.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkStringArray.h>

#include <random>

static std::string FieldString(vtkDataObject* o, const char* name)
{
  auto* a = vtkStringArray::SafeDownCast(o->GetFieldData()->GetAbstractArray(name));
  return a && a->GetNumberOfValues() ? a->GetValue(0) : std::string();
}

int main()
{
  // Defaults: the core's.
  vtkNew<vtkVicinityBuildOptions> opts;
  vic_build_options core;
  vic_build_options_init(&core);
  const vic_build_options mine = vtkVicinity::CoreBuildOptions(opts, VIC_METHOD_AUTO, core.k);
  CHECK(vtkVicinity::SameIndexBuild(mine, core), "defaults differ from vic_build_options_init");
  CHECK(mine.k == core.k && mine.recall_sample == core.recall_sample, "k / recall_sample");
  opts->SetGGNNKBuild(48);
  opts->SetTSDGAlpha(1.5);
  const vic_build_options set = vtkVicinity::CoreBuildOptions(opts, VIC_METHOD_TSDG, 7);
  CHECK(set.ggnn.k_build == 48 && set.tsdg.alpha == 1.5f && set.method == VIC_METHOD_TSDG && set.k == 7,
    "fields reach vic_build_options");
  CHECK(!vtkVicinity::SameIndexBuild(set, core), "a changed field is another build");

  // Named enumerations are the core's values.
  vtkNew<vtkVicinityKnnGraph> graph;
  graph->SetMethodToGGNN();
  CHECK(graph->GetMethod() == VIC_METHOD_GGNN, "SetMethodToGGNN");
  graph->SetMethodToTSDG();
  CHECK(graph->GetMethod() == VIC_METHOD_TSDG, "SetMethodToTSDG");
  graph->SetBackendToGPU();
  CHECK(graph->GetBackend() == VIC_BACKEND_CUDA, "SetBackendToGPU");
  graph->SetMetricToCosine();
  CHECK(graph->GetMetric() == VIC_COSINE, "SetMetricToCosine");
  vtkNew<vtkVicinityKnnQueryProbe> probe;
  probe->SetMethodToGRNND();
  CHECK(probe->GetMethod() == VIC_METHOD_GRNND, "probe SetMethodToGRNND");
  probe->SetBackendToCPU();
  CHECK(probe->GetBackend() == VIC_BACKEND_CPU, "probe SetBackendToCPU");
  probe->SetQueryModeToPointId();
  CHECK(probe->GetQueryMode() == vtkVicinityKnnQueryProbe::POINT_ID, "SetQueryModeToPointId");

  // One object shared by both filters; nullptr restores a default one.
  CHECK(graph->GetBuildOptions() && probe->GetBuildOptions(), "filters own options by default");
  graph->SetBuildOptions(opts);
  probe->SetBuildOptions(opts);
  CHECK(graph->GetBuildOptions() == opts.Get() && probe->GetBuildOptions() == opts.Get(), "shared");
  const vtkMTimeType g0 = graph->GetMTime(), p0 = probe->GetMTime();
  opts->SetNNDescentMaxIterations(3);
  CHECK(graph->GetMTime() > g0 && probe->GetMTime() > p0, "an option edit modifies both filters");
  probe->SetBuildOptions(nullptr);
  CHECK(probe->GetBuildOptions() && probe->GetBuildOptions() != opts.Get() &&
      probe->GetBuildOptions()->GetGGNNKBuild() == core.ggnn.k_build,
    "nullptr restores a default object");

  // kNN Graph re-executes on an option edit, and the core gets the value:
  // Brute Force Max N decides Auto's choice for d > 3.
  const vtkIdType n = 600;
  const int d = 6;
  std::mt19937 gen(5);
  std::normal_distribution<float> g;
  vtkNew<vtkPoints> pts;
  vtkNew<vtkFloatArray> feat;
  feat->SetName("f");
  feat->SetNumberOfComponents(d);
  for (vtkIdType i = 0; i < n; ++i)
  {
    pts->InsertNextPoint(g(gen), g(gen), g(gen));
    for (int j = 0; j < d; ++j)
    {
      feat->InsertNextValue(g(gen));
    }
  }
  vtkNew<vtkPolyData> cloud;
  cloud->SetPoints(pts);
  cloud->GetPointData()->AddArray(feat);
  graph->SetInputData(cloud);
  graph->SetMethodToAuto();
  graph->SetBackendToCPU();
  graph->SetMetricToL2();
  graph->SetK(4);
  graph->UseFeatureArrayOn();
  graph->GenerateGraphOff();
  graph->SetInputArrayToProcess(0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, "f");
  graph->Update();
  CHECK(FieldString(graph->GetOutputDataObject(0), "Method") == "brute", "Auto, n <= Brute Force Max N");
  const vtkMTimeType out0 = graph->GetOutputDataObject(0)->GetMTime();
  opts->SetBruteMaxN(100); // n = 600 > 100: Auto takes NN-Descent
  graph->Update();
  CHECK(graph->GetOutputDataObject(0)->GetMTime() > out0, "an option edit re-executes kNN Graph");
  CHECK(FieldString(graph->GetOutputDataObject(0), "Method") == "nndescent",
    "Brute Force Max N reached the core: " + FieldString(graph->GetOutputDataObject(0), "Method"));

  // kNN Density (the n-body filters' lists) reads the same object.
  vtkNew<vtkVicinityKnnDensity> density;
  density->SetBuildOptions(opts);
  density->SetInputData(cloud);
  density->SetBackendToCPU();
  density->SetK(4);
  density->UseFeatureArrayOn();
  density->SetInputArrayToProcess(0, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, "f");
  density->Update();
  CHECK(FieldString(density->GetOutputDataObject(0), "Method") == "nndescent",
    "kNN Density: Brute Force Max N 100 reached the core");
  opts->SetBruteMaxN(1000);
  density->Update();
  CHECK(FieldString(density->GetOutputDataObject(0), "Method") == "brute",
    "kNN Density: an option edit re-executes it (Brute Force Max N 1000)");

  std::printf("%s (%d failures)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
