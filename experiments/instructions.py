#!/usr/bin/env python3
"""Instructions per committed YCSB transaction, counted with cachegrind (no cache simulation).

Instruction counts do not depend on the machine's load, so they compare two builds on a shared
or virtualised machine (no hardware counters there) where wall-clock medians cannot settle a
few percent. The runs are duration-based, so each cell runs twice, for SHORT and LONG seconds
with no warm-up, and the count is

    (instructions at LONG - instructions at SHORT) / (commits at LONG - commits at SHORT)

so that loading the table and starting up cancel. The same seed gives the same transaction
stream. One worker thread (valgrind serialises threads; with conflicts a serialised schedule
would change the work). The median of REPS such differences is printed, with the min-max.

    python3 experiments/instructions.py BINARY [--reps 3] [--protocols silo,si,decentsched]
        [--preset ycsb-a] [--short 1] [--long 3] [--json out.json] [--extra "FLAGS"]

Protocols with time-driven work count differently as the commit rate changes (DecentSched's
epochs close after `--ds-epoch-us` or `--ds-epoch-txns`, whichever comes first; under valgrind
the time bound closes them after a few transactions, so a loaded machine changes the work per
transaction). `--extra "--ds-epoch-us 10000000"` closes them by count only: a label
`decentsched[ds-epoch-us=10000000]` in --protocols passes such flags to that protocol alone
(`name[flag=value,flag=value]`).

Build BINARY with the same profile before and after a change, e.g. the fast release profile:

    CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 cargo build --release
    cp target/release/txbench /tmp/txbench-before

Each txbench run is: BINARY run -p P --preset PRESET --records 1048576 --payload 100 --ops 16
-t 1 -d D --warmup 0 --seed 1 --format json, under
`valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=...`.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

WORKLOAD = ["--records", "1048576", "--payload", "100", "--ops", "16", "-t", "1",
            "--warmup", "0", "--seed", "1", "--format", "json"]


def total_instructions(cachegrind_out):
    """The `summary:` line of a cachegrind output file (Ir only, as --cache-sim=no counts)."""
    with open(cachegrind_out) as f:
        for line in f:
            if line.startswith("summary:"):
                return int(line.split()[1])
    sys.exit(f"{cachegrind_out}: no summary line")


def commits(stdout):
    """Committed transactions of the run's JSON report (one object, or one per line)."""
    total = 0
    for line in stdout.splitlines():
        line = line.strip()
        if line.startswith("{"):
            total += json.loads(line)["commits"]
    return total


def protocol_and_flags(label):
    """`silo` -> (`silo`, []); `decentsched[ds-epoch-us=10000000]` -> (`decentsched`,
    [`--ds-epoch-us`, `10000000`])."""
    if not label.endswith("]"):
        return label, []
    name, _, inner = label[:-1].partition("[")
    flags = []
    for pair in inner.split(","):
        flag, _, value = pair.partition("=")
        flags += [f"--{flag}"] + ([value] if value else [])
    return name, flags


def run_once(binary, label, preset, seconds, workdir, extra):
    protocol, flags = protocol_and_flags(label)
    out = os.path.join(workdir, f"cg.{len(os.listdir(workdir))}")
    cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", f"--cachegrind-out-file={out}",
           binary, "run", "-p", protocol, "--preset", preset, "-d", str(seconds)] + WORKLOAD \
        + flags + extra
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)}: exit {done.returncode}\n{done.stderr[-2000:]}")
    return total_instructions(out), commits(done.stdout)


def split_labels(text):
    """Comma-separated labels; commas inside `[...]` belong to the label."""
    labels, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            labels.append(cur)
            cur = ""
        else:
            cur += ch
    return labels + [cur] if cur else labels


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("binary")
    ap.add_argument("--protocols", default="silo,si,decentsched")
    ap.add_argument("--preset", default="ycsb-a")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--short", type=float, default=1)
    ap.add_argument("--long", type=float, default=3)
    ap.add_argument("--json", help="also write the per-repetition counts here")
    ap.add_argument("--extra", default="", help="flags added to every run (split on spaces)")
    args = ap.parse_args()
    extra = args.extra.split()
    rows = {}
    with tempfile.TemporaryDirectory() as workdir:
        for rep in range(args.reps):
            # Protocols interleaved per repetition, as the sweeps do.
            for p in split_labels(args.protocols):
                for attempt in range(3):
                    short_ir, short_c = run_once(args.binary, p, args.preset, args.short, workdir,
                                                 extra)
                    long_ir, long_c = run_once(args.binary, p, args.preset, args.long, workdir,
                                               extra)
                    if long_c > short_c:
                        break
                    # A run that stalled under valgrind (seen once: decentsched, 0 commits in
                    # 3 s) says nothing about the work per transaction: run the pair again.
                    print(f"# {p}: {long_c} commits at {args.long} s, {short_c} at "
                          f"{args.short} s; again", file=sys.stderr)
                else:
                    sys.exit(f"{p}: no more commits at {args.long} s than at {args.short} s")
                per_txn = (long_ir - short_ir) / (long_c - short_c)
                rows.setdefault(p, []).append(per_txn)
                print(f"# rep {rep} {p}: {per_txn:.0f} instructions/txn "
                      f"({long_c - short_c} commits)", file=sys.stderr)
    print(f"| protocol ({args.preset}, 1 thread) | median | min | max | reps |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for p, v in rows.items():
        print(f"| {p} | {statistics.median(v):.0f} | {min(v):.0f} | {max(v):.0f} | {len(v)} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"binary": args.binary, "preset": args.preset, "per_txn": rows}, f,
                      indent=1)


if __name__ == "__main__":
    main()
