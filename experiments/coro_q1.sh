#!/usr/bin/env bash
# Q = 1 under the coroutine executor against the thread executor: YCSB-A and YCSB-C, 2 threads,
# the two executors alternated run by run; medians of throughput and abort ratio, and the ratio.
#
# Usage: experiments/coro_q1.sh [BIN] [ROUNDS] [DURATION_S]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/txbench}
rounds=${2:-5}
duration=${3:-1}
protocols=${PROTOCOLS:-nocc,silo,no_wait,wound_wait}
out=${OUT:-results/coro_q1.csv}
mkdir -p "$(dirname "$out")"
: > "$out"
for _ in $(seq "$rounds"); do
  for preset in ycsb-a ycsb-c; do
    for e in thread coro; do
      extra=()
      [ "$e" = coro ] && extra=(--executor coro --queue 1)
      "$bin" run -p "$protocols" --preset "$preset" -t 2 -d "$duration" --warmup 0.2 \
        "${extra[@]}" --format csv | tail -n +2 | cut -d, -f1,8,9 | sed "s/^/$preset,$e,/" >> "$out"
    done
  done
done
python3 - "$out" <<'PY'
import collections, csv, statistics, sys
tps, ab = collections.defaultdict(list), collections.defaultdict(list)
for preset, e, p, t, a in csv.reader(open(sys.argv[1])):
    tps[(preset, p, e)].append(float(t))
    ab[(preset, p, e)].append(float(a))
print("| preset | protocol | thread txn/s | coro Q=1 txn/s | coro/thread | abort ratio thread | abort ratio coro |")
print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
for (preset, p) in sorted({(k[0], k[1]) for k in tps}):
    m = lambda d, e: statistics.median(d[(preset, p, e)])
    t, c = m(tps, "thread"), m(tps, "coro")
    print(f"| {preset} | {p} | {t:.0f} | {c:.0f} | {c / t:.2f} | {m(ab, 'thread'):.3f} | {m(ab, 'coro'):.3f} |")
PY
