#!/usr/bin/env python3
"""The evidence index (docs/evidence/index.yaml) against the repository.

Checks that every entry is well formed (id = <machine>-<yyyymmdd>-<label> matching its machine and
date, the fields present), that its files lie in its folder docs/evidence/<id>/ beside a README.md,
that every path it lists exists, that every file under docs/evidence/ belongs to an entry, that
docs/evidence/ holds no raw log (*.log, *.log.gz) and at most MAX_EVIDENCE_BYTES in all, that
docs/evidence/INDEX.md is the one generated from index.yaml, that every evidence id cited anywhere
in the repository is in the index, and that no file cites a document that is not in the repository
(the old evidence folder, documents outside the checkout).

Usage: evidence.py SOURCE_DIR            check; exit 1 naming every problem
       evidence.py SOURCE_DIR --write-index   regenerate INDEX.md from index.yaml
       evidence.py --self-test           show that each check fails on a planted violation
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import yaml

EVIDENCE = os.path.join("docs", "evidence")
INDEX_YAML = os.path.join(EVIDENCE, "index.yaml")
INDEX_MD = os.path.join(EVIDENCE, "INDEX.md")
FIELDS = ("id", "machine", "date", "commit", "command", "summary", "files")
ID_FORM = re.compile(r"^(?P<machine>[a-z][a-z0-9]*)-(?P<date>20[0-9]{6})-(?P<label>[a-z0-9]+(?:-[a-z0-9]+)*)$")
# An evidence id anywhere in a text: a machine key, a date, a label (letters, digits, inner dashes).
CITED_ID = re.compile(r"(?<![A-Za-z0-9_.-])([a-z][a-z0-9]*-20[0-9]{6}-[a-z0-9]+(?:-[a-z0-9]+)*)(?![A-Za-z0-9_])")
# Documents outside the repository, or the folder the evidence used to live in. Built from parts
# so that this file does not cite them itself.
FORBIDDEN = [
    ("results/" + "baselines", "the evidence lives in docs/evidence/: cite an entry id"),
    ("ANCHORS" + ".md", "a document outside the repository: cite an evidence id"),
    ("DESIGN" + ".md", "a document outside the repository: cite docs/design.md"),
    ("TRANSPORTS" + ".md", "a document outside the repository: cite docs/design.md or an evidence id"),
    ("../" + "shared", "a folder outside the repository"),
    ("/work/" + "shared", "a folder outside the repository"),
]
FORBIDDEN_RUN = re.compile(r"transports/r[0-9]+\b")  # the old evidence folders by run number
SKIP_DIRS = {".git", "node_modules", "__pycache__"}
# The evidence keeps per run its command, environment, commit, results and a README summary; raw
# logs stay in git history. The 53 entries of 2026-12-02 took 9.2 MB with their raw logs, rendered
# tables and copies of tests/fixtures, 0.84 MB without; 1 MiB leaves room for new entries.
MAX_EVIDENCE_BYTES = 1 << 20
RAW_LOG = re.compile(r"\.log(\.gz)?$")
MAX_SCAN_BYTES = 4 << 20
SELF = os.path.join("tests", "lint", "evidence.py")


def load_index(src):
    with open(os.path.join(src, INDEX_YAML), encoding="utf-8") as f:
        return yaml.safe_load(f)


def index_problems(src, doc):
    """Problems of index.yaml itself: fields, ids, paths, files that belong to no entry."""
    problems = []
    if not isinstance(doc, dict) or not isinstance(doc.get("entries"), list) or not isinstance(doc.get("machines"), dict):
        return [f"{INDEX_YAML}: expected the keys 'machines' (a mapping) and 'entries' (a list)"]
    machines = doc["machines"]
    seen, covered = set(), set()
    for n, e in enumerate(doc["entries"]):
        where = f"{INDEX_YAML}: entry {n + 1}"
        if not isinstance(e, dict):
            problems.append(f"{where}: not a mapping")
            continue
        missing = [k for k in FIELDS if k not in e]
        unknown = [k for k in e if k not in FIELDS]
        if missing or unknown:
            problems.append(f"{where} ({e.get('id', '?')}): missing {missing}, unknown {unknown}; fields: {', '.join(FIELDS)}")
            continue
        eid = str(e["id"])
        where = f"{INDEX_YAML}: {eid}"
        if eid in seen:
            problems.append(f"{where}: the id is given twice")
        seen.add(eid)
        m = ID_FORM.match(eid)
        if not m:
            problems.append(f"{where}: not an id of the form <machine>-<yyyymmdd>-<label>")
            continue
        if m["machine"] != e["machine"] or e["machine"] not in machines:
            problems.append(f"{where}: machine '{e['machine']}' must be the id's first part and a key of 'machines'")
        if m["date"] != str(e["date"]).replace("-", ""):
            problems.append(f"{where}: date {e['date']} is not the id's date {m['date']}")
        for k in ("command", "summary"):
            if not str(e[k]).strip():
                problems.append(f"{where}: empty {k}")
        if not isinstance(e["files"], list) or not e["files"]:
            problems.append(f"{where}: 'files' must be a non-empty list")
            continue
        for p in e["files"]:
            path = os.path.join(src, EVIDENCE, str(p))
            if not os.path.exists(path):
                problems.append(f"{where}: {p} does not exist under {EVIDENCE}/")
            if os.path.normpath(str(p)).split(os.sep)[0] != eid:
                problems.append(f"{where}: {p} is not in the entry's folder {eid}/")
            covered.add(os.path.normpath(os.path.join(EVIDENCE, str(p))))
        if not os.path.isfile(os.path.join(src, EVIDENCE, eid, "README.md")):
            problems.append(f"{where}: no {eid}/README.md (the summary: command, environment, commit, results)")
    for f in evidence_files(src):
        parts = [os.path.normpath(os.path.join(*f.split(os.sep)[: i + 1])) for i in range(len(f.split(os.sep)))]
        if not any(p in covered for p in parts):
            problems.append(f"{f}: belongs to no entry of {INDEX_YAML} (list it under an entry's files)")
    return problems + size_problems(src)


def size_problems(src):
    """No raw logs, and the whole folder within MAX_EVIDENCE_BYTES."""
    problems = [f"{f}: a raw log; keep its figures in the entry's README.md and name the commit that "
                f"still holds the log (git show COMMIT:{f})" for f in evidence_files(src) if RAW_LOG.search(f)]
    total = sum(os.path.getsize(os.path.join(root, n))
                for root, _, names in os.walk(os.path.join(src, EVIDENCE)) for n in names)
    if total > MAX_EVIDENCE_BYTES:
        problems.append(f"{EVIDENCE}/ holds {total} bytes, over the {MAX_EVIDENCE_BYTES} allowed: leave raw "
                        "logs in git history, gzip large results (see INDEX.md)")
    return problems


def evidence_files(src):
    out = []
    for root, dirs, files in os.walk(os.path.join(src, EVIDENCE)):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(files):
            rel = os.path.relpath(os.path.join(root, name), src)
            if rel not in (INDEX_YAML, INDEX_MD):
                out.append(rel)
    return out


RULES = f"""## What an entry keeps

