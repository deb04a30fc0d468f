#include "vtkVicinityIndexCache.h"
#include "vtkVicinityCoreOptions.h"

#include <utility>

namespace vtkVicinity
{

bool IndexKey::operator==(const IndexKey& o) const
{
  return this->Source == o.Source && this->SourceMTime == o.SourceMTime && this->N == o.N &&
    this->D == o.D && this->RowsName == o.RowsName && this->Metric == o.Metric &&
    this->Backend == o.Backend && this->Device == o.Device && this->Seed == o.Seed &&
    SameIndexBuild(this->Build, o.Build) && this->LoadPath == o.LoadPath;
}

vic_build_options IndexKey::BuildDefaults()
{
  vic_build_options o;
  vic_build_options_init(&o);
  return o;
}

IndexCache::~IndexCache()
{
  this->Clear();
}

void IndexCache::Clear()
{
  vic_index_free(this->Index);
  this->Index = nullptr;
  this->Data = Rows();
  this->Key = IndexKey();
  this->SavedPath.clear();
}

vic_data IndexCache::View() const
{
  return this->Data.View(static_cast<vic_metric>(this->Key.Metric), nullptr);
}

vic_status IndexCache::Make(vic_ctx* ctx, const IndexKey& key, Rows&& rows)
{
  this->Clear();
  this->Data = std::move(rows);
  this->Key = key;
  const vic_data x = this->View();
  vic_status s;
  if (!key.LoadPath.empty())
  {
    s = vic_index_load(ctx, key.LoadPath.c_str(), &x, &this->Index);
    this->LoadCount += s == VIC_OK;
  }
  else
  {
    s = vic_index_build(ctx, &x, &key.Build, &this->Index);
    this->BuildCount += s == VIC_OK;
  }
  if (s != VIC_OK)
  {
    this->Clear();
  }
  return s;
}

vic_status IndexCache::Save(vic_ctx* ctx, const std::string& path)
{
  if (this->Index && path == this->SavedPath)
  {
    return VIC_OK;
  }
  const vic_status s = vic_index_save(ctx, this->Index, path.c_str());
  if (s == VIC_OK)
  {
    this->SavedPath = path;
  }
  return s;
}

} // namespace vtkVicinity
