#!/usr/bin/env python3
"""`ccbench history` on a PostgreSQL store from the command line (under tests/postgres/pg_server.py).

- Imports keep their verdict and exit code (a wrong run, a timed-out one, one that had not ended,
  one without run.json: "unknown"); a run added again is a note, not a second copy; a trend.
- Secrets: the password in the URL, in PGPASSFILE and in PGPASSWORD each open the store, and none
  is printed, nor recorded in run.json (command line, CCBENCH_DB in the environment) of a real
  2-rank run appending with --db.
- Failures are exit 3 naming host, port and database, never the password: no server at the port,
  a wrong password, a database that does not exist; exit 2 for a database without a history.
- 16 processes adding at once (12 runs of their own, 4 adding a run another adds at the same
  moment) while a reader lists the runs: every run stored once and whole, the reader never sees
  part of one. The same 16 against an SQLite file on the local disk: every process either adds
  its run or fails with a clear message (exit 3), and what is reported added is stored.

Usage: history_postgres.py CCBENCH MPIEXEC SOURCE_DIR WORK_DIR
"""
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from runs import launch, run as run_command  # noqa: E402
from testlib import Checks, ExitCode  # noqa: E402

ccbench, mpiexec, src, work = sys.argv[1:5]
FIXTURE = os.path.join(src, "tests/fixtures/cpu2core-20261130-np2/results.csv")
ROWS = sum(1 for line in open(FIXTURE) if not line.startswith("#")) - 1
COPIES = 10  # the concurrent writers' runs: 10 x the fixture's rows, so that writing takes a while
ALLREDUCE = sum(1 for line in open(FIXTURE) if line.startswith("allreduce,"))
PORT, PASSWORD, SOCKET = os.environ["PG_FIXTURE_PORT"], os.environ["PG_FIXTURE_PASSWORD"], os.environ["PG_FIXTURE_SOCKET"]
PSQL = os.path.join(os.environ["PG_FIXTURE_BIN"], "psql")
checks = Checks("history_postgres")


