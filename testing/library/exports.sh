#!/bin/sh
# The installed shared library exports exactly the functions that the
# installed vicinity.h declares (static inline wrappers aside), nothing else.
# usage: exports.sh PREFIX
set -eu
so=$1/lib/libvicinity.so.0
header=$1/include/vicinity.h
exported=$(nm -D --defined-only "$so" | awk '$2 != "A" {sub(/@.*/, "", $3); print $3}' | sort)
declared=$(grep -v '^static inline' "$header" | grep -o '\bvic_[a-z0-9_]*(' | tr -d '(' | sort -u)
echo "$(echo "$exported" | wc -l) symbols exported, $(echo "$declared" | wc -l) functions declared"
extra=$(echo "$exported" | grep -vxF "$declared" || true)
missing=$(echo "$declared" | grep -vxF "$exported" || true)
[ -z "$extra" ] || { echo "FAIL: exported but not declared in vicinity.h:"; echo "$extra"; exit 1; }
[ -z "$missing" ] || { echo "FAIL: declared but not exported:"; echo "$missing"; exit 1; }
echo PASS
