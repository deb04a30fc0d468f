#!/bin/bash
# One GPU-machine session for GGNN: build the kernels, the test and the
# bench; test (plain and under compute-sanitizer memcheck on the small
# case); generate manifold / islands (make_synthetic.py carried in
# .gpu_carry/), exact truth with torch, then the benchmarks.
# Usage (repo root, on the GPU machine): testing/gpu/run_ggnn_gpu.sh [N]
set -u
N=${1:-1000000}
OUT=${OUT:-/tmp/out}
B=/tmp/b-ggnn
D=/tmp/ggnn-data
mkdir -p $D/m $D/i
gen() { python3 .gpu_carry/make_synthetic.py "$@"; }
( [ -f $D/i/truth.i32 ] && exit 0; gen manifold $N $D/m.fvecs --seed 0 && gen manifold 10000 $D/mq.fvecs --seed 1 &&
  python3 testing/gpu/ggnn_truth.py $D/m.fvecs $D/mq.fvecs $D/m &&
  gen islands $N $D/i.fvecs --seed 0 && gen islands 10000 $D/iq.fvecs --seed 1 &&
  python3 testing/gpu/ggnn_truth.py $D/i.fvecs $D/iq.fvecs $D/i ) > $OUT/data.log 2>&1 &
DATA=$!
G=""; command -v ninja >/dev/null && G="-G Ninja"
cmake -S . -B $B $G -DVIC_PLUGIN=OFF -DVIC_CUDA=ON -DVIC_CUDA_ARCHITECTURES=native -DVIC_SANITIZE_TESTS=OFF > $OUT/cmake.log 2>&1 || { tail -20 $OUT/cmake.log; exit 1; }
cmake --build $B --target vicinity_kernels -j 14 > $OUT/build.log 2>&1 || { grep -B2 -A8 error $OUT/build.log | head -60; exit 1; }
for p in test_ggnn ggnn_bench; do
  nvcc -O2 -Ikernels/include testing/gpu/$p.c $B/lib/libvicinity_kernels.a -lcublas -lcublasLt -o /tmp/$p || exit 1
done
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
echo "== test_ggnn"; /tmp/test_ggnn; echo "rc=$?"
echo "== memcheck (small)"; compute-sanitizer --tool memcheck --leak-check full /tmp/test_ggnn small > $OUT/memcheck.log 2>&1
grep -m2 -A8 "Invalid\|Misaligned\|Uninitialized" $OUT/memcheck.log; tail -4 $OUT/memcheck.log
wait $DATA; cat $OUT/data.log
echo "== manifold k=24"; /tmp/ggnn_bench $D/m $N 10000 128 24 10000 0 0.1 0.2 0.3 0.4 0.5 0.6 0.8 1.0
echo "== islands k=24"; /tmp/ggnn_bench $D/i $N 10000 128 24 10000 0.2 0.5 1.0
echo "== manifold k=40"; /tmp/ggnn_bench $D/m $N 10000 128 40 10000 0.1 0.2 0.3 0.5