def sql(db, query):
    out = subprocess.run([PSQL, "-h", SOCKET, "-p", PORT, "-U", "ccbench", "-d", db, "-tAc", query],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def new_db(name):
    sql("postgres", f"DROP DATABASE IF EXISTS {name}")
    sql("postgres", f"CREATE DATABASE {name}")
    return f"postgresql://ccbench@127.0.0.1:{PORT}/{name}"  # the label: no password


def with_password(url):
    return url.replace("postgresql://ccbench@", f"postgresql://ccbench:{PASSWORD}@")


def run(args, env=None, **kw):
    return run_command([ccbench] + args, env=env, **kw)


def folder(name, started, exit_code, verdict, host="node01", copies=1):
    """A results folder: the fixture's results.csv (its rows `copies` times, each copy a byte
    larger) and a run.json ending with EXIT and VERDICT."""
    d = os.path.join(work, name)
    os.makedirs(d)
    lines = open(FIXTURE).read().splitlines(keepends=True)
    head = [line for line in lines if line.startswith("#")]
    rows = list(csv.reader([line for line in lines if not line.startswith("#")]))
    size = rows[0].index("size[B]")
    with open(os.path.join(d, "results.csv"), "w", newline="") as f:
        f.write("".join(head))
        w = csv.writer(f, lineterminator="\n")
        w.writerow(rows[0])
        for k in range(copies):
            for r in rows[1:]:
                w.writerow(r[:size] + [str(int(r[size]) + k)] + r[size + 1:])
    if exit_code == "none":
        return d
    doc = {"schema_version": 3, "complete": exit_code is not None, "incomplete_reason": None, "exit_code": exit_code,
           "verdict": verdict, "rows": [],
           "context": {"started_utc": started, "command_line": "ccbench -b 1K", "git_hash": "abc", "device": "cpu",
                       "ranks_per_node": 2, "ranks_detail": [{"rank": 0, "host": host}]}}
    json.dump(doc, open(os.path.join(d, "run.json"), "w"))
    return d


def imports():
    url = new_db("imports")
    r = run(["history", "--db", with_password(url)])
    checks(r.rc == ExitCode.usage and "holds no ccbench history yet" in r.err, f"a database without a history: exit 2 ({r.rc}: {r.err.strip()})")
    runs = [folder("wrong", "2026-12-01T10:00:00Z", ExitCode.wrong_results, "FAILED (exit code 1: wrong results)"),
            folder("timeout", "2026-12-01T11:00:00Z", ExitCode.timeout, "FAILED (exit code 5: timeout or hang)"),
            folder("running", "2026-12-01T12:00:00Z", None, None), folder("csv-only", "", "none", None)]
    args = ["history", "--db", with_password(url)]
    for d in runs:
        args += ["--add", d]
    r = run(args)
    print(r.output)
    checks(r.rc == ExitCode.ok, "--add of four runs")
    checks(f"{runs[0]} added as run 1 (FAILED (exit code 1: wrong results), exit code 1)" in r.out, "run 1's verdict")
    checks(PASSWORD not in r.output, "the password in the URL not printed by --add")
    listed = run(["history", "--db", with_password(url)]).out
    print(listed)
    lines = [line for line in listed.splitlines() if line.startswith(" ")]
    checks(len(lines) == 4 and lines[1].endswith("FAILED (exit code 5: timeout or hang)") and
           lines[2].endswith(f"unknown ({runs[2]}/run.json holds no verdict)") and
           lines[3].endswith(f"unknown (no run.json beside {runs[3]}/results.csv)"), "verdicts kept, unknown where unknown")
    checks(sql("imports", "SELECT string_agg(coalesce(exit_code::text, 'null'), ',' ORDER BY id) FROM ccbench.runs") ==
           "1,5,null,null", "exit codes as stored")
    again = run(["history", "--db", with_password(url), "--add", runs[0], "--add", runs[3]])
    checks(f"# history: {runs[0]} is already stored as run 1; not added again" in again.out and
           f"# history: {runs[3]} is already stored as run 4; not added again" in again.out, "a run added again: a note")
    checks(sql("imports", "SELECT count(*) FROM ccbench.runs") == "4" and
           sql("imports", "SELECT count(*) FROM ccbench.rows") == str(4 * ROWS), "each run and row stored once")
    trend = run(["history", "--db", with_password(url), "--collective", "allreduce", "--impl", "ring", "--size", "1M"])
    checks(trend.rc == ExitCode.ok and trend.out.count("allreduce ring/shm float") == 8, "a trend: 4 runs x 2 placements")
    return url


def secrets_(url):
    """The password from PGPASSFILE, from PGPASSWORD, and through CCBENCH_DB of a real run."""
    passfile = os.path.join(work, "pgpass")
    with open(passfile, "w") as f:
        f.write(f"127.0.0.1:{PORT}:*:ccbench:{PASSWORD}\n")
    os.chmod(passfile, 0o600)
    for name, env in (("PGPASSFILE", {"PGPASSFILE": passfile}), ("PGPASSWORD", {"PGPASSWORD": PASSWORD})):
        r = run(["history", "--db", url], env=env)
        checks(r.rc == ExitCode.ok and len([l for l in r.out.splitlines() if l.startswith(" ")]) == 4,
               f"the password from {name} opens the store")
    out = os.path.join(work, "real")
    r = launch(mpiexec, 2, ccbench, ["--device", "cpu", "--collective", "allreduce", "--impl", "ring", "-b", "1K", "-e",
                                     "4K", "-n", "3", "-w", "1", "--out", out, "--db", with_password(url)],
               env={"CCBENCH_DB": with_password(url)}, export=[])
    print(r.out[-600:] + r.err[-600:])
    checks(r.rc == ExitCode.ok and re.search(f"# history: run [0-9]+ appended to {re.escape(url)}\n", r.out),
           "a real run appended with --db URL")
    leaked = [f for f in os.listdir(out) if PASSWORD in open(os.path.join(out, f), errors="replace").read()]
    checks(not leaked and PASSWORD not in r.output, f"the password in no output and no results file ({leaked})")
    context = json.load(open(os.path.join(out, "run.json")))["context"]
    checks(f"--db {url}" in context["command_line"], "run.json's command line names the store without its password")
    checks(context["environment"].get("CCBENCH_DB") == url, "run.json's CCBENCH_DB without its password")


def failures_():
    cases = [(f"postgresql://ccbench:{PASSWORD}@127.0.0.1:1/imports", "host 127.0.0.1, port 1, database imports",
              "no server at the port"),
             (f"postgresql://ccbench:wrong{PASSWORD[:3]}@127.0.0.1:{PORT}/imports",
              f"host 127.0.0.1, port {PORT}, database imports", "a wrong password"),
             (f"postgresql://ccbench:{PASSWORD}@127.0.0.1:{PORT}/nosuchdb", f"host 127.0.0.1, port {PORT}, database nosuchdb",
              "a database that does not exist")]
    for url, where, what in cases:
        for args in (["history", "--db", url], ["history", "--db", url, "--add", os.path.join(work, "wrong")]):
            r = run(args)
            text = r.output
            checks(r.rc == ExitCode.precondition and f"cannot connect to PostgreSQL ({where}" in text
                   and PASSWORD not in text and "wrong" + PASSWORD[:3] not in text,
                   f"{what}: exit 3 naming where ({r.rc}: {text.strip()})")


def concurrent(db_arg, check_db, label):
    """16 processes adding at once, a reader listing all the while."""
    base = os.path.join(work, "many-" + label)
    os.makedirs(base)
    own = [folder(f"many-{label}/n{i:02}", f"2026-12-02T10:00:{i:02}Z", ExitCode.ok, "OK", host=f"n{i:02}",
                  copies=COPIES)
           for i in range(12)]
    adds = own + own[:4]  # four runs added by two processes at the same moment
    stop = os.path.join(base, "stop")
    reader = subprocess.Popen([sys.executable, "-c", READER, ccbench, db_arg, str(ALLREDUCE * COPIES), stop],
                              stdout=subprocess.PIPE, text=True)
    procs = [subprocess.Popen([ccbench, "history", "--db", db_arg, "--add", d], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True) for d in adds]
    results = [(p.wait(), p.stdout.read()) for p in procs]
    open(stop, "w").close()
    seen = reader.communicate()[0]
    added = sum(1 for rc, out in results if rc == ExitCode.ok and " added as run " in out)
    noted = sum(1 for rc, out in results if rc == ExitCode.ok and "already stored as run" in out)
    refused = [out.strip() for rc, out in results if rc != ExitCode.ok]
    print(f"{label}: {added} added, {noted} already stored, {len(refused)} refused; reader: {seen.strip()}")
    stored = check_db()
    if label == "postgres":
        checks(added == 12 and noted == 4 and not refused, "postgres: 16 writers at once: 12 runs added, 4 found stored")
    else:  # holds, or refuses clearly; never a silent loss
        checks(all(rc == ExitCode.precondition and "another job has held it" in out
                   for rc, out in results if rc != ExitCode.ok),
               f"sqlite: a writer refused says why (exit 3): {refused}")
        checks(added + noted == 16 - len(refused), "sqlite: every writer added, found its run, or was refused")
    checks(stored == (12 * ROWS * COPIES, 12) or (label == "sqlite" and refused and stored[0] == stored[1] * ROWS * COPIES),
           f"{label}: every run stored once and whole ({stored})")
    checks(seen.startswith("whole") and " 0 reads" not in seen,
           f"{label}: the reader read, and saw whole runs only ({seen.strip()})")


# Reads every all-reduce row of the store until told to stop (`history --collective allreduce`,
# the trend of every run): each run seen must show all of its all-reduce rows.
READER = r"""
import collections, os, subprocess, sys
ccbench, db, rows, stop = sys.argv[1:5]
reads, partial, counts = 0, [], []
while not os.path.exists(stop):
    r = subprocess.run([ccbench, "history", "--db", db, "--collective", "allreduce"], capture_output=True, text=True)
    if r.returncode != 0:
        continue  # not made yet, or busy: nothing seen
    reads += 1
    per_run = collections.Counter(line.split()[0] for line in r.stdout.splitlines() if line.startswith(" "))
    counts.append(len(per_run))
    partial += [f"run {run}: {n} rows" for run, n in per_run.items() if n != int(rows)]
print(("partial " + repr(partial[:3])) if partial else f"whole ({reads} reads, runs seen {counts})")
"""


def main():
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    url = imports()
    secrets_(url)
    failures_()
    pg = new_db("many")
    concurrent(with_password(pg), lambda: (int(sql("many", "SELECT count(*) FROM ccbench.rows")),
                                           int(sql("many", "SELECT count(*) FROM ccbench.runs"))), "postgres")
    lite = os.path.join(work, "many.db")

    def sqlite_counts():
        import sqlite3
        c = sqlite3.connect(lite)
        return c.execute("SELECT count(*) FROM rows").fetchone()[0], c.execute("SELECT count(*) FROM runs").fetchone()[0]
    concurrent(lite, sqlite_counts, "sqlite")
    return checks.exit_code()


if __name__ == "__main__":
    sys.exit(main())
