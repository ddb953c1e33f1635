#!/usr/bin/env python3
"""Plots ccbench results: bus bandwidth (and time) against size, one line per implementation.

Usage: scripts/plot.py RESULTS.csv [--out DIR] [--metric busbw|busbw_median|time]
Writes one PNG per (collective, dtype, op, mode, placement) next to the CSV (or into --out).
Reads the CSV with Python's csv module (comment lines starting with '#' are skipped).
"""
import argparse
import collections
import csv
import os
import sys


def read_rows(path):
    with open(path, newline="") as f:
        lines = [line for line in f if not line.startswith("#")]
    return list(csv.DictReader(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--out", help="folder for the PNG files (default: the CSV's folder)")
    ap.add_argument("--metric", choices=["busbw", "busbw_median", "time"], default="busbw_median")
    args = ap.parse_args()
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        # A python3 of its own (pyenv, venv) may lack the system's matplotlib: try the system's.
        if os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3"):
            os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
        sys.exit("plot.py needs matplotlib: apt-get install python3-matplotlib")
    try:
        rows = read_rows(args.csv)
    except OSError as e:
        sys.exit(f"plot.py: cannot read {args.csv}: {e}")
    column = {"busbw": "busbw[GB/s]", "busbw_median": "busbw_median[GB/s]", "time": "time_median[us]"}[args.metric]
    if rows and column not in rows[0]:
        sys.exit(f"plot.py: {args.csv} has no column {column}: is it a ccbench results.csv?")
    groups = collections.defaultdict(lambda: collections.defaultdict(list))
    for r in rows:
        if r["status"] not in ("ok", "wrong"):
            continue
        place = "in-place" if r["in_place"] == "true" else "out-of-place"
        key = (r["collective"], r["dtype"], r["op"], r["mode"], place, r["ranks"])
        groups[key][r["impl"]].append((int(r["size[B]"]), float(r[column])))
    out = args.out or os.path.dirname(os.path.abspath(args.csv))
    os.makedirs(out, exist_ok=True)
    for (coll, dtype, op, mode, place, ranks), impls in sorted(groups.items()):
        fig, ax = plt.subplots(figsize=(8, 5))
        for impl, points in impls.items():
            points.sort()
            ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", markersize=3, label=impl)
        ax.set_xscale("log", base=2)
        if args.metric == "time":
            ax.set_yscale("log")
        ax.set_xlabel("size (bytes)")
        ax.set_ylabel(column)
        title = f"{coll} {dtype}" + (f" {op}" if op != "none" else "") + f", {ranks} ranks, {mode}, {place}"
        ax.set_title(title)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
        name = f"{coll}-{dtype}-{op}-{mode}-{place}-{args.metric}.png".replace("/", "_")
        fig.savefig(os.path.join(out, name), dpi=110, bbox_inches="tight")
        plt.close(fig)
        print(os.path.join(out, name))


if __name__ == "__main__":
    main()
