#include "vtkVicinityBuildOptions.h"
#include "vtkVicinityCoreOptions.h"

#include <vtkObjectFactory.h>

vtkStandardNewMacro(vtkVicinityBuildOptions);

// The enumerations are the core's values, named for the filters' setters.
static_assert(int(vtkVicinityBuildOptions::METHOD_AUTO) == int(VIC_METHOD_AUTO) &&
    int(vtkVicinityBuildOptions::METHOD_BRUTE_FORCE) == int(VIC_METHOD_BRUTE) &&
    int(vtkVicinityBuildOptions::METHOD_GRID) == int(VIC_METHOD_GRID) &&
    int(vtkVicinityBuildOptions::METHOD_NNDESCENT) == int(VIC_METHOD_NNDESCENT) &&
    int(vtkVicinityBuildOptions::METHOD_GGNN) == int(VIC_METHOD_GGNN) &&
    int(vtkVicinityBuildOptions::METHOD_GNND) == int(VIC_METHOD_GNND) &&
    int(vtkVicinityBuildOptions::METHOD_GRNND) == int(VIC_METHOD_GRNND) &&
    int(vtkVicinityBuildOptions::METHOD_TSDG) == int(VIC_METHOD_TSDG),
  "vtkVicinityBuildOptions::Methods must equal vic_method");
static_assert(int(vtkVicinityBuildOptions::BACKEND_AUTO) == int(VIC_BACKEND_AUTO) &&
    int(vtkVicinityBuildOptions::BACKEND_CPU) == int(VIC_BACKEND_CPU) &&
    int(vtkVicinityBuildOptions::BACKEND_GPU) == int(VIC_BACKEND_CUDA),
  "vtkVicinityBuildOptions::Backends must equal vic_backend");
static_assert(int(vtkVicinityBuildOptions::METRIC_L2) == int(VIC_L2) &&
    int(vtkVicinityBuildOptions::METRIC_COSINE) == int(VIC_COSINE) &&
    int(vtkVicinityBuildOptions::METRIC_INNER_PRODUCT) == int(VIC_INNER_PRODUCT),
  "vtkVicinityBuildOptions::Metrics must equal vic_metric");

vtkVicinityBuildOptions::vtkVicinityBuildOptions()
{
  vic_build_options o;
  vic_build_options_init(&o);
  this->BruteMaxN = o.brute_max_n;
  this->NNDescentKBuild = o.nndescent.k_build;
  this->NNDescentRho = o.nndescent.rho;
  this->NNDescentDelta = o.nndescent.delta;
  this->NNDescentMaxIterations = o.nndescent.max_iterations;
  this->GGNNKBuild = o.ggnn.k_build;
  this->GGNNSegment = o.ggnn.segment;
  this->GGNNLayers = o.ggnn.layers;
  this->GGNNRefinements = o.ggnn.refinements;
  this->GGNNTauBuild = o.ggnn.tau_build;
  this->GNNDKBuild = o.gnnd.k_build;
  this->GNNDSamples = o.gnnd.samples;
  this->GNNDIterations = o.gnnd.iterations;
  this->GNNDConverge = o.gnnd.converge;
  this->GRNNDS = o.grnnd.s;
  this->GRNNDR = o.grnnd.r;
  this->GRNNDT1 = o.grnnd.t1;
  this->GRNNDT2 = o.grnnd.t2;
  this->GRNNDRho = o.grnnd.rho;
  this->TSDGAlpha = o.tsdg.alpha;
  this->TSDGLambda0 = o.tsdg.lambda0;
  this->ShardSize = o.shard_size;
  this->DeviceMemoryBudgetMiB = static_cast<int>(o.device_memory_budget >> 20);
}

