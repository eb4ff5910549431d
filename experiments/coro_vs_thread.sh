#!/usr/bin/env bash
# The coroutine executor against the thread executor on YCSB-A (theta 0.99, 16 ops, 50% blind
# writes; PRESET=sgpm-high for SGPM's normal-key workload), configurations alternated run by run so that drift on a shared machine hits all:
#   thread  -t 2                 (baseline)
#   coro    -t 2 --queue 1       (must behave like the thread executor)
#   thread  -t 8                 (8 in flight, 4 threads per core)
#   coro    -t 2 --queue 4       (the same 8 in flight, one thread per core)
# then medians per protocol and configuration, and ratios.
#
# Usage: experiments/coro_vs_thread.sh [BIN] [ROUNDS] [DURATION_S]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/txbench}
rounds=${2:-3}
duration=${3:-1}
protocols=${PROTOCOLS:-wound_wait,no_wait,plor,silo}
preset=${PRESET:-ycsb-a}
out=${OUT:-results/coro_vs_thread.jsonl}
mkdir -p "$(dirname "$out")"
: > "$out"
configs=("thread2:-t 2" "coro2x1:-t 2 --executor coro --queue 1" "thread8:-t 8" "coro2x4:-t 2 --executor coro --queue 4")
for _ in $(seq "$rounds"); do
  for c in "${configs[@]}"; do
    tag=${c%%:*}
    # shellcheck disable=SC2086
    "$bin" run -p "$protocols" --preset "$preset" -d "$duration" --warmup 0.3 ${c#*:} --format json \
      | sed "s/^{/{\"cfg\":\"$tag\",/" >> "$out"
  done
done
python3 - "$out" <<'PY'
import collections, json, statistics, sys
tps, abort, p99, ag = (collections.defaultdict(list) for _ in range(4))
for line in open(sys.argv[1]):
    r = json.loads(line)
    k = (r["protocol"], r["cfg"])
    tps[k].append(r["throughput_tps"])
    abort[k].append(r["abort_ratio"])
    p99[k].append(r["latency_us"]["p99"])
med = lambda d, k: statistics.median(d[k])
print("| protocol | config | txn/s | abort ratio | p99 us |")
print("| --- | --- | ---: | ---: | ---: |")
cfgs = ["thread2", "coro2x1", "thread8", "coro2x4"]
for p in sorted({k[0] for k in tps}):
    for c in cfgs:
        print(f"| {p} | {c} | {med(tps, (p, c)):.0f} | {med(abort, (p, c)):.3f} | {med(p99, (p, c)):.1f} |")
print()
print("| protocol | coro 2x1 / thread 2 | coro 2x4 / thread 8 | coro 2x4 / thread 2 |")
print("| --- | ---: | ---: | ---: |")
for p in sorted({k[0] for k in tps}):
    t2, c1, t8, c4 = (med(tps, (p, c)) for c in cfgs)
    print(f"| {p} | {c1 / t2:.2f} | {c4 / t8:.2f} | {c4 / t2:.2f} |")
PY
