#!/bin/bash
# Link the issue-7 device-run programs (test_grnnd, grnnd_bench) on this
# GPU-less machine into .gpu_carry/grnnd/ for testing/gpu/run_grnnd_tsdg.sh,
# so the device call spends no time compiling.  Needs a CUDA build:
#   cmake -S . -B BUILD -DVIC_PLUGIN=OFF -DVIC_CUDA=ON
#   make -C BUILD -j2 vicinity_core vicinity_kernels vic_test_util vic_io
#   testing/gpu/build_grnnd_carry.sh BUILD
# Netlib's small static BLAS keeps the folder small (only the CPU exact
# search of test_grnnd uses BLAS).
set -e
B=${1:?build dir}
CU=/usr/local/cuda
mkdir -p .gpu_carry/grnnd
[ -f .gpu_carry/make_synthetic.py ] || cp ../shared/tools/make_synthetic.py .gpu_carry/ 2>/dev/null || true
CUDA_LIBS="-L$CU/lib64 -Wl,-rpath,$CU/lib64 -lcudart_static -lstdc++ -lm -ldl -lpthread -lrt"
CORE="$B/lib/libvicinity_core.a $B/lib/libvicinity_kernels.a /usr/lib/x86_64-linux-gnu/blas/libblas.a -lcublas -lcublasLt -lz"
gcc -O2 -std=c11 -fopenmp -I core/include -I testing/core -I kernels/include testing/gpu/test_grnnd.c \
  $B/lib/libvic_test_util.a $B/lib/libvic_io.a $CORE $CUDA_LIBS -o .gpu_carry/grnnd/test_grnnd
gcc -O2 -std=c11 -fopenmp -I core/include -I kernels/include testing/gpu/grnnd_bench.c $CORE $CUDA_LIBS \
  -o .gpu_carry/grnnd/grnnd_bench
strip .gpu_carry/grnnd/test_grnnd .gpu_carry/grnnd/grnnd_bench
du -sh .gpu_carry/grnnd
