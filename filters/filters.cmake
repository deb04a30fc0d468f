# The Vicinity filters, by short name.  Adding a filter is one edit here:
# name "Foo" means the class filters/vtkVicinityFoo.{h,cxx} and the
# server-manager XML xml/VicinityFoo.xml (read by plugin/CMakeLists.txt).
set(VICINITY_FILTERS
  KnnGraph
  KnnDensity
  SalientPoints
  KnnQueryProbe
  SphResample
)
