#!/usr/bin/env python3
"""The layer rule, checked: every #include "folder/..." of a source file must name a folder its
own folder may include (LAYERS below; docs/design.md explains the layers). A file in a folder not
listed is an error too, so a new folder has to take its place in the table. And every CCBENCH_*
variable is read through core/knobs.h: a getenv("CCBENCH_...") anywhere else is an error, and a
string that names a CCBENCH_* variable (a read, a message) must name a row of the knob table
(core/knob_table.h); a family ending in "_" (CCBENCH_GPU_*) and the build options (CCBENCH_WITH_*,
CCBENCH_HAVE_*) are not variables.

Usage: tests/lint/layers.py [SOURCE_ROOT]     exit 0 when every include keeps the rule, 1 otherwise
       tests/lint/layers.py --table           prints the table (docs/design.md quotes it)
       tests/lint/layers.py --cmake           prints it as FOLDER=ALLOWED,ALLOWED lines, which the build reads
                                              to link each layer's library against only those (scripts/cmake/CcbenchLayers.cmake)
       tests/lint/layers.py --self-test       plants upward includes in a scratch tree: each must be caught
"""
import os
import re
import sys
import tempfile

# Each folder and what it may include besides itself, lowest layer first. The generated headers
# of the build (core/build_config.h, core/git_hash.h) are core's.
BASE = ["core", "results"]
# The engine and the features attached to it, which the run (harness/) puts together.
HARNESS = ["harness/engine", "harness/overlap", "harness/health", "harness/groups", "harness/verdict"]
LAYERS = {
    "core": [],
    "results": ["core"],
    "topologies": BASE,
    "telemetry": BASE,
    "transports": BASE + ["topologies"],
    "collectives": BASE + ["topologies", "transports"],
    "harness/model": BASE + ["topologies", "collectives"],
    "harness/job": BASE + ["topologies"],
    "harness/verdict": BASE,
    "harness/engine": BASE + ["topologies", "telemetry", "transports", "collectives", "harness/job"],
    # The features: each attaches to the engine through its hooks (harness/engine/runner_hook.h).
    "harness/overlap": BASE + ["topologies", "collectives", "harness/job", "harness/engine"],
    "harness/health": BASE + ["topologies", "telemetry", "collectives", "harness/job", "harness/engine"],
    "harness/groups": BASE + ["topologies", "telemetry", "transports", "collectives", "harness/job", "harness/engine"],
    "harness": BASE + ["topologies", "telemetry", "transports", "collectives", "harness/job", "harness/model"] + HARNESS,
    "harness/links": BASE + ["topologies", "telemetry", "transports", "collectives", "harness/job", "harness/model",
                             "harness"] + HARNESS,
    "harness/app": BASE + ["topologies", "telemetry", "transports", "collectives", "harness/job", "harness/links",
                           "harness/model", "harness"] + HARNESS,
}
SOURCE_SUFFIXES = (".h", ".cpp", ".cu", ".cuh", ".h.in")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


KNOB_READ = re.compile(r'getenv\(\s*"CCBENCH_')
KNOBS_FILE = "core/knobs.cpp"
KNOB_TABLE = "core/knob_table.h"
KNOB_ROW = re.compile(r'\.name\s*=\s*"(CCBENCH_[A-Z0-9_]+)"')
STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
KNOB_NAME = re.compile(r"CCBENCH_[A-Z0-9_]*")
BUILD_OPTIONS = ("CCBENCH_WITH_", "CCBENCH_HAVE_")  # CMake options and their macros, not variables


def knob_names(root):
    """The variables of the knob table; empty when the table is missing (then every name is unknown)."""
    try:
        with open(os.path.join(root, KNOB_TABLE), encoding="utf-8") as f:
            return set(KNOB_ROW.findall(f.read()))
    except FileNotFoundError:
        return set()


def knob_problems(rel, lineno, line, knobs):
    """A getenv of a CCBENCH_* variable outside core/knobs.cpp, and names in strings outside the table."""
    out = []
    if KNOB_READ.search(line) and rel != KNOBS_FILE:
        out.append(f"{rel}:{lineno}: reads a CCBENCH_* variable itself; read it through core/knobs.h "
                   "(env_size, env_int, env_choice, env_text with a Knob of core/knob_table.h)")
    if rel == KNOB_TABLE:
        return out
    for literal in STRING.findall(line):
        for name in KNOB_NAME.findall(literal):
            if not name.endswith("_") and not name.startswith(BUILD_OPTIONS) and name not in knobs:
                out.append(f"{rel}:{lineno}: names {name}, which is not in the knob table; add its row to "
                           f"{KNOB_TABLE} (name, kind, range, default, scope, what, chosen by) or fix the name")
    return out


