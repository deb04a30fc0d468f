#!/bin/sh
# The C example (docs/examples) built against an installed Vicinity the way
# an outside project does: with find_package(Vicinity) (shared and static
# targets), or with pkg-config.
# usage: c_example.sh cmake|pkg-config PREFIX EXAMPLE_DIR WORK_DIR CC
set -eu
how=$1 prefix=$2 src=$3 work=$4 cc=$5
rm -rf "$work"
mkdir -p "$work"
case $how in
  cmake)
    cmake -S "$src" -B "$work" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=Release
    cmake --build "$work"
    "$work/knn_example"
    "$work/knn_example_static"
    ;;
  pkg-config)
    export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
    echo "cflags: $(pkg-config --cflags vicinity)  libs: $(pkg-config --libs vicinity)"
    "$cc" -std=c11 "$src/knn_example.c" $(pkg-config --cflags --libs vicinity) -o "$work/knn_example"
    LD_LIBRARY_PATH=$(pkg-config --variable=libdir vicinity) "$work/knn_example"
    ;;
  *) echo "unknown way $how"; exit 2 ;;
esac
