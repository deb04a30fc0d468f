#!/bin/bash
# Link the GNND device-run programs on this (GPU-less) machine into
# .gpu_carry/ for testing/gpu/run_gnnd.sh, so the device call spends no
# time compiling.  Needs a CUDA build of the libraries:
#   cmake -S . -B BUILD -DVIC_PLUGIN=OFF -DVIC_CUDA=ON && make -C BUILD -j2 vicinity_core vic_test_util
#   testing/gpu/build_gnnd_carry.sh BUILD
# The core links netlib's small static BLAS (not OpenBLAS's 58 MB archive)
# so the carried folder stays under the 64 MiB transfer limit; only the
# CPU reference of test_gnnd uses it.
set -e
B=${1:?build dir}
CU=/usr/local/cuda
mkdir -p .gpu_carry
cp ../shared/tools/make_synthetic.py .gpu_carry/ 2>/dev/null || true
CUDA_LIBS="-L$CU/lib64 -Wl,-rpath,$CU/lib64 -lcudart_static -lstdc++ -lm -ldl -lpthread -lrt"
CORE="$B/lib/libvicinity_core.a $B/lib/libvicinity_kernels.a /usr/lib/x86_64-linux-gnu/blas/libblas.a -lcublas -lcublasLt -lz"
gcc -O2 -std=c11 -fopenmp -I core/include -I testing/core testing/gpu/test_gnnd.c $B/lib/libvic_test_util.a \
  $B/lib/libvic_io.a $CORE $CUDA_LIBS -o .gpu_carry/test_gnnd
gcc -O2 -std=c11 -fopenmp -I core/include testing/gpu/gnnd_peers.c $CORE $CUDA_LIBS -o .gpu_carry/gnnd_peers
gcc -O2 -std=c11 -I kernels/include testing/gpu/gnnd_bench.c $B/lib/libvicinity_kernels.a $CUDA_LIBS \
  -o .gpu_carry/gnnd_bench
strip .gpu_carry/test_gnnd .gpu_carry/gnnd_peers .gpu_carry/gnnd_bench
du -sh .gpu_carry
