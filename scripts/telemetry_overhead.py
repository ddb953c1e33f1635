#!/usr/bin/env python3
"""Does health sampling disturb the measurement? Runs ccbench in pairs, sampling off then on
(alternating, so that drift of the machine hits both alike), and compares per size the median
over the pairs: busbw (from the median iteration) at sizes >= 64 MiB must stay within 1 %, the
8 B median time within 2 %. Prints a table and exits 4 when a limit is missed.

Usage (GPU node, one rank per GPU):
  scripts/telemetry_overhead.py --out DIR [--pairs 3] [--np 2] [--ccbench build/ccbench]
                                [--impl nccl] [--interval 100] [--counter-interval 1000] [--max 1G]
                                [--device gpu]
"""
import argparse
import csv
import os
import statistics
import subprocess
import sys

BIG = 64 << 20  # busbw compared from here up
LIMITS = {"busbw": 0.01, "latency": 0.02}


def run(args, label, telemetry):
    out = os.path.join(args.out, label)
    cmd = [args.mpiexec, "-np", str(args.np), "--bind-to", "none", args.ccbench, "--impl", args.impl,
           "--collective", "allreduce", "-b", "8", "-e", args.max, "--device", args.device, "-f", "2", "-n", "50", "-w", "10",
           "--in-place", "no", "--format", "csv", "--out", out, "--telemetry", telemetry]
    if telemetry == "on":
        cmd += ["--telemetry-interval", str(args.interval), "--telemetry-counter-interval", str(args.counter_interval)]
    print("#", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "results.csv"), newline="") as f:
        return [r for r in csv.DictReader(l for l in f if not l.startswith("#")) if r["status"] == "ok"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--ccbench", default="build/ccbench")
    ap.add_argument("--mpiexec", default="mpirun")
    ap.add_argument("--impl", default="nccl")
    ap.add_argument("--interval", type=int, default=100, help="--telemetry-interval (ms)")
    ap.add_argument("--counter-interval", type=int, default=1000, help="--telemetry-counter-interval (ms)")
    ap.add_argument("--max", default="1G", help="largest size (-e)")
    ap.add_argument("--device", default="gpu")
    args = ap.parse_args()
    by = {"off": {}, "on": {}}  # mode -> size -> [(busbw, time)]
    for i in range(args.pairs):
        for mode in ("off", "on"):
            for r in run(args, f"{mode}-{i}", mode):
                by[mode].setdefault(int(r["size[B]"]), []).append(
                    (float(r["busbw_median[GB/s]"]), float(r["time_median[us]"])))
    missed = 0
    print(f"{'size':>12} {'busbw off':>10} {'busbw on':>10} {'time off':>10} {'time on':>10} {'change':>8}  checked")
    for size in sorted(by["off"]):
        off, on = by["off"][size], by["on"].get(size, [])
        if not on:
            continue
        b0, b1 = statistics.median(x[0] for x in off), statistics.median(x[0] for x in on)
        t0, t1 = statistics.median(x[1] for x in off), statistics.median(x[1] for x in on)
        kind = "busbw" if size >= BIG else "latency" if size == 8 else ""
        change = (b1 / b0 - 1) if kind == "busbw" else (t1 / t0 - 1)
        bad = kind and abs(change) > LIMITS[kind] and (change < 0 if kind == "busbw" else change > 0)
        missed += bool(bad)
        note = f"{kind} within {LIMITS[kind]:.0%}: {'NO' if bad else 'yes'}" if kind else ""
        print(f"{size:>12} {b0:>10.2f} {b1:>10.2f} {t0:>10.2f} {t1:>10.2f} {change:>+8.2%}  {note}")
    print(f"# sampling {'disturbs' if missed else 'does not disturb'} the measurement ({missed} limits missed)")
    return 4 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
