#!/bin/bash
# The flusher at normal against real-time priority, by hand (docs/RESULTS.md, "The log's CPU cut
# by a third, and the flusher's priority (2026-12-07)"): pairs of Silo TPC-C runs, 2 workers,
# group commit on tmpfs; in the "rt" runs `chrt -f -p 1` puts the flusher thread at SCHED_FIFO 1
# after start-up. Prints throughput and the durable acknowledgement's p50, p99 and max (us).
# For a build before 0872bf5 (dcd3f5e in the section), whose flusher never asks for priority
# itself; needs root (or CAP_SYS_NICE) for chrt. The flusher is the fourth thread by id (main,
# silo-epoch, progress, then the flusher the runner starts before the workers).
#
#   experiments/flusher_priority.sh BINARY [PAIRS]
set -e
B=${1:?binary}
PAIRS=${2:-2}
for _ in $(seq "$PAIRS"); do
  for mode in plain rt; do
    d=$(mktemp -d /dev/shm/txbench-prio-XXXX)
    "$B" run -w tpcc -p silo -t 2 -d 3 --warmup 1.0 --format json --log "$d" --log-sync group > "$d.json" &
    sleep 0.6
    pid=$(pgrep -f -- "--log $d " | head -1)
    flusher=$(ls "/proc/$pid/task" | sort -n | sed -n 4p)
    if [ "$mode" = rt ]; then chrt -f -p 1 "$flusher"; fi
    wait
    python3 -c "
import json, sys
d = json.loads(open('$d.json').readline()); l = d['log']['durable_latency_us']
print('$mode', int(d['throughput_tps']), l['p50'], l['p99'], l['max'])"
    rm -rf "$d" "$d.json"
  done
done
