#!/usr/bin/env python3
"""The command blocks of README.md and docs/guides/*.md marked runnable, run against the build, so
that a document drifting from what the tool does fails the tests.

A block is marked by an HTML comment on the line before its fence (Markdown shows nothing of it):
  <!-- runnable -->         every `$ ` command of the block runs; each must exit 0 and print the
                            lines shown under it, in that order, numbers aside (timings differ
                            from run to run; the words, columns and verdicts may not)
  <!-- runnable exact -->   the same, numbers included: for outputs of fixed inputs
  <!-- runnable exit=N -->  (with either) every command of the block must exit N instead
A `...` line stands for lines left out; other lines of the output may come between the lines
shown, never in another order. A command goes on over lines ending in a backslash. `$ echo $?`
prints the previous command's exit code, which the next line states. Each block runs with bash in
a scratch folder of its own holding `build` (the build folder) and the source's `tests`, `docs`,
`topologies` and `scripts`; `ccbench` on PATH is the build's, and mpirun may place more ranks
than cores. The transcripts were taken on a host named `vm`: this host's name reads as `vm`.

Usage: tests/docs_runnable.py --source DIR --build DIR [--only FILE]   run every marked block
       tests/docs_runnable.py --list --source DIR                        list them
       tests/docs_runnable.py --self-test                                the checker catches drift
Exit 0 when every block holds; 1 naming each file and line that did not, with what differed.
"""
import argparse
import glob
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

MARK = re.compile(r"^<!-- runnable( exact)?(?: exit=(\d+))? -->$")
NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?")
COMMAND_TIMEOUT_S = 180  # the longest marked command is a few seconds: this only catches a hang
LINKED = ("tests", "docs", "topologies", "scripts")


class Block:
    def __init__(self, path, line, exact, code, lines):
        self.path, self.line, self.exact, self.code, self.lines = path, line, exact, code, lines

    def commands(self):
        """[(command, [expected output lines])] of the block, continuations joined."""
        out, i = [], 0
        while i < len(self.lines):
            if not self.lines[i].startswith("$ "):
                i += 1
                continue
            cmd = self.lines[i][2:]
            while cmd.endswith("\\") and i + 1 < len(self.lines):
                i += 1
                cmd = cmd[:-1] + " " + self.lines[i].strip()
            i += 1
            shown = []
            while i < len(self.lines) and not self.lines[i].startswith("$ "):
                shown.append(self.lines[i])
                i += 1
            out.append((cmd, shown))
        return out


def blocks_of(path):
    """The marked blocks of a Markdown file."""
    lines = open(path, encoding="utf-8").read().splitlines()
    out = []
    for n, line in enumerate(lines):
        m = MARK.match(line.strip())
        if not m:
            continue
        if n + 1 >= len(lines) or not lines[n + 1].startswith("```"):
            raise SystemExit(f"{path}:{n + 1}: a runnable mark must stand right above a code block")
        end = next((k for k in range(n + 2, len(lines)) if lines[k].startswith("```")), None)
        if end is None:
            raise SystemExit(f"{path}:{n + 2}: the code block is not closed")
        out.append(Block(path, n + 1, bool(m.group(1)), int(m.group(2) or 0), lines[n + 2:end]))
    return out


def normal(line, exact, host):
    """A line as compared: spaces collapsed, this host as vm, numbers masked unless exact."""
    if host != "vm":
        line = re.sub(rf"\b{re.escape(host)}\b", "vm", line)
    line = " ".join(line.split())
    return line if exact else NUMBER.sub("N", line)


def missing(shown, printed, exact, host):
    """The first shown line not found, in order, among the printed ones (None: all found)."""
    got = [normal(l, exact, host) for l in printed]
    at = 0
    for line in shown:
        if line.strip() in ("...", ""):
            continue
        want = normal(line, exact, host)
        while at < len(got) and got[at] != want:
            at += 1
        if at == len(got):
            return line
        at += 1
    return None


def scratch_for(source, build):
    """A folder with the build and the source trees the commands name, and ccbench on PATH."""
    work = tempfile.mkdtemp(prefix="ccbench-docs-")
    os.symlink(os.path.abspath(build), os.path.join(work, "build"))
    for name in LINKED:
        os.symlink(os.path.join(os.path.abspath(source), name), os.path.join(work, name))
    os.makedirs(os.path.join(work, ".bin"))
    os.symlink(os.path.join(os.path.abspath(build), "ccbench"), os.path.join(work, ".bin", "ccbench"))
    return work


