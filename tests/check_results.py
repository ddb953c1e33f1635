#!/usr/bin/env python3
"""Checks a ccbench run by what it wrote, not only by its exit code.

    check_results.py --dir DIR [--exit-code N] [--allow ok,skipped] [--unchecked none|some|all]
                     [--allow-skip IMPL/COLL:TEXT ...] [--rows N] [--hosts N] [--expect-output REGEX ...]
                     [--no-results] -- COMMAND...

Runs COMMAND (which must write its results to DIR; DIR is emptied first), echoes its output,
then checks:
  - the exit code is the expected one, and the output (stdout and stderr) matches every
    --expect-output;
  - the case set (tests/expected_cases.py): every row the ccbench arguments in COMMAND ask for is
    there, in order, and nothing else: every collective x implementation x dtype x op x size x
    placement x mode (x group, x cycle), each measured, or skipped for the reason its arguments
    give (a collective the implementation does not declare, less than one element per rank, no
    in-place form, a root outside the run) or for a reason allowed for that implementation and
    collective on this machine (expected_cases.CONTEXT_SKIPS, and --allow-skip); a run the model
    cannot describe must state its row count (--rows);
  - every measured row's algbw and busbw: bytes / time_avg, times the bus factor of its
    collective for the row's rank count (nccl-tests doc/PERFORMANCE.md);
  - results.csv (read with the csv module) and run.json (json) hold the same rows;
  - every row's status is allowed and agrees with its wrong count: ok rows have 0, or are empty
    with a "not checked" reason; wrong rows have a count > 0 and a reason; skipped and failed rows
    have no count and a reason;
  - run.json says the run is complete, with the exit code and a verdict that agree;
  - the footer on stdout agrees with the rows: "Out of bounds values" is the sum of the checked
    rows' counts (N/A when none was checked) with the rows not checked counted apart, each
    "Avg bus bandwidth" is the mean busbw of one case's measured rows, "Result:" matches the exit
    code;
  - the "# results:" line lists exactly the files in DIR.
With --no-results, the run must end before writing any result file (a start-up refusal).
Without COMMAND, DIR is checked as it is (the footer checks then need --stdout FILE; the case set
needs --command "ccbench ARGS" or --rows).
Exit status 0 when every check passes, 1 otherwise (each failure printed).
"""
import argparse
import csv
import json
import os
import re
import shutil
import shlex
import subprocess
import sys
import threading

import expected_cases

RESULT_FILES = ("results.csv", "run.json", "results.md", "telemetry.jsonl")
# What makes two rows the same case in the table and its footer (results/row_key.cpp case_key).
CASE_COLUMNS = ("collective", "impl", "transport", "device", "dtype", "op", "mode", "ranks", "ranks_per_node",
                "root", "group")
# The footer prints averages with 6 significant digits, the CSV busbw with 6 as well.
RELATIVE_TOLERANCE = 2e-5


class Checks:
    def __init__(self):
        self.failures = []

    def expect(self, cond, what):
        if not cond:
            self.failures.append(what)
        return cond


def read_csv_rows(path):
    """results.csv as dicts; the comment lines before the header are skipped."""
    with open(path, newline="", encoding="utf-8") as f:
        lines = [line for line in f if not line.startswith("#")]
    return list(csv.DictReader(lines, strict=True))


def measured(row):
    return row["status"] in ("ok", "wrong")