def folder_of(path):
    """The table's folder a repository path belongs to: the longest listed prefix."""
    parts = path.split("/")
    for n in (2, 1):
        candidate = "/".join(parts[:n])
        if len(parts) > n and candidate in LAYERS:
            return candidate
    return None


def check(root):
    problems = []
    checked = 0
    knobs = knob_names(root)
    for top in sorted({k.split("/")[0] for k in LAYERS}):
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, root)
                mine = folder_of(rel)
                if mine is None:
                    problems.append(f"{rel}: folder not in the layer table (tests/lint/layers.py)")
                    continue
                checked += 1
                allowed = set(LAYERS[mine]) | {mine}
                with open(full, encoding="utf-8") as f:
                    for lineno, line in enumerate(f, 1):
                        problems += knob_problems(rel, lineno, line, knobs)
                        m = INCLUDE.match(line)
                        if not m or "/" not in m.group(1):
                            continue
                        target = folder_of(m.group(1))
                        if target is None:
                            problems.append(f"{rel}:{lineno}: includes \"{m.group(1)}\", outside every layer")
                        elif target not in allowed:
                            problems.append(f"{rel}:{lineno}: {mine} includes {target} (\"{m.group(1)}\"); "
                                            f"{mine} may include {', '.join(sorted(allowed))}")
    return checked, problems


def self_test():
    """Upward and unknown includes planted in a scratch tree must each be reported; a clean tree not."""
    planted = {
        "core/a.h": '#include "results/record.h"\n',                      # core is the bottom layer
        "topologies/b.cpp": '#include "collectives/types.h"\n',           # the model's old mistake
        "transports/c.cpp": '#include "harness/app/cli.h"\n',
        "harness/model/d.cpp": '#include "harness/links/links.h"\n',
        "harness/h.cpp": '#include "harness/links/links.h"\n',           # the engine below links/
        "collectives/e.cpp": '#include "nowhere/x.h"\n',                  # outside every layer
        "results/f.cpp": '#include "core/error.h"\n#include "results/record.h"\n',  # allowed
        "telemetry/g.cpp": 'const char* v = std::getenv("CCBENCH_KNOWN");\n',  # not through core/knobs.h
        "core/knob_table.h": '{.name = "CCBENCH_KNOWN", .what = "a CCBENCH_TABLE_TEXT"},\n',  # allowed
        "harness/h.cpp": 'fail(ExitCode::usage, "CCBENCH_KNOWN=\\"{}\\", the CCBENCH_GPU_* family, "\n'
                         '                    "-DCCBENCH_WITH_IBVERBS=ON");\n',  # allowed
        "transports/i.cpp": 'fail(ExitCode::usage, "give CCBENCH_KNOWN or CCBENCH_UNKNOWN");\n',  # not in the table
    }
    with tempfile.TemporaryDirectory() as root:
        for rel, text in planted.items():
            os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
                f.write(text)
        checked, problems = check(root)
    caught = [rel for rel in planted if any(p.startswith(rel + ":") for p in problems)]
    allowed = ("results/", "core/knob_table.h", "harness/h.cpp")
    expected = [rel for rel in planted if not rel.startswith(allowed)]
    ok = checked == len(planted) and caught == expected and len(problems) == len(expected)
    print(f"layers self-test: {len(caught)} of {len(expected)} planted violations caught, "
          f"{len(problems) - len(caught)} false alarms: {'ok' if ok else 'FAILED'}")
    for p in problems:
        print(f"  {p}")
    return 0 if ok else 1


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if sys.argv[1:] == ["--cmake"]:
        for folder, allowed in LAYERS.items():
            print(f"{folder}={','.join(allowed)}")
        return 0
    if sys.argv[1:] == ["--table"]:
        for folder, allowed in LAYERS.items():
            print(f"| `{folder}/` | {', '.join(f'`{a}/`' for a in allowed) or 'nothing else'} |")
        return 0
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    checked, problems = check(root)
    for p in problems:
        print(f"layers: {p}")
    if checked == 0:
        print(f"layers: no source file found under {root}")
        return 1
    print(f"layers: {checked} files checked, {len(problems)} problem(s): upward or unknown includes, knob reads")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
