#include "vtkVicinityHaloOutputs.h"

#include <vtkDoubleArray.h>
#include <vtkIdTypeArray.h>
#include <vtkPointData.h>
#include <vtkPolyData.h>
#include <vtkSmartPointer.h>
#include <vtkTable.h>

#include <cmath>
#include <limits>

namespace
{
vtkSmartPointer<vtkDoubleArray> Doubles(const char* name, vtkIdType n, int components, double fill)
{
  auto a = vtkSmartPointer<vtkDoubleArray>::New();
  a->SetName(name);
  a->SetNumberOfComponents(components);
  a->SetNumberOfTuples(n);
  a->Fill(fill);
  return a;
}

vtkSmartPointer<vtkIdTypeArray> Ids(const char* name, vtkIdType n, vtkIdType fill)
{
  auto a = vtkSmartPointer<vtkIdTypeArray>::New();
  a->SetName(name);
  a->SetNumberOfTuples(n);
  a->Fill(fill);
  return a;
}
} // namespace

namespace vtkVicinity
{
void AddHaloColumns(const vic_halos& h, vtkIdType nPeaks, vtkPolyData* peaks)
{
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto id = Ids("Halo Id", nPeaks, -1);
  auto members = Ids("Halo Members", nPeaks, 0);
  auto unbound = Ids("Unbound", nPeaks, 0);
  auto mass = Doubles("Halo Mass", nPeaks, 1, nan);
  auto rDelta = Doubles("R_Delta", nPeaks, 1, nan);
  auto mDelta = Doubles("M_Delta", nPeaks, 1, nan);
  auto rHalf = Doubles("Half-Mass Radius", nPeaks, 1, nan);
  auto com = Doubles("Centre Of Mass", nPeaks, 3, nan);
  auto vBulk = Doubles("Bulk Velocity", nPeaks, 3, nan);
  auto sigma = Doubles("Velocity Dispersion", nPeaks, 1, nan);
  for (int64_t q = 0; q < h.n_halos; ++q)
  {
    const vtkIdType p = static_cast<vtkIdType>(h.peak[q]);
    id->SetValue(p, q);
    members->SetValue(p, h.members[q]);
    unbound->SetValue(p, h.unbound[q]);
    mass->SetValue(p, h.mass[q]);
    rDelta->SetValue(p, h.r_delta[q]);
    mDelta->SetValue(p, h.m_delta[q]);
    rHalf->SetValue(p, h.r_half[q]);
    com->SetTuple(p, h.centre_of_mass + 3 * q);
    vBulk->SetTuple(p, h.bulk_velocity + 3 * q);
    sigma->SetValue(p, h.sigma_v[q]);
  }
  vtkPointData* pd = peaks->GetPointData();
  for (vtkAbstractArray* a : { static_cast<vtkAbstractArray*>(id), static_cast<vtkAbstractArray*>(members),
         static_cast<vtkAbstractArray*>(mass), static_cast<vtkAbstractArray*>(rDelta),
         static_cast<vtkAbstractArray*>(mDelta), static_cast<vtkAbstractArray*>(rHalf),
         static_cast<vtkAbstractArray*>(com), static_cast<vtkAbstractArray*>(vBulk),
         static_cast<vtkAbstractArray*>(sigma), static_cast<vtkAbstractArray*>(unbound) })
  {
    pd->AddArray(a);
  }
}

void AppendProfiles(const vic_halos& h, vtkIdType block, vtkTable* table)
{
  const char* names[] = { "Block", "Halo", "Bin", "Radius", "Radius / R_Delta", "Density", "Count" };
  if (table->GetNumberOfColumns() == 0)
  {
    for (int c = 0; c < 7; ++c)
    {
      vtkSmartPointer<vtkAbstractArray> a;
      if (c < 3 || c == 6)
      {
        a = vtkSmartPointer<vtkIdTypeArray>::New();
      }
      else
      {
        a = vtkSmartPointer<vtkDoubleArray>::New();
      }
      a->SetName(names[c]);
      table->AddColumn(a);
    }
  }
  const int bins = h.profile_bins;
  for (int64_t q = 0; q < h.n_halos; ++q)
  {
    for (int b = 0; b < bins; ++b)
    {
      const int64_t at = q * bins + b;
      vtkIdTypeArray::SafeDownCast(table->GetColumnByName("Block"))->InsertNextValue(block);
      vtkIdTypeArray::SafeDownCast(table->GetColumnByName("Halo"))->InsertNextValue(q);
      vtkIdTypeArray::SafeDownCast(table->GetColumnByName("Bin"))->InsertNextValue(b);
      vtkDoubleArray::SafeDownCast(table->GetColumnByName("Radius"))->InsertNextValue(h.profile_radius[at]);
      vtkDoubleArray::SafeDownCast(table->GetColumnByName("Radius / R_Delta"))
        ->InsertNextValue(h.profile_radius[at] / h.r_delta[q]);
      vtkDoubleArray::SafeDownCast(table->GetColumnByName("Density"))->InsertNextValue(h.profile_density[at]);
      vtkIdTypeArray::SafeDownCast(table->GetColumnByName("Count"))->InsertNextValue(h.profile_count[at]);
    }
  }
}
} // namespace vtkVicinity
