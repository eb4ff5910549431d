#!/usr/bin/env python3
"""Issue 25's durability targets, measured in one sitting (docs/RESULTS.md, "Durability").

1. Silo TPC-C (1 warehouse, 2 workers) without a log and with `--log DIR --log-sync group`,
   alternating, PAIRS pairs: throughput with log / without per pair, the durable
   acknowledgement's p50/p99 against the group interval plus one fsync.
2. Recovery: a YCSB run that writes about LOG_GB of log with `--log-sync none`, then
   `txbench recover` on it, REPEATS times: replay GB/s.

    experiments/durability.py [TXBENCH] [LOG_PARENT]

TXBENCH defaults to target/release/txbench; LOG_PARENT (where log directories are made, on the
disk under test) defaults to /tmp. Prints a Markdown summary.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

TXBENCH = sys.argv[1] if len(sys.argv) > 1 else "target/release/txbench"
PARENT = sys.argv[2] if len(sys.argv) > 2 else "/tmp"
PAIRS = 3
REPEATS = 3
TPCC = ["run", "-w", "tpcc", "-p", "silo", "-t", "2", "-d", "2", "--warmup", "0.5", "--format", "json"]
# About 1 GB: 16 writes of 1000-byte rows per transaction, 2 workers, no sync on the way.
YCSB = ["run", "-w", "ycsb", "-p", "silo", "--records", "100000", "--payload", "1000", "--ops", "16",
        "--read-ratio", "0", "-t", "2", "-d", "5", "--warmup", "0", "--format", "json", "--log-sync", "none"]


def run(args):
    out = subprocess.run([TXBENCH] + args, check=True, capture_output=True, text=True).stdout
    return json.loads(out.splitlines()[0])


def fresh_dir():
    return tempfile.mkdtemp(prefix="txbench-log-", dir=PARENT)


def fsync_ms():
    """One 4 KiB write + fdatasync on the log's disk, median of 20."""
    d = fresh_dir()
    times = []
    with open(os.path.join(d, "probe"), "wb") as f:
        for _ in range(20):
            f.write(b"\0" * 4096)
            f.flush()
            t = time.perf_counter()
            os.fdatasync(f.fileno())
            times.append((time.perf_counter() - t) * 1000)
    shutil.rmtree(d)
    return sorted(times)[len(times) // 2]


def main():
    print(f"fdatasync of 4 KiB on {PARENT}: median {fsync_ms():.2f} ms\n")
    print("| pair | no log (txn/s) | group log (txn/s) | ratio | durable ack p50 / p99 (ms) | fsyncs/s | txns/fsync |")
    print("|---|---|---|---|---|---|---|")
    for i in range(PAIRS):
        base = run(TPCC)
        d = fresh_dir()
        logged = run(TPCC + ["--log", d, "--log-sync", "group"])
        shutil.rmtree(d)
        lg = logged["log"]
        print(f"| {i + 1} | {base['throughput_tps']:.0f} | {logged['throughput_tps']:.0f} | "
              f"{logged['throughput_tps'] / base['throughput_tps']:.2f} | "
              f"{lg['durable_latency_us']['p50'] / 1000:.1f} / {lg['durable_latency_us']['p99'] / 1000:.1f} | "
              f"{lg['fsyncs_per_s']:.0f} | {lg['txns_per_fsync']:.0f} |")
    print()
    print("| repeat | log bytes | replay GB/s | records/s |")
    print("|---|---|---|---|")
    for i in range(REPEATS):
        d = fresh_dir()
        run(YCSB + ["--log", d])
        out = subprocess.run([TXBENCH, "recover", d, "--format", "json"], check=True,
                             capture_output=True, text=True).stdout
        shutil.rmtree(d)
        r = json.loads(out.splitlines()[0])
        print(f"| {i + 1} | {r.get('bytes', r.get('log_bytes'))} | {r.get('replay_gb_per_s', r.get('gb_per_s'))} | "
              f"{r.get('records_per_s')} |")
        if i == 0:
            print("<!-- recover JSON keys: " + ", ".join(sorted(r.keys())) + " -->")


if __name__ == "__main__":
    main()