def check_row(c, i, row, allowed, unchecked):
    where = f"results.csv row {i + 1} ({row['collective']}/{row['impl']} {row['size[B]']} B " \
            f"{'in-place' if row['in_place'] == 'true' else 'out-of-place'} {row['mode']})"
    status, wrong, reason = row["status"], row["wrong[elements]"], row["reason"]
    c.expect(status in allowed, f"{where}: status {status!r} is not among {sorted(allowed)}: {reason}")
    c.expect(wrong == "" or re.fullmatch(r"[0-9]+", wrong), f"{where}: wrong count {wrong!r} is neither empty nor >= 0")
    if status == "ok":
        if wrong == "":
            c.expect(reason.startswith("not checked"), f"{where}: no wrong count and no 'not checked' reason")
            c.expect(unchecked != "none", f"{where}: not checked ({reason})")
        else:
            c.expect(wrong == "0", f"{where}: ok with {wrong} wrong elements")
            c.expect(unchecked != "all", f"{where}: checked although every row should not be")
    elif status == "wrong":
        c.expect(wrong not in ("", "0") and reason, f"{where}: wrong with count {wrong!r} and reason {reason!r}")
    else:
        c.expect(wrong == "" and reason, f"{where}: {status} with count {wrong!r} and reason {reason!r}")


def check_json(c, doc, rows, exit_code):
    jrows = doc.get("rows", [])
    c.expect(len(jrows) == len(rows), f"run.json has {len(jrows)} rows, results.csv {len(rows)}")
    for i, (j, r) in enumerate(zip(jrows, rows)):
        expected_wrong = None if r["wrong[elements]"] == "" else int(r["wrong[elements]"])
        c.expect(j.get("wrong") == expected_wrong and j.get("status") == r["status"] and j.get("cycle") == int(r["cycle"]),
                 f"run.json row {i + 1}: wrong {j.get('wrong')!r} status {j.get('status')!r} cycle {j.get('cycle')!r}, "
                 f"results.csv says {expected_wrong!r} {r['status']!r} cycle {r['cycle']!r}")
    c.expect(doc.get("complete") is True, f"run.json: complete is {doc.get('complete')!r}: {doc.get('incomplete_reason')}")
    if exit_code is not None:
        c.expect(doc.get("exit_code") == exit_code, f"run.json: exit_code {doc.get('exit_code')!r}, expected {exit_code}")
        c.expect((doc.get("verdict") == "OK") == (exit_code == 0), f"run.json: verdict {doc.get('verdict')!r}")


def case_averages(rows):
    sums = {}
    for r in rows:
        if not r["dtype"]:  # an implementation that cannot run here at all: no case (results/sinks.cpp)
            continue
        # The training conditions are part of a case where rows have them (results/row_key.cpp case_key).
        key = tuple(r[k] for k in CASE_COLUMNS) + tuple(r.get(k, "") for k in ("nccl_config", "load"))
        s = sums.setdefault(key, [0.0, 0])
        if measured(r):
            s[0] += float(r["busbw[GB/s]"])
            s[1] += 1
    return [s / n if n else None for s, n in sums.values()]


def close(a, b):
    return abs(a - b) <= RELATIVE_TOLERANCE * max(abs(a), abs(b), 1e-9)


def check_footer(c, stdout, rows, exit_code):
    """The footer (table or footer-only output) agrees with the rows."""
    m = re.search(r"^# Out of bounds values : (.*)$", stdout, re.M)
    if not c.expect(m, "stdout has no '# Out of bounds values' line"):
        return
    checked = [int(r["wrong[elements]"]) for r in rows if measured(r) and r["wrong[elements]"] != ""]
    unchecked = sum(1 for r in rows if measured(r) and r["wrong[elements]"] == "")
    total = sum(checked)
    expected = (f"{total} {'OK' if total == 0 else 'FAILED'}" if checked else "N/A")
    if unchecked:
        expected += f" ({unchecked} row{'' if unchecked == 1 else 's'} not checked)"
    c.expect(m.group(1) == expected, f"footer says 'Out of bounds values : {m.group(1)}', the rows say '{expected}'")

    avg = re.search(r"^# Avg bus bandwidth    : (.*)\n((?:#   .* : .*\n)*)", stdout, re.M)
    if c.expect(avg, "stdout has no '# Avg bus bandwidth' line"):
        lines = [avg.group(1)] if avg.group(1) != "per case" else re.findall(r" : (\S+)$", avg.group(2), re.M)
        printed = [None if v == "-" else float(v) for v in lines]
        expected_avg = case_averages(rows)
        c.expect(len(printed) == len(expected_avg) and
                 all((p is None and e is None) or (p is not None and e is not None and close(p, e))
                     for p, e in zip(printed, expected_avg)),
                 f"footer averages {printed} differ from the rows' per-case means {expected_avg}")

    result = re.search(r"^# Result: (.*)$", stdout, re.M)
    if c.expect(result, "stdout has no '# Result:' line") and exit_code is not None:
        c.expect((result.group(1) == "OK") == (exit_code == 0), f"'# Result: {result.group(1)}' with exit code {exit_code}")


