#!/usr/bin/env python3
"""Decides gpu_telemetry_2 from its results folder: NVML answered on the GPU machine, so every
measured row has a temperature, a power figure, an SM clock and throttle reasons, run.json says
which GPUs and links were sampled, and telemetry.jsonl holds samples of both GPUs.
Usage: telemetry_check.py RESULTS.csv"""
import csv
import json
import os
import sys


def main(path):
    folder = os.path.dirname(path)
    problems = []
    with open(path, newline="") as f:
        rows = [r for r in csv.DictReader(l for l in f if not l.startswith("#")) if r["status"] == "ok"]
    if not rows:
        problems.append("no measured row")
    for r in rows:
        where = f"{r['impl']} {r['size[B]']} in_place={r['in_place']}"
        try:
            t, p, c = float(r["gpu_temp_max[C]"]), float(r["gpu_power_mean[W]"]), float(r["gpu_sm_clock_min[MHz]"])
        except ValueError:
            problems.append(f"{where}: a GPU figure is empty: {r['gpu_temp_max[C]']!r} {r['gpu_power_mean[W]']!r} "
                            f"{r['gpu_sm_clock_min[MHz]']!r}")
            continue
        if not (10 <= t <= 110 and 20 <= p <= 1500 and 100 <= c <= 3500 and r["gpu_throttle"]):
            problems.append(f"{where}: implausible: {t} C, {p} W, {c} MHz, throttle {r['gpu_throttle']!r}")
    tel = json.load(open(os.path.join(folder, "run.json")))["context"]["telemetry"]
    gpus = tel["nodes"][0]["gpus"]
    if not gpus.get("available") or len(gpus.get("devices", [])) < 2:
        problems.append(f"context.telemetry: GPUs not sampled: {gpus}")
    else:
        print("sampled:", [(d["index"], d["name"], len(d["nvlinks"]), sorted(d["not_available"])[:6]) for d in gpus["devices"]])
    samples = [json.loads(l) for l in open(os.path.join(folder, tel["series_file"]))]
    seen = {s["gpu"] for s in samples if s["type"] == "sample" and s["temp_c"] is not None}
    if len(seen) < 2:
        problems.append(f"telemetry.jsonl: samples of GPUs {sorted(seen)} only")
    print("run summary:", json.dumps(tel.get("run_summary", {}).get("figures")))
    for p in problems:
        print("FAIL", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
