// vtkVicinityKnnDensity and vtkVicinitySalientPoints through VTK (no
// ParaView): the arrays equal the core's own results on the same lists,
// the peaks output agrees with the particles, composite inputs give one
// result per block, and the shared behaviour of the kNN Graph filter holds
// (empty input: no message; bad mass array: a clear error; abort: a
// 'cancelled' warning and empty outputs).
#include "vtkVicinityKnnDensity.h"
#include "vtkVicinitySalientPoints.h"
#include "filter_test_util.h"
#include "vicinity.h"

#include <vtkCommand.h>
#include <vtkDataSet.h>
#include <vtkFloatArray.h>
#include <vtkIdTypeArray.h>
#include <vtkMultiBlockDataSet.h>
#include <vtkNew.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

// Two Gaussian clumps (unit and 0.3 width, 6 apart), float32 rows kept.
static vtkSmartPointer<vtkPolyData> Clumps(vtkIdType n, unsigned seed, std::vector<float>& rows)
{
  std::mt19937 gen(seed);
  std::normal_distribution<float> g(0.f, 1.f);
  auto pts = vtkSmartPointer<vtkPoints>::New();
  pts->SetDataTypeToFloat();
  pts->SetNumberOfPoints(n);
  rows.resize(3 * n);
  for (vtkIdType i = 0; i < n; ++i)
  {
    const bool second = i % 3 == 0;
    for (int j = 0; j < 3; ++j)
      rows[3 * i + j] = second ? 6.f * (j == 0) + 0.3f * g(gen) : g(gen);
    pts->SetPoint(i, rows[3 * i], rows[3 * i + 1], rows[3 * i + 2]);
  }
  auto pd = vtkSmartPointer<vtkPolyData>::New();
  pd->SetPoints(pts);
  return pd;
}

static float* Values(vtkDataSet* ds, const char* name)
{
  auto* a = vtkFloatArray::SafeDownCast(ds ? ds->GetPointData()->GetArray(name) : nullptr);
  return a ? a->GetPointer(0) : nullptr;
}