def check_results_line(c, stdout, folder):
    present = sorted(f for f in RESULT_FILES if os.path.exists(os.path.join(folder, f)))
    m = re.search(r"^# results: (.*)/ \((.*)\)$", stdout, re.M)
    if not present:
        c.expect(not m, "a '# results:' line although no file was written")
        return
    if c.expect(m, "stdout has no '# results:' line"):
        c.expect(sorted(m.group(2).split(", ")) == present, f"'# results:' lists {m.group(2)}; {folder} holds {present}")


class Expectation:
    """What the rows must be besides each being sound: the case set of a command, or a count."""

    def __init__(self, command=None, rows=None, allow_skips=(), hosts=1):
        self.command, self.rows, self.allow_skips, self.hosts = command, rows, list(allow_skips), hosts

    def check(self, c, rows, statuses, doc):
        if self.rows is not None:
            c.expect(len(rows) == self.rows, f"results.csv holds {len(rows)} rows, the test states {self.rows}")
            return
        if self.command is None:
            c.expect(False, "no command and no --rows: the rows cannot be checked against what was asked for")
            return
        try:
            plan = expected_cases.plan_from_command(self.command)
        except ValueError as e:
            c.expect(False, f"the expected case set cannot be computed ({e}); state the row count (--rows N)")
            return
        if plan is None:
            c.expect(False, "the command runs no ccbench: state the row count (--rows N)")
            return
        plan.hosts = self.hosts
        if plan.device is None:  # --device auto: what the run found
            plan.device = (doc or {}).get("context", {}).get("device", "cpu")
        for item in self.allow_skips:
            where, _, text = item.partition(":")
            impl, _, coll = where.partition("/")
            plan.extra_skips.append((impl, coll, text))
        measured = tuple(s for s in statuses if s != "skipped")
        for f in expected_cases.check_case_set(rows, plan, measured):
            c.expect(False, f)
        print(f"case set: {expected_cases.expected_row_count(plan)} rows when nothing is skipped for a reason of "
              f"the machine; {len(rows)} written")


def check_folder(folder, stdout, exit_code, allowed, unchecked, expectation=None):
    """Failures of the results in `folder`; `expectation` (Expectation) says which rows must be
    there (None: the rows are not checked against what was asked for)."""
    c = Checks()
    csv_path, json_path = os.path.join(folder, "results.csv"), os.path.join(folder, "run.json")
    rows, doc = [], None
    if c.expect(os.path.exists(csv_path), f"{csv_path} was not written"):
        rows = read_csv_rows(csv_path)
        c.expect(rows, "results.csv holds no row")
        for i, row in enumerate(rows):
            check_row(c, i, row, allowed, unchecked)
        for f in expected_cases.check_bandwidth(rows):
            c.expect(False, f)
    if c.expect(os.path.exists(json_path), f"{json_path} was not written"):
        with open(json_path, encoding="utf-8") as f:
            doc = json.load(f)
        check_json(c, doc, rows, exit_code)
    if expectation is not None and rows:
        expectation.check(c, rows, allowed, doc)
    if stdout is not None:
        check_footer(c, stdout, rows, exit_code)
        check_results_line(c, stdout, folder)
    return c.failures


