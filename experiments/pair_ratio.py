#!/usr/bin/env python3
"""Per-protocol ratio of two values of one axis, taken run by run (docs/RESULTS.md, "Thread
against coroutine Q = 1 with loading ahead (stop 40)").

With `interleave = true` a sweep runs the axis's values of one point next to each other, so the
ratio of two such runs compares the same few seconds of the machine. This VM's speed moves
between two levels about 1.6x apart within minutes; a ratio of medians taken over the whole
sweep then mixes the levels, while the median of the per-repetition ratios does not. Prints,
per protocol, the median of A / B over the repetitions, their range, and how many.

    python3 experiments/pair_ratio.py RESULTS.jsonl AXIS A B
    python3 experiments/pair_ratio.py results/wait_parity.jsonl executor thread "coro Q=1"
"""
import collections
import json
import signal
import statistics
import sys

# A closed pipe (`| head`) ends the script quietly.
signal.signal(signal.SIGPIPE, signal.SIG_DFL)


def main():
    path, axis, a, b = sys.argv[1:5]
    by = collections.defaultdict(lambda: collections.defaultdict(dict))
    for line in open(path):
        r = json.loads(line)
        point = dict(r["point"])
        report = r["report"]
        tps = report["throughput_tps"] if "throughput_tps" in report else report["runs"][0]["throughput_tps"]
        by[point["protocol"]][r["repetition"]][point[axis]] = tps
    print(f"| protocol | {a} / {b}, median of the runs' ratios | range | runs |")
    print("| --- | ---: | --- | ---: |")
    for protocol, reps in by.items():
        ratios = [d[a] / d[b] for d in reps.values() if a in d and b in d]
        if ratios:
            print(f"| {protocol} | {statistics.median(ratios):.2f} | "
                  f"{min(ratios):.2f}-{max(ratios):.2f} | {len(ratios)} |")


if __name__ == "__main__":
    main()
