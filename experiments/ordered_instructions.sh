#!/bin/bash
# Instructions (and with BRANCHES=1 mispredicted branches) per committed transaction on one of
# CCBench's cells through an index, 1 worker, under cachegrind (docs/RESULTS.md, "Branch-free
# searches and a touched leaf"). Runs 1 s and 3 s and divides the difference of instructions by
# the difference of commits, so loading and start-up cancel; counts do not depend on the
# machine's load.
#
#   experiments/ordered_instructions.sh BINARY PROTOCOL HC|LC OUTDIR [INDEX]
set -e
BIN=${1:?binary}
P=${2:?protocol}
CELL=${3:?HC or LC}
OUT=${4:?output directory}
INDEX=${5:-ordered}
if [ "$CELL" = HC ]; then TH=0.99; RR=0.5; else TH=0.6; RR=0.95; fi
SIM=--cache-sim=no
[ -n "$BRANCHES" ] && SIM="--cache-sim=no --branch-sim=yes"
mkdir -p "$OUT"
for d in 1 3; do
  valgrind --tool=cachegrind $SIM --fair-sched=yes --cachegrind-out-file="$OUT/cg.$d" \
    "$BIN" run -w ycsb -p "$P" -t 1 --records 1000000 --payload 4 --ops 16 --blind --theta $TH \
    --read-ratio $RR --index "$INDEX" -d $d --warmup 0 --seed 1 --format json \
    > "$OUT/out.$d.json" 2> "$OUT/err.$d"
done
python3 - "$OUT" <<'PY'
import json, sys
out = sys.argv[1]
def events(d):
    for line in open(f"{out}/cg.{d}"):
        if line.startswith("events:"):
            names = line.split()[1:]
        if line.startswith("summary:"):
            return dict(zip(names, map(int, line.split()[1:])))
def commits(d):
    return json.loads(open(f"{out}/out.{d}.json").readline())["commits"]
e1, e3 = events(1), events(3)
c = commits(3) - commits(1)
for name in e3:
    print(f"{name}: {(e3[name] - e1[name]) / c:.0f} per commit ({c} commits)")
PY
