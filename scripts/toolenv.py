#!/usr/bin/env python3
"""The Python packages of the tools in scripts/, found for whichever python3 started them.

A tool calls require("matplotlib") before importing what scripts/requirements.txt declares. When
the interpreter that runs it lacks a module, the tool re-runs itself with the project's virtual
environment (.venv beside scripts/, or $CCBENCH_VENV), which scripts/setup.sh builds over the
system's python3 and its packages; where there is none, or it lacks the module too, the tool
ends with exit 3 naming the interpreter (sys.executable) and what to do.

Usage: scripts/toolenv.py --check    exit 0 when this interpreter imports every requirement,
                                     else 3 naming what is missing
       scripts/toolenv.py --setup    make the virtual environment (.venv beside scripts/, or
                                     $CCBENCH_VENV) over this interpreter and its packages, pip
                                     adding what they lack where an index is reachable; exit 0
                                     when it imports every requirement, else 3. scripts/setup.sh
                                     runs it; an installed copy runs it once with CCBENCH_VENV
                                     set to a writable place (share/ccbench is not, as a rule).
"""
import subprocess
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REQUIREMENTS = os.path.join(HERE, "requirements.txt")
REEXEC_MARK = "CCBENCH_TOOLENV_FROM"  # set in the re-run: which interpreter lacked the module


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


def fail(tool, absent):
    venv = venv_dir()
    tried = os.environ.get(REEXEC_MARK)
    first = f"{tried} lacks them too, and " if tried else ""
    print(f"{tool}: error: {first}{sys.executable} (Python {sys.version.split()[0]}) cannot import "
          f"{', '.join(absent)} (scripts/requirements.txt). Run scripts/setup.sh, which builds {venv} over the "
          f"system's packages (Debian: python3-matplotlib python3-yaml) and which the tools use by themselves; or "
          f"install them for this interpreter: {sys.executable} -m pip install -r {REQUIREMENTS}", file=sys.stderr)
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
    if os.access(python, os.X_OK) and not in_venv and REEXEC_MARK not in os.environ:
        os.environ[REEXEC_MARK] = sys.executable
        os.execv(python, [python, os.path.abspath(sys.argv[0])] + sys.argv[1:])
    fail(tool, absent)


def setup():
    """Makes venv_dir() over this interpreter (its packages visible), pip filling in the rest."""
    venv = venv_dir()
    python = os.path.join(venv, "bin", "python3")
    usable = os.path.exists(python) and subprocess.run([python, "-c", ""], capture_output=True).returncode == 0
    if not usable:
        made = subprocess.run([sys.executable, "-m", "venv", "--clear", "--system-site-packages", "--without-pip", venv],
                              capture_output=True, text=True)
        if made.returncode != 0:
            print(f"toolenv.py: error: {sys.executable} -m venv could not make {venv}: {made.stderr.strip()} "
                  "(Debian: apt-get install python3-venv)", file=sys.stderr)
            sys.exit(3)
    check = [python, os.path.join(HERE, "toolenv.py"), "--check"]
    if subprocess.run(check, capture_output=True).returncode != 0:
        log = os.path.join(venv, "pip.log")
        with open(log, "w") as out:
            for pip in ([python, "-m", "pip"], [sys.executable, "-m", "pip", "--python", python]):
                if subprocess.run(pip + ["install", "-q", "-r", REQUIREMENTS], stdout=out, stderr=out).returncode == 0:
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
