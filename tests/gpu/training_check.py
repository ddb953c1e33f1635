#!/usr/bin/env python3
"""Checks the training columns of a GPU run (tests/gpu/gpu1_tests.cmake, gpu1_overlap_*,
gpu1_energy_*, gpu1_nccl_config_*), so that a run whose load, energy or settings silently did
nothing cannot pass.

Environment:
  CCBENCH_EXPECT_LOAD        "gemm" or "membw": every measured eager row names that load and its
                             unit, with a rate alone (before the rows), during, and alone again after
                             the rows above 0, and during at most 1.2x alone (the load cannot speed
                             up beside a collective); graph rows none; run.json's context.overlap
                             gives the same alone figures, the room and the SMs
  CCBENCH_EXPECT_ENERGY      "1": every measured eager row has energy[J/coll] and
                             energy_efficiency[GB/J] above 0, consistent with its size, over a window
                             of at least CCBENCH_EXPECT_ENERGY_WINDOW seconds [1] (energy_window[s]),
                             and run.json's context says energy is available; "na": every row's
                             energy columns are empty and run.json says why
  CCBENCH_EXPECT_ENERGY_GPUS the number of GPUs run.json's energy block sums over
  CCBENCH_EXPECT_CONFIGS     "impl:LABEL|LABEL ...": impl has measured rows with each nccl_config
                             label and none with another; a label NCCL_PROTO=X makes every such
                             row's algorithm name exactly protocol X (NCCL's report of what it ran)
Usage: training_check.py results.csv
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from runs import rows as rows_of, run_json  # noqa: E402
from testlib import problems_exit  # noqa: E402


# Both columns are written with 6 significant digits: their product is the size to about 1e-5.
kPrinted = 1e-4


def protocol(algorithm):
    """NCCL's protocol in an algorithm column ("RING/LL 2ch" -> "LL"), or ""."""
    m = re.search(r"/(\w+)", algorithm)
    return m.group(1).upper() if m else ""


def check_overlap_context(context, rows):
    block = context.get("overlap")
    if not isinstance(block, dict):
        return [f"run.json has no context.overlap block: {block}"]
    problems = []
    if not (block.get("alone", 0) > 0 and (block.get("alone_end") or 0) > 0):
        problems.append(f"context.overlap: alone {block.get('alone')} and after the rows {block.get('alone_end')}")
    if not (0 <= block.get("room_sms", -1) < block.get("sms", 0)):
        problems.append(f"context.overlap: room {block.get('room_sms')} of {block.get('sms')} SMs")
    for r in rows:
        if r["status"] == "ok" and r["mode"] == "eager":
            for column, key in (("load_alone", "alone"), ("load_alone_end", "alone_end")):
                if abs(float(r.get(column) or 0) - block[key]) > kPrinted * block[key]:
                    problems.append(f"{r['collective']}/{r['impl']} {r['size[B]']} B: {column} {r[column]} is not "
                                    f"context.overlap's {block[key]}")
    return problems


def check_load(rows, kind):
    problems = []
    unit = "TFLOPS" if kind == "gemm" else "GB/s"
    measured = [r for r in rows if r["status"] == "ok"]
    if not measured:
        return ["no measured row"]
    for r in measured:
        where = f"{r['collective']}/{r['impl']} {r['size[B]']} B {r['mode']}"
        if r["mode"] == "graph":
            if r.get("load") or r.get("load_during"):
                problems.append(f"{where}: a graph row names a load (replays run after it stopped)")
            continue
        if not r.get("load", "").startswith(kind) or r.get("load_unit") != unit:
            problems.append(f"{where}: load '{r.get('load')}' in '{r.get('load_unit')}', expected {kind} in {unit}")
            continue
        alone, during = float(r.get("load_alone") or 0), float(r.get("load_during") or 0)
        after = float(r.get("load_alone_end") or 0)
        if not (alone > 0 and during > 0 and after > 0 and during <= 1.2 * alone):
            problems.append(f"{where}: load alone {alone} during {during} alone after the rows {after} {unit}")
    return problems


