#!/usr/bin/env python3
"""txbench through its hash index against DBx1000 in the same sitting (issue 20; docs/RESULTS.md,
"DBx1000 in the same sitting").

DBx1000 (github.com/yxymit/DBx1000) is built outside this repository, one binary per CC_ALG,
each configured for the anchor cells: hash index, 1,048,576 rows of 10 fields of 10 bytes, 16
requests per query, MAX_TXN_PER_PART 250000 (a run stops when the first thread commits that
many), WARMUP 50000, CPU_FREQ set to this machine's TSC in GHz. DBXDIR holds the binaries
`rundb_<CC_ALG>`; TREE is the source tree (the binary reads ./benchmarks/YCSB_schema.txt).
Its throughput is txn_cnt / (run_time / threads): the summary's run_time is the sum of the
threads' busy times (system/stats.cpp).

For each repetition and cell, one DBx1000 run and then one txbench run of the same cell
(`--index hash`, 1,048,576 records of 100 bytes, 16 read-modify-write or read operations);
prints every run, then per cell the medians and txbench / DBx1000.

    experiments/dbx1000_same_sitting.py TXBENCH DBXDIR TREE [--reps 3] [--timeout 60]
        [--algs NO_WAIT,WAIT_DIE,WAIT_DIE_TS,SILO,TICTOC] [--threads 1,2] [--seconds 2]
        [--modes default,no-prefetch]

--modes runs txbench once per mode after each DBx1000 run: `default` as it comes, `no-prefetch`
with `--no-prefetch` (accesses one after another, as DBx1000 does).

A DBx1000 run that passes --timeout is reported as a hang, and that cell is not run again.
"""
import argparse
import json
import re
import statistics
import subprocess

WORKLOADS = {
    "dbx-theta0.99-rw50": (0.99, 0.5),
    "dbx-theta0.6-rw95": (0.6, 0.95),
}
# DBx1000's algorithm -> txbench's protocol. WAIT_DIE_TS is DBx1000's WAIT_DIE with a
# timestamp given to each attempt (its wait-die rule compares timestamps that the reconstructed
# master never assigns).
PROTOCOL = {"NO_WAIT": "no_wait", "WAIT_DIE": "wait_die", "WAIT_DIE_TS": "wait_die",
            "SILO": "silo", "TICTOC": "tictoc"}


def dbx(dbxdir, tree, alg, threads, theta, read, timeout):
    args = [f"{dbxdir}/rundb_{alg}", f"-t{threads}", f"-z{theta}", f"-r{read}", f"-w{1 - read:.2f}"]
    try:
        out = subprocess.run(args, cwd=tree, capture_output=True, text=True, timeout=timeout).stdout
    except subprocess.TimeoutExpired:
        return None
    m = re.search(r"\[summary\] txn_cnt=(\d+), abort_cnt=(\d+), run_time=([0-9.]+)", out)
    if not m:
        raise RuntimeError(f"no summary from {args}: {out[-500:]}")
    txns, aborts, run_time = int(m[1]), int(m[2]), float(m[3])
    return txns / (run_time / threads), aborts / (txns + aborts)


def txbench(binary, protocol, threads, theta, read, seconds, mode):
    args = [binary, "run", "-w", "ycsb", "--records", "1048576", "--payload", "100", "--ops", "16",
            "--rmw", "--theta", str(theta), "--read-ratio", str(read), "-p", protocol,
            "-t", str(threads), "--index", "hash", "-d", str(seconds), "--warmup", "0.5",
            "--format", "json"] + (["--no-prefetch"] if mode == "no-prefetch" else [])
    r = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout.splitlines()[0])
    return r["throughput_tps"], r.get("abort_ratio", 0.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("txbench")
    ap.add_argument("dbxdir")
    ap.add_argument("tree")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--algs", default="NO_WAIT,WAIT_DIE,WAIT_DIE_TS,SILO,TICTOC")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--seconds", default="2")
    ap.add_argument("--modes", default="default")
    a = ap.parse_args()
    modes = a.modes.split(",")
    cells = [(w, t, alg) for w in WORKLOADS for t in map(int, a.threads.split(","))
             for alg in a.algs.split(",")]
    runs = {c: ([], {m: [] for m in modes}) for c in cells}
    hung = set()
    print("| rep | workload | threads | DBx1000 alg | DBx1000 txn/s | abort | txbench mode | txbench txn/s | abort |")
    print("|---|---|---|---|---:|---:|---|---:|---:|")
    for rep in range(a.reps):
        for c in cells:
            if c in hung:
                continue
            w, t, alg = c
            theta, read = WORKLOADS[w]
            d = dbx(a.dbxdir, a.tree, alg, t, theta, read, a.timeout)
            if d is None:
                hung.add(c)
            else:
                runs[c][0].append(d[0])
            shown = f"hang (> {a.timeout:.0f} s) | -" if d is None else f"{d[0]:.0f} | {d[1]:.3f}"
            for m in modes:
                x = txbench(a.txbench, PROTOCOL[alg], t, theta, read, a.seconds, m)
                runs[c][1][m].append(x[0])
                print(f"| {rep + 1} | {w} | {t} | {alg} | {shown} | {m} | {x[0]:.0f} | {x[1]:.3f} |", flush=True)
    print()
    print("| workload | threads | DBx1000 alg | txbench protocol | txbench mode | DBx1000 median txn/s | txbench median txn/s | txbench / DBx1000 | per-rep ratios |")
    print("|---|---|---|---|---|---:|---:|---:|---|")
    for c in cells:
        w, t, alg = c
        d, xs = runs[c]
        for m, x in xs.items():
            if not d:
                print(f"| {w} | {t} | {alg} | {PROTOCOL[alg]} | {m} | hang | {statistics.median(x):.0f} | - | - |")
                continue
            per = ", ".join(f"{xi / di:.2f}" for di, xi in zip(d, x))
            print(f"| {w} | {t} | {alg} | {PROTOCOL[alg]} | {m} | {statistics.median(d):.0f} | "
                  f"{statistics.median(x):.0f} | {statistics.median(x) / statistics.median(d):.2f} | {per} |")


if __name__ == "__main__":
    main()
