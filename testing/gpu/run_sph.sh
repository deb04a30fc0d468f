#!/bin/bash
# The SPH maps' device run (issue 19): build, the GPU-vs-CPU test, the
# test under compute-sanitizer memcheck (small), and sph_bench on
# make_synthetic.py plummer3 with 10M (GPU, then the CPU on the same
# inputs) and 100M particles (smoothing lengths by vic_knn_density, or
# from a subsample where that does not run), 2048^2 projections.
# usage: run_sph.sh OUT_DIR MAKE_SYNTHETIC_PY
set -u -o pipefail
OUT=$1
GEN=$2
log() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$OUT/run.log"; }
log "build"
cmake -S . -B build -DVIC_PLUGIN=OFF -DVIC_SANITIZE_TESTS=OFF -DVIC_CUDA_ARCHITECTURES=90 \
  -DCMAKE_BUILD_TYPE=Release > "$OUT/build.log" 2>&1
if ! cmake --build build -j16 --target gpu_test_gpu_sph sph_bench >> "$OUT/build.log" 2>&1; then
  tail -40 "$OUT/build.log"; exit 1
fi
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee -a "$OUT/run.log"
log "test_gpu_sph"
./build/bin/gpu_test_gpu_sph > "$OUT/test_gpu_sph.log" 2>&1; log "test_gpu_sph rc $?"
log "memcheck (VIC_TEST_SMALL)"
VIC_TEST_SMALL=1 timeout 150 compute-sanitizer --tool memcheck --leak-check full ./build/bin/gpu_test_gpu_sph \
  > "$OUT/memcheck.log" 2>&1; log "memcheck rc $?"
tail -3 "$OUT/memcheck.log" | tee -a "$OUT/run.log"
log "data"
python3 "$GEN" plummer3 10000000 /tmp/p10.npy --d 3 --format npy --seed 0 > /dev/null
log "bench 10M"
./build/bin/sph_bench --data /tmp/p10.npy --res 2048 --repeats 3 --check --threads 16 | tee -a "$OUT/bench.jsonl"
python3 "$GEN" plummer3 100000000 /tmp/p100.npy --d 3 --format npy --seed 0 > /dev/null
log "bench 100M (h by vic_knn_density)"
if ! timeout 120 ./build/bin/sph_bench --data /tmp/p100.npy --res 2048 --repeats 2 | tee -a "$OUT/bench.jsonl"; then
  log "100M with vic_knn_density did not run; subsample smoothing lengths"
  timeout 100 ./build/bin/sph_bench --data /tmp/p100.npy --res 2048 --repeats 2 --h subsample | tee -a "$OUT/bench.jsonl"
fi
log "done"
