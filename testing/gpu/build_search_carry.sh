#!/bin/bash
# Link the issue-17 search-path programs (vicinity_bench, probe_latency,
# test_search_path, test_grnnd, test_ggnn) on this GPU-less machine into
# OUT (default .gpu_carry/search), so that a device call spends no time
# compiling.  Needs a CUDA build of the libraries and the programs' objects:
#   cmake -S . -B BUILD -DVIC_PLUGIN=OFF
#   make -C BUILD -j2 vicinity_bench probe_latency gpu_test_search_path gpu_test_grnnd gpu_test_ggnn
#   testing/gpu/build_search_carry.sh BUILD [OUT]
# Netlib's static BLAS and no HDF5 (the programs read .fvecs/.npy only) keep
# the binaries free of libraries the device machine lacks.
set -e
B=${1:?build dir}
O=${2:-.gpu_carry/search}
CU=/usr/local/cuda
mkdir -p "$O"
# the snapshot readers without HDF5 (vic_io's Gadget loader calls them)
T=$(mktemp -d)
for f in snap snap_gadget snap_lammps snap_hdf5; do
  gcc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -D_FILE_OFFSET_BITS=64 -c -I snapshot/include -I snapshot/src snapshot/src/$f.c -o "$T/$f.o"
done
ar rcs "$T/libsnap.a" "$T"/*.o
CUDA_LIBS="-L$CU/lib64 -Wl,-rpath,$CU/lib64 -lcudart_static -lcublas -lcublasLt -lstdc++ -lm -ldl -lpthread -lrt"
LIBS="$B/lib/libvicinity.a $B/lib/libvic_io.a $T/libsnap.a $B/lib/libvicinity_kernels.a /usr/lib/x86_64-linux-gnu/blas/libblas.a -lz -lgomp"
obj() { ls "$B"/testing/$1/CMakeFiles/$2.dir/*.o; }
g++ -fopenmp $(obj bench vicinity_bench) $LIBS $CUDA_LIBS -o "$O/vicinity_bench"
g++ -fopenmp $(obj bench probe_latency) $LIBS $CUDA_LIBS -o "$O/probe_latency"
for t in test_search_path test_grnnd test_ggnn; do
  g++ -fopenmp $(obj gpu gpu_$t) $B/lib/libvic_test_util.a $LIBS $CUDA_LIBS -o "$O/$t"
done
strip "$O"/*
rm -rf "$T"
du -sh "$O"
