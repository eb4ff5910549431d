#!/usr/bin/env python3
"""How long syncing two log files takes after an epoch's close (docs/RESULTS.md, "Writes
between closes, tried and dropped (stop 40)"), with an idle machine: the interval's bytes
written at the close (pre=0), written in four parts during the interval (pre=1), and written
in parts with sync_file_range(SYNC_FILE_RANGE_WRITE) after each (pre=2).

    python3 experiments/log_probes/early_write_sync.py DIR_ON_THE_DISK
"""
import os, time, statistics, sys, ctypes
libc=ctypes.CDLL("libc.so.6", use_errno=True)
libc.sync_file_range.argtypes=[ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
SFR_WRITE = 2
def probe(dirp, pre, rounds=400, per_file=275_000, chunks=4, group=0.002):
    fds = [os.open(os.path.join(dirp, f"f{i}"), os.O_WRONLY|os.O_CREAT|os.O_TRUNC|os.O_APPEND, 0o644) for i in range(2)]
    off = [0, 0]
    lat = []
    buf = b"x" * (per_file // chunks)
    for r in range(rounds):
        for c in range(chunks):
            time.sleep(group / chunks)
            if pre:
                for i, fd in enumerate(fds):
                    os.write(fd, buf)
                    if pre == 2:
                        assert libc.sync_file_range(fd, off[i], len(buf), SFR_WRITE) == 0
                    off[i] += len(buf)
        t = time.perf_counter()
        for i, fd in enumerate(fds):
            if not pre:
                os.write(fd, buf * chunks); off[i] += len(buf) * chunks
            os.write(fd, b"m" * 64); off[i] += 64
            os.fdatasync(fd)
        lat.append((time.perf_counter() - t) * 1e3)
    for fd in fds: os.close(fd)
    lat.sort()
    return lat[len(lat)//2], lat[int(len(lat)*0.99)]
d = sys.argv[1]
print("sync_file_range", hasattr(os, "sync_file_range"))
for k in range(3):
    for pre in (0, 1, 2):
        p50, p99 = probe(d, pre)
        print(f"pre={pre} p50 {p50:.2f} ms p99 {p99:.2f} ms")
