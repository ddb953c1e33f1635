#!/usr/bin/env python3
"""Decides gpu_telemetry_2 from its results folder: NVML answered on the GPU machine, so every
measured row has a temperature, a power figure, an SM clock and throttle reasons, run.json says
which GPUs and links were sampled, telemetry.jsonl holds samples of both GPUs, the error counters
were read at the run's start and end, and the measuring thread did not wait for them between sizes.
Usage: telemetry_check.py RESULTS.csv
CCBENCH_EXPECT_GPUS (environment): the GPUs that must be sampled [2]."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from runs import rows as read_rows, run_json  # noqa: E402
from testlib import problems_exit  # noqa: E402

# Reading every NVLink counter between sizes took about 28 ms a size on 2 x H200 (13 000 sizes in
# over 6 minutes: h200x2-20261130-r4); the gather and the writers alone take well under that.
MAX_MEDIAN_GAP_S = 0.010


def main(path):
    folder = os.path.dirname(path)
    problems = []
    rows = [r for r in read_rows(path) if r["status"] == "ok"]
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
    tel = run_json(folder)["context"]["telemetry"]
    gpus = tel["nodes"][0]["gpus"]
    want = int(os.environ.get("CCBENCH_EXPECT_GPUS", "2"))
    if not gpus.get("available") or len(gpus.get("devices", [])) < want:
        problems.append(f"context.telemetry: GPUs not sampled: {gpus}")
    else:
        print("sampled:", [(d["index"], d["name"], len(d["nvlinks"]), sorted(d["not_available"])[:6]) for d in gpus["devices"]])
    samples = [json.loads(l) for l in open(os.path.join(folder, tel["series_file"]))]
    seen = {s["gpu"] for s in samples if s["type"] == "sample" and s["temp_c"] is not None}
    if len(seen) < want:
        problems.append(f"telemetry.jsonl: samples of GPUs {sorted(seen)} only")
    figures = tel.get("run_summary", {}).get("figures", {})
    print("run summary:", json.dumps(figures))
    # The error counters were read at the run's start and end: NVLink's where the GPUs have links,
    # PCIe replays on every GPU.
    has_nvlink = any(d.get("nvlinks") for d in gpus.get("devices", []))
    for figure in (["nvlink_errors"] if has_nvlink else []) + ["pcie_replays"]:
        if figures.get(figure) is None:
            problems.append(f"run_summary: no {figure} growth figure (the counters were not read at start and end)")
    # Between sizes the measuring thread reads no counter (NVML takes milliseconds per link): the
    # time from one row's end to the next row's start stays small.
    spans = [s["t_s"] for s in samples if s["type"] == "row"]
    gaps = sorted(b[0] - a[1] for a, b in zip(spans, spans[1:]))
    if gaps and gaps[len(gaps) // 2] > MAX_MEDIAN_GAP_S:
        problems.append(f"telemetry.jsonl: median time between sizes {gaps[len(gaps) // 2] * 1e3:.1f} ms "
                        f"(over {MAX_MEDIAN_GAP_S * 1e3:.0f} ms: is something slow read between sizes?)")
    return problems_exit("telemetry_check", problems, f"{len(rows)} measured rows")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
