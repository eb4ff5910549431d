#!/usr/bin/env bash
# Issue 2's performance record: every protocol, 1 and 2 threads, YCSB-A/B/C (1,048,576 records,
# 100-byte payload, 16 operations), plus the DBx1000 anchor workloads (writes as
# read-modify-writes). Writes JSON lines to $OUT (default results/engine_core.jsonl) and prints
# the summary tables (experiments/summarize.py).
#
# Usage: experiments/engine_core.sh [DURATION_S] [REPEAT]
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-2}
repeat=${2:-3}
out=${OUT:-results/engine_core.jsonl}
mkdir -p "$(dirname "$out")"
: > "$out"
cargo build --release --quiet
bin=target/release/txbench
common=(--protocol all --records 1048576 --payload 100 --ops 16 --duration "$duration"
        --warmup 0.5 --repeat "$repeat" --format json)
for threads in 1 2; do
  for preset in ycsb-a ycsb-b ycsb-c; do
    "$bin" run "${common[@]}" --threads "$threads" --preset "$preset" \
      | sed "s/^{/{\"experiment\":\"$preset\",/" >> "$out"
  done
  "$bin" run "${common[@]}" --threads "$threads" --rmw --theta 0.99 --read-ratio 0.5 \
    | sed 's/^{/{"experiment":"dbx-theta0.99-rw50",/' >> "$out"
  "$bin" run "${common[@]}" --threads "$threads" --rmw --theta 0.6 --read-ratio 0.95 \
    | sed 's/^{/{"experiment":"dbx-theta0.6-rw95",/' >> "$out"
done
python3 experiments/summarize.py "$out"
