#include "vtkVicinityNBody.h"
#include "vtkVicinityCoreOptions.h"
#include "vtkVicinityResults.h"

#include <vtkAlgorithm.h>
#include <vtkCellArray.h>
#include <vtkDataSet.h>
#include <vtkDoubleArray.h>
#include <vtkFloatArray.h>
#include <vtkIdTypeArray.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>

namespace vtkVicinity
{

void WritePeakPoints(const std::vector<PeakRecord>& peaks, vtkPolyData* out)
{
  const vtkIdType np = static_cast<vtkIdType>(peaks.size());
  auto points = vtkSmartPointer<vtkPoints>::New();
  points->SetDataTypeToFloat();
  points->SetNumberOfPoints(np);
  auto particle = vtkSmartPointer<vtkFloatArray>::New();
  particle->SetName("Peak Particle Position");
  particle->SetNumberOfComponents(3);
  particle->SetNumberOfTuples(np);
  std::vector<float> rho(np), delta(np), saliency(np);
  std::vector<int64_t> rank(np), point(np), members(np);
  auto verts = vtkSmartPointer<vtkCellArray>::New();
  for (vtkIdType q = 0; q < np; ++q)
  {
    const PeakRecord& p = peaks[q];
    points->SetPoint(q, p.Centre);
    particle->SetTuple(q, p.Particle);
    rho[q] = static_cast<float>(p.Density);
    delta[q] = static_cast<float>(p.Delta);
    saliency[q] = static_cast<float>(p.Saliency);
    rank[q] = q;
    point[q] = static_cast<int64_t>(p.GlobalId);
    members[q] = static_cast<int64_t>(p.Members);
    verts->InsertNextCell(1, &q);
  }
  out->SetPoints(points);
  out->SetVerts(verts);
  vtkPointData* pd = out->GetPointData();
  pd->AddArray(vtkVicinity::WrapIdValues(rank.data(), np, "Peak Id"));
  pd->AddArray(vtkVicinity::WrapIdValues(point.data(), np, "Point Id"));
  pd->AddArray(vtkVicinity::WrapFloats(rho.data(), np, 1, "Density"));
  pd->AddArray(vtkVicinity::WrapFloats(delta.data(), np, 1, "Delta"));
  pd->AddArray(vtkVicinity::WrapFloats(saliency.data(), np, 1, "Saliency"));
  pd->AddArray(vtkVicinity::WrapIdValues(members.data(), np, "Member Count"));
  pd->AddArray(particle);
  pd->SetActiveScalars("Saliency");
}

vic_peak_options MakePeakOptions(
  double minDensity, double minDelta, double deltaFactor, double minProminence, vtkIdType minMembers)
{
  vic_peak_options o;
  vic_peak_options_init(&o);
  o.min_density = minDensity;
  o.min_delta = minDelta;
  o.delta_factor = deltaFactor;
  o.min_prominence = minProminence;
  o.min_members = minMembers;
  return o;
}

NBodyChoices MakeNBodyChoices(int k, int method, vtkVicinityBuildOptions* options, bool useFeature,
  bool useMass, bool periodic, bool useBoxFromData, const double* boxLengths,
  const std::function<vtkDataArray*(int, int&)>& inputArray)
{
  NBodyChoices choices;
  choices.K = k;
  choices.Method = static_cast<vic_method>(method);
  choices.Options = options;
  choices.UseFeature = useFeature;
  if (useFeature)
  {
    choices.Feature = inputArray(0, choices.FeatureAssociation);
  }
  choices.UseMass = useMass;
  if (useMass)
  {
    choices.Mass = inputArray(1, choices.MassAssociation);
  }
  choices.Periodic = periodic;
  choices.UseBoxFromData = useBoxFromData;
  choices.BoxLengths = boxLengths;
  return choices;
}

Outcome SelectNBodyInputs(vtkAlgorithm* self, const char* label, vtkDataSet* input,
  const NBodyChoices& choices, NBodyLists& out)
{
  if (!SelectRows(self, label, input, choices.UseFeature, choices.Feature,
        choices.FeatureAssociation, out.Points, out.Source) ||
    !PeriodicBox(self, label, choices.Periodic, choices.UseBoxFromData, choices.BoxLengths, input,
      out.Points, out.Source, out.Box) ||
    (choices.UseMass &&
      !SelectMass(self, label, choices.Mass, choices.MassAssociation, out.Points.N, out.Mass)))
  {
    return Outcome::Failed;
  }
  return Outcome::Done;
}

vic_build_options NBodyBuildOptions(const NBodyChoices& choices)
{
  return CoreBuildOptions(choices.Options, choices.Method, choices.K);
}

Outcome BuildNBodyLists(vtkAlgorithm* self, const char* label, Context& ctx, vtkDataSet* input,
  const NBodyChoices& choices, NBodyLists& out)
{
  if (SelectNBodyInputs(self, label, input, choices, out) != Outcome::Done)
  {
    return Outcome::Failed;
  }
  const vic_build_options o = NBodyBuildOptions(choices);
  const vic_data x = out.View();
  return CheckCall(self, label, ctx, vic_knn_build(ctx.Get(), &x, &o, &out.Knn));
}

} // namespace vtkVicinity
