#include "vtkVicinitySnapshotReader.h"

#include "vic_snapshot.h"

#include <vtkCallbackCommand.h>
#include <vtkCellArray.h>
#include <vtkDataArraySelection.h>
#include <vtkDoubleArray.h>
#include <vtkFieldData.h>
#include <vtkFloatArray.h>
#include <vtkIdTypeArray.h>
#include <vtkInformation.h>
#include <vtkInformationVector.h>
#include <vtkIntArray.h>
#include <vtkObjectFactory.h>
#include <vtkPointData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkStreamingDemandDrivenPipeline.h>
#include <vtkStringArray.h>
#include <vtkTypeInt64Array.h>

#include <string>
#include <vector>

vtkStandardNewMacro(vtkVicinitySnapshotReader);

namespace
{
// A vsnap handle closed on scope exit.
struct Snapshot
{
  vsnap* Handle = nullptr;
  ~Snapshot() { vsnap_close(this->Handle); }
};

// The particles of a read, freed on scope exit.
struct Particles
{
  vsnap_particles P{};
  ~Particles() { vsnap_particles_free(&this->P); }
};

// Hands malloc'ed values to a VTK array without a copy.
template <class ArrayT, class T>
vtkSmartPointer<ArrayT> Adopt(const char* name, T*& values, vtkIdType tuples, int components)
{
  auto a = vtkSmartPointer<ArrayT>::New();
  a->SetName(name);
  a->SetNumberOfComponents(components);
  a->SetArray(values, tuples * components, 0, ArrayT::VTK_DATA_ARRAY_FREE);
  values = nullptr;
  return a;
}

void AddField(vtkFieldData* fd, const char* name, const double* v, int n)
{
  auto a = vtkSmartPointer<vtkDoubleArray>::New();
  a->SetName(name);
  a->SetNumberOfComponents(n);
  a->InsertNextTuple(v);
  fd->AddArray(a);
}

void AddField(vtkFieldData* fd, const char* name, double v)
{
  AddField(fd, name, &v, 1);
}

// The snapshot's header as field data (what the file has, nothing made up).
void WriteFieldData(const vsnap_info& in, vtkFieldData* fd)
{
  auto format = vtkSmartPointer<vtkStringArray>::New();
  format->SetName("SnapshotFormat");
  format->InsertNextValue(vsnap_format_name(in.format));
  fd->AddArray(format);
  if (in.has_box)
  {
    AddField(fd, "BoxSize", in.box, 3);
    AddField(fd, "BoxOrigin", in.origin, 3);
    auto periodic = vtkSmartPointer<vtkIntArray>::New();
    periodic->SetName("BoxPeriodic");
    periodic->SetNumberOfComponents(3);
    periodic->InsertNextTypedTuple(in.periodic);
    fd->AddArray(periodic);
  }
  if (in.has_time)
  {
    AddField(fd, "Time", in.time);
  }
  if (in.has_redshift)
  {
    AddField(fd, "Redshift", in.redshift);
  }
  if (in.has_timestep)
  {
    AddField(fd, "Timestep", static_cast<double>(in.timestep));
  }
  if (in.has_cosmology)
  {
    AddField(fd, "HubbleParam", in.hubble_param);
    AddField(fd, "Omega0", in.omega0);
    AddField(fd, "OmegaLambda", in.omega_lambda);
  }
  if (in.has_units)
  {
    AddField(fd, "UnitLength_in_cm", in.unit_length_cm);
    AddField(fd, "UnitMass_in_g", in.unit_mass_g);
    AddField(fd, "UnitVelocity_in_cm_per_s", in.unit_velocity_cm_s);
  }
  if (in.ntypes > 0)
  {
    auto table = vtkSmartPointer<vtkDoubleArray>::New();
    table->SetName("MassTable");
    auto total = vtkSmartPointer<vtkTypeInt64Array>::New();
    total->SetName("NumPartTotal");
    for (int t = 0; t < in.ntypes; ++t)
    {
      table->InsertNextValue(in.mass_table[t]);
      total->InsertNextValue(in.npart[t]);
    }
    fd->AddArray(table);
    fd->AddArray(total);
  }
}

// One vertex per point, made as offsets 0..n and connectivity 0..n-1.
vtkSmartPointer<vtkCellArray> Vertices(vtkIdType n)
{
  auto offsets = vtkSmartPointer<vtkIdTypeArray>::New();
  auto connectivity = vtkSmartPointer<vtkIdTypeArray>::New();
  offsets->SetNumberOfValues(n + 1);
  connectivity->SetNumberOfValues(n);
  for (vtkIdType i = 0; i < n; ++i)
  {
    offsets->SetValue(i, i);
    connectivity->SetValue(i, i);
  }
  offsets->SetValue(n, n);
  auto cells = vtkSmartPointer<vtkCellArray>::New();
  cells->SetData(offsets, connectivity);
  return cells;
}
} // namespace

