#!/usr/bin/env python3
"""Summarise txbench JSON lines (from experiments/*.sh) as Markdown tables.

Default: for each (experiment, threads), per protocol, the median throughput and median p99.9 over
the repeated runs, and both as ratios to NoCC's medians from the same invocation. For the DBx1000
anchor experiments, also the ratio to DBx1000's figures on this machine (issue 2).

`--pivot`: one table per metric (txn/s, p99.9 us, abort ratio, max attempts) with a row per
(experiment, threads) and a column per protocol, for sweeps (threads, writes per transaction).
"""
import json
import statistics
import sys
from collections import defaultdict

# DBx1000 on the 2-core development machine (issue 2), txn/s at 1 / 2 threads.
DBX1000 = {
    "dbx-theta0.99-rw50": {"no_wait": (122e3, 162e3), "wait_die": (140e3, 219e3),
                           "silo": (122e3, 227e3), "tictoc": (117e3, 255e3)},
    "dbx-theta0.6-rw95": {"no_wait": (56e3, 121e3), "wait_die": (54e3, 115e3),
                          "silo": (66e3, 147e3), "tictoc": (67e3, 129e3)},
}


def main(path):
    runs = defaultdict(lambda: defaultdict(list))
    order = []
    for line in open(path):
        r = json.loads(line)
        key = (r["experiment"], r["threads"])
        if key not in order:
            order.append(key)
        runs[key][r["protocol"]].append(r)
    for key in order:
        exp, threads = key
        protos = runs[key]
        med = {p: (statistics.median(x["throughput_tps"] for x in rs),
                   statistics.median(x["latency_us"]["p999"] for x in rs),
                   statistics.median(x["abort_ratio"] for x in rs), len(rs))
               for p, rs in protos.items()}
        ceil_tps, ceil_p999 = med.get("nocc", (None, None, None, None))[:2]
        print(f"\n### {exp}, {threads} thread(s) (median of {max(m[3] for m in med.values())} runs)\n")
        header = "| protocol | txn/s | vs NoCC | p99.9 us | p99.9 vs NoCC | abort ratio |"
        sep = "| --- | ---: | ---: | ---: | ---: | ---: |"
        anchors = DBX1000.get(exp)
        if anchors:
            header += " DBx1000 txn/s | vs DBx1000 |"
            sep += " ---: | ---: |"
        print(header)
        print(sep)
        for p, (tps, p999, ar, _) in med.items():
            row = f"| {p} | {tps:,.0f} | {tps / ceil_tps:.2f}x | {p999:.1f} | {p999 / ceil_p999:.2f}x | {ar:.3f} |"
            if anchors:
                a = anchors.get(p)
                if a:
                    ref = a[0] if threads == 1 else a[1]
                    row += f" {ref:,.0f} | {tps / ref:.2f}x |"
                else:
                    row += " - | - |"
            print(row)


METRICS = [
    ("txn/s", lambda r: r["throughput_tps"], "{:,.0f}"),
    ("p99.9 us", lambda r: r["latency_us"]["p999"], "{:.1f}"),
    ("abort ratio", lambda r: r["abort_ratio"], "{:.3f}"),
    ("max attempts", lambda r: r["attempts"]["max"], "{:.0f}"),
]


def pivot(path):
    cells = defaultdict(list)
    rows, cols = [], []
    for line in open(path):
        r = json.loads(line)
        row, col = (r["experiment"], r["threads"]), r["protocol"]
        if row not in rows:
            rows.append(row)
        if col not in cols:
            cols.append(col)
        cells[(row, col)].append(r)
    for name, get, fmt in METRICS:
        print(f"\n#### {name} (median of runs)\n")
        print("| experiment | threads | " + " | ".join(cols) + " |")
        print("| --- | ---: | " + " | ".join("---:" for _ in cols) + " |")
        for row in rows:
            vals = []
            for col in cols:
                rs = cells.get((row, col))
                vals.append(fmt.format(statistics.median(get(r) for r in rs)) if rs else "-")
            print(f"| {row[0]} | {row[1]} | " + " | ".join(vals) + " |")


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    path = args[0] if args else "results/engine_core.jsonl"
    if "--pivot" in sys.argv:
        pivot(path)
    else:
        main(path)
