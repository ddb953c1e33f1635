#!/usr/bin/env python3
"""docs/reference.md against the code: the committed reference must be what `ccbench help
--markdown` generates from the option declarations, every flag the parser holds (`ccbench help
--flags`, read from CLI11 itself, not from the declarations) must be documented in its
subcommand's section, and every flag documented must exist.

Usage: tests/lint/reference_check.py --ccbench PATH --doc docs/reference.md      exit 0 when all agree
       tests/lint/reference_check.py --ccbench PATH --doc docs/reference.md --write   regenerate the doc
       tests/lint/reference_check.py --self-test      a doc with a flag too many and one missing is caught
"""
import argparse
import difflib
import re
import subprocess
import sys

SECTION = re.compile(r"^## `ccbench(?: (\S+))?`$")
ROW = re.compile(r"^\| (`[^|]*`) \|")
HELP_FLAGS = {"-h", "--help"}  # every subcommand's; documented once, in the `ccbench` section


def documented(doc):
    """{subcommand: set of names} from the reference's option tables; "ccbench" is the top level."""
    out, section = {}, None
    for line in doc.splitlines():
        m = SECTION.match(line)
        if m:
            section = m.group(1) or "ccbench"
            out.setdefault(section, set())
            continue
        if line.startswith("## "):
            section = None  # the transport and nccl-tests tables are not options of a subcommand
            continue
        m = ROW.match(line)
        if section and m:
            out[section].update(n.strip("` ") for n in m.group(1).split(","))
    return out


def declared(flags_text):
    """{subcommand: set of names} from `ccbench help --flags` ("SUBCOMMAND NAME" lines)."""
    out = {}
    for line in flags_text.splitlines():
        if line.strip():
            command, name = line.split(" ", 1)
            out.setdefault(command, set()).add(name)
    return out


def differences(doc, flags_text):
    problems = []
    docs, flags = documented(doc), declared(flags_text)
    top_help = HELP_FLAGS & docs.get("ccbench", set())
    for command in sorted(set(docs) | set(flags)):
        have, said = flags.get(command, set()), docs.get(command, set())
        for name in sorted(have - said):
            if name in top_help:
                continue
            problems.append(f"ccbench {command} {name}: exists but is not documented")
        for name in sorted(said - have):
            problems.append(f"ccbench {command} {name}: documented but does not exist")
    return problems


def self_test():
    flags = "ccbench -h\nccbench --help\nccbench --version\nrun -h\nrun -n\nrun --iters\nrun --out\n"
    good = ("## `ccbench`\n| `-h`, `--help` | switch |\n| `--version` | switch |\n"
            "## `ccbench run`\n| `-n`, `--iters` | INT |\n| `--out` | FOLDER |\n## Transports\n| `p2p` | yes |\n")
    bad = good.replace("| `--out` | FOLDER |\n", "| `--outt` | FOLDER |\n")
    ok = not differences(good, flags) and differences(bad, flags) == [
        "ccbench run --out: exists but is not documented", "ccbench run --outt: documented but does not exist"]
    print(f"reference self-test: {'ok' if ok else 'FAILED'}: {differences(bad, flags)}")
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ccbench")
    ap.add_argument("--doc")
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--self-test", action="store_true")
    opts = ap.parse_args()
    if opts.self_test:
        return self_test()
    generated = subprocess.run([opts.ccbench, "help", "--markdown"], capture_output=True, text=True, check=True).stdout
    if opts.write:
        with open(opts.doc, "w", encoding="utf-8") as f:
            f.write(generated)
        print(f"wrote {opts.doc}")
        return 0
    flags = subprocess.run([opts.ccbench, "help", "--flags"], capture_output=True, text=True, check=True).stdout
    with open(opts.doc, encoding="utf-8") as f:
        committed = f.read()
    problems = differences(committed, flags)
    if committed != generated:
        diff = difflib.unified_diff(committed.splitlines(), generated.splitlines(), opts.doc, "ccbench help --markdown",
                                    lineterm="", n=1)
        problems.append(f"{opts.doc} differs from what the code generates (rewrite it: cmake --build build --target "
                        "reference):\n" + "\n".join(list(diff)[:60]))
    for p in problems:
        print(f"reference: {p}")
    print(f"reference: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
