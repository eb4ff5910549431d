#!/bin/bash
# Where the machine's CPU goes during one Silo TPC-C run (docs/RESULTS.md, "Writes between
# closes, tried and dropped (stop 40)"): the shares of user, system, interrupt and idle time in
# /proc/stat over the run, whole machine.
#
#   experiments/log_probes/cpu_share.sh BINARY LOG_PARENT|none THREADS
#
# LOG_PARENT is where the run's log directory is made (a disk directory, /dev/shm); `none`
# runs without a log.
B=$1; P=$2; T=$3; shift 3
d=""; [ "$P" = none ] || d=$(mktemp -d -p $P); sync; sleep 1
a=$(head -1 /proc/stat)
if [ "$P" = none ]; then $B run -w tpcc -p silo -t $T -d 3 --warmup 0.5 --format json | head -1 > /tmp/cpustat.json
else $B run -w tpcc -p silo -t $T -d 3 --warmup 0.5 --format json --log $d --log-sync group "$@" | head -1 > /tmp/cpustat.json; fi
b=$(head -1 /proc/stat)
python3 - "$a" "$b" "$P" <<'PY'
import json, sys
a=list(map(int,sys.argv[1].split()[1:])); b=list(map(int,sys.argv[2].split()[1:]))
d=[y-x for x,y in zip(a,b)]; tot=sum(d[:8])
user,nice,system,idle,iowait,irq,softirq,steal=d[:8]
r=json.load(open('/tmp/cpustat.json'))
print(f"{sys.argv[3]}: txn/s {r['throughput_tps']:.0f} user {100*(user+nice)/tot:.1f}% sys {100*system/tot:.1f}% irq+soft {100*(irq+softirq)/tot:.1f}% idle+iowait {100*(idle+iowait)/tot:.1f}% steal {100*steal/tot:.1f}%")
PY
[ -z "$d" ] || rm -rf "$d"
