#!/usr/bin/env python3
"""The summary lines after the table agree with it, for every output choice (2 CPU ranks).

    summary_tests.py --ccbench PATH [--mpiexec mpirun] SCENARIO

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
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import check_results  # noqa: E402

SWEEP = ["--device", "cpu", "-b", "8", "-e", "64K", "-f", "8", "-n", "3", "-w", "1", "--timeout", "60"]


def launch(opts, args):
    cmd = [opts.mpiexec, "--oversubscribe", "--allow-run-as-root", "-np", "2", opts.ccbench] + SWEEP + args
    print("$ " + " ".join(cmd), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=240)
    print(p.stdout + p.stderr)
    return p


def expect(failures, cond, what):
    if not cond:
        failures.append(what)


def per_case(opts, folder, failures):
    p = launch(opts, ["--impl", "ring,tree", "--collective", "allreduce,allgather", "--out", folder])
    expect(failures, p.returncode == 0, f"exit code {p.returncode}")
    failures += check_results.check_folder(folder, p.stdout, 0, {"ok", "skipped"}, "none",
                                           check_results.Expectation(p.args))
    lines = re.findall(r"^#   (allreduce|allgather)/(ring|tree) over .* : ([0-9.e+]+)$", p.stdout, re.M)
    expect(failures, len(lines) == 4, f"{len(lines)} per-case average lines, expected 4")
    expect(failures, "# Avg bus bandwidth    : per case" in p.stdout, "no 'Avg bus bandwidth : per case' line")


def comparison(opts, folder, failures):
    p = launch(opts, ["--impl", "mpi,ring", "--collective", "allreduce", "--in-place", "no", "--out", folder])
    expect(failures, p.returncode == 0, f"exit code {p.returncode}")
    rows = check_results.read_csv_rows(os.path.join(folder, "results.csv"))
    batch = {(r["impl"], int(r["size[B]"])): float(r["busbw[GB/s]"]) for r in rows if r["status"] == "ok"}
    head = re.search(r"^# Bus bandwidth by implementation, GB/s \((.*?)\)", p.stdout, re.M)
    expect(failures, head and head.group(1).startswith("batch average"), f"comparison headline: {head and head.group(0)}")
    sizes = {"8 B": 8, "64 B": 64, "512 B": 512, "4 KiB": 4096, "32 KiB": 32768}
    cells = re.findall(r"^#\s+(\d+ (?:B|KiB))\s+([0-9.]+)(?: p50 ([0-9.]+))?\s+([0-9.]+) \(([0-9.]+)x\)", p.stdout, re.M)
    expect(failures, len(cells) == len(sizes), f"{len(cells)} comparison rows, expected {len(sizes)}")
    for size, mpi, _, ring, _ in cells:
        for impl, shown in (("mpi", mpi), ("ring", ring)):
            table = batch.get((impl, sizes[size]))
            expect(failures, table is not None and f"{table:.2f}" == shown,
                   f"comparison shows {shown} for {impl} at {size}; the table's busbw is {table}")


def csv_only(opts, folder, failures):
    p = launch(opts, ["--impl", "ring", "--collective", "allreduce", "--format", "csv", "--out", folder])
    expect(failures, p.returncode == 0, f"exit code {p.returncode}")
    expect(failures, "# Result: OK" in p.stdout, "no '# Result: OK' line")
    expect(failures, "# Out of bounds values : 0 OK" in p.stdout, "no footer")
    expect(failures, not re.search(r"^#\s+size\s+count", p.stdout, re.M), "a table was printed")
    expect(failures, f"# results: {folder}/ (results.csv)" in p.stdout, "the results line does not name results.csv alone")
    expect(failures, sorted(f for f in os.listdir(folder) if not f.startswith(".")) == ["results.csv"],
           f"the folder holds {os.listdir(folder)}")


def table_only(opts, folder, failures):
    p = launch(opts, ["--impl", "ring", "--collective", "allreduce", "--format", "table", "--out", "none"])
    expect(failures, p.returncode == 0, f"exit code {p.returncode}")
    expect(failures, re.search(r"^#\s+size\s+count", p.stdout, re.M), "no table")
    expect(failures, "# Result: OK" in p.stdout, "no '# Result: OK' line")
    expect(failures, "# results:" not in p.stdout, "a '# results:' line although no file was written")


def out_none_file(opts, folder, failures):
    p = launch(opts, ["--impl", "ring", "--format", "csv", "--out", "none"])
    expect(failures, p.returncode == 2, f"exit code {p.returncode}, expected 2")
    expect(failures, "--out none writes no files, but --format csv asks for one" in p.stderr, "no message saying why")


SCENARIOS = {"per_case": per_case, "comparison": comparison, "csv_only": csv_only, "table_only": table_only,
             "out_none_file": out_none_file}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ccbench", required=True)
    ap.add_argument("--mpiexec", default="mpirun")
    ap.add_argument("scenario", choices=sorted(SCENARIOS))
    opts = ap.parse_args()
    failures = []
    with tempfile.TemporaryDirectory(prefix="ccbench-summary-") as folder:
        SCENARIOS[opts.scenario](opts, folder, failures)
    return check_results.report(failures, f" {opts.scenario}", "the summary agrees with the table")


if __name__ == "__main__":
    sys.exit(main())
