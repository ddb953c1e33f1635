#!/usr/bin/env python3
"""Runs a command and decides it by its exit code and its output together, never by a regular
expression alone (ctest's PASS_REGULAR_EXPRESSION passes a test whose program crashed after
printing the line).

    expect_run.py [--exit-code N] [--output REGEX ...] [--skip-output REGEX] -- COMMAND...

The command's stdout and stderr are echoed. Exit status 0 when its exit code is N (0 by default)
and its output matches every --output; 77 (ctest: skipped, with SKIP_RETURN_CODE 77) when it
exited 0 and its output matches --skip-output (it said why it cannot run here); 1 otherwise, each
failure printed.
"""
import argparse
import re
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--exit-code", type=int, default=0)
    ap.add_argument("--output", action="append", default=[], metavar="REGEX")
    ap.add_argument("--skip-output", metavar="REGEX")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    print("$ " + " ".join(command), flush=True)
    p = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
    sys.stdout.write(p.stdout)
    if a.skip_output and p.returncode == 0 and re.search(a.skip_output, p.stdout, re.M):
        print("skipped: the command said it cannot run here")
        return 77
    failures = [] if p.returncode == a.exit_code else [f"exit code {p.returncode}, expected {a.exit_code}"]
    failures += [f"the output does not match {r!r}" for r in a.output if not re.search(r, p.stdout, re.M)]
    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print(f"PASS: exit code {a.exit_code}, output as expected")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
