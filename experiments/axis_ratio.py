#!/usr/bin/env python3
"""Median throughput (and p99.9) per protocol for two values of one axis of a results file, and
their ratio: the numbers docs/RESULTS.md quotes for experiments judged as ratios within one run
(wait_parity: thread / coro Q=1; wait_oversubscribed: 4 workers / 2 workers).

    python3 experiments/axis_ratio.py results/wait_parity.jsonl executor thread "coro Q=1"
    python3 experiments/axis_ratio.py results/wait_oversubscribed.jsonl threads 4 2

Rows are the `point` pairs a sweep writes; the ratio is A's median over B's, with each side's
min-max across repetitions beside it. A second table gives each protocol's median throughput
under A relative to a reference protocol's (default silo), as "wound_wait >= 0.5x silo" asks.
"""
import json
import signal
import statistics
import sys
from collections import defaultdict


def main():
    # A closed pipe (`| head`) ends the script quietly.
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    path, axis, a, b = sys.argv[1:5]
    reference = sys.argv[5] if len(sys.argv) > 5 else "silo"
    tps = defaultdict(list)
    p999 = defaultdict(list)
    order = []
    with open(path) as f:
        for line in f:
            row = json.loads(line)
            point = dict(row["point"])
            if axis not in point:
                sys.exit(f"{path}: axis {axis!r} not in point {point}")
            report = row["report"]
            key = (report["protocol"], point[axis])
            if report["protocol"] not in order:
                order.append(report["protocol"])
            tps[key].append(report["throughput_tps"])
            if report["latency_us"]["p999"] is not None:
                p999[key].append(report["latency_us"]["p999"])
    med = statistics.median
    print(f"| protocol | {a} txn/s | {b} txn/s | {a} / {b} | {a} p99.9 us | {b} p99.9 us |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for proto in order:
        ka, kb = (proto, a), (proto, b)
        if ka not in tps or kb not in tps:
            continue
        ta, tb = tps[ka], tps[kb]
        print(
            f"| {proto} | {med(ta):,.0f} [{min(ta):,.0f}-{max(ta):,.0f}] "
            f"| {med(tb):,.0f} [{min(tb):,.0f}-{max(tb):,.0f}] | {med(ta) / med(tb):.2f} "
            f"| {med(p999[ka]) if p999[ka] else float('nan'):.1f} "
            f"| {med(p999[kb]) if p999[kb] else float('nan'):.1f} |"
        )
    ref = (reference, a)
    if ref in tps:
        print()
        print(f"| protocol | {a}: median txn/s / {reference}'s |")
        print("| --- | ---: |")
        for proto in order:
            if (proto, a) in tps:
                print(f"| {proto} | {med(tps[(proto, a)]) / med(tps[ref]):.2f} |")


if __name__ == "__main__":
    main()
