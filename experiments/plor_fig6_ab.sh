#!/usr/bin/env bash
# PLOR figure 6 (the runs of experiments/plor_fig6.toml), two builds alternated run by run so that drift
# on a shared machine hits both: ROUNDS rounds of (before, after), each one run (--repeat 1) of
# every protocol, per thread count. Rows are tagged "experiment":"before" / "after".
#
# Usage: experiments/plor_fig6_ab.sh BEFORE_BIN AFTER_BIN [RECORDS] [DURATION_S] [ROUNDS] [THREADS...]
# e.g.   git archive c5ecdb3 | tar -x -C /tmp/base && (cd /tmp/base && cargo build --release)
#        experiments/plor_fig6_ab.sh /tmp/base/target/release/txbench target/release/txbench
set -euo pipefail
cd "$(dirname "$0")/.."
before=$1
after=$2
records=${3:-256}
duration=${4:-1.5}
rounds=${5:-4}
shift $(( $# < 5 ? $# : 5 ))
threads=("${@:-1 2 4 8}")
out=${OUT:-results/plor_fig6_ab.jsonl}
mkdir -p "$(dirname "$out")"
: > "$out"
common=(--preset ycsb-a-bimodal --records "$records" --duration "$duration" --warmup 0.5
        --repeat 1 --format json)
for t in ${threads[@]}; do
  for _ in $(seq "$rounds"); do
    for side in before after; do
      if [ "$side" = before ]; then bin=$before; else bin=$after; fi
      "$bin" run "${common[@]}" --threads "$t" \
        --protocol nocc,plor,no_wait,wait_die,wound_wait,silo,tictoc,mocc \
        | sed "s/^{/{\"experiment\":\"$side\",/" >> "$out"
      "$bin" run "${common[@]}" --threads "$t" --protocol plor --plor-dwa \
        | sed -e "s/^{/{\"experiment\":\"$side\",/" \
              -e 's/"protocol":"plor"/"protocol":"plor+dwa"/' >> "$out"
    done
  done
done
python3 experiments/summarize.py "$out" --pivot
