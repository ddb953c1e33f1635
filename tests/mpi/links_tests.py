#!/usr/bin/env python3
"""`ccbench links` under mpirun on CPU ranks: the matrix, links.csv, links.json, bad input, and ib.

Usage: links_tests.py MPIEXEC CCBENCH WORKDIR CASE
CASE: matrix | transports | bad_input | ib_missing | efficiency | rdma (the hardware case: exit 77 = skipped,
with the reason printed, where this host has no RDMA device).
"""
import csv
import json
import os
import shutil
import subprocess
import sys

MPIEXEC, CCBENCH, WORKDIR, CASE = sys.argv[1:5]
SKIP = 77


def run(np, args, expect_rc):
    cmd = [MPIEXEC, "--oversubscribe", "--allow-run-as-root", "-np", str(np), CCBENCH, "links"] + args
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    out = p.stdout + p.stderr
    if p.returncode != expect_rc:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {p.returncode}, expected {expect_rc}\n{out}")
    return out


def need(cond, what, text=""):
    if not cond:
        sys.exit(f"FAIL: {what}\n{text}")


def fresh(name):
    d = os.path.join(WORKDIR, name)
    shutil.rmtree(d, ignore_errors=True)
    return d


def read_rows(d):
    with open(os.path.join(d, "links.csv"), newline="") as f:
        return list(csv.DictReader(f))


def check_pairs(rows, transport, nranks, sizes):
    """Every ordered pair at every size has both bandwidths; latency at the smallest size only."""
    mine = [r for r in rows if r["transport"] == transport and r["mode"] == "pair"]
    pairs = {(int(r["src"]), int(r["dst"]), int(r["bytes"])) for r in mine}
    want = {(s, d, b) for s in range(nranks) for d in range(nranks) if s != d for b in sizes}
    need(pairs == want, f"{transport}: pairs {sorted(pairs)} != {sorted(want)}")
    for r in mine:
        need(float(r["oneway_GBps"]) > 0 and float(r["bidir_GBps"]) > 0, f"{transport}: no bandwidth in {r}")
        need((r["latency_us"] != "") == (int(r["bytes"]) == sizes[0]), f"{transport}: latency cell wrong in {r}")
        need(float(r["latency_us"] or 1) > 0, f"latency not positive in {r}")


if CASE == "matrix":
    d = fresh("links-matrix")
    out = run(3, ["-e", "256K", "-n", "3", "-w", "1", "--out", d], 0)
    sizes = [8, 64, 512, 4096, 32768, 262144]
    rows = read_rows(d)
    check_pairs(rows, "shm", 3, sizes)  # auto on one host: shm
    for title in ["shm: one-way bandwidth at 256 KiB", "shm: bidirectional bandwidth at 256 KiB",
                  "shm: latency at 8 B", "results: " + d]:
        need(title in out, f"'{title}' missing from the output", out)
    if not os.path.exists("/sys/class/infiniband") or not os.listdir("/sys/class/infiniband"):
        need("ib skipped: no RDMA device" in out, "auto did not say why ib was skipped", out)
    j = json.load(open(os.path.join(d, "links.json")))
    need(j["schema"] == "ccbench-links/1" and len(j["results"]) == len(rows), "links.json does not match links.csv")
    need(j["context"]["ranks"] == 3 and len(j["context"]["hosts"]) == 3, "links.json context lacks the ranks")
    for o in j["outliers"]:  # each named in the output with ranks and hosts
        line = f"OUTLIER {o['transport']} pair rank {o['src']} ({o['src_host']}) -> rank {o['dst']} ({o['dst_host']})"
        need(line in out, f"outlier {o} not printed", out)
    print(f"ok: {len(rows)} cells, {len(j['outliers'])} outliers")

