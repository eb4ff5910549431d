#!/usr/bin/env python3
"""Issue 24's per-operation bound, measured in one sitting (docs/RESULTS.md, "Interactive
transactions"): at one client, the median interactive YCSB operation against the bare round
trip that `txbench ping`'s measurement (run just before, in the same process) gives.

For ROUNDS rounds, each binary in turn runs

    txbench run --interactive -p silo,no_wait --clients 1 -d 2 --warmup 0.5 --no-pin \
        --records 100000 --format json

and the script prints, per round, binary and protocol, the ping, the median operation, their
ratio (`interactive.op_over_ping`), the throughput and the busy cores of other processes; then
the median ratio per binary and protocol.

    experiments/op_over_ping.py BINARY[,BINARY...] [--rounds 3]
"""
import argparse
import json
import statistics
import subprocess


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binaries")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--protocols", default="silo,no_wait")
    a = ap.parse_args()
    ratios = {}
    print("| round | binary | protocol | ping (us) | median op (us) | op / ping | txn/s | other cores |")
    print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for r in range(a.rounds):
        for b in a.binaries.split(","):
            args = [b, "run", "--interactive", "-p", a.protocols, "--clients", "1", "-d", "2",
                    "--warmup", "0.5", "--no-pin", "--records", "100000", "--format", "json"]
            out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
            for line in out.splitlines():
                d = json.loads(line)
                s = d["protocol_stats"]
                ratio = s["interactive.op_over_ping"]
                ratios.setdefault((b, d["protocol"]), []).append(ratio)
                print(f"| {r + 1} | {b} | {d['protocol']} | {s['interactive.ping_us']:.1f} | "
                      f"{s['interactive.op_p50_us']:.1f} | {ratio:.2f} | "
                      f"{d['throughput_tps']:.0f} | {d.get('other_processes_cores', 0):.2f} |")
    print()
    for (b, p), rs in ratios.items():
        print(f"{b} {p}: median op/ping {statistics.median(rs):.2f} (min {min(rs):.2f}, max {max(rs):.2f})")


if __name__ == "__main__":
    main()
