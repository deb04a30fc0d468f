// The abort button for the Vicinity filters in ParaView 5.11's GUI.
//
// ParaView 5.11 runs a pipeline update on the GUI thread (builtin session)
// without processing events, and enables its abort button only while an
// animation is saved, so the button stays greyed during a long filter
// run.  The filters already poll vtkAlgorithm::CheckAbort() at every core
// progress report.  This component, while a Vicinity filter reports
// progress: enables the button, lets Qt deliver the pending input and
// paint events (timers excluded, so no render or deferred pipeline work
// runs inside the update; pqProgressManager's event filter keeps every
// widget but the abort button from taking clicks), and on a click
// sets AbortExecute on the Vicinity filters of the builtin session, which
// their next progress report turns into a clean cancel (empty output and
// a warning).  The filter stays cancelled (empty outputs, no new search at
// later requests) until its properties are edited, when this component
// clears the flag.  A remote server's filters cannot be reached this way;
// ParaView 5.12 and later abort through their own progress handler.
#ifndef pqVicinityAbort_h
#define pqVicinityAbort_h

#include <QObject>

class pqVicinityAbort : public QObject
{
  Q_OBJECT
public:
  explicit pqVicinityAbort(QObject* parent = nullptr);
  ~pqVicinityAbort() override = default;

  void startup();
  void shutdown() {}

protected:
  bool eventFilter(QObject* target, QEvent* event) override;

private Q_SLOTS:
  void onProgress(const QString& text, int value);
  void onAbort();
  void onEnd();

private:
  bool Enabled = false;
  bool Delivering = false;
  Q_DISABLE_COPY(pqVicinityAbort)
};

#endif
