#include "pqVicinityDisplayDefaults.h"

#include <pqApplicationCore.h>
#include <pqDataRepresentation.h>
#include <pqOutputPort.h>
#include <pqPipelineSource.h>
#include <pqServerManagerModel.h>
#include <pqView.h>
#include <vtkPVDataInformation.h>
#include <vtkSMPVRepresentationProxy.h>
#include <vtkSMPropertyHelper.h>
#include <vtkSMProxy.h>
#include <vtkSMSourceProxy.h>
#include <vtkSMTransferFunctionProxy.h>

#include <QPointer>
#include <QTimer>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace
{
// The largest side of the bounds of the filter's input (the particles),
// the scale that makes spheres visible from the whole-data view.
double InputExtent(pqPipelineSource* filter)
{
  vtkSMProxy* proxy = filter->getProxy();
  vtkSMPropertyHelper input(proxy, "Input", /*quiet=*/true);
  auto* source = vtkSMSourceProxy::SafeDownCast(input.GetAsProxy(0));
  if (!source)
  {
    return 0.0;
  }
  double b[6];
  source->GetDataInformation(input.GetOutputPort(0))->GetBounds(b);
  double extent = 0;
  for (int j = 0; j < 3; ++j)
  {
    extent = std::max(extent, b[2 * j + 1] - b[2 * j]);
  }
  return std::isfinite(extent) ? extent : 0.0;
}

void Spheres(vtkSMProxy* repr, double radius, const double rgb[3])
{
  if (!repr->GetProperty("GaussianRadius") || !(radius > 0))
  {
    return;
  }
  vtkSMPropertyHelper(repr, "Representation").Set("Point Gaussian");
  vtkSMPropertyHelper(repr, "ShaderPreset").Set(1); // Sphere
  vtkSMPropertyHelper(repr, "GaussianRadius").Set(radius);
  vtkSMPVRepresentationProxy::SetScalarColoring(repr, nullptr, 0);
  vtkSMPropertyHelper(repr, "AmbientColor").Set(rgb, 3);
  vtkSMPropertyHelper(repr, "DiffuseColor").Set(rgb, 3);
  repr->UpdateVTKObjects();
}

// Points as screen-space spheres and thicker lines, kept in the Surface
// representation so that lines (the probe's query-to-neighbour edges) stay.
void ScreenSpheres(vtkSMProxy* repr, double pixels, const double rgb[3])
{
  if (!repr->GetProperty("RenderPointsAsSpheres"))
  {
    return;
  }
  vtkSMPropertyHelper(repr, "RenderPointsAsSpheres").Set(1);
  vtkSMPropertyHelper(repr, "PointSize").Set(pixels);
  vtkSMPropertyHelper(repr, "LineWidth").Set(2.0);
  vtkSMPVRepresentationProxy::SetScalarColoring(repr, nullptr, 0);
  vtkSMPropertyHelper(repr, "AmbientColor").Set(rgb, 3);
  vtkSMPropertyHelper(repr, "DiffuseColor").Set(rgb, 3);
  repr->UpdateVTKObjects();
}

// Density on a log scale with a perceptually uniform map, once per LUT:
// a user who turned the log scale off keeps it off.
void LogDensity(vtkSMProxy* repr)
{
  if (!vtkSMPVRepresentationProxy::SetScalarColoring(repr, "Density", vtkDataObject::POINT))
  {
    return;
  }
  vtkSMProxy* lut = vtkSMPropertyHelper(repr, "LookupTable", true).GetAsProxy();
  if (!lut || lut->GetAnnotation("Vicinity.LogDefault"))
  {
    return;
  }
  lut->SetAnnotation("Vicinity.LogDefault", "1");
  vtkSMTransferFunctionProxy::ApplyPreset(lut, "Inferno (matplotlib)", false);
  vtkSMPVRepresentationProxy::RescaleTransferFunctionToDataRange(repr, false, false);
  vtkSMTransferFunctionProxy::MapControlPointsToLogSpace(lut);
  vtkSMPropertyHelper(lut, "UseLogScale").Set(1);
  lut->UpdateVTKObjects();
}

void Apply(pqDataRepresentation* r)
{
  pqOutputPort* port = r->getOutputPortFromInput();
  pqPipelineSource* filter = port ? port->getSource() : nullptr;
  vtkSMProxy* repr = r->getProxy();
  if (!filter || !repr || !filter->getProxy()->GetXMLName())
  {
    return;
  }
  const char* name = filter->getProxy()->GetXMLName();
  const int index = port->getPortNumber();
  const bool density = !std::strcmp(name, "VicinityKnnDensity") || !std::strcmp(name, "VicinitySalientPoints");
  if (density && index == 0)
  {
    LogDensity(repr);
  }
  const double cyan[3] = { 0.2, 0.9, 1.0 }, orange[3] = { 1.0, 0.55, 0.1 };
  if (!std::strcmp(name, "VicinitySalientPoints") && index == 1)
  {
    Spheres(repr, 0.01 * InputExtent(filter), cyan);
  }
  if (!std::strcmp(name, "VicinityKnnQueryProbe") && index == 0)
  {
    ScreenSpheres(repr, 10.0, orange);
  }
  if (pqView* view = r->getView())
  {
    view->render();
  }
}
} // namespace

pqVicinityDisplayDefaults::pqVicinityDisplayDefaults(QObject* parent)
  : QObject(parent)
{
}

void pqVicinityDisplayDefaults::startup()
{
  pqServerManagerModel* model = pqApplicationCore::instance()->getServerManagerModel();
  QObject::connect(model, &pqServerManagerModel::representationAdded, this,
    &pqVicinityDisplayDefaults::onRepresentationAdded);
}

void pqVicinityDisplayDefaults::onRepresentationAdded(pqRepresentation* added)
{
  // After the Show that created it has finished colouring it by default.
  QPointer<pqDataRepresentation> r = qobject_cast<pqDataRepresentation*>(added);
  if (r)
  {
    QTimer::singleShot(0, this, [r]() {
      if (r)
      {
        Apply(r);
      }
    });
  }
}
