#!/usr/bin/env bash
# Issue 8's evidence that the checker catches a protocol without concurrency control: NoCC under
# --check on every YCSB preset (64 records, 8 workers), long-scan and TPC-C, and the README's
# check example timed with and without --check. Prints one line per run.
#
# Usage: experiments/check_nocc.sh [DURATION_S]
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-1}
cargo build --release --quiet
bin=target/release/txbench
summary() {
  python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    c = r["check"]
    kinds = ", ".join("%s %d" % kv for kv in sorted(c["cycle_kinds"].items()))
    anomalies = ", ".join("%s %d" % kv for kv in sorted(c["anomaly_counts"].items())) or "-"
    cons = c.get("consistency_violations")
    print("| %s | %d | %d (%s) | %s | %s | %s |" % (
        sys.argv[1], c["transactions"], c["cycles"], kinds, anomalies,
        "-" if cons is None else cons, str(c["passed"]).lower()))
' "$1"
}
echo "| workload | txns checked | cycles | anomalies | consistency violations | passed |"
echo "| --- | ---: | --- | --- | ---: | --- |"
for preset in ycsb-a ycsb-b ycsb-c ycsb-f ycsb-a-bimodal; do
  "$bin" run -p nocc --preset "$preset" --records 64 -t 8 -d "$duration" --check --format json \
    | summary "$preset"
done
"$bin" run -p nocc --records 16 --ops 4 --theta 0 --blind --read-ratio 0.5 -t 6 -d "$duration" \
  --check --format json | summary "blind, 16 records"
"$bin" run -p nocc --workload long-scan -t 8 -d "$duration" --check --format json | summary long-scan
"$bin" run -p nocc --workload tpcc -t 8 -d "$duration" --check --format json | summary tpcc
"$bin" run -p nocc --workload tpcc --mix np -t 8 -d "$duration" --check --format json \
  | summary "tpcc np"

echo
echo "README check example, wall seconds and peak KB:"
for flag in --check ""; do
  /usr/bin/time -f "  ${flag:-no check}: %e s, %M KB" \
    "$bin" run -p all --records 64 --ops 8 --rmw -t 8 $flag > /dev/null 2>/tmp/check_nocc.err \
    || true
  tail -1 /tmp/check_nocc.err
done
