#!/bin/bash
# Group-committed Silo TPC-C runs of several builds, alternated run by run (docs/RESULTS.md,
# "Writes between closes, tried and dropped (stop 40)"). Each line: build, txn/s, and the p99s
# of the durable acknowledgement, of a flush and of an fdatasync (ms), and fsyncs per second.
#
#   experiments/log_probes/latency_ab.sh LOG_PARENT THREADS ROUNDS BINARY...
P=$1; T=$2; R=$3; shift 3
for i in $(seq $R); do for b in "$@"; do d=$(mktemp -d -p $P); sync; sleep 1
$b run -w tpcc -p silo -t $T -d 3 --warmup 0.5 --format json --log $d --log-sync group | head -1 | python3 -c "
import json,sys; r=json.load(sys.stdin); lg=r['log']
print('$(basename $b)', int(r['throughput_tps']), round(lg['durable_latency_us']['p99']/1000,2), round(lg['flush_latency_us']['p99']/1000,2), round(lg['fsync_latency_us']['p99']/1000,2), int(lg['fsyncs_per_s']))
"; rm -rf $d; done; done
