#!/bin/bash
# Two builds alternated run by run on CCBench's cells through --index ordered (1M records of 4
# bytes, 16 blind operations; HC theta 0.99 / 50% reads, LC theta 0.6 / 95% reads), 2 s after
# 0.5 s warm-up, and the after/before ratio of each pair with its median (docs/RESULTS.md,
# "Branch-free searches and a touched leaf"). Pairs, not a sweep's medians: this VM's speed
# drifts by 2x within minutes, and a ratio of runs seconds apart survives that.
#
#   experiments/ordered_pairs.sh BEFORE_BINARY AFTER_BINARY [PAIRS] [THREADS]
set -e
A=${1:?before binary}
B=${2:?after binary}
N=${3:-5}
T=${4:-1}
for cell in "silo 0.6 0.95" "cicada 0.99 0.5" "si 0.6 0.95" "ermia 0.99 0.5"; do
  set -- $cell
  ratios=""
  for r in $(seq "$N"); do
    for bin in "$A" "$B"; do
      tps=$("$bin" run -w ycsb -p "$1" -t "$T" --records 1000000 --payload 4 --ops 16 --blind \
        --theta "$2" --read-ratio "$3" --index ordered -d 2 --warmup 0.5 --format json \
        | python3 -c "import json,sys; print(json.loads(sys.stdin.readline())['throughput_tps'])")
      if [ "$bin" = "$A" ]; then before=$tps; else ratios="$ratios $(python3 -c "print($tps/$before)")"; after=$tps; fi
    done
    echo "$1 theta $2, $T thread(s), pair $r: before $before after $after"
  done
  python3 -c "import statistics,sys; r=[float(x) for x in sys.argv[1:]]; print(f'$1 theta $2, $T thread(s): after/before pairs', [round(x,2) for x in r], f'median {statistics.median(r):.2f}')" $ratios
done
