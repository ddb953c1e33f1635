#!/usr/bin/env python3
"""tests/check_results.py rejects a real run's files edited to hide a regression.

    check_results_rejects_edits.py --check-results PATH --dir RUN_DIR -- COMMAND...

RUN_DIR holds the results.csv and run.json of a real run of COMMAND (mpi.ccbench_all_cases.np2).
Each edit below is applied to a copy of both files (the same rows in each, so that they still
agree with each other), then check_results.py judges the copy against COMMAND's case set and must
reject it, saying why; the untouched copy must pass. Edits:
  - every tree row deleted, every ok ring row turned into "skipped: regression" and the second
    half of the rows cut (what a broken build that lost an implementation could write);
  - each of those three alone; one row deleted; one row written twice; one size's in-place row
    moved before its out-of-place row;
  - busbw of every reduce-scatter row written with a bus factor of 1 (busbw = algbw; all-reduce's
    factor is 1 on 2 ranks, so it would hide nothing there), and every
    all-gather row's with the factor of 8 ranks (a --groups run's world) instead of the row's;
  - a measured row turned into a skip with a documented reason of another implementation.
Exit status 0 when every edit is rejected for its reason and the copy passes.
"""
import argparse
import csv
import io
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
import expected_cases  # noqa: E402

sys.path.insert(0, os.path.join(HERE, "..", "lib"))
from runs import python, run  # noqa: E402
from testlib import Checks  # noqa: E402

# check_results.py's exit status: 0 every row sound, 1 a check failed (its own, not ccbench's).
JUDGED_SOUND, JUDGED_WRONG = 0, 1


class Run:
    """A results.csv (its '#' lines and rows) and a run.json, edited together row by row."""

    def __init__(self, folder):
        with open(os.path.join(folder, "results.csv"), encoding="utf-8", newline="") as f:
            lines = f.read().splitlines(keepends=True)
        self.preamble = [l for l in lines if l.startswith("#")]
        reader = csv.DictReader([l for l in lines if not l.startswith("#")], strict=True)
        self.columns = reader.fieldnames
        self.rows = list(reader)
        with open(os.path.join(folder, "run.json"), encoding="utf-8") as f:
            self.doc = json.load(f)
        assert len(self.doc["rows"]) == len(self.rows), "run.json and results.csv differ before any edit"

    def pairs(self):
        return list(zip(self.rows, self.doc["rows"]))

    def keep(self, pairs):
        self.rows = [c for c, _ in pairs]
        self.doc["rows"] = [j for _, j in pairs]

    def write(self, folder):
        os.makedirs(folder, exist_ok=True)
        out = io.StringIO(newline="")
        w = csv.DictWriter(out, fieldnames=self.columns, lineterminator="\r\n")
        w.writeheader()
        w.writerows(self.rows)
        with open(os.path.join(folder, "results.csv"), "w", encoding="utf-8", newline="") as f:
            f.write("".join(self.preamble) + out.getvalue())
        with open(os.path.join(folder, "run.json"), "w", encoding="utf-8") as f:
            json.dump(self.doc, f)


def skip(pair, reason):
    c, j = pair
    c.update({"status": "skipped", "reason": reason, "wrong[elements]": ""})
    j.update({"status": "skipped", "reason": reason, "wrong": None})


def drop_tree(run):
    run.keep([p for p in run.pairs() if p[0]["impl"] != "tree"])


def ring_regression(run):
    for p in run.pairs():
        if p[0]["impl"] == "ring" and p[0]["status"] == "ok":
            skip(p, "regression")