static void TestDensityAndPeaks()
{
  const vtkIdType n = 6000;
  std::vector<float> rows;
  auto cloud = Clumps(n, 3, rows);
  std::vector<float> mass(n);
  for (vtkIdType i = 0; i < n; ++i)
    mass[i] = 1.f + static_cast<float>(i % 5);
  vtkNew<vtkFloatArray> m;
  m->SetName("mass");
  m->SetNumberOfTuples(n);
  std::copy(mass.begin(), mass.end(), m->GetPointer(0));
  cloud->GetPointData()->AddArray(m);

  // The core on the same lists (exact grid, k = 16) as the reference.
  vic_ctx* c = nullptr;
  vic_ctx_create(nullptr, &c);
  vic_data x = { rows.data(), n, 3, 0, VIC_L2, nullptr };
  vic_build_options bo;
  vic_build_options_init(&bo);
  bo.k = 16;
  vic_knn nn;
  CHECK(vic_knn_build(c, &x, &bo, &nn) == VIC_OK, vic_ctx_error(c));
  std::vector<float> rho(n), sph(n), h(n), rho_unit(n);
  vic_density_options dop;
  vic_density_options_init(&dop);
  dop.sph = VIC_SPH_GADGET;
  CHECK(vic_density(c, &x, &nn, mass.data(), &dop, rho.data(), sph.data(), h.data()) == VIC_OK,
    vic_ctx_error(c));
  CHECK(vic_density(c, &x, &nn, nullptr, nullptr, rho_unit.data(), nullptr, nullptr) == VIC_OK,
    vic_ctx_error(c));
  vic_peaks pk;
  CHECK(vic_peaks_find(c, &x, &nn, rho_unit.data(), nullptr, &pk) == VIC_OK, vic_ctx_error(c));

  vtkNew<vtkVicinityKnnDensity> d;
  vtkNew<MessageLog> log;
  d->AddObserver(vtkCommand::ErrorEvent, log);
  d->SetInputData(cloud);
  d->SetK(16);
  d->SetBackend(VIC_BACKEND_CPU);
  d->SetSPHConvention(VIC_SPH_GADGET);
  d->UseMassArrayOn();
  d->SetInputArrayToProcess(1, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, "mass");
  d->Update();
  auto* out = vtkDataSet::SafeDownCast(d->GetOutputDataObject(0));
  CHECK(log->Errors.empty(), "density: unexpected error");
  const float* fr = Values(out, "Density");
  const float* fs = Values(out, "SPH Density");
  const float* fh = Values(out, "Smoothing Length");
  CHECK(fr && fs && fh && Values(out, "d_nn1"), "density: arrays missing");
  int differ = 0;
  for (vtkIdType i = 0; fr && fs && fh && i < n; ++i)
    differ += fr[i] != rho[i] || fs[i] != sph[i] || fh[i] != h[i];
  CHECK(differ == 0, std::to_string(differ) + " particles differ from the core's densities");
  CHECK(out && out->GetFieldData()->GetArray("Global Density"), "density: no Global Density");

  vtkNew<vtkVicinitySalientPoints> s;
  s->AddObserver(vtkCommand::ErrorEvent, log);
  s->SetInputData(cloud);
  s->SetK(16);
  s->SetBackend(VIC_BACKEND_CPU);
  s->Update();
  auto* parts = vtkDataSet::SafeDownCast(s->GetOutputDataObject(0));
  auto* peaks = vtkPolyData::SafeDownCast(s->GetOutputDataObject(1));
  CHECK(log->Errors.empty(), "peaks: unexpected error");
  CHECK(peaks && peaks->GetNumberOfPoints() == pk.n_peaks && pk.n_peaks == 2,
    "two clumps: the core's two peaks, got " + std::to_string(peaks ? peaks->GetNumberOfPoints() : -1));
  auto* ids = vtkIdTypeArray::SafeDownCast(parts->GetPointData()->GetArray("Peak Id"));
  int wrong = 0;
  for (vtkIdType i = 0; ids && i < n; ++i)
    wrong += ids->GetValue(i) != pk.peak_id[i];
  CHECK(ids && wrong == 0, "Peak Id differs from the core's");
  for (vtkIdType p = 0; peaks && p < peaks->GetNumberOfPoints() && p < pk.n_peaks; ++p)
  {
    double q[3];
    peaks->GetPoint(p, q);
    CHECK(std::fabs(q[0] - pk.peak_centre[3 * p]) < 1e-6, "peak position is not the core's centre");
  }
  vic_peaks_free(&pk);
  vic_knn_free(&nn);
  vic_ctx_destroy(c);
}

static void TestCompositeEmptyAndBad()
{
  std::vector<float> ra, rb;
  vtkNew<vtkMultiBlockDataSet> mb;
  mb->SetBlock(0, Clumps(900, 5, ra));
  mb->SetBlock(1, vtkNew<vtkPolyData>());
  mb->SetBlock(2, Clumps(1200, 6, rb));
  vtkNew<vtkVicinitySalientPoints> s;
  vtkNew<MessageLog> log;
  s->AddObserver(vtkCommand::ErrorEvent, log);
  s->AddObserver(vtkCommand::WarningEvent, log);
  s->SetInputData(mb);
  s->SetK(8);
  s->Update();
  auto* out = vtkMultiBlockDataSet::SafeDownCast(s->GetOutputDataObject(0));
  auto* peaks = vtkMultiBlockDataSet::SafeDownCast(s->GetOutputDataObject(1));
  CHECK(log->Errors.empty() && log->Warnings.empty(), "composite: no message expected");
  CHECK(out && vtkDataSet::SafeDownCast(out->GetBlock(2)) &&
      Values(vtkDataSet::SafeDownCast(out->GetBlock(2)), "Saliency"),
    "composite: block 2 has Saliency");
  CHECK(out && vtkDataSet::SafeDownCast(out->GetBlock(1)) &&
      vtkDataSet::SafeDownCast(out->GetBlock(1))->GetNumberOfPoints() == 0,
    "composite: the empty block stays empty");
  CHECK(peaks && vtkPolyData::SafeDownCast(peaks->GetBlock(0)) &&
      vtkPolyData::SafeDownCast(peaks->GetBlock(0))->GetNumberOfPoints() >= 1,
    "composite: block 0 has peaks");

  // A two-component mass array: refused with the array's name.
  std::vector<float> r;
  auto cloud = Clumps(500, 9, r);
  vtkNew<vtkFloatArray> m2;
  m2->SetName("m2");
  m2->SetNumberOfComponents(2);
  m2->SetNumberOfTuples(500);
  m2->Fill(1.0);
  cloud->GetPointData()->AddArray(m2);
  vtkNew<vtkVicinityKnnDensity> d;
  d->AddObserver(vtkCommand::ErrorEvent, log);
  d->SetInputData(cloud);
  d->UseMassArrayOn();
  d->SetInputArrayToProcess(1, 0, 0, vtkDataObject::FIELD_ASSOCIATION_POINTS, "m2");
  log->Errors.clear();
  d->Update();
  CHECK(log->ErrorContains("mass array 'm2' must hold one value per point"),
    "two-component mass array: clear error");
}

