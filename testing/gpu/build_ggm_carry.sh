#!/bin/bash
# Link the programs of testing/gpu/run_ggm.sh on this (GPU-less) machine
# into build-carry/ (ignored), so the device call spends no time
# compiling.  Needs a CUDA build of the libraries:
#   cmake -S . -B BUILD -DVIC_PLUGIN=OFF -DVIC_CUDA=ON -DVIC_CUDA_ARCHITECTURES=90
#   cmake --build BUILD -j2 --target vicinity_core vicinity_kernels vic_test_util vic_io
#   testing/gpu/build_ggm_carry.sh BUILD
# As build_gnnd_carry.sh: netlib's small static BLAS keeps the folder
# under the transfer limit.
set -e
B=${1:?build dir}
CU=/usr/local/cuda
O=build-carry
mkdir -p $O
cp ../shared/tools/make_synthetic.py $O/ 2>/dev/null || cp /work/shared/tools/make_synthetic.py $O/
CUDA_LIBS="-L$CU/lib64 -Wl,-rpath,$CU/lib64 -lcudart_static -lstdc++ -lm -ldl -lpthread -lrt"
CORE="$B/lib/libvicinity.a $B/lib/libvicinity_kernels.a /usr/lib/x86_64-linux-gnu/blas/libblas.a -lcublas -lcublasLt -lz"
# the snapshot readers compiled here without HDF5 (the GPU machine has none)
mkdir -p $O/obj
for f in snap snap_gadget snap_lammps snap_hdf5; do
  gcc -O2 -std=gnu11 -D_FILE_OFFSET_BITS=64 -c -I snapshot/include -I snapshot/src snapshot/src/$f.c -o $O/obj/$f.o
done
UTIL="$B/lib/libvic_test_util.a $B/lib/libvic_io.a $O/obj/snap.o $O/obj/snap_gadget.o $O/obj/snap_lammps.o $O/obj/snap_hdf5.o"
gcc -O2 -std=c11 -fopenmp -I core/include -I testing/core -I testing/io testing/gpu/test_ggm.c $UTIL $CORE $CUDA_LIBS -o $O/test_ggm
gcc -O2 -std=c11 -fopenmp -I core/include -I testing/core -I testing/io testing/gpu/test_gnnd.c $UTIL $CORE $CUDA_LIBS -o $O/test_gnnd
gcc -O2 -std=c11 -fopenmp -I core/include -I testing/core -I testing/io -I testing/bench testing/bench/vicinity_bench.c \
  testing/bench/bench_env.c testing/bench/bench_query.c testing/bench/bench_truth.c $UTIL $CORE $CUDA_LIBS -o $O/vicinity_bench
strip $O/test_ggm $O/test_gnnd $O/vicinity_bench
du -sh $O