def check_no_results(folder, stdout):
    """A run refused before it began: no result file, no '# results:' line."""
    c = Checks()
    present = [f for f in RESULT_FILES if os.path.exists(os.path.join(folder, f))]
    c.expect(not present, f"{folder} holds {present} although the run was to end before writing results")
    c.expect(not re.search(r"^# results:", stdout or "", re.M),
             "a '# results:' line although no file was to be written")
    return c.failures


def _echo(stream, sink, lines):
    for line in stream:
        sink.write(line)
        sink.flush()
        lines.append(line)


def run(command, folder):
    """Runs `command` with DIR emptied first; its stdout and stderr are echoed line by line (a
    test killed for its time still shows how far it got) and returned with the exit code."""
    shutil.rmtree(folder, ignore_errors=True)
    print("$ " + " ".join(command), flush=True)
    out, err = [], []
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace") as p:
        t = threading.Thread(target=_echo, args=(p.stderr, sys.stderr, err))
        t.start()
        _echo(p.stdout, sys.stdout, out)
        t.join()
    return p.returncode, "".join(out), "".join(err)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dir", required=True, help="the results folder (--out of the command)")
    ap.add_argument("--exit-code", type=int, default=0, help="the expected exit code [0]")
    ap.add_argument("--allow", default="ok,skipped", help="row statuses allowed [ok,skipped]")
    ap.add_argument("--unchecked", choices=("none", "some", "all"), default="some",
                    help="measured rows without a wrong count: none, some (with a reason) or all [some]")
    ap.add_argument("--allow-skip", action="append", default=[], metavar="IMPL/COLL:TEXT",
                    help="a case of IMPL (and COLL; either may be empty) may be skipped with a reason holding TEXT")
    ap.add_argument("--rows", type=int, help="the row count, for a run whose case set is not modelled")
    ap.add_argument("--hosts", type=int, default=1,
                    help="the hosts the ranks run on, in rank-order blocks (--groups node and rails) [1]")
    ap.add_argument("--expect-output", action="append", default=[], metavar="REGEX",
                    help="stdout or stderr must match REGEX (repeatable)")
    ap.add_argument("--no-results", action="store_true", help="the run must end before writing any result file")
    ap.add_argument("--stdout", help="without COMMAND: a file holding the run's stdout")
    ap.add_argument("--command", help="without COMMAND: the command line that made DIR, for its case set")
    ap.add_argument("command_argv", nargs=argparse.REMAINDER, help="-- then the command to run")
    a = ap.parse_args()
    command = a.command_argv[1:] if a.command_argv[:1] == ["--"] else a.command_argv
    stdout, stderr = None, ""
    if command:
        rc, stdout, stderr = run(command, a.dir)
        if rc != a.exit_code:
            print(f"FAIL: exit code {rc}, expected {a.exit_code}")
            return 1
    elif a.stdout:
        with open(a.stdout, encoding="utf-8", errors="replace") as f:
            stdout = f.read()
    failures = [f"the output does not match {p!r}" for p in a.expect_output
                if not re.search(p, (stdout or "") + stderr, re.M)]
    if a.no_results:
        failures += check_no_results(a.dir, stdout)
        return report(failures, "", f"exit code {a.exit_code} before any result file, output as expected")
    expectation = Expectation(command or (shlex.split(a.command) if a.command else None), a.rows, a.allow_skip,
                              a.hosts)
    failures += check_folder(a.dir, stdout, a.exit_code, set(a.allow.split(",")), a.unchecked, expectation)
    return report(failures, "", f"exit code {a.exit_code}; the case set, rows, bandwidths, run.json and footer agree "
                                f"({a.dir})")


# Failures printed one per line up to this many; the rest are counted.
MAX_PRINTED = 60


def report(failures, label, success):
    """Prints each failure, or the success line; returns the exit status (0 when none failed)."""
    for f in failures[:MAX_PRINTED]:
        print(f"FAIL{label}: {f}")
    if len(failures) > MAX_PRINTED:
        print(f"FAIL{label}: ... and {len(failures) - MAX_PRINTED} more")
    if not failures:
        print(f"PASS{label}: {success}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
