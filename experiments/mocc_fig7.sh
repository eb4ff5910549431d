#!/usr/bin/env bash
# MOCC figure 7 on this machine: 50 records, 10 operations per transaction, 0 to 10 of them
# read-modify-writes; throughput and abort ratio for MOCC, Silo and the 2PL variants.
#
# Usage: experiments/mocc_fig7.sh [THREADS] [DURATION_S] [REPEAT]
set -euo pipefail
cd "$(dirname "$0")/.."
threads=${1:-2}
duration=${2:-1}
repeat=${3:-3}
out=${OUT:-results/mocc_fig7.jsonl}
mkdir -p "$(dirname "$out")"
: > "$out"
cargo build --release --quiet
for writes in 0 1 2 3 4 5 6 7 8 9 10; do
  target/release/txbench run --records 50 --ops 10 --writes "$writes" --rmw --theta 0 \
    --protocol mocc,silo,no_wait,wait_die,wound_wait --threads "$threads" \
    --duration "$duration" --warmup 0.3 --repeat "$repeat" --format json \
    | sed "s/^{/{\"experiment\":\"rmw=$writes\",/" >> "$out"
  # MOCC with a lower temperature threshold: on 2 cores records rarely reach H=10 in one epoch.
  target/release/txbench run --records 50 --ops 10 --writes "$writes" --rmw --theta 0 \
    --protocol mocc --mocc-threshold 3 --threads "$threads" \
    --duration "$duration" --warmup 0.3 --repeat "$repeat" --format json \
    | sed -e "s/^{/{\"experiment\":\"rmw=$writes\",/" -e 's/"protocol":"mocc"/"protocol":"mocc(H=3)"/' >> "$out"
done
python3 experiments/summarize.py "$out" --pivot
