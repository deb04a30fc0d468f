#!/bin/sh
# Index builds and for-all GNND lists through the public API (issue 17,
# items 2 and 3), on the GPU machine, with binaries built beforehand:
#   testing/gpu/run_index_builds.sh OUT NEW_BIN [BASE_BIN]
# NEW_BIN (and BASE_BIN, the same binaries of the branch's base, run on the
# same card for the before/after) hold vicinity_bench and the GPU tests.
# Data: manifold and islands 1M x 128 seed 0, 10,000 queries seed 1
# (make_synthetic.py beside the binaries or in ../shared/tools), exact
# 10-NN of the queries by ivecs_truth.py.  Steps (STEPS, default all):
# tests (the GPU tests at once, beside the data), builds (vicinity_bench
# --query per method, warm-up build first; --method gnnd lists), islands,
# memcheck (compute-sanitizer on test_grnnd's small case).
OUT=$1; NEW=$2; BASE=$3
STEPS=${STEPS:-"tests builds islands memcheck"}
D=/tmp/i17data; mkdir -p $D $OUT
has() { case " $STEPS " in *" $1 "*) return 0;; esac; return 1; }
SYN=$NEW/make_synthetic.py; [ -f $SYN ] || SYN=../shared/tools/make_synthetic.py
T0=$(date +%s); el() { echo "$(( $(date +%s) - T0 )) s"; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
date -u +%FT%TZ
( for s in manifold islands; do
    [ -f $D/$s.ivecs ] || { python3 $SYN $s 1000000 $D/$s.fvecs --seed 0 &&
      python3 $SYN $s 10000 $D/${s}q.fvecs --seed 1 &&
      python3 testing/gpu/ivecs_truth.py $D/$s.fvecs $D/${s}q.fvecs $D/$s.ivecs 10; } || exit 1
    touch $D/$s.ready
  done ) > $OUT/data.log 2>&1 &
DATA=$!
if has tests; then # together, beside the data (each its own context)
  for t in grnnd gnnd ggnn gpu_policy; do
    ( timeout ${TEST_S:-70} $NEW/gpu_test_$t > $D/test_$t.log 2>&1; echo "test_$t rc=$? ($(el))" ) &
  done
  wait
  for t in grnnd gnnd ggnn gpu_policy; do tail -1 $D/test_$t.log; echo "== test_$t" >> $OUT/tests.log
    cat $D/test_$t.log >> $OUT/tests.log; done
fi
ready() { while [ ! -f $D/$1.ready ] && kill -0 $DATA 2>/dev/null; do sleep 1; done; echo "$1 data ($(el))"; }
ready manifold
bench() { # BIN SET METHOD EXTRA...
  b=$1; s=$2; m=$3; shift 3
  timeout 60 $b/vicinity_bench --data $D/$s.fvecs --name $s --method $m --k 10 "$@" 2>>$OUT/bench.err
}
lists() { bench $1 $2 gnnd --warmup 1 --repeats 2 --recall-sample 2000; }
query() { bench $1 $2 $3 --query $D/${2}q.fvecs --query-truth $D/$2.ivecs --warmup 1 --repeats 2; }
if has builds; then
  for b in $NEW $BASE; do
    echo "== $b ($(el))"
    # AUTO only on the branch: the base's AUTO is the CPU graph (minutes here)
    ms="grnnd tsdg ggnn"; [ $b = $NEW ] && ms="$ms auto"
    for m in $ms; do query $b manifold $m; done
    lists $b manifold
    # the same builds searched at other slack: recall at equal search effort (GRNND vs GGNN)
    if [ $b = $NEW ]; then
      for t in ${TAUS:-0.1 0.2 0.3}; do for m in grnnd ggnn; do
        bench $b manifold $m --query $D/manifoldq.fvecs --query-truth $D/manifold.ivecs --warmup 1 --repeats 1 --tau $t
      done; done
    fi
  done > $OUT/builds.jsonl
  echo "builds done ($(el))"
fi
if has islands; then
  ready islands; tail -4 $OUT/data.log
  for b in $NEW; do
    for m in grnnd tsdg ggnn; do query $b islands $m; done
    lists $b islands
  done > $OUT/islands.jsonl
  echo "islands done ($(el))"
fi
if has memcheck; then
  timeout ${MEMCHECK_S:-60} compute-sanitizer --tool memcheck --error-exitcode 9 $NEW/gpu_test_grnnd small \
    > $OUT/memcheck.log 2>&1
  echo "memcheck test_grnnd small rc=$? ($(el))"; grep -E "ERROR SUMMARY|checks" $OUT/memcheck.log | tail -2
fi
