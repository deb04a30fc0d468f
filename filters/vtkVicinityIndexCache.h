// The search index a filter keeps between executions (kNN Query Probe):
// the float32 rows it indexes (the core keeps a reference to them, not a
// copy, so they live here as long as the index), the vic_index itself,
// and the key of what it was built from.  An execution whose key matches
// searches at once; any other replaces the index by a build or a load.
// Search-only choices (k, the query, tau) are deliberately not in the key:
// changing them must never rebuild.
#ifndef vtkVicinityIndexCache_h
#define vtkVicinityIndexCache_h

#include "vicinity.h"
#include "vtkVicinityFilterSupport.h"

#include <vtkType.h>

#include <string>

namespace vtkVicinity
{

// Everything an index depends on.  Source/SourceMTime identify the VTK
// object the rows were read from (the points' data array, the feature
// array, or the data set for implicit points): VTK's modification times
// grow monotonically, so a changed or replaced array never matches.
struct IndexKey
{
  const void* Source = nullptr;
  vtkMTimeType SourceMTime = 0;
  vtkIdType N = 0;
  int D = 0;
  std::string RowsName; // "Point Coordinates" or the feature array's name
  int Metric = 0;
  int Backend = 0; // the context's backend and device: a GPU index lives on one device
  int Device = 0;
  uint64_t Seed = 0;
  // The core's build options (method included; k at the core's default:
  // the k of the searches must not reach into the build).
  vic_build_options Build = BuildDefaults();
  std::string LoadPath; // non-empty: the index is read from this file instead of built

  bool operator==(const IndexKey& o) const;
  bool operator!=(const IndexKey& o) const { return !(*this == o); }

private:
  static vic_build_options BuildDefaults();
};

class IndexCache
{
public:
  IndexCache() = default;
  ~IndexCache();
  IndexCache(const IndexCache&) = delete;
  IndexCache& operator=(const IndexCache&) = delete;

  bool Matches(const IndexKey& key) const { return this->Index && key == this->Key; }

  // Drops the old index and makes the one `key` describes over `rows`
  // (taken over): loaded from key.LoadPath when that is set, else built.
  // On failure the cache is empty and ctx's message says why.
  vic_status Make(vic_ctx* ctx, const IndexKey& key, Rows&& rows);
  // Writes the index in the core's saved-index format (once per path and
  // index: saving the same index to the same file again is skipped).
  vic_status Save(vic_ctx* ctx, const std::string& path);
  void Clear();

  const vic_index* Get() const { return this->Index; }
  // The indexed rows, for queries that are rows of the data (point ids).
  vic_data View() const;
  vtkIdType Builds() const { return this->BuildCount; }
  vtkIdType Loads() const { return this->LoadCount; }

private:
  IndexKey Key;
  Rows Data;
  vic_index* Index = nullptr;
  std::string SavedPath;
  vtkIdType BuildCount = 0;
  vtkIdType LoadCount = 0;
};

} // namespace vtkVicinity

#endif
