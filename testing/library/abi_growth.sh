#!/bin/sh
# The ABI-growth test: a program compiled against the installed header
# (abi_program.c) runs against the installed library, against a later
# build with one more options and report field, and (compiled as the newer
# program) against the installed library as the older one.
# usage: abi_growth.sh PREFIX LATER_LIB_DIR WORK_DIR CC
set -eu
prefix=$1 later=$2 work=$3 cc=$4
src=$(dirname "$0")/abi_program.c
lib=$prefix/lib
mkdir -p "$work"
"$cc" -std=c11 -Wall -I"$prefix/include" "$src" -L"$lib" -lvicinity -lm -o "$work/abi_a"
"$cc" -std=c11 -Wall -DVIC_ABI_TEST_EXTRA_FIELD -I"$prefix/include" "$src" -L"$lib" -lvicinity -lm -o "$work/abi_b"
test -e "$later/libvicinity.so.0" || { echo "no later library in $later"; exit 1; }
echo "== program A, installed library"
LD_LIBRARY_PATH=$lib "$work/abi_a" same
echo "== program A, later library (one more field)"
LD_LIBRARY_PATH=$later "$work/abi_a" later
echo "== newer program B, installed (older) library"
LD_LIBRARY_PATH=$lib "$work/abi_b" older
