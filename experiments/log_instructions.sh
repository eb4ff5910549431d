#!/bin/bash
# Instructions per committed TPC-C transaction (Silo, 1 worker), unlogged against logged without
# sync (docs/RESULTS.md, "The group-commit bar on the AMD machine (stop 33)"). Each mode runs 1 s
# and 3 s under cachegrind; the per-commit count is the difference of instructions over the
# difference of commits (loading and start-up cancel), and `cg_diff` of the two outputs gives it
# per function:
#
#   experiments/log_instructions.sh BINARY OUTDIR
#   cg_diff OUTDIR/cg.none.1 OUTDIR/cg.none.3 > none.diff   # then cg_annotate none.diff
set -e
B=${1:?binary}
OUT=${2:?output directory}
mkdir -p "$OUT"
for mode in off none; do
  for d in 1 3; do
    rm -rf "$OUT/log"; mkdir "$OUT/log"
    if [ $mode = off ]; then a=""; else a="--log $OUT/log --log-sync none"; fi
    valgrind --tool=cachegrind --cache-sim=no --fair-sched=yes --cachegrind-out-file=$OUT/cg.$mode.$d "$B" run -w tpcc -p silo -t 1 -d $d --warmup 0 --seed 1 --format json $a > $OUT/out.$mode.$d.json 2> $OUT/err.$mode.$d
  done
done
for mode in off none; do
  python3 - "$OUT" "$mode" <<'PY'
import json, sys
out, mode = sys.argv[1], sys.argv[2]
def instructions(path):
    for line in open(path):
        if line.startswith("summary:"):
            return int(line.split()[1])
def commits(path):
    return json.loads(open(path).readline())["commits"]
i = instructions(f"{out}/cg.{mode}.3") - instructions(f"{out}/cg.{mode}.1")
c = commits(f"{out}/out.{mode}.3.json") - commits(f"{out}/out.{mode}.1.json")
print(f"{mode}: {i / c:.0f} instructions per commit ({c} commits)")
PY
done