static void TestAbort()
{
  std::vector<float> rows;
  auto cloud = Clumps(20000, 11, rows);
  vtkNew<vtkVicinitySalientPoints> s;
  vtkNew<MessageLog> log;
  vtkNew<AbortOnProgress> abort;
  s->AddObserver(vtkCommand::ErrorEvent, log);
  s->AddObserver(vtkCommand::WarningEvent, log);
  s->AddObserver(vtkCommand::ProgressEvent, abort);
  s->SetInputData(cloud);
  s->Update();
  CHECK(log->Errors.empty(), "abort is not an error");
  CHECK(!log->Warnings.empty() && log->Warnings.back().find("cancelled") != std::string::npos,
    "abort: a 'cancelled' warning");
  CHECK(vtkDataSet::SafeDownCast(s->GetOutputDataObject(0))->GetNumberOfPoints() == 0,
    "abort: empty output");
}

// The shared superclass's defaults and range: the density filters need a
// k-th neighbour beyond the nearest, so k below 2 is an error when they run
// (never silently another k); above 4096 too.
static void TestSharedProperties()
{
  vtkNew<vtkVicinityKnnDensity> d;
  vtkNew<vtkVicinitySalientPoints> s;
  CHECK(d->GetK() == 32 && s->GetK() == 32, "density filters: default k is not 32");
  CHECK(d->GetNumberOfOutputPorts() == 1 && s->GetNumberOfOutputPorts() == 3, "output ports");
  vtkNew<vtkPolyData> cloud;
  vtkNew<vtkPoints> pts;
  for (int i = 0; i < 50; ++i)
  {
    pts->InsertNextPoint(0.01 * i, 0.02 * (i % 7), 0.03 * (i % 5));
  }
  cloud->SetPoints(pts);
  for (int k : { 0, 1, 100000 })
  {
    vtkNew<MessageLog> log;
    d->AddObserver(vtkCommand::ErrorEvent, log);
    d->SetInputData(cloud);
    d->SetK(k);
    d->Update();
    CHECK(d->GetK() == k, "k is kept as given");
    CHECK(log->ErrorContains("out of range"),
      "k out of range is an error");
    d->RemoveAllObservers();
  }
  CHECK(d->IsA("vtkVicinityKnnAlgorithm") && s->IsA("vtkVicinityKnnAlgorithm"),
    "density filters do not derive from vtkVicinityKnnAlgorithm");
}

int main()
{
  TestSharedProperties();
  TestDensityAndPeaks();
  TestCompositeEmptyAndBad();
  TestAbort();
  if (failures)
  {
    std::fprintf(stderr, "test_nbody_filters: %d checks failed\n", failures);
    return 1;
  }
  std::printf("test_nbody_filters: all checks passed\n");
  return 0;
}
