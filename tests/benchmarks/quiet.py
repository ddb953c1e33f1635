#!/usr/bin/env python3
"""Runs a timing command on a quiet machine and says how quiet it stayed.

Waits (up to --wait seconds) until the CPUs are idle (--idle fraction over a 2 s sample), runs
the command, then reports the CPU time that other processes used meanwhile: busy time from
/proc/stat less the command's own (its reaped descendants' user + system time). A figure taken
while others used more than a few percent of the cores is suspect and worth re-running.

Usage: quiet.py [--wait S] [--idle F] [--log FILE] -- COMMAND...
Prints one line ("# quiet: ...") to stderr and appends it to --log; exits with the command's code.
"""
import argparse
import os
import subprocess
import sys
import time


def busy_idle():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]  # idle + iowait
    busy = sum(v[:8]) - idle  # user nice system idle iowait irq softirq steal
    return busy, idle


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--wait", type=float, default=600)
    p.add_argument("--idle", type=float, default=0.95)
    p.add_argument("--log")
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        p.error("no command given")
    hz = os.sysconf("SC_CLK_TCK")
    cores = os.cpu_count() or 1
    start = time.monotonic()
    while True:
        b0, i0 = busy_idle()
        time.sleep(2)
        b1, i1 = busy_idle()
        idle = (i1 - i0) / max(1, (b1 - b0) + (i1 - i0))
        if idle >= a.idle or time.monotonic() - start > a.wait:
            break
    waited = time.monotonic() - start
    load = open("/proc/loadavg").read().split()[:3]
    b0, _ = busy_idle()
    c0 = os.times()
    t0 = time.monotonic()
    rc = subprocess.call(cmd)
    t1 = time.monotonic()
    c1 = os.times()
    b1, _ = busy_idle()
    ours = (c1.children_user - c0.children_user) + (c1.children_system - c0.children_system)
    others = max(0.0, (b1 - b0) / hz - ours)
    wall = t1 - t0
    line = (f"# quiet: idle {idle:.0%} before (waited {waited:.0f} s, load {' '.join(load)}); "
            f"{wall:.1f} s run; other processes used {others:.2f} CPU-s = "
            f"{others / (wall * cores):.1%} of {cores} cores; exit {rc}")
    print(line, file=sys.stderr)
    if a.log:
        with open(a.log, "a") as f:
            f.write(line + "\n")
    return rc


if __name__ == "__main__":
    sys.exit(main())
