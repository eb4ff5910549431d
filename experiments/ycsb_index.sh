#!/usr/bin/env bash
# Issue 13's index record: YCSB through each key access method (--index array|hash|ordered), the
# same transactions on the same records, so hash/array and ordered/array are the index's price.
#   1. The DBx1000 anchor workloads (1,048,576 records, 100-byte payload, 16 operations,
#      read-modify-writes; theta 0.99 50% reads and theta 0.6 95% reads) at 1 and 2 threads:
#      `--index hash` is DBx1000's own access path, so that row is the like-for-like comparison.
#   2. CCBench's cardinality sweep for its insight I1 (read-only, skew 0, 4-byte payload,
#      16 operations, 2 threads), records 10^3 to 10^MAX_EXP, through each index.
# The indexes are interleaved within every repeat. JSON lines go to $OUT (default
# results/ycsb_index.jsonl); the tables are printed as Markdown.
#
# Usage: experiments/ycsb_index.sh [DURATION_S] [REPEAT] [MAX_EXP]
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-1}
repeat=${2:-3}
max_exp=${3:-7}
out=${OUT:-results/ycsb_index.jsonl}
mkdir -p "$(dirname "$out")"
: > "$out"
cargo build --release --quiet
bin=target/release/txbench
run() { # experiment-name args...
  local name=$1; shift
  "$bin" run --format json --warmup 0.3 --duration "$duration" "$@" \
    | sed "s/^{/{\"experiment\":\"$name\",/" >> "$out"
}
for r in $(seq "$repeat"); do
  for threads in 1 2; do
    for index in array hash ordered; do
      dbx=(-p nocc,no_wait,wait_die,silo,tictoc --records 1048576 --payload 100 --ops 16 --rmw
           --threads "$threads" --index "$index")
      run "dbx-theta0.99-rw50" "${dbx[@]}" --theta 0.99 --read-ratio 0.5
      run "dbx-theta0.6-rw95" "${dbx[@]}" --theta 0.6 --read-ratio 0.95
    done
  done
  for exp in $(seq 3 "$max_exp"); do
    for index in array hash ordered; do
      run "i1-records-1e$exp" -p nocc,silo,tictoc,no_wait --records "$((10**exp))" --payload 4 \
        --ops 16 --read-ratio 1 --theta 0 --threads 2 --index "$index"
    done
  done
done
python3 - "$out" <<'PY'
import json, statistics, sys
from collections import defaultdict
# DBx1000 (hash index) on the 2-core development machine (issue 2), txn/s at 1 / 2 threads.
DBX = {"dbx-theta0.99-rw50": {"no_wait": (122e3, 162e3), "wait_die": (140e3, 219e3),
                              "silo": (122e3, 227e3), "tictoc": (117e3, 255e3)},
       "dbx-theta0.6-rw95": {"no_wait": (56e3, 121e3), "wait_die": (54e3, 115e3),
                             "silo": (66e3, 147e3), "tictoc": (67e3, 129e3)}}
runs = defaultdict(list)
order = []
for line in open(sys.argv[1]):
    r = json.loads(line)
    key = (r["experiment"], r["threads"], r["protocol"])
    if key not in order:
        order.append(key)
    runs[key + (r["config"]["index"],)].append(r["throughput_tps"])
med = {k: statistics.median(v) for k, v in runs.items()}
n = max(len(v) for v in runs.values())
print(f"median of {n} runs; hash and ordered as ratios to array in the same runs\n")
print("| experiment | threads | protocol | array txn/s | hash txn/s | ordered txn/s | hash / array | ordered / array | hash vs DBx1000 |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for e, t, p in order:
    a, h, o = (med.get((e, t, p, i)) for i in ("array", "hash", "ordered"))
    dbx = DBX.get(e, {}).get(p)
    vs = f"{h / dbx[t - 1]:.2f}x" if dbx and h else "-"
    print(f"| {e} | {t} | {p} | {a:,.0f} | {h:,.0f} | {o:,.0f} | {h / a:.2f} | {o / a:.2f} | {vs} |")
PY
