#!/usr/bin/env bash
# The thread executor with more workers than cores: two builds (before/after parking) on YCSB-A
# (theta 0.99, 16 ops, 50% blind writes), 2 and 8 threads, alternated run by run so that drift on
# a shared machine hits both; then medians per build, protocol and thread count, and the 8-thread
# throughput as a share of the 2-thread one.
#
# Usage: experiments/park_ab.sh OLD_BIN NEW_BIN [ROUNDS] [DURATION_S]
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1
new=$2
rounds=${3:-3}
duration=${4:-1}
protocols=${PROTOCOLS:-wound_wait,plor,no_wait,silo,wait_die}
out=${OUT:-results/park_ab.jsonl}
mkdir -p "$(dirname "$out")"
: > "$out"
for _ in $(seq "$rounds"); do
  for t in 2 8; do
    for side in old new; do
      "${!side}" run -p "$protocols" --preset ycsb-a -d "$duration" --warmup 0.3 -t "$t" \
        --format json | sed "s/^{/{\"bin\":\"$side\",/" >> "$out"
    done
  done
done
python3 - "$out" <<'PY'
import collections, json, statistics, sys
tps = collections.defaultdict(list)
wait = collections.defaultdict(list)
for line in open(sys.argv[1]):
    r = json.loads(line)
    k = (r["protocol"], r["threads"], r["bin"])
    tps[k].append(r["throughput_tps"])
    wait[k].append(r["phase_share"]["wait"])
med = {k: statistics.median(v) for k, v in tps.items()}
print("| protocol | build | 2 threads txn/s | 8 threads txn/s | 8/2 | wait share at 8 |")
print("| --- | --- | ---: | ---: | ---: | ---: |")
for p in sorted({k[0] for k in med}):
    for side in ("old", "new"):
        two, eight = med[(p, 2, side)], med[(p, 8, side)]
        w = statistics.median(wait[(p, 8, side)])
        print(f"| {p} | {side} | {two:.0f} | {eight:.0f} | {eight / two:.2f} | {w:.3f} |")
print()
print("| protocol | threads | new/old |")
print("| --- | ---: | ---: |")
for p in sorted({k[0] for k in med}):
    for t in (2, 8):
        print(f"| {p} | {t} | {med[(p, t, 'new')] / med[(p, t, 'old')]:.2f} |")
PY
