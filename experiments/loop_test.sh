#!/usr/bin/env bash
# Runs one test binary (with its arguments) N times and counts passes, failures and hangs: how
# docs/TESTING.md's loop numbers were taken (the phantom tests, anomalies' g2_predicate_phantom).
# A run that exceeds TIMEOUT seconds (default 120) counts as a hang; the output of each failing
# or hanging run is kept as loop_fail_I.txt / loop_hang_I.txt in OUT (default /tmp/loop_test).
#
#   cargo test --no-run --test phantom_serializable
#   experiments/loop_test.sh 138 target/debug/deps/phantom_serializable-HASH --test-threads 2
#   experiments/loop_test.sh 12 target/debug/deps/anomalies-HASH g2_predicate_phantom
set -u
if [ $# -lt 2 ]; then
    sed -n '2,9p' "$0"
    exit 2
fi
runs=$1; shift
out=${OUT:-/tmp/loop_test}
mkdir -p "$out"
pass=0; fail=0; hang=0
for i in $(seq 1 "$runs"); do
    timeout "${TIMEOUT:-120}" "$@" > "$out/last.txt" 2>&1
    rc=$?
    if [ $rc -eq 0 ]; then
        pass=$((pass + 1))
    elif [ $rc -eq 124 ]; then
        hang=$((hang + 1)); cp "$out/last.txt" "$out/loop_hang_$i.txt"
    else
        fail=$((fail + 1)); cp "$out/last.txt" "$out/loop_fail_$i.txt"
    fi
    echo "run $i: $pass passed, $fail failed, $hang hung"
done
