#!/usr/bin/env bash
# MOCC table 4 on this machine: each transaction reads the one record of a hot table, scans 1000
# records of a 1M-record table, and updates the hot record.
#
# Usage: experiments/mocc_long_scan.sh [THREADS] [DURATION_S] [REPEAT]
set -euo pipefail
cd "$(dirname "$0")/.."
threads=${1:-2}
duration=${2:-2}
repeat=${3:-3}
out=${OUT:-results/mocc_long_scan.jsonl}
mkdir -p "$(dirname "$out")"
: > "$out"
cargo build --release --quiet
target/release/txbench run --workload long-scan --records 1048576 --scan-length 1000 \
  --protocol mocc,silo,tictoc,no_wait,wait_die,wound_wait,plor --threads "$threads" \
  --duration "$duration" --warmup 0.5 --repeat "$repeat" --format json \
  | sed 's/^{/{"experiment":"long-scan",/' >> "$out"
python3 experiments/summarize.py "$out" --pivot
