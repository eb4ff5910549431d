#!/usr/bin/env bash
# CPU taken by an idle `txbench serve --log` (issue 25): starts a logged server with no clients,
# waits 3 s, then reads its user+system CPU ticks from /proc over 5 s and prints the share of
# one core. Linux only.
#
#   experiments/idle_serve_cpu.sh BINARY LOG_DIR PORT
set -euo pipefail
bin=$1 dir=$2 port=$3
rm -rf "$dir"
mkdir -p "$dir"
"$bin" serve -p silo -w ycsb --records 1000 --listen "127.0.0.1:$port" --log "$dir" \
    >"$dir.serve.out" 2>&1 &
pid=$!
trap 'kill -INT $pid 2>/dev/null; sleep 1; kill $pid 2>/dev/null || true' EXIT
sleep 3
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
t0=$(ticks) s0=$(date +%s.%N)
sleep 5
t1=$(ticks) s1=$(date +%s.%N)
hz=$(getconf CLK_TCK)
python3 -c "print(f'threads $(ls /proc/$pid/task | wc -l), cpu {100 * ($t1 - $t0) / $hz / ($s1 - $s0):.1f}% of one core')"
