#!/usr/bin/env python3
"""What an fdatasync costs when it appends against when it overwrites blocks already written
(docs/RESULTS.md, "Writes between closes, tried and dropped (stop 40)"): two files, every 2 ms
130 KB written to each and each synced, for 4 s. Prints write requests per sync (vda), kernel CPU
per sync (system + irq + softirq of the whole machine) and the sync's p50 and p99.

    python3 experiments/log_probes/prezeroed_sync.py DIR_ON_THE_DISK
"""
import os, sys, time
# Two files, every 2 ms: write 130 KB to each and fdatasync each. Appending to new files vs
# overwriting pre-zeroed ones. Prints disk writes per fsync, CPU (sys+irq+softirq) per fsync,
# and fsync latency p50/p99.
def stat():
    c = list(map(int, open('/proc/stat').readline().split()[1:]))
    d = [l.split() for l in open('/proc/diskstats') if l.split()[2] == 'vda'][0]
    return c, int(d[7])
def run(dirp, prezero, seconds=4, chunk=130_000):
    names = [os.path.join(dirp, f"f{i}") for i in range(2)]
    total = int(chunk / 0.002 * seconds) + chunk
    fds = []
    for n in names:
        fd = os.open(n, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        if prezero:
            z = b"\0" * (1 << 20)
            for _ in range(total // len(z) + 1):
                os.write(fd, z)
            os.fsync(fd)
            os.lseek(fd, 0, 0)
        fds.append(fd)
    os.sync(); time.sleep(1)
    buf = b"x" * chunk
    c0, w0 = stat(); lat = []; n = 0
    end = time.time() + seconds
    off = 0
    while time.time() < end:
        time.sleep(0.002)
        for fd in fds:
            os.pwrite(fd, buf, off)
            t = time.perf_counter(); os.fdatasync(fd); lat.append(time.perf_counter() - t); n += 1
        off += chunk
    c1, w1 = stat()
    d = [b - a for a, b in zip(c0, c1)]
    kern = d[2] + d[5] + d[6]  # system, irq, softirq (USER_HZ ticks)
    lat.sort()
    print(f"prezero={prezero}: fsyncs {n} writes/fsync {(w1 - w0) / n:.2f} kernel ms/fsync {kern * 10 / n:.3f} fsync p50 {lat[len(lat)//2]*1e3:.2f} p99 {lat[int(len(lat)*.99)]*1e3:.2f} ms")
    for fd in fds: os.close(fd)
    for nm in names: os.unlink(nm)
d = sys.argv[1]
for k in range(2):
    run(d, False); run(d, True)
