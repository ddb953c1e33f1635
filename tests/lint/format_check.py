#!/usr/bin/env python3
"""The product's C++ and CUDA sources laid out as .clang-format says: fails naming every file that
clang-format would change, with the first lines it would change.

The layout is clang-format 14's (later versions move some lines differently), so the check runs
the first of $CCBENCH_CLANG_FORMAT, clang-format-14 and a clang-format whose version is 14, and
exits 77 (skipped, with the reason) when there is none. Fix a file with `clang-format-14 -i FILE`.

Usage: format_check.py SOURCE_DIR     check the product folders of the tree
       format_check.py --self-test    check the checker on a well and a badly laid out file
"""
import difflib
import os
import re
import shutil
import subprocess
import sys
import tempfile

FOLDERS = ["core", "results", "topologies", "telemetry", "transports", "collectives", "harness"]
SUFFIXES = (".cpp", ".h", ".cu", ".cuh")
VERSION = 14
SKIPPED = 77  # ctest's SKIP_RETURN_CODE for the lint tests


def find_clang_format():
    """(path, None) of a clang-format of VERSION, or (None, why there is none)."""
    candidates = [os.environ.get("CCBENCH_CLANG_FORMAT"), f"clang-format-{VERSION}", "clang-format"]
    seen = []
    for name in filter(None, candidates):
        path = shutil.which(name)
        if not path:
            continue
        out = subprocess.run([path, "--version"], capture_output=True, text=True).stdout
        m = re.search(r"version (\d+)\.", out)
        if m and int(m.group(1)) == VERSION:
            return path, None
        seen.append(f"{path} is version {m.group(1) if m else '?'}")
    return None, f"no clang-format {VERSION} here ({'; '.join(seen) or 'none on PATH'}; set CCBENCH_CLANG_FORMAT)"


def sources(src):
    for folder in FOLDERS:
        for root, dirs, names in os.walk(os.path.join(src, folder)):
            dirs.sort()
            for n in sorted(names):
                if n.endswith(SUFFIXES):
                    yield os.path.join(root, n)


def misformatted(tool, src, files):
    """{relative path: the first changed lines as a unified diff} for files clang-format would change."""
    style = f"--style=file:{os.path.join(src, '.clang-format')}"
    # One process says which files it would change (--dry-run warns per change), the diffs follow.
    said = subprocess.run([tool, style, "--dry-run"] + files, capture_output=True, text=True).stderr
    flagged = sorted({m.group(1) for m in re.finditer(r"^(.+?):\d+:\d+: (?:warning|error):", said, re.M)})
    found = {}
    for path in flagged:
        with open(path, encoding="utf-8") as f:
            before = f.read()
        after = subprocess.run([tool, style, path], capture_output=True, text=True, check=True).stdout
        diff = difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
        found[os.path.relpath(path, src)] = "\n".join(list(diff)[2:12])
    return found


def check_tree(tool, src):
    files = list(sources(src))
    found = misformatted(tool, src, files)
    for rel, diff in found.items():
        print(f"{rel}: not laid out as .clang-format says (clang-format-{VERSION} -i {rel}):\n{diff}")
    print(f"format: {len(files)} files checked, {len(found)} to lay out")
    return 1 if found else 0


def self_test(tool, src):
    """A file as clang-format writes it passes, the same file with its layout spoiled fails."""
    good = "namespace x {\n\nint add(int a, int b) { return a + b; }\n\n}  // namespace x\n"
    bad = "namespace x {\nint   add(int a,int b)\n{\n  return a+b;\n}\n}\n"
    with tempfile.TemporaryDirectory() as tree:
        shutil.copy(os.path.join(src, ".clang-format"), tree)
        os.makedirs(os.path.join(tree, "core"))
        for name, text in (("good.cpp", good), ("bad.cpp", bad)):
            with open(os.path.join(tree, "core", name), "w", encoding="utf-8") as f:
                f.write(text)
        found = misformatted(tool, tree, list(sources(tree)))
    if sorted(found) != [os.path.join("core", "bad.cpp")]:
        print(f"format self-test: FAIL: flagged {sorted(found)}, expected core/bad.cpp only")
        return 1
    print("format self-test: a misformatted file is flagged, a formatted one passes")
    return 0


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    src = os.path.dirname(os.path.dirname(here))
    tool, why = find_clang_format()
    if not tool:
        print(f"SKIPPED: {why}")
        return SKIPPED
    if argv[1:] == ["--self-test"]:
        return self_test(tool, src)
    if len(argv) != 2:
        print(__doc__)
        return 2
    return check_tree(tool, argv[1])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