One folder per entry, `docs/evidence/<id>/`, and its entry in `index.yaml` (`id`, `machine`,
`date`, `commit`, `command`, `summary`, `files`). `tests/lint/evidence.py` (ctest `lint.evidence`)
checks the rules marked *checked*.

- `README.md` (*checked*): what ran (the command, or the script beside it), the environment
  (the machine's key below, and what differed from it: versions, variables), the commit, and every
  figure the documents and the code cite from the run. Where a raw output is not kept, the README
  names the commit that still holds it: `git show COMMIT:docs/evidence/<id>/FILE`.
- The results as the tools wrote them (`results.csv`, `run.json`, `links.json`,
  `topology.json`, ...), and the scripts and small tables that made or hold the figures.
- No raw logs (*checked*: no `*.log`, no `*.log.gz`): the figures go into the README, the log
  stays in git history.
- Large results are stored gzip-compressed (`gzip -9n`, about 16 KB and up): read them with
  `zcat docs/evidence/<id>/results.csv.gz`, or `gunzip -k` a copy before `ccbench compare`,
  `accept` or `scripts/report.py`. A `run.json` whose `rows` are `[]` is the run's context
  (command line, commit, environment, versions, verdict) kept beside the `results.csv` that holds
  the same rows.
- A file tests read lives in `tests/fixtures/<id>/` only (tests/fixtures/README.md); the entry's
  README points there.
- All of `docs/evidence/` within {MAX_EVIDENCE_BYTES} bytes, 1 MiB (*checked*; measure with
  `git ls-files -z docs/evidence | xargs -0 cat | wc -c`).""".split("\n")


def render_index(doc):
    """INDEX.md: what people read; generated, never edited by hand."""
    lines = ["# Evidence index", "",
             "Generated from `index.yaml` by `python3 tests/lint/evidence.py . --write-index`; do not edit by hand.",
             "Each entry is one measurement; cite it by its id. Ids are `<machine>-<yyyymmdd>-<label>`.", ""]
    lines += RULES + ["", "## Machines", "", "| machine | what it is |", "|---|---|"]
    lines += [f"| `{k}` | {' '.join(str(v).split())} |" for k, v in doc["machines"].items()]
    lines += ["", "## Entries", "", "| id | date | commit | summary |", "|---|---|---|---|"]
    for e in doc["entries"]:
        lines.append(f"| [`{e['id']}`](#{e['id']}) | {e['date']} | {e['commit'] or '-'} | {' '.join(str(e['summary']).split())} |")
    for e in doc["entries"]:
        lines += ["", f"### {e['id']}", "",
                  f"Machine `{e['machine']}`, {e['date']}, commit {e['commit'] or 'none (not ccbench)'}.", "",
                  "```", " ".join(str(e["command"]).split()), "```", ""]
        lines += [f"- [{p}]({p})" for p in e["files"]]
    return "\n".join(lines) + "\n"


def repository_files(src):
    try:
        out = subprocess.run(["git", "-C", src, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             capture_output=True, check=True).stdout.decode()
        files = sorted(set(f for f in out.split("\0") if f))
    except (OSError, subprocess.CalledProcessError):
        files = []
        for root, dirs, names in os.walk(src):
            dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith("build")]
            files += [os.path.relpath(os.path.join(root, n), src) for n in names]
    return [f for f in files if os.path.isfile(os.path.join(src, f))]


def citation_problems(src, doc):
    """Ids cited in the repository that the index lacks; citations of documents not in it."""
    known = {str(e["id"]) for e in doc.get("entries", []) if isinstance(e, dict)}
    problems = []
    for rel in repository_files(src):
        if rel == SELF:
            continue  # its self-test plants ids and citations on purpose
        path = os.path.join(src, rel)
        if os.path.getsize(path) > MAX_SCAN_BYTES:
            continue
        with open(path, "rb") as f:
            data = f.read()
        if b"\0" in data:
            continue  # binary
        text = data.decode("utf-8", errors="replace")
        raw_record = rel.startswith(EVIDENCE + os.sep) and not rel.endswith((".md", ".yaml"))
        for n, line in enumerate(text.split("\n"), 1):
            for m in CITED_ID.finditer(line):
                if m.group(1) not in known and ID_FORM.match(m.group(1)):
                    problems.append(f"{rel}:{n}: cites evidence '{m.group(1)}', which {INDEX_YAML} does not hold")
            if raw_record:
                continue  # logs and summaries are kept as they were written
            for needle, why in FORBIDDEN:
                if needle in line:
                    problems.append(f"{rel}:{n}: cites '{needle}': {why}")
            if FORBIDDEN_RUN.search(line):
                problems.append(f"{rel}:{n}: cites '{FORBIDDEN_RUN.search(line).group(0)}': cite an evidence id")
    return problems


def check(src):
    doc = load_index(src)
    problems = index_problems(src, doc)
    if isinstance(doc, dict) and isinstance(doc.get("entries"), list):
        md_path = os.path.join(src, INDEX_MD)
        current = open(md_path, encoding="utf-8").read() if os.path.exists(md_path) else ""
        if not problems and current != render_index(doc):
            problems.append(f"{INDEX_MD} is not the one generated from {INDEX_YAML}: run "
                            "python3 tests/lint/evidence.py . --write-index")
        problems += citation_problems(src, doc)
    return problems


def self_test():
    """Each check must fail on a planted violation, and pass on the clean tree."""
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        def tree(index_extra="", files=None, md=True, readme=True):
            root = os.path.join(tmp, f"t{len(os.listdir(tmp))}")
            os.makedirs(os.path.join(root, EVIDENCE, "box1-20260101-a"))
            kept = {"results.csv": "measured\n", "README.md": "ran, measured\n"}
            for name in kept if readme else ["results.csv"]:
                with open(os.path.join(root, EVIDENCE, "box1-20260101-a", name), "w") as f:
                    f.write(kept[name])
            doc = ("machines: {box1: a box}\nentries:\n  - id: box1-20260101-a\n    machine: box1\n"
                   "    date: '2026-01-01'\n    commit: abc1234\n    command: run it\n    summary: it ran\n"
                   "    files: [box1-20260101-a/]\n" + index_extra)
            with open(os.path.join(root, INDEX_YAML), "w") as f:
                f.write(doc)
            for rel, text in (files or {}).items():
                os.makedirs(os.path.dirname(os.path.join(root, rel)) or root, exist_ok=True)
                with open(os.path.join(root, rel), "w") as f:
                    f.write(text)
            if md:
                with open(os.path.join(root, INDEX_MD), "w") as f:
                    f.write(render_index(yaml.safe_load(doc)))
            return root

        def expect(name, root, needle):
            got = check(root)
            if needle is None and got:
                failures.append(f"{name}: expected no problem, got {got}")
            elif needle is not None and not any(needle in p for p in got):
                failures.append(f"{name}: expected a problem with '{needle}', got {got}")

        expect("clean", tree(files={"src/a.cpp": "// 3 us (box1-20260101-a)\n"}), None)
        expect("unknown id", tree(files={"src/a.cpp": "// 3 us (box1-20260101-b)\n"}), "'box1-20260101-b'")
        expect("missing file", tree("  - id: box1-20260102-b\n    machine: box1\n    date: '2026-01-02'\n"
                                    "    commit: ''\n    command: x\n    summary: y\n    files: [gone.txt]\n"),
               "gone.txt does not exist")
        expect("orphan file", tree(files={os.path.join(EVIDENCE, "stray.log"): "x\n"}), "stray.log: belongs to no entry")
        expect("stale INDEX.md", tree(md=False), "is not the one generated")
        expect("date", tree("  - id: box1-20260103-c\n    machine: box1\n    date: '2026-01-04'\n"
                            "    commit: ''\n    command: x\n    summary: y\n    files: [box1-20260103-c/README.md]\n",
                            {os.path.join(EVIDENCE, "box1-20260103-c", "README.md"): "ran\n"}),
               "is not the id's date")
        expect("outside document", tree(files={"src/b.h": "// see " + "DESIGN" + ".md\n"}), "outside the repository")
        expect("old folder", tree(files={"src/c.h": "// " + "results/" + "baselines/x\n"}), "docs/evidence")
        folder = os.path.join(EVIDENCE, "box1-20260101-a")
        expect("no README", tree(readme=False), "no box1-20260101-a/README.md")
        expect("outside its folder", tree("  - id: box1-20260105-e\n    machine: box1\n    date: '2026-01-05'\n"
                                          "    commit: ''\n    command: x\n    summary: y\n"
                                          "    files: [box1-20260101-a/results.csv]\n"), "not in the entry's folder")
        expect("raw log", tree(files={os.path.join(folder, "run.log"): "x\n"}), "run.log: a raw log")
        expect("compressed raw log", tree(files={os.path.join(folder, "run.log.gz"): "x\n"}), "run.log.gz: a raw log")
        expect("over the size", tree(files={os.path.join(folder, "big.csv"): "x" * MAX_EVIDENCE_BYTES}),
               f"over the {MAX_EVIDENCE_BYTES} allowed")
    for f in failures:
        print("SELF-TEST FAIL:", f)
    print("self-test:", "FAILED" if failures else "passed (each check fails on its planted violation)")
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source", nargs="?", help="the repository's root")
    ap.add_argument("--write-index", action="store_true", help="regenerate docs/evidence/INDEX.md")
    ap.add_argument("--self-test", action="store_true")
    a = ap.parse_args()
    if a.self_test:
        return self_test()
    if not a.source:
        ap.error("SOURCE_DIR is required")
    if a.write_index:
        problems = index_problems(a.source, load_index(a.source))
        if problems:
            print("\n".join(problems))
            return 1
        with open(os.path.join(a.source, INDEX_MD), "w", encoding="utf-8") as f:
            f.write(render_index(load_index(a.source)))
        print(f"wrote {INDEX_MD}")
        return 0
    problems = check(a.source)
    for p in problems:
        print(p)
    n = len(load_index(a.source).get("entries", []))
    print(f"evidence: {n} entries, {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
