"""What the Python tests share: ccbench's exit codes, read from core/exit_code.h (the one place
that defines them), and the ways a test fails with its reason.

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
    from testlib import ExitCode, Failed, check, killed_by, main_guard, need

    check(r.rc == ExitCode.timeout, f"exit code {r.rc}, expected {ExitCode.timeout.describe()}")

Two styles of test:
- fail fast: `check` and `need` raise Failed at the first check that fails; the script ends with
  `sys.exit(main_guard(main))`, which prints "FAIL: <reason>" and exits 1 (main returns 0; where
  the test cannot run here it returns SKIP or raises Skipped);
- collecting: `checks = Checks()`, `checks(ok, what, detail)` prints one line a check and goes on;
  the script ends with `sys.exit(checks.exit_code())` (or returns it from main);
- listing: a checker of result files gathers what it found wrong in a list and ends with
  `sys.exit(problems_exit(name, problems, summary))`.
"""
import enum
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXIT_CODE_H = os.path.join(ROOT, "core", "exit_code.h")


def _read_exit_codes(path=EXIT_CODE_H):
    """{name: value} of `enum class ExitCode` in the header; ValueError when it is not found whole."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    body = re.search(r"enum class ExitCode : int \{(.*?)\};", text, re.S)
    codes = {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s*(\w+)\s*=\s*(\d+),", body.group(1), re.M)} \
        if body else {}
    if "ok" not in codes or len(codes) < 2:
        raise ValueError(f"{path}: no enum class ExitCode with its values found")
    return codes


class _Code(enum.IntEnum):
    def describe(self):
        """'5 (timeout)'"""
        return f"{int(self)} ({self.name.replace('_', ' ')})"


ExitCode = _Code("ExitCode", _read_exit_codes())


def exit_code_arg(text):
    """An expected exit code as a command line gives it, by name ('usage') or number ('2'), for
    argparse's type=; a number that is not one of ccbench's codes stays a number (another
    program's own)."""
    if text in ExitCode.__members__:
        return ExitCode[text]
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"'{text}' is neither a number nor one of {', '.join(ExitCode.__members__)}") from None
    return ExitCode(value) if value in ExitCode._value2member_map_ else value
SKIP = 77  # a test that cannot run here (ctest's SKIP_RETURN_CODE); not one of ccbench's codes


def killed_by(signal_number):
    """The exit code of a rank that ended on a signal it handled: 128 + the signal (143 for SIGTERM)."""
    return 128 + int(signal_number)


class Failed(Exception):
    """A check of a test failed; the message says what was found and what was expected."""


def check(cond, what):
    if not cond:
        raise Failed(what)


def need(cond, what, text=""):
    """check() with the output that shows why (a job's stdout, a file) on the lines below `what`."""
    if not cond:
        raise Failed(what + ("\n" + text if text else ""))


class Skipped(Exception):
    """The test cannot run here (a tool or a device missing); the message says why."""


def main_guard(main):
    """Runs main() and returns its exit code for sys.exit: main's return value (0, or SKIP); 1,
    after "FAIL: <reason>", when a check raised Failed; SKIP, after "SKIPPED: <reason>", on Skipped."""
    try:
        return main()
    except Failed as e:
        print(f"FAIL: {e}", flush=True)
        return 1
    except Skipped as e:
        print(f"SKIPPED: {e}", flush=True)
        return SKIP


def problems_exit(name, problems, summary, shown=None):
    """The exit status of a checker that lists what it found wrong (the results checkers of
    tests/gpu/): each problem on a line "FAIL <name>: <problem>" (all, or the first `shown`), then
    "<name>: <summary>, N problem(s)"; 1 when there is any, else 0."""
    shown = len(problems) if shown is None else shown
    for p in problems[:shown]:
        print(f"FAIL {name}: {p}", flush=True)
    if len(problems) > shown:
        print(f"FAIL {name}: ... and {len(problems) - shown} more", flush=True)
    print(f"{name}: {summary}, {len(problems)} problem(s)", flush=True)
    return 1 if problems else 0


def _ends(text, keep=1500):
    return text if len(text) <= 2 * keep else f"{text[:keep]}\n[...]\n{text[-keep:]}"


class Checks:
    """Checks that go on after one fails. checks(ok, what, detail) prints "ok   WHAT" or
    "FAIL WHAT" (and under a failure the detail, indented: its first and last 1500 characters where
    it is longer, since a launch's output says what went wrong at its end) and returns
    whether it held; exit_code() prints a one-line summary (the first line of each failed check)
    and gives 0 when every check held, else 1."""

    def __init__(self, name=""):
        self.name = name  # the summary line starts with it
        self.failures = []
        self.count = 0

    def __call__(self, ok, what, detail=""):
        self.count += 1
        print(("ok   " if ok else "FAIL ") + what, flush=True)
        if not ok:
            self.failures.append(what)
            if detail:
                print("     " + _ends(detail).replace("\n", "\n     "), flush=True)
        return bool(ok)

    def exit_code(self):
        head = f"{self.name}: " if self.name else ""
        if not self.failures:
            print(f"{head}all {self.count} checks passed", flush=True)
            return 0
        firsts = [(what.splitlines() or [""])[0] for what in self.failures]
        print(f"{head}{len(self.failures)} of {self.count} checks failed: " + "; ".join(firsts), flush=True)
        return 1
