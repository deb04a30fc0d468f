#include "vtkVicinityKdCuts.h"

#include <vtkCommunicator.h>
#include <vtkMultiProcessController.h>
#include <vtkPointSet.h>

#include <algorithm>
#include <limits>
#include <vector>

namespace vtkVicinity
{
namespace
{
constexpr int Bins = 1024;       // histogram precision of a cut
constexpr int ExchangeTag = 8317; // the point exchange of a round

// The bin of coordinate v in [lo, lo + length] (may be Bins or more at the
// top end, as the side test below expects; clamped for the histogram).
int BinOf(double v, double offset, double length)
{
  return static_cast<int>((v + offset) / length * Bins);
}

// The groups of the rounds: the whole controller, then the half holding
// this rank, and so on while a group has more than two ranks.
std::vector<vtkMultiProcessController*> Rounds(vtkMultiProcessController* c)
{
  std::vector<vtkMultiProcessController*> rounds{ c };
  while (rounds.back()->GetNumberOfProcesses() > 2)
  {
    vtkMultiProcessController* g = rounds.back();
    const int rank = g->GetLocalProcessId();
    const int split = g->GetNumberOfProcesses() / 2;
    const int color = rank < split ? 0 : 1;
    vtkMultiProcessController* sub = g->PartitionController(color, rank - (color ? split : 0));
    if (!sub)
    {
      break;
    }
    rounds.push_back(sub);
  }
  return rounds;
}

void Bounds(const std::vector<double>& pts, double lo[3], double hi[3])
{
  for (int j = 0; j < 3; ++j)
  {
    lo[j] = std::numeric_limits<double>::max();
    hi[j] = -std::numeric_limits<double>::max();
  }
  for (size_t i = 0; i < pts.size(); i += 3)
  {
    for (int j = 0; j < 3; ++j)
    {
      lo[j] = std::min(lo[j], pts[i + j]);
      hi[j] = std::max(hi[j], pts[i + j]);
    }
  }
}

// One round within group g: the cut, then the exchange; pts becomes the
// points this rank keeps.
void CutRound(vtkMultiProcessController* g, std::vector<double>& pts, double lo[3], double hi[3])
{
  const int ranks = g->GetNumberOfProcesses(), rank = g->GetLocalProcessId();
  double groupLo[3], groupHi[3];
  g->AllReduce(lo, groupLo, 3, vtkCommunicator::MIN_OP);
  g->AllReduce(hi, groupHi, 3, vtkCommunicator::MAX_OP);
  int axis = 0;
  double length = groupHi[0] - groupLo[0];
  for (int j = 1; j < 3; ++j)
  {
    if (length < groupHi[j] - groupLo[j])
    {
      axis = j;
      length = groupHi[j] - groupLo[j];
    }
  }
  const double offset = -groupLo[axis];
  const vtkIdType n = static_cast<vtkIdType>(pts.size() / 3);

  // The cut: the first bin where the lower ranks' share of the group's
  // points is reached, found by the group's first rank.
  std::vector<int> histogram(Bins, 0), sum(Bins, 0);
  for (vtkIdType i = 0; i < n; ++i)
  {
    ++histogram[std::max(std::min(BinOf(pts[3 * i + axis], offset, length), Bins - 1), 0)];
  }
  g->Reduce(histogram.data(), sum.data(), Bins, vtkCommunicator::SUM_OP, 0);
  vtkIdType total = n;
  g->Reduce(&n, &total, 1, vtkCommunicator::SUM_OP, 0);
  int cut = 0;
  if (rank == 0)
  {
    const double ratio = static_cast<double>(ranks) / static_cast<double>(ranks / 2);
    int b = 1;
    for (; b < Bins; ++b)
    {
      sum[b] += sum[b - 1];
      if (sum[b] >= total / ratio)
      {
        break;
      }
    }
    cut = b;
  }
  g->Broadcast(&cut, 1, 0);

  // Keep this rank's side, hand the other side to the partner there.
  const bool lower = rank < ranks / 2;
  std::vector<double> keep, give;
  keep.reserve(pts.size());
  for (vtkIdType i = 0; i < n; ++i)
  {
    const bool below = BinOf(pts[3 * i + axis], offset, length) <= cut;
    std::vector<double>& to = below == lower ? keep : give;
    to.insert(to.end(), &pts[3 * i], &pts[3 * i] + 3);
  }
  const vtkIdType giving = static_cast<vtkIdType>(give.size() / 3);
  std::vector<vtkIdType> counts(ranks, 0);
  g->AllGather(&giving, counts.data(), 1);
  // Partners: rank r of the lower half and r + ranks/2; with an odd count
  // the last rank only gives, to rank 0, which takes from it after its
  // partner.  The lower rank sends first and its partner receives first,
  // so blocking sends cannot wait on each other.
  const bool odd = ranks % 2 != 0;
  const int partner = odd && rank == ranks - 1 ? 0 : lower ? rank + ranks / 2 : rank - ranks / 2;
  const vtkIdType taking = odd && rank == ranks - 1 ? 0 : counts[partner];
  auto receive = [&](int from, vtkIdType count) {
    if (count > 0)
    {
      const size_t at = keep.size();
      keep.resize(at + 3 * static_cast<size_t>(count));
      g->Receive(&keep[at], 3 * count, from, ExchangeTag);
    }
  };
  auto send = [&](int to) {
    if (giving > 0)
    {
      g->Send(give.data(), 3 * giving, to, ExchangeTag);
    }
  };
  if (lower)
  {
    send(partner);
    receive(partner, taking);
  }
  else
  {
    receive(partner, taking);
    send(partner);
  }
  if (odd && rank == 0)
  {
    receive(ranks - 1, counts[ranks - 1]);
  }
  pts.swap(keep);
  Bounds(pts, lo, hi);
}
} // namespace

void KdRegion(vtkMultiProcessController* controller, vtkPointSet* points, double region[6])
{
  const vtkIdType n = points->GetNumberOfPoints();
  std::vector<double> pts(3 * static_cast<size_t>(n));
  for (vtkIdType i = 0; i < n; ++i)
  {
    points->GetPoint(i, &pts[3 * i]);
  }
  double lo[3], hi[3];
  Bounds(pts, lo, hi);
  std::vector<vtkMultiProcessController*> rounds = Rounds(controller);
  for (vtkMultiProcessController* g : rounds)
  {
    if (g->GetNumberOfProcesses() > 1)
    {
      CutRound(g, pts, lo, hi);
    }
  }
  for (size_t r = 1; r < rounds.size(); ++r)
  {
    rounds[r]->Delete(); // the sub-controllers made here
  }
  for (int j = 0; j < 3; ++j)
  {
    region[2 * j] = lo[j];
    region[2 * j + 1] = hi[j];
  }
}
} // namespace vtkVicinity
