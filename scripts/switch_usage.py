#!/usr/bin/python3
"""Samples every intpath-switch the Mininet launcher runs once a second: threads, resident
memory and CPU time (user + system, from /proc/PID/stat), until the
switches are gone (or --for seconds pass). Prints one line per sample and a
summary: switches, threads per switch, RSS per switch (mean, max), total
switch CPU-seconds over the sampled time, and the CPU share that is.

Used for the demo rows of BENCHMARKS.md: run it next to `intpath demo`, or
next to an idle network (`intpath_net.py --run-for`) for idle cost."""

import argparse
import os
import time

TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


RUN_DIR = "/tmp/intpath-mininet"


def launched():
    """Pids of the switches the Mininet launcher started (its pid files),
    not other intpath-switch processes on the machine."""
    try:
        names = [f for f in os.listdir(RUN_DIR) if f.endswith(".pid")]
    except OSError:
        return []
    pids = []
    for name in names:
        try:
            with open(os.path.join(RUN_DIR, name)) as f:
                pids.append(int(f.read().strip()))
        except (OSError, ValueError):
            pass
    return pids


def switches():
    """pid → (cpu seconds, rss bytes, threads) of every launched switch."""
    out = {}
    for pid in launched():
        try:
            with open(f"/proc/{pid}/comm") as f:
                if f.read().strip() != "intpath-switch":
                    continue
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # Fields after the command: state is [0], utime [11], stime [12],
        # num_threads [17], rss pages [21].
        cpu = (int(fields[11]) + int(fields[12])) / TICK
        out[int(pid)] = (cpu, int(fields[21]) * PAGE, int(fields[17]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--for", dest="duration", type=float, help="stop after this many seconds")
    ap.add_argument("--wait", type=float, default=600, help="seconds to wait for switches")
    args = ap.parse_args()
    deadline = time.time() + args.wait
    while not switches():
        if time.time() > deadline:
            raise SystemExit("no intpath-switch appeared")
        time.sleep(0.2)
    first, last, peak_rss, threads = {}, {}, {}, {}
    start = time.time()
    gone = 0
    while True:
        now = switches()
        # Ended: no switch for three samples in a row (one launcher stops
        # and the next one starts within less).
        gone = 0 if now else gone + 1
        if gone == 3 or (args.duration and time.time() - start > args.duration):
            break
        for pid, (cpu, rss, thr) in now.items():
            first.setdefault(pid, cpu)
            last[pid] = cpu
            peak_rss[pid] = max(peak_rss.get(pid, 0), rss)
            threads[pid] = thr
        used = sum(last[p] - first[p] for p in last)
        print(f"[{time.time() - start:6.1f} s] switches {len(now)}  switch CPU {used:7.2f} s",
              flush=True)
        time.sleep(1)
    span = time.time() - start
    n = len(last)
    used = sum(last[p] - first[p] for p in last)
    rss = sorted(peak_rss.values())
    print(f"switches {n}; threads per switch {min(threads.values())}-{max(threads.values())}; "
          f"RSS per switch mean {sum(rss) / n / 2**20:.1f} MiB, max {rss[-1] / 2**20:.1f} MiB; "
          f"switch CPU {used:.2f} s over {span:.0f} s ({100 * used / span:.1f}% of one core, "
          f"{1e3 * used / span / n:.2f} ms/s per switch)")


if __name__ == "__main__":
    main()
