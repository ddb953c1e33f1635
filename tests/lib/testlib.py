"""What the Python tests share: ccbench's exit codes, read from core/exit_code.h (the one place
that defines them), and the check that fails a test with its reason.

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
    from testlib import ExitCode, Failed, check, killed_by

    check(r.rc == ExitCode.timeout, f"exit code {r.rc}, expected {ExitCode.timeout.describe()}")
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


def killed_by(signal_number):
    """The exit code of a rank that ended on a signal it handled: 128 + the signal (143 for SIGTERM)."""
    return 128 + int(signal_number)


class Failed(Exception):
    """A check of a test failed; the message says what was found and what was expected."""


def check(cond, what):
    if not cond:
        raise Failed(what)