vtkVicinitySnapshotReader::vtkVicinitySnapshotReader()
{
  this->SetNumberOfInputPorts(0);
  // a changed type selection re-executes the reader
  vtkNew<vtkCallbackCommand> modified;
  modified->SetClientData(this);
  modified->SetCallback([](vtkObject*, unsigned long, void* self, void*)
    { static_cast<vtkVicinitySnapshotReader*>(self)->Modified(); });
  this->ParticleTypeSelection->AddObserver(vtkCommand::ModifiedEvent, modified);
}

vtkDataArraySelection* vtkVicinitySnapshotReader::GetParticleTypeSelection()
{
  return this->ParticleTypeSelection;
}

namespace
{
std::string TypeName(int t)
{
  return "PartType" + std::to_string(t);
}
}

bool vtkVicinitySnapshotReader::AcceptsFormat(int format) const
{
  return format != VSNAP_UNKNOWN;
}

int vtkVicinitySnapshotReader::CanReadFile(const char* name)
{
  return name && this->AcceptsFormat(vsnap_detect(name)) ? 1 : 0;
}

bool vtkVicinitySnapshotReader::CheckFormat()
{
  if (this->FileName.empty())
  {
    vtkErrorMacro(<< "No file name set.");
    return false;
  }
  const vsnap_format f = vsnap_detect(this->FileName.c_str());
  if (f != VSNAP_UNKNOWN && !this->AcceptsFormat(f))
  {
    vtkErrorMacro(<< this->FileName << " is " << vsnap_format_name(f) << ", not "
                  << this->FormatDescription() << "; open it with the Vicinity reader for "
                  << vsnap_format_name(f) << "s.");
    return false;
  }
  return true;
}

int vtkVicinitySnapshotReader::RequestInformation(
  vtkInformation*, vtkInformationVector**, vtkInformationVector* outputVector)
{
  if (!this->CheckFormat())
  {
    return 0;
  }
  char err[1024];
  Snapshot s;
  if (vsnap_open(this->FileName.c_str(), &s.Handle, err, sizeof err) != 0)
  {
    vtkErrorMacro(<< "Cannot read " << this->FormatDescription() << ": " << err);
    return 0;
  }
  // the types this file has, keeping the user's choices for known names
  const vsnap_info& in = *vsnap_get_info(s.Handle);
  std::vector<std::string> names;
  for (int t = 0; t < in.ntypes; ++t)
  {
    if (in.npart[t] > 0)
    {
      names.push_back(TypeName(t));
    }
  }
  std::vector<const char*> cnames;
  for (const std::string& name : names)
  {
    cnames.push_back(name.c_str());
  }
  this->ParticleTypeSelection->SetArraysWithDefault(
    cnames.data(), static_cast<int>(cnames.size()), 1);
  outputVector->GetInformationObject(0)->Set(CAN_HANDLE_PIECE_REQUEST(), 1);
  return 1;
}