def check_energy(rows, context, want, gpus, window):
    problems = []
    energy = context.get("energy", {})
    if want == "na":
        if energy.get("available") is not False or not energy.get("reason"):
            problems.append(f"run.json energy block {energy}: expected available false with a reason")
        for r in rows:
            if r.get("energy[J/coll]") or r.get("energy_efficiency[GB/J]"):
                problems.append(f"{r['collective']}/{r['impl']} {r['size[B]']} B: energy columns set")
        return problems
    if energy.get("available") is not True:
        problems.append(f"run.json energy block {energy}: expected available true")
    if gpus and energy.get("gpus") != int(gpus):
        problems.append(f"run.json energy block sums over {energy.get('gpus')} GPUs, expected {gpus}")
    measured = [r for r in rows if r["status"] == "ok" and r["mode"] == "eager"]
    if not measured:
        problems.append("no measured eager row")
    for r in measured:
        where = f"{r['collective']}/{r['impl']} {r['size[B]']} B"
        j, gbj = float(r.get("energy[J/coll]") or 0), float(r.get("energy_efficiency[GB/J]") or 0)
        if not (j > 0 and gbj > 0):
            problems.append(f"{where}: energy {j} J/coll, {gbj} GB/J")
        elif abs(gbj * j - int(r["size[B]"]) / 1e9) > kPrinted * int(r["size[B]"]) / 1e9:
            problems.append(f"{where}: {gbj} GB/J x {j} J is not the row's {r['size[B]']} B")
        seconds = float(r.get("energy_window[s]") or 0)
        if seconds < window:
            problems.append(f"{where}: the energy window lasted {seconds} s, less than {window} s")
    return problems


def check_configs(rows, spec):
    problems = []
    for item in spec.split():
        impl, labels = item.split(":", 1)
        want = labels.split("|")
        mine = [r for r in rows if r["impl"] == impl]
        seen = {r.get("nccl_config", "") for r in mine}
        for label in want:
            if not any(r.get("nccl_config") == label and r["status"] == "ok" for r in mine):
                problems.append(f"{impl}: no measured row with nccl_config '{label}'")
        for other in seen - set(want):
            problems.append(f"{impl}: rows with nccl_config '{other}', expected only {want}")
        for r in mine:
            settings = dict(s.split("=", 1) for s in r.get("nccl_config", "").split(";") if "=" in s)
            proto = settings.get("NCCL_PROTO")
            if proto and proto != "default" and r["status"] == "ok" and protocol(r["algorithm"]) != proto.upper():
                problems.append(f"{impl} [{r['nccl_config']}] {r['size[B]']} B: algorithm '{r['algorithm']}' "
                                f"is not protocol {proto}")
    return problems


def main(path):
    rows = rows_of(path)
    folder = os.path.dirname(os.path.abspath(path))
    context = run_json(folder).get("context", {}) if os.path.isfile(os.path.join(folder, "run.json")) else {}
    problems = []
    if os.environ.get("CCBENCH_EXPECT_LOAD"):
        problems += check_load(rows, os.environ["CCBENCH_EXPECT_LOAD"])
        problems += check_overlap_context(context, rows)
    if os.environ.get("CCBENCH_EXPECT_ENERGY"):
        problems += check_energy(rows, context, os.environ["CCBENCH_EXPECT_ENERGY"],
                                 os.environ.get("CCBENCH_EXPECT_ENERGY_GPUS"),
                                 float(os.environ.get("CCBENCH_EXPECT_ENERGY_WINDOW", "1")))
    if os.environ.get("CCBENCH_EXPECT_CONFIGS"):
        problems += check_configs(rows, os.environ["CCBENCH_EXPECT_CONFIGS"])
    return problems_exit("training_check", problems, f"{len(rows)} rows")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