elif CASE == "transports":
    d = fresh("links-transports")
    out = run(2, ["--transport", "tcp,mpi", "-b", "1K", "-e", "64K", "-n", "3", "--all-at-once", "--out", d], 0)
    rows = read_rows(d)
    check_pairs(rows, "tcp", 2, [1024, 8192, 65536])
    check_pairs(rows, "mpi", 2, [1024, 8192, 65536])
    allrows = [r for r in rows if r["mode"] == "all"]
    need(len(allrows) == 4 and all(float(r["oneway_GBps"]) > 0 for r in allrows), "all-at-once rows missing", out)
    need("tcp all pairs at once: rank 0" in out, "all-at-once not printed", out)
    print(f"ok: {len(rows)} cells")

elif CASE == "bad_input":
    for args, words in [(["--outlier-threshold", "2"], "--outlier-threshold: '2' is not valid"),
                        (["--ib-qps", "0"], "--ib-qps: '0' is not valid"),
                        (["--ib-dev", ":1"], "--ib-dev: ':1' names no device"),
                        (["--ib-mtu", "1500"], "--ib-mtu: 1500 is not valid"),
                        (["--transport", "nvlink"], "--transport: unknown value 'nvlink'"),
                        (["--transport", "ce", "--device", "cpu"], "--transport ce measures GPU ranks")]:
        out = run(2, args + ["--out", "none"], 2)
        need(words in out, f"{args}: message '{words}' missing", out)
    print("ok")

elif CASE == "ib_missing":
    if os.path.isdir("/sys/class/infiniband") and os.listdir("/sys/class/infiniband"):
        print("this host has an RDMA device: the no-device message cannot be checked here")
        sys.exit(SKIP)
    out = run(2, ["--transport", "ib", "--out", "none"], 3)
    need("--transport ib: no RDMA device: /sys/class/infiniband" in out, "no clear message", out)
    print("ok")

elif CASE == "efficiency":
    # A run that measures its own ceilings: run.json rows of our shm ring carry busbw / ceiling.
    d = fresh("links-efficiency")
    cmd = [MPIEXEC, "--oversubscribe", "--allow-run-as-root", "-np", "2", CCBENCH, "--device", "cpu",
           "--collective", "allreduce", "--impl", "ring", "-b", "1M", "-e", "1M", "-n", "3", "-w", "1",
           "--measure-ceilings", "--out", d]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    need(p.returncode == 0, f"{' '.join(cmd)} exited {p.returncode}", p.stdout + p.stderr)
    run = json.load(open(os.path.join(d, "run.json")))
    ceilings = {c["transport"]: c for c in run["link_ceilings"]["ceilings"]}
    need("shm" in ceilings and ceilings["shm"]["bidir_GBps"] > 0, f"no shm ceiling: {run['link_ceilings']}")
    for row in run["rows"]:
        want = row["busbw_gbps"] / (ceilings["shm"]["bidir_GBps"] / 2)
        need(row["transport"] == "shm" and abs(row["efficiency"] - want) < 1e-9 * max(1, want), f"efficiency of {row}")
    links = json.load(open(os.path.join(d, "links.json")))
    need(links["schema"] == "ccbench-links/1", "links.json of the ceilings missing")
    # A file that is not a links.json is refused before any measurement.
    bad = os.path.join(WORKDIR, "not-links.json")
    open(bad, "w").write('{"schema": "something else"}')
    p = subprocess.run([MPIEXEC, "--oversubscribe", "--allow-run-as-root", "-np", "2", CCBENCH, "--device", "cpu",
                        "--ceilings", bad, "--out", "none"], capture_output=True, text=True, timeout=240)
    need(p.returncode == 2 and "is not a links.json" in p.stderr, "a bad --ceilings file was not refused",
         p.stdout + p.stderr)
    print(f"ok: {len(run['rows'])} rows with efficiency")

elif CASE == "rdma":
    if not os.path.isdir("/sys/class/infiniband") or not os.listdir("/sys/class/infiniband"):
        print("skipped: no RDMA device: /sys/class/infiniband is empty or missing on this host")
        sys.exit(SKIP)
    d = fresh("links-rdma")
    out = run(2, ["--transport", "ib", "-b", "8", "-e", "4M", "-n", "10", "--out", d], 0)
    check_pairs(read_rows(d), "ib", 2, [8, 64, 512, 4096, 32768, 262144, 2097152])
    print(out)

else:
    sys.exit(f"unknown case {CASE}")
