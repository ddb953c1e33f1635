"""Launching ccbench (or any command) the way the tests do, and reading what a run wrote.

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
    from runs import launch, rows, run_json

    r = launch(opts.mpiexec, 2, opts.ccbench, ["--device", "cpu", "--out", out], env={"CCBENCH_FAULT": f})
    check(r.rc == ExitCode.ok, f"exit code {r.rc}\n{r.output}")
    measured = [row for row in rows(out) if row["status"] == "ok"]

`launch` runs under mpirun: oversubscribed (the tests start more ranks than this machine has
cores), allowed as root (CI runs as root), each variable of `env` exported to every rank (-x).
`run` runs one command as it is. Both give a Run: the exit code, stdout, stderr, the seconds it
took; a command still running at `timeout` is killed and gives rc None (`timed_out`), which no
expected exit code equals, so a hang fails the check that expected the code.
"""
import csv
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass

MPIRUN_FLAGS = ("--oversubscribe", "--allow-run-as-root")
TIMEOUT_S = 240  # a test's longest launch (5 ranks of the all-case set) takes about 80 s on 2 loaded cores


@dataclass
class Run:
    command: list
    rc: object  # the exit code, or None when the command was killed at its timeout
    out: str
    err: str
    seconds: float

    @property
    def output(self):
        """stdout then stderr."""
        return self.out + self.err

    @property
    def timed_out(self):
        return self.rc is None


def mpirun_command(mpiexec, np, program, args=(), export=(), per_rank="", flags=()):
    """mpiexec's command line for `np` ranks of program + args. per_rank: shell code each rank runs
    before the program (it sees OMPI_COMM_WORLD_RANK), e.g. 'export CCBENCH_HOSTID=h$((R % 2));'."""
    cmd = [mpiexec, *MPIRUN_FLAGS, *flags, "-np", str(np)]
    for name in export:
        cmd += ["-x", name]
    if per_rank:
        cmd += ["sh", "-c", per_rank + ' exec "$0" "$@"']
    return cmd + [program, *args]


def run(command, env=None, unset=(), cwd=None, timeout=TIMEOUT_S, echo=False, merge=False):
    """Runs command (a list) with os.environ plus env, less the names in unset. echo: prints the
    command line and, after it, the exit code and time (for the test's log). merge: stderr into
    stdout, in the order they were written (err is then empty)."""
    environment = dict(os.environ, **(env or {}))
    for name in unset:
        environment.pop(name, None)
    if echo:
        shown = " ".join(f"{k}={v}" for k, v in (env or {}).items())
        print("$ " + (shown + " " if shown else "") + " ".join(map(str, command)), flush=True)
    start = time.monotonic()
    try:
        p = subprocess.run(command, cwd=cwd, env=environment, capture_output=not merge, text=True, errors="replace",
                           timeout=timeout, **({"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT} if merge else {}))
        rc, out, err = p.returncode, p.stdout, p.stderr or ""
    except subprocess.TimeoutExpired as e:
        rc, out, err = None, _text(e.stdout), _text(e.stderr) + f"\n(killed after {timeout} s)"
    result = Run(list(command), rc, out, err, time.monotonic() - start)
    if echo:
        print(f"  exit code {rc} after {result.seconds:.1f} s", flush=True)
    return result


def launch(mpiexec, np, ccbench, args, env=None, export=None, per_rank="", flags=(), **kw):
    """ccbench + args on np ranks under mpirun; every name of env is exported to the ranks unless
    `export` lists the names to export. Other keywords as run()."""
    names = list(env or {}) if export is None else list(export)
    return run(mpirun_command(mpiexec, np, ccbench, args, names, per_rank, flags), env=env, **kw)


def _text(data):
    if data is None:
        return ""
    return data.decode(errors="replace") if isinstance(data, bytes) else data


def rows(path):
    """A results CSV's rows as dicts, the '#' lines skipped; path is the file or the folder that
    holds results.csv. Quoting the CSV rules forbid fails (csv's strict mode)."""
    if os.path.isdir(path):
        path = os.path.join(path, "results.csv")
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader([line for line in f if not line.startswith("#")], strict=True))


def run_json(folder):
    with open(os.path.join(folder, "run.json"), encoding="utf-8") as f:
        return json.load(f)


def python(script, *args):
    """The command line that runs a Python script with this interpreter."""
    return [sys.executable, script, *args]
