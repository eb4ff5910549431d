#!/usr/bin/env python3
"""Threads a `txbench serve` process holds with 40 open connections (docs/TESTING.md, "Interactive
mode"): the property `tests/server_threads.rs` asserts, checked against any build, e.g. one from
before the event loops (a thread per session) and one after.

    experiments/server_thread_count.py BINARY [BINARY...]
"""
import re
import socket
import subprocess
import sys
import time


def count(binary, connections=40):
    p = subprocess.Popen([binary, "serve", "-p", "silo", "--records", "64",
                          "--max-connections", "48", "--listen", "127.0.0.1:0"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        addr = None
        for line in p.stdout:
            m = re.search(r"listening on (\S+):(\d+)", line)
            if m:
                addr = (m.group(1), int(m.group(2)))
                break
        if addr is None:
            raise SystemExit(f"{binary}: no 'listening on' line")

        def threads():
            status = open(f"/proc/{p.pid}/status").read()
            return int(re.search(r"Threads:\s+(\d+)", status).group(1))

        time.sleep(0.3)
        before = threads()
        conns = [socket.create_connection(addr) for _ in range(connections)]
        time.sleep(0.5)
        during = threads()
        for c in conns:
            c.close()
        return before, during
    finally:
        p.terminate()
        p.wait()


def main():
    for binary in sys.argv[1:]:
        before, during = count(binary)
        print(f"{binary}: {before} threads idle, {during} with 40 connections")


if __name__ == "__main__":
    main()
