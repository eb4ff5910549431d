#!/bin/bash
# Issue 26's throughput bar: the batch protocols against Silo at 2 threads, YCSB-A, theta 0.99.
# Each round runs RESULTS' two commands (the default forms, then the no-wait forms with Aria's
# reordering); Silo runs in the same invocation, so each ratio is within one run.
# Usage: experiments/batch_bar.sh BIN [ROUNDS]   (BIN: a release build of txbench)
set -euo pipefail
BIN=${1:?usage: experiments/batch_bar.sh BIN [ROUNDS]}
ROUNDS=${2:-4}
for r in $(seq 1 "$ROUNDS"); do
  for forms in default no-wait; do
    extra=()
    if [ "$forms" = no-wait ]; then
      extra=(--bohm-no-wait --pwv-no-wait --calvin-no-wait --aria-reordering)
    fi
    "$BIN" run --preset ycsb-a -p silo,bohm,pwv,calvin,aria "${extra[@]}" --records 100000 \
      --theta 0.99 -t 2 -d 3 --warmup 0.5 --format json 2>/dev/null |
      ROUND=$r FORMS=$forms python3 -c '
import json, os, sys
runs = [json.loads(line) for line in sys.stdin]
tps = {d["protocol"]: d["throughput_tps"] for d in runs}
busy = max(d.get("other_processes_cores", 0) for d in runs)
silo = tps.pop("silo")
cells = " ".join("%s %.3f (%dk)" % (p, t / silo, t / 1000) for p, t in tps.items())
print("round %s %s: silo %dk | %s | other processes %.2f cores"
      % (os.environ["ROUND"], os.environ["FORMS"], silo / 1000, cells, busy))
'
  done
done
