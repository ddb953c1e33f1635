#!/usr/bin/env python3
"""`ccbench accept` at its boundaries, from the command line: a value equal to a limit passes
(min_* fail below it, max_* above it), a limit just past it fails; a wrong row fails
max_wrong even when its count is within the limit (its status says the data was wrong); a row
never checked is N/A for max_wrong, its rule and the verdict too, never PASS.

    accept_boundaries.py CCBENCH WORK_DIR

Rows are crafted (results.csv with the columns ccbench writes); each case is one rules file and
one run of `ccbench accept`, decided by its exit code (0 pass, 4 fail) and the line naming the
row that broke the rule. Exit status 0 when every case behaves as stated.
"""
import csv
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from runs import run  # noqa: E402
from testlib import Checks, ExitCode  # noqa: E402

PASS, FAIL = ExitCode.ok, ExitCode.threshold

COLUMNS = ["collective", "impl", "transport", "device", "dtype", "op", "root", "size[B]", "count[elements]",
           "in_place", "mode", "ranks", "ranks_per_node", "nodes", "group", "warmup", "iterations", "time_avg[us]",
           "time_median[us]", "time_min[us]", "time_p95[us]", "time_max[us]", "time_cv", "algbw[GB/s]", "busbw[GB/s]",
           "busbw_median[GB/s]", "wrong[elements]", "status", "reason", "host"]
# One ok row of 1 MiB: busbw 9.53 GB/s, median 110 us, cv 0.02, p95/median 112/110.
ROW = dict(zip(COLUMNS, ["allreduce", "ring", "shm", "cpu", "float", "sum", "-1", "1048576", "262144", "false", "eager",
                         "2", "2", "1", "world", "5", "20", "110", "110", "108", "112", "115", "0.02", "9.53", "9.53",
                         "9.53", "0", "ok", "", "node01"]))


def results(folder, rows):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "results.csv"), "w", encoding="utf-8", newline="") as f:
        f.write("# ccbench results, schema_version 4\n")
        w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({**ROW, **r})
    return folder


# (name, rows, requirement, expected exit code, text the output must hold)
WRONG = {"wrong[elements]": "2", "status": "wrong", "reason": "rank 1 (host node01), iteration 0: element 3"}
CASES = [
    ("min_busbw equal to the row's busbw passes", [{}], "min_busbw: 9.53", PASS, "PASS"),
    ("min_busbw just above it fails", [{}], "min_busbw: 9.531", FAIL, "9.53 GB/s < 9.531"),
    ("max_latency_us equal to the median passes", [{}], "max_latency_us: 110", PASS, "PASS"),
    ("max_latency_us just below it fails", [{}], "max_latency_us: 109.99", FAIL, "110 us > 109.99"),
    ("max_time_cv equal to the row's cv passes", [{}], "max_time_cv: 0.02", PASS, "PASS"),
    ("max_time_cv just below it fails", [{}], "max_time_cv: 0.01999", FAIL, "0.02 > 0.01999"),
    ("max_wrong 0 with 0 wrong elements passes", [{}], "max_wrong: 0", PASS, "PASS"),
    ("a wrong row of 2 elements within max_wrong 5 fails (its status)", [{}, WRONG], "max_wrong: 5", FAIL,
     "status wrong (guard damage or a failed check)"),
    ("a wrong row of 2 elements beyond max_wrong 1 fails (its count)", [WRONG], "max_wrong: 1", FAIL, "2 elements > 1"),
    # A row never checked (-c 0) has no count: max_wrong is N/A there, the rule and the verdict too, never PASS.
    ("max_wrong 0 over a row never checked is N/A, never PASS", [{"wrong[elements]": "", "reason": "not checked (-c 0)"}],
     "max_wrong: 0", PASS, "# Acceptance: N/A (0 of 1 rule failed, 1 not judged in full: see N/A above)"),
]


def main():
    ccbench, work = sys.argv[1:3]
    checks = Checks("accept at its boundaries")
    for i, (name, rows, require, want_rc, text) in enumerate(CASES):
        folder = results(os.path.join(work, f"case{i}"), rows)
        rules = os.path.join(folder, "rules.yaml")
        with open(rules, "w", encoding="utf-8") as f:
            f.write(f"rules:\n  - name: boundary\n    select: {{collective: allreduce}}\n    require: {{{require}}}\n")
        p = run([ccbench, "accept", "--rules", rules, folder], timeout=60)
        checks(p.rc == want_rc and text in p.output, f"{name}: exit {p.rc} (expected {want_rc.describe()})",
               f"the output should hold {text!r}:\n" + p.output[-1500:])
    return checks.exit_code()


if __name__ == "__main__":
    sys.exit(main())
