#!/usr/bin/env python3
"""lint.unity_names: no two sources of one unity-built target define the same file-local name.

The C++ targets compile as unity files (CMakeLists.txt, CCBENCH_UNITY_BUILD): a batch of sources
shares one translation unit, so two files' anonymous-namespace or static definitions of one name
collide, or overloads of it turn a call ambiguous. Which files share a batch depends on which
optional parts (CUDA, libfabric, libpq, ...) a machine builds in, so a clash that one
configuration never puts in one batch would break the build of another. This check holds every
pair of a target's sources, whatever the batches.

File-local: defined at column 0 inside `namespace {` ... `}  // namespace`, or `static` at column 0;
an alias (`using Clock = ...`) may repeat with the same text, as C++ allows. Targets: each product
folder's C++ sources (collectives' are compiled one object per file, but are held to the rule too;
CUDA sources are never unity-built) and tests/unit (one executable); the other test folders build
one executable per file.

Usage: unity_names.py REPO | --self-test
"""
import collections
import os
import re
import sys

TARGET_FOLDERS = ["core", "results", "topologies", "telemetry", "transports", "collectives", "harness", "tests/unit"]
# Test executables of more than one C++ source, outside those folders.
TARGET_FILES = [["tests/benchmarks/link_bench.cpp", "tests/benchmarks/link_bench_gpu.cpp"]]
# Sources that are alternatives (one of them is built, never both): their shared names are the point.
ALTERNATIVES = [{"results/store_postgres.cpp", "results/store_postgres_missing.cpp"}]

_DEFINITION = re.compile(
    r"^(?:static\s+)?(?:inline\s+)?(?:constexpr\s+)?(?:const\s+)?"
    r"(?:(?:class|struct|enum class|enum|union)\s+(?P<type>\w+)\s*(?:final\s*)?[:{]"
    r"|using\s+(?P<alias>\w+)\s*="
    r"|[\w:<>,\s\*&]+?[\s\*&](?P<name>\w+)\s*(?:\(|=|\[|\{))")
_SKIP_STARTS = (" ", "\t", "#", "/", "}", "{", "return", "template", "TEST", "namespace", "extern")


def local_names(text):
    """{name: definition} of the file-local names a source defines: in its anonymous namespaces, or
    static at column 0. The definition is the alias's text for aliases, else the name itself."""
    names = {}
    anonymous = 0
    for line in text.splitlines():
        if re.match(r"^namespace\s*\{", line):
            anonymous += 1
            continue
        if anonymous and re.match(r"^\}\s*//\s*namespace\s*$", line):
            anonymous -= 1
            continue
        if line.startswith(_SKIP_STARTS) or not (anonymous or line.startswith("static ")):
            continue
        m = _DEFINITION.match(line)
        if m:
            name = m.group("type") or m.group("alias") or m.group("name")
            if name not in ("operator", "main"):
                names[name] = line.strip() if m.group("alias") else name
    return names


def clashes(sources):
    """{name: [files]} for names that more than one of `sources` ({path: text}) defines locally."""
    where = collections.defaultdict(list)
    texts = collections.defaultdict(set)
    for path, text in sorted(sources.items()):
        for name, definition in local_names(text).items():
            where[name].append(path)
            texts[name].add(definition)
    out = {}
    for name, files in where.items():
        same_alias = len(texts[name]) == 1 and next(iter(texts[name])).startswith("using ")
        if len(files) > 1 and not same_alias and not any(set(files) <= alt for alt in ALTERNATIVES):
            out[name] = files
    return out


def target_sources(repo, folder):
    found = {}
    for root, _, files in os.walk(os.path.join(repo, folder)):
        for f in files:
            if f.endswith(".cpp"):
                path = os.path.join(root, f)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    found[os.path.relpath(path, repo)] = fh.read()
    return found


def check(repo):
    problems = []
    targets = [(folder, target_sources(repo, folder)) for folder in TARGET_FOLDERS]
    targets += [(" + ".join(files), {f: open(os.path.join(repo, f), encoding="utf-8").read() for f in files})
                for files in TARGET_FILES]
    for target, sources in targets:
        for name, files in sorted(clashes(sources).items()):
            problems.append(f"{target}: '{name}' is file-local in {len(files)} sources ({', '.join(files)}): "
                            "a unity build puts them in one translation unit; give each its own name, or "
                            "share one definition through a header")
    return problems


def self_test():
    a = "namespace ccbench {\nnamespace {\n\nconstexpr int kSlot = 4;\nint helper(int x) {\n  return x;\n}\n\n}  // namespace\n\nint kept() { return 1; }\n}  // namespace ccbench\n"
    b = "namespace ccbench {\nnamespace {\nstruct Memory final : Base {\n};\nint helper(double x);\n}  // namespace\n}  // namespace ccbench\n"
    c = "static int kSlot = 3;\nint kept() { return 2; }\nclass Memory {};\n"
    assert set(local_names(a)) == {"kSlot", "helper"}, local_names(a)
    assert set(local_names(b)) == {"Memory", "helper"}, local_names(b)
    assert set(local_names(c)) == {"kSlot"}, local_names(c)
    got = clashes({"x/a.cpp": a, "x/b.cpp": b, "x/c.cpp": c})
    assert got == {"kSlot": ["x/a.cpp", "x/c.cpp"], "helper": ["x/a.cpp", "x/b.cpp"]}, got
    clock = "namespace {\nusing Clock = std::chrono::steady_clock;\n}  // namespace\n"
    other = "namespace {\nusing Clock = std::chrono::system_clock;\n}  // namespace\n"
    assert clashes({"x/a.cpp": clock, "x/b.cpp": clock}) == {}, "the same alias twice is allowed"
    assert set(clashes({"x/a.cpp": clock, "x/b.cpp": other})) == {"Clock"}, "two aliases of one name clash"
    alt = clashes({"results/store_postgres.cpp": a, "results/store_postgres_missing.cpp": a})
    assert alt == {}, alt
    print("unity_names self-test: passed (anonymous-namespace and static names found, public ones left, "
          "clashes named, same aliases and alternatives allowed)")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return 0
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    problems = check(sys.argv[1])
    for p in problems:
        print(p)
    if problems:
        print(f"lint.unity_names: {len(problems)} clash(es)")
        return 1
    print(f"lint.unity_names: no file-local name is defined twice in {len(TARGET_FOLDERS) + len(TARGET_FILES)} targets")
    return 0


if __name__ == "__main__":
    sys.exit(main())
