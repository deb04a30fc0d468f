// Feature-space (high-d, approximate) work under MPI: the rows are not
// moved by spatial cuts (a cut of a 32-d space separates nothing), every
// rank instead indexes a shard of the rows and every query visits every
// shard; the shards' top-k lists are merged.  Plumbing only: the index,
// its search and exact search are the core's.
//
//  - Shards: each rank's piece is its shard, unless the pieces are very
//    uneven (largest > 1.5x or smallest < 0.5x the mean, an empty piece
//    included); then the rows are re-cut into equal contiguous blocks of
//    the pieces taken in rank order (Send/Receive in one global order of
//    rank pairs, so no deadlock).
//  - The ring: a rank's query rows travel round the ranks once, with their
//    running top-k (global ids, distances, 3-d positions of the
//    neighbours); each rank searches its shard and merges.  Memory per
//    rank is its shard plus two blocks (the one in hand and the one
//    arriving), not all rows as an all-gather would need: the point of
//    sharding is that no rank holds the whole data.  P shifts (the last
//    carries the lists only) bring every block home fully merged.
//  - The merge keeps the k smallest (distance, global id) pairs, dropping
//    the query's own global id (a point is never its own neighbour).
//    Merging the shards' lists two at a time gives the same top-k as one
//    k-way merge of all of them: the order is total.
#ifndef vtkVicinityShards_h
#define vtkVicinityShards_h

#include "vtkVicinityFilterSupport.h"

#include <vtkType.h>

#include <functional>
#include <vector>

class vtkAlgorithm;
class vtkMPIController;

namespace vtkVicinity
{

// Rows of one rank with their global ids and 3-d positions.
struct ShardRows
{
  Rows Data;                     // N x D feature rows
  std::vector<vtkIdType> Gids;   // N global ids
  std::vector<float> Positions;  // N x 3 point coordinates (for graphs and outputs)
};

// Top-k lists whose neighbours are global ids, with each neighbour's 3-d
// position.  Missing entries: id -1, distance +inf.
struct GlobalLists
{
  vtkIdType N = 0;
  int K = 0;
  std::vector<vtkIdType> Ids;
  std::vector<float> Dist;
  std::vector<float> Pos;
  void Reset(vtkIdType n, int k);
};

// Merges a shard's answer (local row ids of `shard`) into `into`; row i's
// own global id selfGids[i] is dropped (selfGids may be null).
void MergeTopK(GlobalLists& into, const vic_knn& found, const ShardRows& shard,
  const vtkIdType* selfGids);

// Collective.  The shard this rank indexes: its own piece, or an equal
// block when the pieces are very uneven.  *rebalanced says which.
void MakeShard(vtkMPIController* c, ShardRows&& piece, ShardRows& shard, bool* rebalanced);

// Answers queries against this rank's shard: the core's search (k rows per
// query, local row ids), Done with *found set, or the call's outcome.
using ShardSearch = std::function<Outcome(const vic_data& queries, int k, vic_knn* found)>;

// Collective.  Lists of this rank's `queries` (rows with their global ids)
// over all shards: k neighbours each, self excluded.  Outcomes are agreed
// over the ranks after every search.
Outcome RingTopK(vtkMPIController* c, vtkAlgorithm* self, const char* label,
  const ShardRows& shard, const ShardRows& queries, int k, vic_metric metric,
  const ShardSearch& search, GlobalLists& out);

// Recall@k of `approx` against `exact` (rows `sample` of approx), with the
// core's rule (vic_knn_recall): a neighbour counts as found when the
// approximate list holds it or another point at no more than the exact
// k-th distance.  Adds to *hits and *total.
void CountRecall(const GlobalLists& approx, const std::vector<vtkIdType>& sample,
  const GlobalLists& exact, double* hits, double* total);

} // namespace vtkVicinity

#endif
