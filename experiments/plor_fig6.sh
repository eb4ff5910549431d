#!/usr/bin/env bash
# PLOR figure 6 on this machine: YCSB-A with PLOR's bimodal sizes (theta 0.99, 50% writes, 90% of
# transactions with 4 operations and 10% with 16), p99.9 latency and throughput as the thread
# count grows, for PLOR, PLOR+DWA, NO_WAIT, WAIT_DIE, WOUND_WAIT, Silo, TicToc and MOCC.
#
# Usage: experiments/plor_fig6.sh [RECORDS] [DURATION_S] [REPEAT] [THREADS...]
set -euo pipefail
cd "$(dirname "$0")/.."
records=${1:-1024}
duration=${2:-2}
repeat=${3:-3}
shift $(( $# < 3 ? $# : 3 ))
threads=("${@:-1 2 4 8}")
out=${OUT:-results/plor_fig6.jsonl}
mkdir -p "$(dirname "$out")"
: > "$out"
cargo build --release --quiet
bin=target/release/txbench
common=(--preset ycsb-a-bimodal --records "$records" --duration "$duration" --warmup 0.5
        --repeat "$repeat" --format json)
for t in ${threads[@]}; do
  "$bin" run "${common[@]}" --threads "$t" \
    --protocol nocc,plor,no_wait,wait_die,wound_wait,silo,tictoc,mocc \
    | sed 's/^{/{"experiment":"fig6",/' >> "$out"
  "$bin" run "${common[@]}" --threads "$t" --protocol plor --plor-dwa \
    | sed -e 's/^{/{"experiment":"fig6",/' -e 's/"protocol":"plor"/"protocol":"plor+dwa"/' >> "$out"
done
python3 experiments/summarize.py "$out" --pivot
