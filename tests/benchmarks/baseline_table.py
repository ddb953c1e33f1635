#!/usr/bin/env python3
"""Markdown tables of busbw by implementation from a ccbench results.csv, with ratios to a baseline.

For each collective and placement: one row per size in [--min, --max], columns
"<impl> avg / p50" (busbw from the batch average and from the median iteration, GB/s) and
"<impl>/<base>" ratios of both. Rows that are not ok are shown by their status.

Usage: baseline_table.py results.csv [--base mpi] [--impls mpi,ring,tree] [--min 1M] [--max 64M]
"""
import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from sizes import human_size  # noqa: E402 (scripts/sizes.py)


def size_arg(s):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * units[s[-1]] if s[-1] in units else int(s)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("csv")
    p.add_argument("--base", default="mpi")
    p.add_argument("--impls", default="mpi,ring,tree")
    p.add_argument("--min", type=size_arg, default=1 << 20)
    p.add_argument("--max", type=size_arg, default=64 << 20)
    a = p.parse_args()
    impls = a.impls.split(",")
    with open(a.csv, newline="") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    table = {}
    for r in rows:
        if r["mode"] != "eager" or r["status"] == "skipped":
            continue
        key = (r["collective"], r["in_place"], int(r["size[B]"]))
        table.setdefault(key, {})[r["impl"]] = r
    cases = sorted({(k[0], k[1]) for k in table}, key=lambda c: (c[0], c[1] == "true"))
    for coll, in_place in cases:
        place = "in-place" if in_place == "true" else "out-of-place"
        print(f"\n**{coll}, {place}** — busbw GB/s, batch average / median iteration\n")
        head = ["size"] + [f"{i} avg / p50" for i in impls] + [f"{i}/{a.base} avg / p50" for i in impls if i != a.base]
        print("| " + " | ".join(head) + " |")
        print("|" + "---:|" * len(head))
        for size in sorted(s for c, ip, s in table if c == coll and ip == in_place):
            if not a.min <= size <= a.max:
                continue
            got = table[(coll, in_place, size)]
            cells = [human_size(size)]
            for i in impls:
                r = got.get(i)
                if r is None:
                    cells.append("-")
                elif r["status"] != "ok":
                    cells.append(r["status"])
                else:
                    cells.append(f"{float(r['busbw[GB/s]']):.2f} / {float(r['busbw_median[GB/s]']):.2f}")
            base = got.get(a.base)
            for i in impls:
                if i == a.base:
                    continue
                r = got.get(i)
                if not r or not base or r["status"] != "ok" or base["status"] != "ok":
                    cells.append("-")
                    continue
                avg = float(r["busbw[GB/s]"]) / float(base["busbw[GB/s]"])
                med = float(r["busbw_median[GB/s]"]) / float(base["busbw_median[GB/s]"])
                cells.append(f"{avg:.2f} / {med:.2f}")
            print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
