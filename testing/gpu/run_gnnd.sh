#!/bin/bash
# One device call for GNND: the GPU test, compute-sanitizer memcheck on a
# small case, then the benchmark on manifold 1M x 128 (seed 0) with exact
# 10-NN of a 10,000-row sample from torch.  Binaries come prebuilt in
# .gpu_carry/ (test_gnnd, gnnd_bench, gnnd_peers: testing/gpu/build_gnnd_carry.sh),
# with make_synthetic.py.
# Everything is logged under $OUT.
set -o pipefail
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:$LD_LIBRARY_PATH
C=.gpu_carry
D=/tmp/gnnd-data
mkdir -p $D
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee $OUT/card.txt
date -u | tee -a $OUT/card.txt
# data and ground truth in the background while the tests use the GPU
( python3 $C/make_synthetic.py manifold 1000000 $D/m.npy --seed 0 --format npy &&
  python3 testing/gpu/gnnd_truth.py $D/m.npy $D ) > $OUT/data.log 2>&1 &
DATA=$!
echo "== test_gnnd"
timeout 120 $C/test_gnnd 2>&1 | tee $OUT/test.log; echo "test rc=$?"
wait $DATA; echo "data rc=$?"; tail -3 $OUT/data.log
echo "== memcheck (quick, 3000 rows)"
timeout 180 compute-sanitizer --tool memcheck --leak-check no $C/gnnd_bench $D/data.f32 3000 128 quick 2>&1 | tail -15 | tee $OUT/memcheck.log
echo "== bench"
timeout ${BENCH_LIMIT:-300} $C/gnnd_bench $D/data.f32 1000000 128 $D/sample.i32 $D/truth.i32 10000 2>&1 | tee $OUT/bench.log
echo "bench rc=$?"
echo "== peers (public API, same data)"
[ -x $C/gnnd_peers ] && timeout ${PEERS_LIMIT:-150} $C/gnnd_peers $D/data.f32 1000000 128 $D/sample.i32 $D/truth.i32 10000 2>&1 | tee $OUT/peers.log
