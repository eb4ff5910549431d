#!/usr/bin/env python3
"""Issue 25's group-commit bar, measured in one sitting (docs/RESULTS.md, "Durability").

For each binary and each worker count, PAIRS rounds of: Silo TPC-C (1 warehouse) without a log,
then with `--log DIR --log-sync group` on each log parent (a disk directory, tmpfs), in that
order, so every ratio compares runs seconds apart. Prints per round the throughput ratio
(logged / unlogged), the durable acknowledgement's p50/p99, the p99 of one `fdatasync` and
of one flush (binaries that report them), log bytes per transaction and fsyncs per second,
then the median ratio per cell. The latency bar is "durable p99 within the group interval plus
one fsync": the `bar` column is the interval plus the same run's fsync p99.

    experiments/group_commit.py BINARY[,BINARY...] [--threads 1,2] [--pairs 3]
        [--parents /tmp,/dev/shm] [--seconds 2] [--group-us 2000]

Several binaries (before and after a change) alternate inside each round.
"""
import argparse
import json
import shutil
import statistics
import subprocess
import tempfile


def run(binary, threads, seconds, extra):
    args = [binary, "run", "-w", "tpcc", "-p", "silo", "-t", str(threads), "-d", str(seconds),
            "--warmup", "0.5", "--format", "json"] + extra
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binaries")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--parents", default="/tmp,/dev/shm")
    ap.add_argument("--seconds", default="2")
    ap.add_argument("--group-us", default=None, help="--log-group-us (the binary's default if not given)")
    a = ap.parse_args()
    binaries = a.binaries.split(",")
    parents = a.parents.split(",")
    ratios = {}
    print("| round | binary | threads | log on | no log txn/s | logged txn/s | ratio | durable ack p50 / p99 ms | fsync p99 ms | flush p99 ms | bar ms | bytes/txn | fsyncs/s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    group = ["--log-group-us", a.group_us] if a.group_us else []
    for r in range(a.pairs):
        for threads in [int(t) for t in a.threads.split(",")]:
            for b in binaries:
                base = run(b, threads, a.seconds, [])
                for parent in parents:
                    d = tempfile.mkdtemp(prefix="txbench-gc-", dir=parent)
                    logged = run(b, threads, a.seconds, ["--log", d, "--log-sync", "group"] + group)
                    shutil.rmtree(d)
                    lg = logged["log"]
                    ratio = logged["throughput_tps"] / base["throughput_tps"]
                    ratios.setdefault((b, threads, parent), []).append(ratio)
                    ms = lambda field: (f"{lg[field]['p99'] / 1000:.1f}" if field in lg else "-")
                    bar = (f"{(lg['group_us'] + lg['fsync_latency_us']['p99']) / 1000:.1f}"
                           if "fsync_latency_us" in lg else "-")
                    print(f"| {r + 1} | {b} | {threads} | {parent} | {base['throughput_tps']:.0f} | "
                          f"{logged['throughput_tps']:.0f} | {ratio:.2f} | "
                          f"{lg['durable_latency_us']['p50'] / 1000:.1f} / {lg['durable_latency_us']['p99'] / 1000:.1f} | "
                          f"{ms('fsync_latency_us')} | {ms('flush_latency_us')} | {bar} | "
                          f"{lg['bytes_per_txn']:.0f} | {lg['fsyncs_per_s']:.0f} |", flush=True)
    print()
    print("| binary | threads | log on | median ratio | min-max |")
    print("|---|---|---|---|---|")
    for (b, threads, parent), rs in ratios.items():
        print(f"| {b} | {threads} | {parent} | {statistics.median(rs):.2f} | {min(rs):.2f}-{max(rs):.2f} |")


if __name__ == "__main__":
    main()
