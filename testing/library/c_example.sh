#!/bin/sh
# The C example (docs/examples) built against an installed Vicinity the way
# an outside project does: with find_package(Vicinity) (shared and static
# targets), or with pkg-config (shared, and static through Libs.private).
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
    libdir=$(pkg-config --variable=libdir vicinity)
    LD_LIBRARY_PATH=$libdir "$work/knn_example"
    # static: the archive in place of -lvicinity, with Libs.private
    static=$(pkg-config --static --libs vicinity | sed "s|-lvicinity|$libdir/libvicinity.a|")
    echo "static libs: $static"
    "$cc" -std=c11 "$src/knn_example.c" $(pkg-config --cflags vicinity) $static -o "$work/knn_example_static"
    "$work/knn_example_static"
    ;;
  *) echo "unknown way $how"; exit 2 ;;
esac