namespace vtkVicinity
{
vic_build_options CoreBuildOptions(vtkVicinityBuildOptions* self, int method, int k)
{
  vic_build_options o;
  vic_build_options_init(&o);
  o.method = static_cast<vic_method>(method);
  o.k = k;
  if (!self)
  {
    return o;
  }
  o.brute_max_n = self->GetBruteMaxN();
  o.nndescent.k_build = self->GetNNDescentKBuild();
  o.nndescent.rho = static_cast<float>(self->GetNNDescentRho());
  o.nndescent.delta = static_cast<float>(self->GetNNDescentDelta());
  o.nndescent.max_iterations = self->GetNNDescentMaxIterations();
  o.ggnn.k_build = self->GetGGNNKBuild();
  o.ggnn.segment = self->GetGGNNSegment();
  o.ggnn.layers = self->GetGGNNLayers();
  o.ggnn.refinements = self->GetGGNNRefinements();
  o.ggnn.tau_build = static_cast<float>(self->GetGGNNTauBuild());
  o.gnnd.k_build = self->GetGNNDKBuild();
  o.gnnd.samples = self->GetGNNDSamples();
  o.gnnd.iterations = self->GetGNNDIterations();
  o.gnnd.converge = static_cast<float>(self->GetGNNDConverge());
  o.grnnd.s = self->GetGRNNDS();
  o.grnnd.r = self->GetGRNNDR();
  o.grnnd.t1 = self->GetGRNNDT1();
  o.grnnd.t2 = self->GetGRNNDT2();
  o.grnnd.rho = static_cast<float>(self->GetGRNNDRho());
  o.tsdg.alpha = static_cast<float>(self->GetTSDGAlpha());
  o.tsdg.lambda0 = self->GetTSDGLambda0();
  o.shard_size = self->GetShardSize();
  o.device_memory_budget = static_cast<size_t>(self->GetDeviceMemoryBudgetMiB()) << 20;
  return o;
}

bool SameIndexBuild(const vic_build_options& a, const vic_build_options& b)
{
  return a.method == b.method && a.brute_max_n == b.brute_max_n &&
    a.nndescent.k_build == b.nndescent.k_build && a.nndescent.rho == b.nndescent.rho &&
    a.nndescent.delta == b.nndescent.delta &&
    a.nndescent.max_iterations == b.nndescent.max_iterations && a.ggnn.k_build == b.ggnn.k_build &&
    a.ggnn.segment == b.ggnn.segment && a.ggnn.layers == b.ggnn.layers &&
    a.ggnn.refinements == b.ggnn.refinements && a.ggnn.tau_build == b.ggnn.tau_build &&
    a.ggnn.deterministic == b.ggnn.deterministic && a.gnnd.k_build == b.gnnd.k_build &&
    a.gnnd.samples == b.gnnd.samples && a.gnnd.iterations == b.gnnd.iterations &&
    a.gnnd.converge == b.gnnd.converge && a.grnnd.s == b.grnnd.s && a.grnnd.r == b.grnnd.r &&
    a.grnnd.t1 == b.grnnd.t1 && a.grnnd.t2 == b.grnnd.t2 && a.grnnd.rho == b.grnnd.rho &&
    a.tsdg.alpha == b.tsdg.alpha && a.tsdg.lambda0 == b.tsdg.lambda0 &&
    a.shard_size == b.shard_size && a.device_memory_budget == b.device_memory_budget;
}
} // namespace vtkVicinity

void vtkVicinityBuildOptions::PrintSelf(ostream& os, vtkIndent indent)
{
  this->Superclass::PrintSelf(os, indent);
  os << indent << "BruteMaxN: " << this->BruteMaxN << "\n";
  os << indent << "NNDescent: k_build " << this->NNDescentKBuild << ", rho " << this->NNDescentRho
     << ", delta " << this->NNDescentDelta << ", iterations " << this->NNDescentMaxIterations << "\n";
  os << indent << "GGNN: k_build " << this->GGNNKBuild << ", segment " << this->GGNNSegment
     << ", layers " << this->GGNNLayers << ", refinements " << this->GGNNRefinements << ", tau_build "
     << this->GGNNTauBuild << "\n";
  os << indent << "GNND: k_build " << this->GNNDKBuild << ", samples " << this->GNNDSamples
     << ", iterations " << this->GNNDIterations << ", converge " << this->GNNDConverge << "\n";
  os << indent << "GRNND: S " << this->GRNNDS << ", R " << this->GRNNDR << ", T1 " << this->GRNNDT1
     << ", T2 " << this->GRNNDT2 << ", rho " << this->GRNNDRho << "\n";
  os << indent << "TSDG: alpha " << this->TSDGAlpha << ", lambda0 " << this->TSDGLambda0 << "\n";
  os << indent << "ShardSize: " << this->ShardSize << "\n";
  os << indent << "DeviceMemoryBudgetMiB: " << this->DeviceMemoryBudgetMiB << "\n";
}
