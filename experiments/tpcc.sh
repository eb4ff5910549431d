#!/usr/bin/env bash
# TPC-C on this machine, every protocol: the full mix and NP (New-Order + Payment), 1 and 4
# warehouses, 1 and 2 worker threads (workers bound to home warehouse i % W + 1). Throughput,
# abort ratio and p99.9 per cell; medians of REPEAT interleaved runs.
#
# Usage: experiments/tpcc.sh [DURATION_S] [REPEAT]
# (environment overrides: THREADS="1 2", WAREHOUSES="1 4", MIXES="full np", OUT=path)
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-2}
repeat=${2:-3}
threads=${THREADS:-"1 2"}
warehouses=${WAREHOUSES:-"1 4"}
mixes=${MIXES:-"full np"}
out=${OUT:-results/tpcc.jsonl}
mkdir -p "$(dirname "$out")"
: > "$out"
cargo build --release --quiet
for mix in $mixes; do
  for w in $warehouses; do
    for t in $threads; do
      target/release/txbench run --workload tpcc --mix "$mix" --warehouses "$w" \
        --protocol all --threads "$t" --duration "$duration" --warmup 0.5 \
        --repeat "$repeat" --format json \
        | sed "s/^{/{\"experiment\":\"$mix W=$w\",/" >> "$out"
    done
  done
done
python3 experiments/summarize.py "$out" --pivot
