#!/usr/bin/env bash
# Vicinity against its CPU peers, side by side in one run (issue 2, "Must
# show"): exact 3-d kNN k=16 on 1M uniform3 points and on the halo
# (Vicinity grid vs cKDTree vs VTK), MNIST t10k k=10 (Vicinity brute force
# vs FAISS flat; Vicinity NN-Descent vs PyNNDescent vs hnswlib).
#
#   testing/bench/run_cpu_bench.sh BUILD_DIR
#
# Environment: VICINITY_SHARED (default ../shared beside the repository),
# THREADS (default 2), REPEATS (default 3), UNIFORM_N (default 1000000).
# Synthetic data and exact-list caches go to BUILD_DIR/bench-cache; the JSON
# lines to BUILD_DIR/bench-results/cpu-<date>.jsonl, then a table.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 BUILD_DIR" >&2; exit 2; }
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
shared=${VICINITY_SHARED:-$repo/../shared}
data=$shared/data
py=/usr/bin/python3
threads=${THREADS:-2}
repeats=${REPEATS:-3}
n_uniform=${UNIFORM_N:-1000000}
bench=$build/bin/vicinity_bench
[ -x "$bench" ] || { echo "$0: $bench not built (cmake --build $build --target vicinity_bench)" >&2; exit 1; }
for f in "$shared/tools/make_synthetic.py" "$data/nbody/halo_low_res.npy" "$data/mnist/t10k-images-idx3-ubyte.gz"; do
  [ -e "$f" ] || { echo "$0: $f missing (set VICINITY_SHARED)" >&2; exit 1; }
done
cache=$build/bench-cache
mkdir -p "$cache" "$build/bench-results"
results=$build/bench-results/cpu-$(date -u +%Y%m%dT%H%M%SZ).jsonl
: >"$results"
# Other processes on a 2-core machine distort every number: keep the load
# beside the results (lines starting with '#' are not JSON; the table skips them).
echo "# start $(date -u +%FT%TZ) loadavg $(cut -d' ' -f1-3 /proc/loadavg) OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset} OPENBLAS_L2_SIZE=${OPENBLAS_L2_SIZE:-unset}" | tee -a "$results" >&2

log() { echo "== $*" >&2; }
# Runs one tool; its JSON lines go to the results file and the screen.
record() { "$@" | tee -a "$results"; }

uniform=$cache/uniform3_${n_uniform}_seed0.fvecs
if [ ! -s "$uniform" ]; then
  log "generating uniform3 n=$n_uniform seed 0"
  $py "$shared/tools/make_synthetic.py" uniform3 "$n_uniform" "$uniform" --seed 0 --format fvecs >&2
fi

exact3d() { # name file
  local name=$1 file=$2 truth=$cache/$1_k16.ivecs
  log "$name: exact kNN k=16 (Vicinity grid, cKDTree, VTK)"
  # The first Vicinity run computes (or loads) the exact lists and warms up.
  record "$bench" --data "$file" --name "$name" --method grid --k 16 --threads "$threads" \
    --repeats "$repeats" --warmup 1 --truth "$truth"
  record $py "$here/peers.py" --data "$file" --name "$name" --k 16 --threads "$threads" \
    --repeats "$repeats" --truth "$truth" --peers ckdtree
  VTK_SMP_BACKEND_IN_USE=STDThread record pvpython "$here/vtk_peer.py" --data "$file" --name "$name" \
    --k 16 --threads "$threads" --repeats "$repeats"
}
exact3d "uniform3_${n_uniform}_seed0" "$uniform"
exact3d halo_low_res "$data/nbody/halo_low_res.npy"

mnist=$data/mnist/t10k-images-idx3-ubyte.gz
truth=$cache/mnist_t10k_k10.ivecs
log "MNIST t10k k=10: exact (Vicinity brute, FAISS flat)"
record "$bench" --data "$mnist" --name mnist_t10k --method brute --k 10 --threads "$threads" \
  --repeats "$repeats" --warmup 1 --truth "$truth"
record $py "$here/peers.py" --data "$mnist" --name mnist_t10k --k 10 --threads "$threads" \
  --repeats "$repeats" --truth "$truth" --peers faiss
log "MNIST t10k k=10: approximate (Vicinity NN-Descent, PyNNDescent, hnswlib)"
record "$bench" --data "$mnist" --name mnist_t10k --method nndescent --k 10 --threads "$threads" \
  --repeats "$repeats" --warmup 1 --truth "$truth"
record $py "$here/peers.py" --data "$mnist" --name mnist_t10k --k 10 --threads "$threads" \
  --repeats "$repeats" --truth "$truth" --peers pynndescent,hnswlib

echo "# end $(date -u +%FT%TZ) loadavg $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$results" >&2
log "results: $results"
$py "$here/bench_table.py" "$results"
