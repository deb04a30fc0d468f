#include "pqVicinityAbort.h"

#include <pqApplicationCore.h>
#include <pqPipelineSource.h>
#include <pqProgressManager.h>
#include <pqProgressWidget.h>
#include <pqServer.h>
#include <pqServerManagerModel.h>
#include <vtkAlgorithm.h>
#include <vtkSMProxy.h>

#include <QApplication>
#include <QEvent>
#include <QMouseEvent>
#include <QWindow>
#include <QEventLoop>
#include <QToolButton>
#include <QWidget>

namespace
{
// Progress text is the reporting class's name less "vtk".
bool IsVicinity(const QString& text)
{
  return text.startsWith(QLatin1String("Vicinity"));
}

// Only in a builtin session do the filters run in this process, where
// their AbortExecute can be set, and only there is it safe to deliver
// events (a remote session's progress arrives on a socket).
bool Builtin()
{
  pqServerManagerModel* model = pqApplicationCore::instance()->getServerManagerModel();
  const QList<pqServer*> servers = model->findItems<pqServer*>();
  return !servers.isEmpty() && !servers.front()->isRemote();
}

// The status bar's abort button must take clicks while progress blocks
// every other widget, and its click must reach the progress manager.
void ConnectAbortButtons(pqProgressManager* pm)
{
  for (QWidget* top : QApplication::topLevelWidgets())
  {
    for (pqProgressWidget* w : top->findChildren<pqProgressWidget*>())
    {
      if (!pm->nonBlockableObjects().contains(w->abortButton()))
      {
        pm->addNonBlockableObject(w->abortButton());
        QObject::connect(
          w, &pqProgressWidget::abortPressed, pm, &pqProgressManager::triggerAbort, Qt::UniqueConnection);
      }
    }
  }
}
} // namespace

pqVicinityAbort::pqVicinityAbort(QObject* parent)
  : QObject(parent)
{
}

void pqVicinityAbort::startup()
{
  // An aborted filter stays cancelled until edited: clear its flag when its
  // properties change in the panel, so that Apply runs it again.
  pqServerManagerModel* model = pqApplicationCore::instance()->getServerManagerModel();
  QObject::connect(model, &pqServerManagerModel::modifiedStateChanged, this,
    [](pqServerManagerModelItem* item) {
      auto* source = qobject_cast<pqPipelineSource*>(item);
      vtkSMProxy* proxy = source ? source->getProxy() : nullptr;
      const char* name = proxy ? proxy->GetXMLName() : nullptr;
      if (name && QString(name).startsWith(QLatin1String("Vicinity")) &&
        source->modifiedState() == pqProxy::MODIFIED)
      {
        if (auto* algorithm = vtkAlgorithm::SafeDownCast(proxy->GetClientSideObject()))
        {
          algorithm->SetAbortExecute(0);
        }
      }
    });
  pqProgressManager* pm = pqApplicationCore::instance()->getProgressManager();
  QObject::connect(pm, &pqProgressManager::progress, this, &pqVicinityAbort::onProgress);
  QObject::connect(pm, &pqProgressManager::abort, this, &pqVicinityAbort::onAbort);
  QObject::connect(pm, &pqProgressManager::progressEndEvent, this, &pqVicinityAbort::onEnd);
}

void pqVicinityAbort::onProgress(const QString& text, int)
{
  if (!IsVicinity(text) || this->Delivering || !Builtin())
  {
    return;
  }
  pqProgressManager* pm = pqApplicationCore::instance()->getProgressManager();
  if (!this->Enabled)
  {
    ConnectAbortButtons(pm);
    pm->setEnableAbort(true);
    this->Enabled = true;
  }
  // Input and paint events only: no timers (no render, no deferred
  // pipeline work runs inside the update).  On X11 input arrives through
  // the display connection's socket notifier, so sockets stay on; a
  // builtin session has no other.
  // The progress manager blocks presses on every object not listed, the
  // top-level windows included, which see a click before the button does;
  // they are listed while this filter, which lets only the abort buttons'
  // clicks through them, is installed.
  QList<QObject*> windows;
  for (QWidget* top : QApplication::topLevelWidgets())
  {
    if (top->windowHandle() && !pm->nonBlockableObjects().contains(top->windowHandle()))
    {
      windows.push_back(top->windowHandle());
      pm->addNonBlockableObject(top->windowHandle());
    }
  }
  this->Delivering = true;
  qApp->installEventFilter(this);
  QApplication::processEvents(QEventLoop::X11ExcludeTimers);
  qApp->removeEventFilter(this);
  this->Delivering = false;
  for (QObject* w : windows)
  {
    pm->removeNonBlockableObject(w);
  }
}

bool pqVicinityAbort::eventFilter(QObject* target, QEvent* event)
{
  // While the update runs, user input reaches the abort buttons only (the
  // progress manager lets moves and wheels through; a wheel would render).
  switch (event->type())
  {
    case QEvent::MouseButtonPress:
    case QEvent::MouseButtonRelease:
    case QEvent::MouseButtonDblClick:
    case QEvent::MouseMove:
    case QEvent::Wheel:
    case QEvent::KeyPress:
    case QEvent::KeyRelease:
    case QEvent::Shortcut:
    case QEvent::ContextMenu:
    case QEvent::TouchBegin:
    case QEvent::TouchUpdate:
    case QEvent::TouchEnd:
    {
      const auto& open = pqApplicationCore::instance()->getProgressManager()->nonBlockableObjects();
      // Qt hands a click to the top-level window first, which passes it
      // to the widget under the cursor: let it through for an abort button.
      if (qobject_cast<QWindow*>(target))
      {
        auto* mouse = dynamic_cast<QMouseEvent*>(event);
        return !mouse || !open.contains(QApplication::widgetAt(mouse->globalPos()));
      }
      return !open.contains(target);
    }
    default:
      return false;
  }
}

void pqVicinityAbort::onAbort()
{
  pqServerManagerModel* model = pqApplicationCore::instance()->getServerManagerModel();
  for (pqPipelineSource* source : model->findItems<pqPipelineSource*>())
  {
    vtkSMProxy* proxy = source->getProxy();
    const char* name = proxy ? proxy->GetXMLName() : nullptr;
    if (name && QString(name).startsWith(QLatin1String("Vicinity")))
    {
      if (auto* algorithm = vtkAlgorithm::SafeDownCast(proxy->GetClientSideObject()))
      {
        algorithm->SetAbortExecute(1);
      }
    }
  }
}

void pqVicinityAbort::onEnd()
{
  if (this->Enabled)
  {
    pqApplicationCore::instance()->getProgressManager()->setEnableAbort(false);
    this->Enabled = false;
  }
}
