#!/usr/bin/env bash
# Two builds of txbench on the engine-core YCSB workloads (1,048,576 records of 100 bytes, 16
# operations), alternated run by run so that drift on a shared machine hits both; rows tagged
# "bin":"old" / "bin":"new", then a table of medians (after/before per protocol and thread count).
#
# Usage: experiments/engine_core_ab.sh OLD_BIN NEW_BIN [ROUNDS] [DURATION_S]
# PROTOCOLS=wait_die,wound_wait,plor,no_wait picks other protocols (default: the engine-core four).
# e.g.   git archive c5ecdb3 | tar -x -C /tmp/base && (cd /tmp/base && cargo build --release)
#        experiments/engine_core_ab.sh /tmp/base/target/release/txbench target/release/txbench 3 1
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1
new=$2
rounds=${3:-3}
duration=${4:-1}
protocols=${PROTOCOLS:-nocc,silo,tictoc,no_wait}
out=${OUT:-results/engine_core_ab.jsonl}
mkdir -p "$(dirname "$out")"
: > "$out"
for _ in $(seq "$rounds"); do
  for t in 1 2; do
    for preset in ycsb-a ycsb-c; do
      for side in old new; do
        "${!side}" run -p "$protocols" --records 1048576 --payload 100 --ops 16 \
          -d "$duration" --warmup 0.3 -t "$t" --preset "$preset" --format json \
          | sed "s/^{/{\"bin\":\"$side\",\"preset\":\"$preset\",/" >> "$out"
      done
    done
  done
done
python3 - "$out" <<'PY'
import collections, json, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    runs[(r["preset"], r["threads"], r["protocol"], r["bin"])].append(r["throughput_tps"])
print("| preset | threads | protocol | before txn/s | after txn/s | after/before |")
print("| --- | ---: | --- | ---: | ---: | ---: |")
for (preset, threads, protocol, side) in sorted(runs):
    if side != "new":
        continue
    old = statistics.median(runs[(preset, threads, protocol, "old")])
    new = statistics.median(runs[(preset, threads, protocol, "new")])
    print(f"| {preset} | {threads} | {protocol} | {old:,.0f} | {new:,.0f} | {new / old:.3f} |")
PY
