#!/usr/bin/env bash
# Vicinity's Python module beside scipy's cKDTree, scikit-learn's
# NearestNeighbors and PyNNDescent, on the same data in one run (issue 21),
# CPU backend, every peer in its own process (peers.py):
#   plummer3 200,000 x 3 (halo-like, exact k=16), the halo when present,
#   manifold 30,000 x 64 (k=10: Vicinity NN-Descent and brute force; no
#   cKDTree, a k-d tree in 64-d degenerates to a slow brute force).
#
#   testing/bench/run_python_bench.sh BUILD_DIR
#
# Environment: VICINITY_SHARED (default ../shared beside the repository),
# THREADS (default 2), REPEATS (default 2).  JSON lines go to
# BUILD_DIR/bench-results/python-<date>.jsonl, then a table.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
shared=${VICINITY_SHARED:-$repo/../shared}
py=/usr/bin/python3
threads=${THREADS:-2}
repeats=${REPEATS:-2}
[ -e "$build/python/vicinity/_libpath.py" ] || { echo "$0: build the library first (cmake --build $build --target vicinity_shared)" >&2; exit 1; }
export PYTHONPATH=$build/python${PYTHONPATH:+:$PYTHONPATH}
cache=$build/bench-cache
mkdir -p "$cache" "$build/bench-results"
results=$build/bench-results/python-$(date -u +%Y%m%dT%H%M%SZ).jsonl
echo "# start $(date -u +%FT%TZ) loadavg $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$results" >&2

synthetic() { # set n d -> path
  local f=$cache/$1_$2_d$3_seed0.npy
  [ -s "$f" ] || $py "$shared/tools/make_synthetic.py" "$1" "$2" "$f" --d "$3" --seed 0 --format npy >&2
  echo "$f"
}
peers() { # name file k peers
  echo "== $1: k=$3, $4" >&2
  $py "$here/peers.py" --data "$2" --name "$1" --k "$3" --threads "$threads" --repeats "$repeats" \
    --truth "$cache/$1_k$3.ivecs" --peers "$4" | tee -a "$results"
}

peers plummer3_200k "$(synthetic plummer3 200000 3)" 16 vicinity,ckdtree,sklearn,pynndescent
halo=$shared/data/nbody/halo_low_res.npy
[ -e "$halo" ] && peers halo "$halo" 16 vicinity,ckdtree,sklearn,pynndescent
peers manifold_30k_d64 "$(synthetic manifold 30000 64)" 10 vicinity,vicinity_brute,sklearn,pynndescent
echo "# end $(date -u +%FT%TZ) loadavg $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$results" >&2
$py "$here/bench_table.py" "$results" || true
echo "results: $results" >&2