def environment(work):
    env = dict(os.environ, PATH=os.path.join(work, ".bin") + os.pathsep + os.environ.get("PATH", ""),
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    env.pop("CCBENCH_FAULT", None)
    return env


def run_block(block, source, build, host):
    """Failures of one block, each "FILE:LINE: what"."""
    work = scratch_for(source, build)
    fails, last = [], None
    try:
        for cmd, shown in block.commands():
            where = f"{block.path}:{block.line}: `$ {cmd[:80]}`"
            if cmd.strip() == "echo $?":
                want = next((l.strip() for l in shown if l.strip()), "")
                if str(last) != want:
                    fails.append(f"{where}: the exit code was {last}, the block says {want}")
                continue
            start = time.monotonic()
            try:
                p = subprocess.run(["bash", "-c", cmd], cwd=work, env=environment(work), capture_output=True,
                                   text=True, errors="replace", timeout=COMMAND_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                fails.append(f"{where}: did not end within {COMMAND_TIMEOUT_S} s")
                break
            last = p.returncode
            printed = (p.stdout + p.stderr).splitlines()
            print(f"  {time.monotonic() - start:5.1f} s  exit {p.returncode}  $ {cmd[:100]}")
            followed_by_echo = any(c.strip() == "echo $?" for c, _ in block.commands()[1:])
            if p.returncode != block.code and not followed_by_echo:
                fails.append(f"{where}: exit code {p.returncode}, expected {block.code}\n    "
                             + "\n    ".join(printed[-15:]))
                continue
            gone = missing(shown, printed, block.exact, host)
            if gone is not None:
                fails.append(f"{where}: the line\n      {gone}\n    is not printed (in that order{'' if block.exact else ', numbers aside'}); "
                             "the output:\n    " + "\n    ".join(printed[:60]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return fails


def documents(source):
    return [os.path.join(source, "README.md")] + sorted(glob.glob(os.path.join(source, "docs", "guides", "*.md")))


def self_test():
    """A document whose output drifted, whose command fails, or whose lines came in another order
    is caught; one that holds passes."""
    tmp = tempfile.mkdtemp(prefix="ccbench-docs-self-")
    source, build = os.path.join(tmp, "src"), os.path.join(tmp, "build")
    for d in [build] + [os.path.join(source, n) for n in LINKED]:
        os.makedirs(d)
    doc = os.path.join(source, "README.md")
    cases = {
        "holds": ("<!-- runnable -->\n```\n$ printf 'a 1\\nb\\nc 22\\n'\na 7\n...\nc 9\n```\n", 0),
        "exact": ("<!-- runnable exact -->\n```\n$ echo 'took 3 s'\ntook 4 s\n```\n", 1),
        "drift": ("<!-- runnable -->\n```\n$ echo 'rows: 3'\ncolumns: 3\n```\n", 1),
        "order": ("<!-- runnable -->\n```\n$ printf 'a\\nb\\n'\nb\na\n```\n", 1),
        "fails": ("<!-- runnable -->\n```\n$ false\n```\n", 1),
        "code": ("<!-- runnable exit=4 -->\n```\n$ sh -c 'exit 4'\n```\n", 0),
        "echo": ("<!-- runnable -->\n```\n$ sh -c 'exit 3'\n$ echo $?\n3\n```\n", 0),
        "wrong echo": ("<!-- runnable -->\n```\n$ sh -c 'exit 2'\n$ echo $?\n3\n```\n", 1),
        "continued": ("<!-- runnable -->\n```\n$ echo one \\\n    two\none two\n```\n", 0),
    }
    bad = []
    for name, (text, want_failures) in cases.items():
        with open(doc, "w", encoding="utf-8") as f:
            f.write(text)
        fails = [f for b in blocks_of(doc) for f in run_block(b, source, build, "vm")]
        if bool(fails) != bool(want_failures):
            bad.append(f"{name}: {'caught nothing' if want_failures else 'failed: ' + '; '.join(fails)}")
    shutil.rmtree(tmp, ignore_errors=True)
    for b in bad:
        print("self-test FAIL " + b)
    print(f"self-test: {len(cases) - len(bad)} of {len(cases)} cases as expected")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source")
    ap.add_argument("--build")
    ap.add_argument("--only", help="one document")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    docs = [a.only] if a.only else documents(a.source)
    blocks = [b for d in docs for b in blocks_of(d)]
    if a.list:
        for b in blocks:
            print(f"{os.path.relpath(b.path, a.source)}:{b.line}: {len(b.commands())} command(s)"
                  f"{' exact' if b.exact else ''}")
        return 0
    if not os.access(os.path.join(a.build, "ccbench"), os.X_OK):
        print(f"SKIPPED: no ccbench in {a.build}")
        return 77
    host, fails, start = socket.gethostname(), [], time.monotonic()
    for b in blocks:
        print(f"{os.path.relpath(b.path, a.source)}:{b.line}")
        fails += run_block(b, a.source, a.build, host)
    for f in fails:
        print("FAIL " + f)
    print(f"docs_runnable: {len(blocks)} blocks, {sum(len(b.commands()) for b in blocks)} commands, "
          f"{len(fails)} failure(s), {time.monotonic() - start:.0f} s")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
