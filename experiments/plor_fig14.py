#!/usr/bin/env python3
"""PLOR figure 14 on this machine: TPC-C with one warehouse, throughput and p99.9 latency
without a log, with redo logging and with undo logging (docs/RESULTS.md, "PLOR figure 14").

    experiments/plor_fig14.py [TXBENCH] [LOG_PARENT] [REPEATS] [SYNC] [WORKERS]

Every logged run needs a fresh, empty log directory, so this script makes one per run under
LOG_PARENT (default /tmp) and removes it afterwards. experiments/plor_fig14.toml runs the same
grid through `txbench sweep` (whose `log` parameter does the same); this script stays for the
numbers in docs/RESULTS.md and for its "vs no log" column. TXBENCH defaults to target/release/txbench; REPEATS (default 3)
rounds each run every configuration once, in the same order, and the table shows each
configuration's median round (by throughput) with the spread of throughput over the rounds.

Protocols: Silo (redo only: it writes nothing in place before commit, and PLOR does not
evaluate it under undo; txbench refuses `--log-kind undo` for it), NO_WAIT, WAIT_DIE,
WOUND_WAIT and PLOR. 2PL with early release refuses TPC-C (its user aborts would expose writes
already released), so it has no row here. Logged runs use `--log-sync SYNC` (default `group`,
the 2 ms group interval: a commit is acknowledged once its epoch's flush synced every file).
`none` writes the log without syncing it, the nearest this machine has to the paper's
persistent memory, where an append is durable in about 100 ns and nobody waits for a group.
WORKERS (default 2) is the worker thread count; the log's flusher is a thread beside them, so
on a 2-core machine 1 worker leaves the flusher a core of its own, as the paper's many cores do.

Latencies: `commit p99.9` is the report's latency (first attempt's start to commit);
`durable p99.9` runs to the durable acknowledgement (logged runs only), which is what a client
of a durable engine waits for and what PLOR's figure plots for its logged runs.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

TXBENCH = sys.argv[1] if len(sys.argv) > 1 else "target/release/txbench"
PARENT = sys.argv[2] if len(sys.argv) > 2 else "/tmp"
REPEATS = int(sys.argv[3]) if len(sys.argv) > 3 else 3
SYNC = sys.argv[4] if len(sys.argv) > 4 else "group"
if SYNC not in ("none", "group", "txn"):
    sys.exit("plor_fig14.py: SYNC must be none, group or txn, not {!r}".format(SYNC))
WORKERS = sys.argv[5] if len(sys.argv) > 5 else "2"
BASE = ["run", "-w", "tpcc", "--warehouses", "1", "-t", WORKERS, "-d", "2", "--warmup", "0.5",
        "--format", "json"]
PROTOCOLS = ["silo", "no_wait", "wait_die", "wound_wait", "plor"]
KINDS = ["none", "redo", "undo"]


def configurations():
    for p in PROTOCOLS:
        for k in KINDS:
            if k == "undo" and p == "silo":
                continue
            yield p, k


def run(protocol, kind):
    args = BASE + ["-p", protocol]
    d = None
    if kind != "none":
        d = tempfile.mkdtemp(prefix="txbench-fig14-", dir=PARENT)
        args += ["--log", d, "--log-sync", SYNC, "--log-kind", kind]
    try:
        out = subprocess.run([TXBENCH] + args, check=True, capture_output=True, text=True).stdout
    finally:
        if d:
            shutil.rmtree(d)
    return json.loads(out.splitlines()[0])


def main():
    fs = subprocess.run(["df", "-T", PARENT], capture_output=True, text=True).stdout.splitlines()
    print(f"log directories under {PARENT}: {fs[-1].split()[1] if len(fs) > 1 else '?'}")
    print(f"load average before: {os.getloadavg()}\n")
    rounds = {c: [] for c in configurations()}
    for _ in range(REPEATS):
        for c in rounds:
            rounds[c].append(run(*c))
    print(f"load average after: {os.getloadavg()}\n")
    print("| protocol | log | txn/s (median of {}) | spread | vs no log | abort rate | "
          "commit p99.9 us | durable p99.9 us | log B/txn | aborted attempts logged |"
          .format(REPEATS))
    print("|---|---|---|---|---|---|---|---|---|---|")
    base = {}
    for (p, k), rs in rounds.items():
        rs = sorted(rs, key=lambda r: r["throughput_tps"])
        r = rs[len(rs) // 2]
        tps = r["throughput_tps"]
        if k == "none":
            base[p] = tps
        spread = f"{rs[0]['throughput_tps']:.0f}-{rs[-1]['throughput_tps']:.0f}"
        attempts = r["commits"] + r["aborts"]
        abort_rate = r["aborts"] / attempts if attempts else 0.0
        lg = r.get("log")
        durable = f"{lg['durable_latency_us']['p999']:.0f}" if lg else "-"
        per_txn = f"{lg['bytes_per_txn']:.0f}" if lg else "-"
        aborted = f"{lg['aborted_logged']}" if lg else "-"
        print(f"| {p} | {k} | {tps:.0f} | {spread} | {tps / base[p]:.2f} | {abort_rate:.3f} | "
              f"{r['latency_us']['p999']:.0f} | {durable} | {per_txn} | {aborted} |")


if __name__ == "__main__":
    main()