def cut_half(run):
    run.keep(run.pairs()[: len(run.rows) // 2])


def drop_one(run):
    pairs = run.pairs()
    measured = [i for i, p in enumerate(pairs) if p[0]["status"] == "ok"]
    run.keep(pairs[: measured[len(measured) // 2]] + pairs[measured[len(measured) // 2] + 1:])


def twice(run):
    pairs = run.pairs()
    i = [k for k, p in enumerate(pairs) if p[0]["status"] == "ok"][-1]
    run.keep(pairs[: i + 1] + [(dict(pairs[i][0]), dict(pairs[i][1]))] + pairs[i + 1:])


def swap_placements(run):
    pairs = run.pairs()
    i = next(k for k, p in enumerate(pairs) if p[0]["status"] == "ok" and p[0]["in_place"] == "false"
             and pairs[k + 1][0]["in_place"] == "true")
    pairs[i], pairs[i + 1] = pairs[i + 1], pairs[i]
    run.keep(pairs)


def factor_one(run):
    for c, j in run.pairs():
        if c["collective"] == "reducescatter" and c["status"] == "ok":
            f = expected_cases.bus_factor("reducescatter", int(c["ranks"]))
            c["busbw[GB/s]"] = c["algbw[GB/s]"]
            c["busbw_median[GB/s]"] = f"{float(c['busbw_median[GB/s]']) / f:.6g}"
            j["busbw_gbps"], j["busbw_median_gbps"] = float(c["busbw[GB/s]"]), float(c["busbw_median[GB/s]"])


def world_factor(run, world):
    """busbw as a --groups run would have it with the world's rank count instead of its group's."""
    for c, j in run.pairs():
        if c["status"] == "ok" and c["collective"] == "allgather":
            f = expected_cases.bus_factor("allgather", world) / expected_cases.bus_factor("allgather", int(c["ranks"]))
            for col, key in (("busbw[GB/s]", "busbw_gbps"), ("busbw_median[GB/s]", "busbw_median_gbps")):
                c[col] = f"{float(c[col]) * f:.6g}"
                j[key] = float(c[col])


def untimed_batch(run):
    """One row's time as a batch loop that timed none of its calls leaves it (1/4000 of its fastest
    single call, and nanoseconds per call), with algbw and busbw recomputed from it so that they
    agree. Not a rooted collective's row: the floor leaves those out (tests/expected_cases.py,
    TIME_AVG_FLOOR, MIN_CALL_US)."""
    rooted = ("broadcast", "reduce", "gather", "scatter")
    c, j = next(p for p in run.pairs()
                if p[0]["status"] == "ok" and float(p[0]["time_min[us]"]) > 0 and p[0]["collective"] not in rooted)
    scale = min(float(c["time_min[us]"]) / 4000, 0.005) / float(c["time_avg[us]"])
    c["time_avg[us]"] = f"{float(c['time_avg[us]']) * scale:.6g}"
    for col, key in (("algbw[GB/s]", "algbw_gbps"), ("busbw[GB/s]", "busbw_gbps")):
        c[col] = f"{float(c[col]) / scale:.6g}"
        j[key] = float(c[col])
    j["time_avg_us"] = float(c["time_avg[us]"])


def foreign_reason(run):
    p = next(p for p in run.pairs() if p[0]["impl"] == "ring" and p[0]["status"] == "ok")
    skip(p, "oneshot handles up to 262144 bytes per rank (CCBENCH_ONESHOT_MAX_BYTES)")


def combined(run):
    drop_tree(run)
    ring_regression(run)
    cut_half(run)


EDITS = [
    # (name, edit, text the rejection must hold)
    ("tree rows deleted, ok ring rows skipped: regression, half the rows cut", combined,
     "skipped for a reason not allowed here: 'regression'"),
    ("every tree row deleted", drop_tree, "allreduce/tree float sum: no row at all"),
    ("every ok ring row skipped: regression", ring_regression, "skipped for a reason not allowed here: 'regression'"),
    ("the second half of the rows cut", cut_half, "no row at all"),
    ("one measured row deleted", drop_one, "expected "),
    ("one measured row written twice", twice, "extra row"),
    ("out-of-place and in-place rows swapped", swap_placements, "expected "),
    ("reduce-scatter busbw with a bus factor of 1", factor_one, "(bus factor of reducescatter on"),
    ("all-gather busbw with 8 ranks' factor", lambda r: world_factor(r, 8), "(bus factor of allgather on"),
    ("a ring row skipped with oneshot's size limit", foreign_reason, "skipped for a reason not allowed here"),
    ("a row's time as an untimed batch leaves it", untimed_batch, "the batch cannot have timed its calls"),
]


def judge(check_results, folder, command):
    p = run(python(check_results, "--dir", folder, "--unchecked", "none", "--command", " ".join(command)))
    return p.rc, p.output


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check-results", required=True)
    ap.add_argument("--dir", required=True, help="a real run's results folder")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- then the command that made it")
    a = ap.parse_args()
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    checks = Checks("edited runs")
    with tempfile.TemporaryDirectory(prefix="ccbench-edited-") as tmp:
        copy = os.path.join(tmp, "untouched")
        Run(a.dir).write(copy)
        rc, text = judge(a.check_results, copy, command)
        checks(rc == JUDGED_SOUND, f"the untouched copy passes ({len(Run(a.dir).rows)} rows)", text[-3000:])
        for name, edit, why in EDITS:
            run_files = Run(a.dir)
            before = len(run_files.rows)
            edit(run_files)
            folder = os.path.join(tmp, name.replace(" ", "_").replace(":", ""))
            run_files.write(folder)
            rc, text = judge(a.check_results, folder, command)
            fails = [l for l in text.splitlines() if l.startswith("FAIL")]
            checks(rc == JUDGED_WRONG and any(why in l for l in fails),
                   f"rejected: {name} ({before} -> {len(run_files.rows)} rows, {len(fails)} failure lines)",
                   f"exit {rc}, no failure line holds {why!r}")
            print("      " + (next((l for l in fails if why in l), fails[0] if fails else text.strip()[-300:])))
    return checks.exit_code()


if __name__ == "__main__":
    sys.exit(main())
