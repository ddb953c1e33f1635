#!/usr/bin/env python3
"""The results store's speed on both kinds, for the evidence (not a test).

For each store, a fresh one: ccbench_store_bench fills it with 1,000 runs of a real run's rows,
then, REPEAT times, adds one run of 10,000 rows (one transaction) and reads one case's trend
over every run; then `ccbench history` prints that trend from the command line (process start,
connection and all), REPEAT times. The two stores alternate, so that the shared machine's load
falls on both alike. PostgreSQL runs with its default durability (fsync on), started by
tests/postgres/pg_server.py --durable. Prints the median and the range of each figure, and writes
every measurement to OUT/store_speed.jsonl.

Usage: store_bench.py BUILD_DIR SOURCE_DIR OUT [--repeat N]
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

build, src, out = sys.argv[1:4]
repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 5
model = os.path.join(src, "tests/fixtures/cpu2core-20261130-np2/results.csv")


def bench(db, store):
    r = subprocess.run([os.path.join(build, "ccbench_store_bench"), db, model, "--repeat", "1"],
                       capture_output=True, text=True, check=True)
    return [json.loads(line) for line in r.stdout.splitlines()]


def cli_trend(db, store):
    t0, c0 = time.monotonic(), os.times()
    r = subprocess.run([os.path.join(build, "ccbench"), "history", "--db", db, "--collective", "allreduce",
                        "--impl", "mpi", "--transport", "mpi", "--dtype", "float", "--size", "1K"],
                       capture_output=True, text=True, check=True)
    c1 = os.times()
    return [{"store": store, "what": "history trend (command line)", "seconds": time.monotonic() - t0,
             "cpu_seconds": (c1.children_user - c0.children_user) + (c1.children_system - c0.children_system),
             "points": sum(1 for line in r.stdout.splitlines() if line.startswith(" "))}]


def main():
    if "PG_FIXTURE_URL" not in os.environ:  # start the server, then this script again under it
        return subprocess.run([sys.executable, os.path.join(src, "tests/postgres/pg_server.py"), "--durable",
                               "--databases", "bench", "--", sys.executable] + sys.argv).returncode
    os.makedirs(out, exist_ok=True)
    pg = f"postgresql://ccbench@/bench?host={os.environ['PG_FIXTURE_SOCKET']}&port={os.environ['PG_FIXTURE_PORT']}"
    lite = os.path.join(tempfile.mkdtemp(prefix="ccbench-store-bench-"), "bench.db")
    stores = (("sqlite", lite), ("postgresql", pg))
    results = []
    load_before = os.getloadavg()
    for _ in range(repeat):  # the stores alternate
        for store, db in stores:
            results += bench(db, store)
            results += cli_trend(db, store)
    with open(os.path.join(out, "store_speed.jsonl"), "w") as f:
        for r in results:
            f.write(json.dumps(r) + "\n")
    print(f"load average before: {load_before}, after: {os.getloadavg()}")
    for store, _ in stores:
        for what in ("fill", "append", "trend", "history trend (command line)"):
            rs = [r for r in results if r["store"] == store and r["what"] == what]
            xs = [r["seconds"] for r in rs]
            cpu = [r["cpu_seconds"] for r in rs if "cpu_seconds" in r]
            size = {k: rs[-1][k] for k in ("rows", "runs", "points", "rows_each") if k in rs[-1]}
            print(f"{store:10} {what:30} n={len(xs)} wall median {statistics.median(xs):.3f} s "
                  f"(range {min(xs):.3f}-{max(xs):.3f})" +
                  (f", client CPU median {statistics.median(cpu):.3f} s (range {min(cpu):.3f}-{max(cpu):.3f})"
                   if cpu else "") + f" {size}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