int vtkVicinitySnapshotReader::RequestData(
  vtkInformation*, vtkInformationVector**, vtkInformationVector* outputVector)
{
  vtkInformation* outInfo = outputVector->GetInformationObject(0);
  vtkPolyData* output = vtkPolyData::GetData(outInfo);
  if (!this->CheckFormat())
  {
    return 0;
  }
  const int piece = outInfo->Get(vtkStreamingDemandDrivenPipeline::UPDATE_PIECE_NUMBER());
  const int pieces = outInfo->Get(vtkStreamingDemandDrivenPipeline::UPDATE_NUMBER_OF_PIECES());
  char err[1024];
  Snapshot s;
  if (vsnap_open(this->FileName.c_str(), &s.Handle, err, sizeof err) != 0)
  {
    vtkErrorMacro(<< "Cannot read " << this->FormatDescription() << ": " << err);
    return 0;
  }
  const vsnap_info& in = *vsnap_get_info(s.Handle);
  if (in.ntypes > 0)
  {
    int selected[VSNAP_MAX_TYPES];
    for (int t = 0; t < in.ntypes; ++t)
    {
      const std::string name = TypeName(t);
      selected[t] = !this->ParticleTypeSelection->ArrayExists(name.c_str()) ||
        this->ParticleTypeSelection->ArrayIsEnabled(name.c_str());
    }
    if (vsnap_select_types(s.Handle, selected, in.ntypes, err, sizeof err) != 0)
    {
      vtkErrorMacro(<< err);
      return 0;
    }
  }
  int64_t first = 0, count = 0;
  vsnap_piece_range(in.n, piece, pieces, &first, &count);
  this->UpdateProgress(0.1);
  Particles p;
  if (vsnap_read(s.Handle, first, count, &p.P, err, sizeof err) != 0)
  {
    vtkErrorMacro(<< "Cannot read the particles of " << this->FormatDescription() << ": " << err);
    return 0;
  }
  this->UpdateProgress(0.8);
  const vtkIdType n = static_cast<vtkIdType>(count);
  auto points = vtkSmartPointer<vtkPoints>::New();
  points->SetData(Adopt<vtkFloatArray>("Points", p.P.pos, n, 3));
  output->SetPoints(points);
  output->SetVerts(Vertices(n));
  vtkPointData* pd = output->GetPointData();
  if (p.P.type)
  {
    pd->AddArray(Adopt<vtkIntArray>("ParticleType", p.P.type, n, 1));
  }
  if (p.P.mass)
  {
    pd->AddArray(Adopt<vtkFloatArray>("Mass", p.P.mass, n, 1));
  }
  if (p.P.vel)
  {
    pd->AddArray(Adopt<vtkFloatArray>("Velocity", p.P.vel, n, 3));
  }
  if (p.P.ids)
  {
    auto ids = vtkSmartPointer<vtkTypeInt64Array>::New(); // int64_t and vtkTypeInt64 may differ in type
    ids->SetName("ParticleIds");
    ids->SetNumberOfValues(n);
    for (vtkIdType i = 0; i < n; ++i)
    {
      ids->SetValue(i, p.P.ids[i]);
    }
    pd->AddArray(ids);
  }
  for (int e = 0; e < in.nextra; ++e)
  {
    auto a = vtkSmartPointer<vtkDoubleArray>::New();
    a->SetName(in.extra_names[e]);
    a->SetNumberOfValues(n);
    for (vtkIdType i = 0; i < n; ++i)
    {
      a->SetValue(i, p.P.extra[i * in.nextra + e]);
    }
    pd->AddArray(a);
  }
  WriteFieldData(in, output->GetFieldData());
  return 1;
}

void vtkVicinitySnapshotReader::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "FileName: " << this->FileName << "\n";
  os << indent << "ParticleTypeSelection: " << this->ParticleTypeSelection->GetNumberOfArraysEnabled()
     << " of " << this->ParticleTypeSelection->GetNumberOfArrays() << " enabled\n";
}
