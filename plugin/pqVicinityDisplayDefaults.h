// Display defaults of the Vicinity filters in the ParaView GUI, which the
// server-manager XML cannot express in ParaView 5.11: density coloured on
// a log scale with a colour map made for it, Salient Points' peaks drawn
// as spheres sized from the particles' extent (the XML's representation
// hint picks Point Gaussian, whose default radius comes from the output's
// own, tiny or zero, extent), the Query Probe's neighbours as large
// screen-space spheres with their query lines.
// Applied once, when the representation is created; the user's later
// choices are never touched.
#ifndef pqVicinityDisplayDefaults_h
#define pqVicinityDisplayDefaults_h

#include <QObject>

class pqRepresentation;

class pqVicinityDisplayDefaults : public QObject
{
  Q_OBJECT
public:
  explicit pqVicinityDisplayDefaults(QObject* parent = nullptr);
  ~pqVicinityDisplayDefaults() override = default;

  void startup();
  void shutdown() {}

private Q_SLOTS:
  void onRepresentationAdded(pqRepresentation*);

private:
  Q_DISABLE_COPY(pqVicinityDisplayDefaults)
};

#endif
