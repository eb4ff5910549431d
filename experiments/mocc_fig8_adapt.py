#!/usr/bin/env python3
"""MOCC figure 8's verdict from a results file: how many sampling intervals each run needs to
adapt after each switch of the shifting workload, summarised per protocol label (per H).

    python3 experiments/mocc_fig8_adapt.py results/mocc_fig8.jsonl [abort_threshold] [tps_share]

Each row's `rate_samples` give, per interval, commits per transaction type (`small_read`,
`small_rmw`), aborts and throughput. A period is a maximal run of intervals whose commits were
mostly of one kind (the switches are read from what committed, not from the clock); the first
period (reads, before any switch) is left out.

- After a switch to RMW: the intervals, counted from the period's first interval (0 = already
  adapted there), until the abort ratio first falls below `abort_threshold` (default 0.1).
- After a switch back to reads: the intervals until the throughput first reaches `tps_share`
  (default 0.9) of the run's settled read throughput (the median of the read periods' last
  three intervals).

A period that never gets there counts as "never" (its length is shown as a lower bound). Per
label the table gives the median and the maximum over all runs' periods, and how many periods
never adapted; the RMW periods' mean abort ratio and the read periods' mean throughput show
where each label settles.
"""
import json
import statistics
import sys
from collections import defaultdict


def periods(samples):
    """[(kind, [samples])] in time order: maximal runs of intervals of one majority kind;
    intervals that committed nothing join the current period."""
    out = []
    for s in samples:
        by = s.get("commits_by_type")
        if not by or len(by) < 2:
            raise SystemExit("rate_samples without commits_by_type: not a shifting run")
        if s["commits"] == 0:
            if out:
                out[-1][1].append(s)
            continue
        kind = "rmw" if by[1] > by[0] else "read"
        if out and out[-1][0] == kind:
            out[-1][1].append(s)
        else:
            out.append((kind, [s]))
    return out


def first(pred, items):
    for i, x in enumerate(items):
        if pred(x):
            return i
    return None


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    path = sys.argv[1]
    abort_threshold = float(sys.argv[2]) if len(sys.argv) > 2 else 0.1
    tps_share = float(sys.argv[3]) if len(sys.argv) > 3 else 0.9
    to_rmw = defaultdict(list)   # label -> intervals (None = never, with the period length)
    to_read = defaultdict(list)
    rmw_abort = defaultdict(list)
    read_tps = defaultdict(list)
    interval_ms = set()
    order = []
    with open(path) as f:
        for line in f:
            row = json.loads(line)
            report = row["report"]
            label = dict(row["point"]).get("protocol", report["protocol"])
            if label not in order:
                order.append(label)
            samples = report.get("rate_samples", [])
            interval_ms.update(round(s["interval_s"] * 1000) for s in samples)
            ps = periods(samples)
            settled = [s["throughput_tps"] for kind, ss in ps if kind == "read" for s in ss[-3:]]
            reference = statistics.median(settled) if settled else 0.0
            for kind, ss in ps[1:]:
                if kind == "rmw":
                    k = first(lambda s: s["abort_ratio"] < abort_threshold, ss)
                    to_rmw[label].append((k, len(ss)))
                    rmw_abort[label].extend(s["abort_ratio"] for s in ss)
                else:
                    k = first(lambda s: s["throughput_tps"] >= tps_share * reference, ss)
                    to_read[label].append((k, len(ss)))
            read_tps[label].extend(s["throughput_tps"] for kind, ss in ps if kind == "read" for s in ss)

    def cell(results):
        done = [k for k, _ in results if k is not None]
        never = [n for k, n in results if k is None]
        if not results:
            return "-"
        text = f"median {statistics.median(done):g}, max {max(done)}" if done else "none adapted"
        if never:
            text += f"; never in {len(never)} of {len(results)} (>= {min(never)})"
        else:
            text += f" (of {len(results)})"
        return text

    print(f"intervals of {sorted(interval_ms)} ms; adapted to RMW: abort ratio < {abort_threshold}; "
          f"to reads: throughput >= {tps_share} x settled read throughput")
    print()
    print("| label | intervals to adapt after a switch to RMW | after a switch to reads "
          "| mean abort ratio in RMW periods | mean txn/s in read periods |")
    print("| --- | --- | --- | --- | --- |")
    for label in order:
        ab = rmw_abort[label]
        tp = read_tps[label]
        print(f"| {label} | {cell(to_rmw[label])} | {cell(to_read[label])} "
              f"| {statistics.mean(ab) if ab else 0:.3f} | {statistics.mean(tp) if tp else 0:,.0f} |")


if __name__ == "__main__":
    main()
