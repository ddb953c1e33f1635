#!/usr/bin/env python3
"""Runs a command and decides it by its exit code and its output together, never by a regular
expression alone (ctest's PASS_REGULAR_EXPRESSION passes a test whose program crashed after
printing the line).

    expect_run.py [--exit-code N|NAME] [--output REGEX ...] [--skip-output REGEX] -- COMMAND...

The command's stdout and stderr are echoed. Exit status 0 when its exit code is N (0 by default)
and its output matches every --output; 77 (ctest: skipped, with SKIP_RETURN_CODE 77) when it
exited 0 and its output matches --skip-output (it said why it cannot run here); 1 otherwise, each
failure printed.
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))
from runs import run  # noqa: E402
from testlib import SKIP, Checks, exit_code_arg  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--exit-code", type=exit_code_arg, default=0, help="a number or a name of core/exit_code.h")
    ap.add_argument("--output", action="append", default=[], metavar="REGEX")
    ap.add_argument("--skip-output", metavar="REGEX")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    print("$ " + " ".join(command), flush=True)
    p = run(command, merge=True, timeout=None)  # ctest's TIMEOUT bounds it
    sys.stdout.write(p.out)
    if a.skip_output and p.rc == 0 and re.search(a.skip_output, p.out, re.M):
        print("skipped: the command said it cannot run here")
        return SKIP
    checks = Checks(f"exit code {a.exit_code} and the output")
    checks(p.rc == a.exit_code, f"exit code {p.rc}, expected {a.exit_code}")
    for r in a.output:
        checks(re.search(r, p.out, re.M), f"the output matches {r!r}")
    return checks.exit_code()


if __name__ == "__main__":
    sys.exit(main())
