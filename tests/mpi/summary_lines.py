#!/usr/bin/env python3
"""The summary lines after the table agree with it, for every output choice (2 CPU ranks).

    summary_lines.py --ccbench PATH [--mpiexec mpirun] SCENARIO

Scenarios:
  per_case       two implementations x two collectives: one "Avg bus bandwidth" line per case, each
                 the mean of that case's rows (tests/check_results.py), never one mixed figure
  comparison     the comparison after the table shows the table's figure (batch busbw) for every
                 implementation and size, and labels the median where it shows it
  csv_only       --format csv: no table, but the footer and verdict; "# results:" names results.csv only
  table_only     --format table --out none: the table and verdict, no "# results:" line
  out_none_file  --out none with --format csv is a usage error (exit 2) that says why
"""
import argparse
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import check_results  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from runs import launch as launch_ranks, rows  # noqa: E402
from testlib import Checks, ExitCode  # noqa: E402

SWEEP = ["--device", "cpu", "-b", "8", "-e", "64K", "-f", "8", "-n", "3", "-w", "1", "--timeout", "60"]


def launch(opts, args):
    p = launch_ranks(opts.mpiexec, 2, opts.ccbench, SWEEP + args, echo=True)
    print(p.output)
    return p


def exit_ok(checks, p):
    checks(p.rc == ExitCode.ok, f"exit code {p.rc}, expected {ExitCode.ok.describe()}")


def per_case(opts, folder, checks):
    p = launch(opts, ["--impl", "ring,tree", "--collective", "allreduce,allgather", "--out", folder])
    exit_ok(checks, p)
    problems = check_results.check_folder(folder, p.out, 0, {"ok", "skipped"}, "none",
                                          check_results.Expectation(p.command))
    checks(not problems, "every row as the command asks (tests/check_results.py)", "\n".join(problems[:20]))
    lines = re.findall(r"^#   (allreduce|allgather)/(ring|tree) over .* : ([0-9.e+]+)$", p.out, re.M)
    checks(len(lines) == 4, f"{len(lines)} per-case average lines, expected 4")
    checks("# Avg bus bandwidth    : per case" in p.out, "an 'Avg bus bandwidth : per case' line")


def comparison(opts, folder, checks):
    p = launch(opts, ["--impl", "mpi,ring", "--collective", "allreduce", "--in-place", "no", "--out", folder])
    exit_ok(checks, p)
    batch = {(r["impl"], int(r["size[B]"])): float(r["busbw[GB/s]"]) for r in rows(folder) if r["status"] == "ok"}
    head = re.search(r"^# Bus bandwidth by implementation, GB/s \((.*?)\)", p.out, re.M)
    checks(head and head.group(1).startswith("batch average"), f"comparison headline: {head and head.group(0)}")
    sizes = {"8 B": 8, "64 B": 64, "512 B": 512, "4 KiB": 4096, "32 KiB": 32768}
    cells = re.findall(r"^#\s+(\d+ (?:B|KiB))\s+([0-9.]+)(?: p50 ([0-9.]+))?\s+([0-9.]+) \(([0-9.]+)x\)", p.out, re.M)
    checks(len(cells) == len(sizes), f"{len(cells)} comparison rows, expected {len(sizes)}")
    for size, mpi, _, ring, _ in cells:
        for impl, shown in (("mpi", mpi), ("ring", ring)):
            table = batch.get((impl, sizes[size]))
            checks(table is not None and f"{table:.2f}" == shown,
                   f"comparison shows {shown} for {impl} at {size}; the table's busbw is {table}")


def csv_only(opts, folder, checks):
    p = launch(opts, ["--impl", "ring", "--collective", "allreduce", "--format", "csv", "--out", folder])
    exit_ok(checks, p)
    checks("# Result: OK" in p.out, "a '# Result: OK' line")
    checks("# Out of bounds values : 0 OK" in p.out, "the footer")
    checks(not re.search(r"^#\s+size\s+count", p.out, re.M), "no table printed")
    checks(f"# results: {folder}/ (results.csv)" in p.out, "the results line names results.csv alone")
    checks(sorted(f for f in os.listdir(folder) if not f.startswith(".")) == ["results.csv"],
           f"the folder holds {os.listdir(folder)}, expected results.csv alone")


def table_only(opts, folder, checks):
    p = launch(opts, ["--impl", "ring", "--collective", "allreduce", "--format", "table", "--out", "none"])
    exit_ok(checks, p)
    checks(re.search(r"^#\s+size\s+count", p.out, re.M), "the table")
    checks("# Result: OK" in p.out, "a '# Result: OK' line")
    checks("# results:" not in p.out, "no '# results:' line, since no file was written")


def out_none_file(opts, folder, checks):
    p = launch(opts, ["--impl", "ring", "--format", "csv", "--out", "none"])
    checks(p.rc == ExitCode.usage, f"exit code {p.rc}, expected {ExitCode.usage.describe()}")
    checks("--out none writes no files, but --format csv asks for one" in p.err, "a message saying why")


SCENARIOS = {"per_case": per_case, "comparison": comparison, "csv_only": csv_only, "table_only": table_only,
             "out_none_file": out_none_file}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ccbench", required=True)
    ap.add_argument("--mpiexec", default="mpirun")
    ap.add_argument("scenario", choices=sorted(SCENARIOS))
    opts = ap.parse_args()
    checks = Checks(f"summary {opts.scenario}")
    with tempfile.TemporaryDirectory(prefix="ccbench-summary-") as folder:
        SCENARIOS[opts.scenario](opts, folder, checks)
    return checks.exit_code()


if __name__ == "__main__":
    sys.exit(main())
