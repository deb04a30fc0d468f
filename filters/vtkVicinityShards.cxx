#include "vtkVicinityShards.h"
#include "vtkVicinityDistributedPoints.h"

#include <vtkMPIController.h>
#include <vtkPolyData.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

namespace vtkVicinity
{

void GlobalLists::Reset(vtkIdType n, int k)
{
  this->N = n;
  this->K = k;
  this->Ids.assign(static_cast<size_t>(n) * k, -1);
  this->Dist.assign(static_cast<size_t>(n) * k, std::numeric_limits<float>::infinity());
  this->Pos.assign(static_cast<size_t>(n) * k * 3, 0.f);
}

namespace
{
struct Entry
{
  float Dist;
  vtkIdType Id;
  float Pos[3];
};

bool Nearer(const Entry& a, const Entry& b)
{
  return a.Dist < b.Dist || (a.Dist == b.Dist && a.Id < b.Id);
}

// Message tags of the shard exchange and the ring (any values unused by
// ParaView's own messages between the same ranks during a filter run).
enum Tags
{
  TagCount = 7341,
  TagRows,
  TagGids,
  TagPositions,
  TagIds,
  TagDist,
  TagPos
};
} // namespace

void MergeTopK(GlobalLists& into, const vic_knn& found, const ShardRows& shard,
  const vtkIdType* selfGids)
{
  const int k = into.K;
  std::vector<Entry> merged;
  for (vtkIdType i = 0; i < into.N; ++i)
  {
    merged.clear();
    for (int r = 0; r < k; ++r)
    {
      const size_t at = static_cast<size_t>(i) * k + r;
      if (into.Ids[at] >= 0)
      {
        merged.push_back(
          { into.Dist[at], into.Ids[at], { into.Pos[3 * at], into.Pos[3 * at + 1], into.Pos[3 * at + 2] } });
      }
    }
    for (int r = 0; r < found.k; ++r)
    {
      const int64_t local = found.ids[i * found.k + r];
      if (local < 0)
      {
        continue;
      }
      const vtkIdType gid = shard.Gids[local];
      if (selfGids && gid == selfGids[i])
      {
        continue;
      }
      const float* p = &shard.Positions[3 * local];
      merged.push_back({ found.dist[i * found.k + r], gid, { p[0], p[1], p[2] } });
    }
    std::sort(merged.begin(), merged.end(), Nearer);
    for (int r = 0; r < k; ++r)
    {
      const size_t at = static_cast<size_t>(i) * k + r;
      const bool has = r < static_cast<int>(merged.size());
      into.Ids[at] = has ? merged[r].Id : -1;
      into.Dist[at] = has ? merged[r].Dist : std::numeric_limits<float>::infinity();
      for (int j = 0; j < 3; ++j)
      {
        into.Pos[3 * at + j] = has ? merged[r].Pos[j] : 0.f;
      }
    }
  }
}

namespace
{
// Rows [from, to) of `rows` appended to `shard`.
void AppendSlice(const ShardRows& rows, vtkIdType from, vtkIdType to, ShardRows& shard)
{
  const int d = shard.Data.D;
  shard.Data.Values.insert(shard.Data.Values.end(), rows.Data.Values.begin() + from * d,
    rows.Data.Values.begin() + to * d);
  shard.Gids.insert(shard.Gids.end(), rows.Gids.begin() + from, rows.Gids.begin() + to);
  shard.Positions.insert(shard.Positions.end(), rows.Positions.begin() + 3 * from,
    rows.Positions.begin() + 3 * to);
  shard.Data.N += to - from;
}
} // namespace

void MakeShard(vtkMPIController* c, ShardRows&& piece, ShardRows& shard, bool* rebalanced)
{
  const int nranks = c->GetNumberOfProcesses(), me = c->GetLocalProcessId();
  vtkIdType n = piece.Data.N;
  std::vector<vtkIdType> counts(nranks);
  c->AllGather(&n, counts.data(), 1);
  const vtkIdType total = std::accumulate(counts.begin(), counts.end(), vtkIdType(0));
  const double mean = static_cast<double>(total) / nranks;
  const auto [lo, hi] = std::minmax_element(counts.begin(), counts.end());
  *rebalanced = *hi > 1.5 * mean || *lo < 0.5 * mean;
  if (!*rebalanced)
  {
    shard = std::move(piece);
    return;
  }
  // Piece s holds positions [start[s], start[s+1]) of the pieces taken in
  // rank order; shard t gets block [block[t], block[t+1]).
  std::vector<vtkIdType> start(nranks + 1, 0), block(nranks + 1, 0);
  for (int r = 0; r < nranks; ++r)
  {
    start[r + 1] = start[r] + counts[r];
    block[r + 1] = static_cast<vtkIdType>((static_cast<double>(total) * (r + 1)) / nranks);
  }
  block[nranks] = total;
  const int d = piece.Data.D;
  shard = ShardRows();
  shard.Data.D = d;
  // Every rank walks the same pair order; the earliest pending pair always
  // has both its ranks at it, so blocking Send/Receive cannot deadlock.
  for (int s = 0; s < nranks; ++s)
  {
    for (int t = 0; t < nranks; ++t)
    {
      const vtkIdType from = std::max(start[s], block[t]), to = std::min(start[s + 1], block[t + 1]);
      if (from >= to || (me != s && me != t))
      {
        continue;
      }
      const vtkIdType a = from - start[s], b = to - start[s], m = to - from; // rows of piece s
      if (s == t)
      {
        AppendSlice(piece, a, b, shard);
      }
      else if (me == s)
      {
        c->Send(piece.Data.Values.data() + a * d, m * d, t, TagRows);
        c->Send(piece.Gids.data() + a, m, t, TagGids);
        c->Send(piece.Positions.data() + 3 * a, 3 * m, t, TagPositions);
      }
      else
      {
        ShardRows got;
        got.Data.D = d;
        got.Data.Values.resize(m * d);
        got.Gids.resize(m);
        got.Positions.resize(3 * m);
        c->Receive(got.Data.Values.data(), m * d, s, TagRows);
        c->Receive(got.Gids.data(), m, s, TagGids);
        c->Receive(got.Positions.data(), 3 * m, s, TagPositions);
        AppendSlice(got, 0, m, shard);
      }
    }
  }
}

namespace
{
// A block of query rows in the ring with its running lists.
struct Block
{
  vtkIdType N = 0;
  std::vector<float> Rows;
  std::vector<vtkIdType> Gids;
  GlobalLists Lists;
};

void SendBlock(vtkMPIController* c, const Block& b, int to, int d, bool rows)
{
  vtkIdType n = b.N;
  c->Send(&n, 1, to, TagCount);
  if (n == 0)
  {
    return;
  }
  const vtkIdType k = b.Lists.K;
  if (rows)
  {
    c->Send(b.Rows.data(), n * d, to, TagRows);
    c->Send(b.Gids.data(), n, to, TagGids);
  }
  c->Send(b.Lists.Ids.data(), n * k, to, TagIds);
  c->Send(b.Lists.Dist.data(), n * k, to, TagDist);
  c->Send(b.Lists.Pos.data(), 3 * n * k, to, TagPos);
}

void ReceiveBlock(vtkMPIController* c, Block& b, int from, int d, int k, bool rows)
{
  vtkIdType n = 0;
  c->Receive(&n, 1, from, TagCount);
  b.N = n;
  b.Lists.Reset(n, k);
  if (n == 0)
  {
    b.Rows.clear();
    b.Gids.clear();
    return;
  }
  if (rows)
  {
    b.Rows.resize(n * d);
    b.Gids.resize(n);
    c->Receive(b.Rows.data(), n * d, from, TagRows);
    c->Receive(b.Gids.data(), n, from, TagGids);
  }
  c->Receive(b.Lists.Ids.data(), n * k, from, TagIds);
  c->Receive(b.Lists.Dist.data(), n * k, from, TagDist);
  c->Receive(b.Lists.Pos.data(), 3 * n * k, from, TagPos);
}

// One step round the ring: even ranks send first, odd ranks receive first,
// so blocking calls pair up for any number of ranks.
void Shift(vtkMPIController* c, Block& b, int d, bool rows)
{
  const int nranks = c->GetNumberOfProcesses(), me = c->GetLocalProcessId();
  const int next = (me + 1) % nranks, prev = (me + nranks - 1) % nranks;
  Block in;
  if (me % 2 == 0)
  {
    SendBlock(c, b, next, d, rows);
    ReceiveBlock(c, in, prev, d, b.Lists.K, rows);
  }
  else
  {
    ReceiveBlock(c, in, prev, d, b.Lists.K, rows);
    SendBlock(c, b, next, d, rows);
  }
  b = std::move(in);
}
} // namespace

Outcome RingTopK(vtkMPIController* c, vtkAlgorithm* self, const char* label,
  const ShardRows& shard, const ShardRows& queries, int k, vic_metric metric,
  const ShardSearch& search, GlobalLists& out)
{
  const int nranks = c->GetNumberOfProcesses();
  const int d = queries.Data.D;
  Block b;
  b.N = queries.Data.N;
  b.Rows = queries.Data.Values;
  b.Gids = queries.Gids;
  b.Lists.Reset(b.N, k);
  for (int step = 0; step < nranks; ++step)
  {
    Outcome o = Outcome::Done;
    if (b.N > 0 && shard.Data.N > 0)
    {
      vic_data q;
      q.rows = b.Rows.data();
      q.n = b.N;
      q.d = d;
      q.stride = 0;
      q.metric = metric;
      q.box = nullptr;
      vic_knn found{};
      // One more than k: a query row of this shard finds itself first.
      const int want = static_cast<int>(std::min<vtkIdType>(k + 1, shard.Data.N));
      o = search(q, want, &found);
      if (o == Outcome::Done)
      {
        MergeTopK(b.Lists, found, shard, b.Gids.data());
      }
      vic_knn_free(&found);
    }
    o = AgreeOutcome(c, self, label, o);
    if (o != Outcome::Done)
    {
      return o;
    }
    // After the last search only the lists travel: the block goes home.
    Shift(c, b, d, step + 1 < nranks);
  }
  out = std::move(b.Lists);
  return Outcome::Done;
}

void CountRecall(const GlobalLists& approx, const std::vector<vtkIdType>& sample,
  const GlobalLists& exact, double* hits, double* total)
{
  const int k = approx.K;
  for (size_t i = 0; i < sample.size(); ++i)
  {
    const vtkIdType* a = &approx.Ids[sample[i] * k];
    const float* ad = &approx.Dist[sample[i] * k];
    const vtkIdType* e = &exact.Ids[i * k];
    const float kth = exact.Dist[i * k + k - 1];
    vtkIdType qhit = 0, qtotal = 0;
    for (int t = 0; t < k; ++t)
    {
      if (e[t] < 0)
      {
        continue;
      }
      ++qtotal;
      qhit += std::find(a, a + k, e[t]) != a + k;
    }
    // Ties at the k-th distance: any approximate member within it is correct.
    for (int u = 0; u < k; ++u)
    {
      if (a[u] >= 0 && ad[u] <= kth * (1.f + 1e-6f) && std::find(e, e + k, a[u]) == e + k)
      {
        ++qhit;
      }
    }
    *hits += static_cast<double>(std::min(qhit, qtotal));
    *total += static_cast<double>(qtotal);
  }
}

} // namespace vtkVicinity
