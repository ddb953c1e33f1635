#!/usr/bin/env python3
"""The Python packages of the tools in scripts/, found for whichever python3 started them.

A tool calls require("matplotlib") before importing what scripts/requirements.txt declares. When
the interpreter that runs it lacks a module, the tool re-runs itself with the project's virtual
environment (.venv beside scripts/, or $CCBENCH_VENV), which scripts/setup.sh builds over the
system's python3 and its packages, or else with the system's python3 (/usr/bin/python3, or
those $CCBENCH_SYSTEM_PYTHON names, ':'-separated) where that imports them; where none does, the tool ends with exit 3 naming the interpreter
(sys.executable) and the set-up step of this copy (scripts/setup.sh in the source, toolenv.py
--setup where installed).

Usage: scripts/toolenv.py --check    exit 0 when this interpreter imports every requirement,
                                     else 3 naming what is missing
       scripts/toolenv.py --setup    make the virtual environment (.venv beside scripts/, or
                                     $CCBENCH_VENV) over the first interpreter that already
                                     imports every requirement (this one, else the system's
                                     python3), else over this one with pip adding what it lacks
                                     where an index is reachable (clusters are often offline);
                                     exit 0 when it imports every requirement, else 3.
                                     scripts/setup.sh runs it; an installed copy runs it once with
                                     CCBENCH_VENV set to a writable place (share/ccbench is not,
                                     as a rule).
"""
import subprocess
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REQUIREMENTS = os.path.join(HERE, "requirements.txt")
REEXEC_MARK = "CCBENCH_TOOLENV_FROM"  # set in the re-run: which interpreter lacked the module
# The system's interpreters, where distributions install theirs and their packages;
# CCBENCH_SYSTEM_PYTHON (paths separated by ':', empty for none) names others.
SYSTEM_PYTHONS = ("/usr/bin/python3", "/usr/local/bin/python3")
# pip's wait for an index that does not answer: offline clusters are common, and its default
# (15 s and 5 retries) keeps a set-up waiting for minutes before it says so.
PIP_OFFLINE = ["--timeout", "5", "--retries", "0"]


def venv_dir():
    return os.environ.get("CCBENCH_VENV") or os.path.join(os.path.dirname(HERE), ".venv")


def requirements():
    """(package, module) of every line of requirements.txt."""
    out = []
    with open(REQUIREMENTS) as f:
        for line in f:
            text, _, comment = line.partition("#")
            if not text.strip():
                continue
            package = text.strip()
            words = comment.replace(";", " ").split()
            module = words[words.index("import") + 1] if "import" in words[:-1] else package
            out.append((package, module))
    return out


def missing(modules):
    return [m for m in modules if importlib.util.find_spec(m) is None]


def installed():
    """Whether this is an installed copy (share/ccbench/scripts, without the source's setup.sh)."""
    return not os.path.exists(os.path.join(HERE, "setup.sh"))


def setup_step():
    """The set-up step that provides the packages for this copy, as a command to paste."""
    if installed():
        return (f"CCBENCH_VENV=~/.ccbench-venv {os.path.join(HERE, 'toolenv.py')} --setup once, then run the tools with "
                f"CCBENCH_VENV=~/.ccbench-venv set")
    return f"{os.path.join(HERE, 'setup.sh')}, which builds {venv_dir()}"


def interpreter_with(modules):
    """The first system python3 other than this one that imports every module, or None."""
    probe = "import importlib.util, sys; sys.exit(any(importlib.util.find_spec(m) is None for m in sys.argv[1:]))"
    given = os.environ.get("CCBENCH_SYSTEM_PYTHON")
    for python in SYSTEM_PYTHONS if given is None else [p for p in given.split(":") if p]:
        itself = sys.prefix == sys.base_prefix and os.path.realpath(python) == os.path.realpath(sys.executable)
        if not os.access(python, os.X_OK) or itself:  # a venv's python3 links to it, with other packages
            continue
        if subprocess.run([python, "-c", probe] + list(modules), capture_output=True).returncode == 0:
            return python
    return None


def fail(tool, absent):
    tried = os.environ.get(REEXEC_MARK)
    first = f"{tried} lacks them too, and " if tried else ""
    print(f"{tool}: error: {first}{sys.executable} (Python {sys.version.split()[0]}) cannot import "
          f"{', '.join(absent)} (scripts/requirements.txt). Run {setup_step()} (over the system's packages, Debian: "
          f"python3-matplotlib python3-yaml); or install them for this interpreter: "
          f"{sys.executable} -m pip install -r {REQUIREMENTS}", file=sys.stderr)
    sys.exit(3)


def require(*modules):
    """Returns when this interpreter imports every module; else re-runs the tool with the
    project's virtual environment, or exits 3 naming the interpreter."""
    absent = missing(modules)
    if not absent:
        return
    tool = os.path.basename(sys.argv[0])
    python = os.path.join(venv_dir(), "bin", "python3")
    in_venv = os.path.realpath(sys.prefix) == os.path.realpath(venv_dir())
    if REEXEC_MARK not in os.environ:
        if not (os.access(python, os.X_OK) and not in_venv):
            python = interpreter_with(modules)
        if python:
            os.environ[REEXEC_MARK] = sys.executable
            os.execv(python, [python, os.path.abspath(sys.argv[0])] + sys.argv[1:])
    fail(tool, absent)


def setup():
    """Makes venv_dir() over the first interpreter that imports every requirement (this one, else
    the system's python3; its packages visible), else over this one with pip filling in the rest."""
    venv = venv_dir()
    python = os.path.join(venv, "bin", "python3")
    modules = [m for _, m in requirements()]
    check = [python, os.path.join(HERE, "toolenv.py"), "--check"]
    usable = os.path.exists(python) and subprocess.run([python, "-c", ""], capture_output=True).returncode == 0
    if usable and subprocess.run(check, capture_output=True).returncode != 0:
        usable = False  # made over an interpreter without the packages: made again over one with them
    if not usable:
        base = sys.executable if not missing(modules) else interpreter_with(modules) or sys.executable
        made = subprocess.run([base, "-m", "venv", "--clear", "--system-site-packages", "--without-pip", venv],
                              capture_output=True, text=True)
        if made.returncode != 0:
            print(f"toolenv.py: error: {base} -m venv could not make {venv}: {made.stderr.strip()} "
                  "(Debian: apt-get install python3-venv)", file=sys.stderr)
            sys.exit(3)
    if subprocess.run(check, capture_output=True).returncode != 0:
        log = os.path.join(venv, "pip.log")
        with open(log, "w") as out:
            for pip in ([python, "-m", "pip"], [sys.executable, "-m", "pip", "--python", python]):
                if subprocess.run(pip + ["install", "-q"] + PIP_OFFLINE + ["-r", REQUIREMENTS], stdout=out,
                                  stderr=out).returncode == 0:
                    break
        if subprocess.run(check).returncode != 0:
            print(f"toolenv.py: error: {venv} lacks the tools' packages and pip could not add them (log: {log})",
                  file=sys.stderr)
            sys.exit(3)
    print(f"toolenv.py: {venv} imports {', '.join(m for _, m in requirements())}")


def main():
    if sys.argv[1:] == ["--setup"]:
        setup()
        return
    if sys.argv[1:] != ["--check"]:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    absent = missing([m for _, m in requirements()])
    if absent:
        fail("toolenv.py", absent)
    print(f"toolenv.py: {sys.executable} imports {', '.join(m for _, m in requirements())}")


if __name__ == "__main__":
    main()
