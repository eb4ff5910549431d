#!/bin/bash
# The disk's side of one group-committed Silo TPC-C run (docs/RESULTS.md, "Writes between
# closes, tried and dropped (stop 40)"): write requests, megabytes and cache flushes per second
# on the virtio disk vda (/proc/diskstats), and write requests per fdatasync.
#
#   experiments/log_probes/disk_io.sh BINARY LOG_PARENT THREADS [more txbench run arguments]
B=$1; P=$2; T=$3; shift 3
d=$(mktemp -d -p $P); sync; sleep 1
read -r w0 s0 f0 < <(awk '$3=="vda"{print $8, $10, $20}' /proc/diskstats)
t0=$(date +%s.%N)
$B run -w tpcc -p silo -t $T -d 3 --warmup 0.5 --format json --log $d --log-sync group "$@" | head -1 > /tmp/diskio.json
t1=$(date +%s.%N)
read -r w1 s1 f1 < <(awk '$3=="vda"{print $8, $10, $20}' /proc/diskstats)
python3 - "$w0" "$w1" "$s0" "$s1" "$f0" "$f1" "$t0" "$t1" <<'PY'
import json, sys
w0,w1,s0,s1,f0,f1=map(int,sys.argv[1:7]); t=float(sys.argv[8])-float(sys.argv[7])
r=json.load(open('/tmp/diskio.json')); lg=r['log']
fs=lg['fsyncs']
print(f"txn/s {r['throughput_tps']:.0f} fsyncs {fs} writes/s {(w1-w0)/t:.0f} MB/s {(s1-s0)*512/t/1e6:.1f} flushes/s {(f1-f0)/t:.0f} writes/fsync {(w1-w0)/max(fs,1):.2f} flushes/fsync {(f1-f0)/max(fs,1):.2f} durable p99 {lg['durable_latency_us']['p99']/1000:.2f} fsync p50/p99 {lg['fsync_latency_us']['p50']/1000:.2f}/{lg['fsync_latency_us']['p99']/1000:.2f}")
PY
rm -rf $d
