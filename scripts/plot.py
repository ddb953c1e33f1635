#!/usr/bin/env python3
"""Plots ccbench results: bus bandwidth (and time) against size, one line per implementation.

Usage: scripts/plot.py RESULTS.csv [--out DIR] [--metric busbw|busbw_median|time]
Writes one PNG per (collective, dtype, op, mode, placement) next to the CSV (or into --out).
The CSV is read and its values checked as scripts/report.py does (scripts/results_csv.py): a
foreign or damaged file is refused (exit 2) naming its lines. Needs matplotlib
(scripts/requirements.txt, found by scripts/toolenv.py; exit 3 without it).
"""
import argparse
import collections
import os
import sys

import results_csv
import toolenv


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--out", help="folder for the PNG files (default: the CSV's folder)")
    ap.add_argument("--metric", choices=["busbw", "busbw_median", "time"], default="busbw_median")
    args = ap.parse_args()
    try:
        rows, _ = results_csv.read(args.csv)
    except results_csv.BadInput as e:
        print(f"plot.py: error: {e}", file=sys.stderr)
        sys.exit(2)
    column = {"busbw": "busbw[GB/s]", "busbw_median": "busbw_median[GB/s]", "time": "time_median[us]"}[args.metric]
    toolenv.require("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
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
