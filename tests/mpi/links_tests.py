#!/usr/bin/env python3
"""`ccbench links` under mpirun on CPU ranks: the matrix, links.csv, links.json, bad input, and ib.

Usage: links_tests.py MPIEXEC CCBENCH WORKDIR CASE
CASE: matrix | transports | bad_input | ib_missing | efficiency | model | model_hier | accept_references |
link_verdicts | rdma (the hardware case: exit 77 = skipped,
with the reason printed, where this host has no RDMA device).
"""
import csv
import json
import os
import shutil
import socket
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from runs import mpirun_command, run as run_command  # noqa: E402
from testlib import SKIP, ExitCode, main_guard, need  # noqa: E402

MPIEXEC, CCBENCH, WORKDIR, CASE = sys.argv[1:5]
SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts")


def run(np, args, expect_rc):
    cmd = mpirun_command(MPIEXEC, np, CCBENCH) + ["links"] + args
    p = run_command(cmd, timeout=240)
    out = p.output
    need(p.rc == expect_rc, f"{' '.join(cmd)} exited {p.rc}, expected {ExitCode(expect_rc).describe()}",
         out)
    return out


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


def case_matrix():
    # -e 256K with the default factor 8: 8 .. 32K, and the sweep ends at -e itself (256K).
    d = fresh("links-matrix")
    out = run(3, ["-e", "256K", "-n", "3", "-w", "1", "--out", d], ExitCode.ok)
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
    # 3 ranks on fewer hardware threads: said once, in links.json too, and outliers are leads only.
    oversubscribed = 3 > len(os.sched_getaffinity(0))
    need(("note: oversubscribed: 3 ranks on" in out) == oversubscribed, "oversubscription not said (or said wrongly)", out)
    need((j["context"].get("oversubscribed") is not None) == oversubscribed, "links.json: context.oversubscribed")
    kind = "outlier (oversubscribed: maybe the scheduler)" if oversubscribed else "OUTLIER"
    for o in j["outliers"]:  # each named in the output with ranks and hosts
        line = f"{kind} {o['transport']} pair rank {o['src']} ({o['src_host']}) -> rank {o['dst']} ({o['dst_host']})"
        need(line in out, f"outlier {o} not printed", out)
    print(f"ok: {len(rows)} cells, {len(j['outliers'])} outliers")



def case_transports():
    d = fresh("links-transports")
    # -e 100K is no power of 8 above -b: the factor steps 1K, 8K, 64K, then -e itself (it was left out);
    # -T 0 is a week, as in run (it was refused).
    out = run(2, ["--transport", "tcp,mpi", "-b", "1K", "-e", "100K", "-n", "3", "--all-at-once", "-T", "0",
                  "--out", d], ExitCode.ok)
    rows = read_rows(d)
    check_pairs(rows, "tcp", 2, [1024, 8192, 65536, 102400])
    check_pairs(rows, "mpi", 2, [1024, 8192, 65536, 102400])
    allrows = [r for r in rows if r["mode"] == "all"]
    need(len(allrows) == 4 and all(float(r["oneway_GBps"]) > 0 for r in allrows), "all-at-once rows missing", out)
    need("tcp all pairs at once: rank 0" in out, "all-at-once not printed", out)
    print(f"ok: {len(rows)} cells")



def case_bad_input():
    for args, words in [(["--outlier-threshold", "2"], "--outlier-threshold: '2' is not valid"),
                        (["--ib-qps", "0"], "--ib-qps: '0' is not valid"),
                        (["--ib-dev", ":1"], "--ib-dev: ':1' names no device"),
                        (["--ib-mtu", "1500"], "--ib-mtu: 1500 is not valid"),
                        (["--transport", "nvlink"], "--transport: unknown value 'nvlink'"),
                        (["--transport", "tpc"], "(did you mean 'tcp'?)"),
                        (["--transport", "p2p"], "--transport: 'p2p' is valid for run on GPU ranks only"),
                        (["--timeout", "-1"], "-T/--timeout: '-1' is not valid"),
                        (["--transport", "ce", "--device", "cpu"], "--transport ce measures GPU ranks")]:
        out = run(2, args + ["--out", "none"], ExitCode.usage)
        need(words in out, f"{args}: message '{words}' missing", out)
    # A tuning variable one letter off a knob's name is refused before MPI, as run refuses it.
    os.environ["CCBENCH_CPU_SLOT_DEPHT"] = "4"
    try:
        out = run(2, ["--out", "none"], ExitCode.usage)
    finally:
        del os.environ["CCBENCH_CPU_SLOT_DEPHT"]
    need("CCBENCH_CPU_SLOT_DEPHT is set, but ccbench has no such variable: did you mean CCBENCH_CPU_SLOT_DEPTH?"
         in out, "a misspelt knob not refused by links", out)
    print("ok")



def case_ib_missing():
    if os.path.isdir("/sys/class/infiniband") and os.listdir("/sys/class/infiniband"):
        print("this host has an RDMA device: the no-device message cannot be checked here")
        return SKIP
    out = run(2, ["--transport", "ib", "--out", "none"], ExitCode.precondition)
    need("--transport ib: no RDMA device: /sys/class/infiniband" in out, "no clear message", out)
    print("ok")



def case_efficiency():
    # A run that measures its own ceilings: run.json rows of our shm ring carry busbw / ceiling.
    d = fresh("links-efficiency")
    cmd = mpirun_command(MPIEXEC, 2, CCBENCH) + [
        "--device", "cpu",
        "--collective", "allreduce", "--impl", "ring", "-b", "1M", "-e", "1M", "-n", "3", "-w", "1",
        "--measure-ceilings", "--out", d]
    p = run_command(cmd, timeout=240)
    need(p.rc == ExitCode.ok, f"{' '.join(cmd)} exited {p.rc}", p.output)
    run = json.load(open(os.path.join(d, "run.json")))
    ceilings = {c["transport"]: c for c in run["context"]["link_ceilings"]["ceilings"]}
    need("shm" in ceilings and ceilings["shm"]["bidir_GBps"] > 0, f"no shm ceiling: {run['context']['link_ceilings']}")
    for row in run["rows"]:
        want = row["busbw_gbps"] / (ceilings["shm"]["bidir_GBps"] / 2)
        need(row["transport"] == "shm" and abs(row["efficiency"] - want) < 1e-9 * max(1, want), f"efficiency of {row}")
    links = json.load(open(os.path.join(d, "links.json")))
    need(links["schema"] == "ccbench-links/1", "links.json of the ceilings missing")
    # A file that is not a links.json is refused before any measurement.
    bad = os.path.join(WORKDIR, "not-links.json")
    open(bad, "w").write('{"schema": "something else"}')
    p = run_command(mpirun_command(MPIEXEC, 2, CCBENCH) + [
        "--device", "cpu",
        "--ceilings", bad, "--out", "none"], timeout=240)
    need(p.rc == ExitCode.usage and "is not a links.json" in p.err, "a bad --ceilings file was not refused",
         p.output)
    print(f"ok: {len(run['rows'])} rows with efficiency")



def case_model():
    # run --model with measured ceilings: ring rows predicted with the shm ceiling as their link,
    # mpi rows without a prediction and the reason, the report line; then 2 emulated nodes over
    # tcp on a node kind without NICs (the tcp ceiling as each node's NIC), and a bad --model
    # refused before MPI.
    d = fresh("run-model")
    cmd = mpirun_command(MPIEXEC, 2, CCBENCH) + [
        "--device", "cpu",
        "--collective", "allreduce", "--impl", "ring,mpi", "-b", "64K", "-e", "1M", "-f", "4", "-n", "3", "-w", "1",
        "--measure-ceilings", "--model", "cpu-node", "--out", d]
    p = run_command(cmd, timeout=240)
    need(p.rc == ExitCode.ok, f"{' '.join(cmd)} exited {p.rc}", p.output)
    run = json.load(open(os.path.join(d, "run.json")))
    model = run["context"]["model"]
    need(model["topology"] == "cpu-node" and model["calibrated"], f"model block: {model}")
    shm = [c for c in run["context"]["link_ceilings"]["ceilings"] if c["transport"] == "shm"][0]["bidir_GBps"] / 2
    rings = [r for r in run["rows"] if r["impl"] == "ring"]
    need(len(rings) == 6, f"{len(rings)} ring rows")
    for r in rings:
        need(r["model_link"] == "measured ceiling" and abs(r["model_link_gbps"] - shm) < 1e-9 * shm, f"link of {r}")
        need(0 < r["predicted_busbw_gbps"] <= shm * (1 + 1e-9), f"prediction above the link: {r}")
        need(abs(r["model_efficiency"] - r["busbw_gbps"] / r["predicted_busbw_gbps"]) < 1e-9, f"efficiency of {r}")
        need(r["predicted_time_us"] > 0 and r["model_reason"] == "", f"time or reason of {r}")
    for r in [r for r in run["rows"] if r["impl"] == "mpi"]:
        need(r["predicted_busbw_gbps"] is None and r["model_efficiency"] is None and "no algorithm for impl mpi" in
             r["model_reason"], f"mpi row {r}")
    need("# model cpu-node" in p.out and "allreduce ring: efficiency" in p.out, "no model report", p.out)

    # Two emulated nodes joined by tcp: the node kind has no NICs, the measured tcp ceiling is each
    # node's NIC.
    d = fresh("run-model-nodes")
    cmd = mpirun_command(MPIEXEC, 2, CCBENCH) + [
        "--device", "cpu",
        "--impl", "ring", "-b", "64K", "-e", "1M", "-f", "16", "-n", "3", "-w", "1", "--emulate-nodes", "2",
        "--transport", "tcp", "--measure-ceilings", "--model", "cpu-node", "--out", d]
    p = run_command(cmd, timeout=240)
    need(p.rc == ExitCode.ok, f"{' '.join(cmd)} exited {p.rc}", p.output)
    run = json.load(open(os.path.join(d, "run.json")))
    tcp = [c for c in run["context"]["link_ceilings"]["ceilings"] if c["transport"] == "tcp"][0]["bidir_GBps"] / 2
    need(len(run["rows"]) == 8, f"{len(run['rows'])} rows across nodes")
    for r in run["rows"]:
        need(r["nodes"] == 2 and r["transport"] == "tcp", f"not a tcp row across 2 nodes: {r}")
        need(r["model_link"] == "measured ceiling" and abs(r["model_link_gbps"] - tcp) < 1e-9 * tcp, f"NIC of {r}")
        need(0 < r["predicted_busbw_gbps"] <= tcp * (1 + 1e-9) and r["model_reason"] == "", f"prediction of {r}")
        need(abs(r["model_efficiency"] - r["busbw_gbps"] / r["predicted_busbw_gbps"]) < 1e-9, f"efficiency of {r}")
    need("allreduce ring: efficiency" in p.out and "allgather ring: efficiency" in p.out, "no model report",
         p.out)

    for bad, message in (("no-such-system", "--model no-such-system: no such file and no such preset"),
                         ("cpu-node --out none", "--model writes its columns into run.json")):
        p = run_command(mpirun_command(MPIEXEC, 2, CCBENCH) + [
            "--device", "cpu",
            "--model"] + bad.split(), timeout=240)
        need(p.rc == ExitCode.usage and message in p.err, f"--model {bad} was not refused",
             p.output)
    print(f"ok: {len(rings)} ring rows predicted")



def case_model_hier():
    # run --model over 2 emulated nodes of 2 CPU ranks on a node kind with one NIC: hier rows are
    # predicted by the model's leader scheme (hier-leader), ring rows by the ring, each exactly as
    # `ccbench model` predicts that shape.
    d = fresh("run-model-hier")
    os.makedirs(d)
    topo = os.path.join(d, "cpu-2x2.yaml")
    with open(topo, "w") as f:
        f.write("name: cpu-2x2\nnodes: 2\nnode:\n  ranks: 2\n  fabric: host\n"
                "  gpu_link: {bandwidth_gbps: 10, latency_us: 1}\n  nics: 1\n  nic: {bandwidth_gbps: 2, latency_us: 20}\n")
    sweep = ["-b", "64K", "-e", "1M", "-f", "4"]
    out = os.path.join(d, "run")
    cmd = mpirun_command(MPIEXEC, 4, CCBENCH) + [
        "--device", "cpu",
        "--collective", "allreduce", "--impl", "ring,hier", "-n", "3", "-w", "1", "--emulate-nodes", "2",
        "--model", topo, "--out", out] + sweep
    p = run_command(cmd, timeout=240)
    need(p.rc == ExitCode.ok, f"{' '.join(cmd)} exited {p.rc}", p.output)
    run = json.load(open(os.path.join(out, "run.json")))
    m = run_command([CCBENCH, "model", "--topology", topo, "--impl", "ring,hier-leader", "--format", "json"] + sweep,
                    timeout=60)
    need(m.rc == ExitCode.ok, "ccbench model failed", m.output)
    model = {(r["algorithm"], r["size"]): r for r in json.loads(m.out)["rows"]}
    for impl, algo in (("hier", "hier-leader"), ("ring", "ring")):
        rows = [r for r in run["rows"] if r["impl"] == impl]
        need(len(rows) == 6 and all(r["nodes"] == 2 and r["ranks_per_node"] == 2 for r in rows), f"{impl} rows: {rows}")
        for r in rows:
            want = model[(algo, r["bytes"])]
            need(r["model_reason"] == "" and r["predicted_busbw_gbps"] is not None, f"no prediction for {r}")
            need(abs(r["predicted_time_us"] - want["time_us"]) <= 1e-6 * want["time_us"], f"{r} against {want}")
            need(abs(r["model_efficiency"] - r["busbw_gbps"] / r["predicted_busbw_gbps"]) < 1e-9, f"efficiency of {r}")
    need("allreduce hier: efficiency" in p.out, "no model report line for hier", p.out)
    print("ok: hier rows predicted by hier-leader: " + ", ".join(
        f"{r['bytes']} B {r['predicted_busbw_gbps']:.3f} GB/s" for r in run["rows"] if r["impl"] == "hier" and not r["in_place"]))



def case_accept_references():
    # Rows are complete when written: a run with --measure-ceilings and --model has the ceiling and
    # model columns in results.csv, run.json, its -J copy and results.md; acceptance rules that need
    # a ceiling or a prediction judge them there (PASS or FAIL, never "not available"), after the
    # run (--accept) as from the files (ccbench accept).
    d = fresh("accept-references")
    copy = os.path.join(WORKDIR, "accept-references-J.json")
    rules = {}
    for name, fraction in (("pass", "0.000001"), ("fail", "1000")):
        rules[name] = os.path.join(WORKDIR, f"references-{name}.yaml")
        with open(rules[name], "w") as f:
            f.write("rules:\n  - name: ring against its references\n    select: {impl: ring, min_size: 64K}\n"
                    f"    require: {{min_busbw_fraction_of_ceiling: {fraction}, "
                    f"min_busbw_fraction_of_prediction: {fraction}}}\n")
    cmd = mpirun_command(MPIEXEC, 2, CCBENCH) + [
        "--device", "cpu",
        "--collective", "allreduce", "--impl", "ring,mpi", "-b", "64K", "-e", "1M", "-f", "4", "-n", "3", "-w", "1",
        "--measure-ceilings", "--model", "cpu-node", "--out", d, "-J", copy, "--accept", rules["pass"]]
    p = run_command(cmd, timeout=240)
    need(p.rc == ExitCode.ok, f"{' '.join(cmd)} exited {p.rc}", p.output)
    for check in ("ceiling", "prediction"):
        need(f"PASS min_busbw_fraction_of_{check} 1e-06" in p.out, f"run --accept: {check} not judged", p.out)

    with open(os.path.join(d, "results.csv"), newline="") as f:
        lines = [l for l in f if not l.startswith("#")]
    rows = list(csv.DictReader(lines))
    rings = [r for r in rows if r["impl"] == "ring"]
    need(len(rings) == 6, f"{len(rings)} ring rows in results.csv")
    for r in rings:
        busbw, ceiling = float(r["busbw[GB/s]"]), float(r["link_ceiling[GB/s]"])
        predicted = float(r["predicted_busbw[GB/s]"])
        need(ceiling > 0 and abs(float(r["efficiency"]) - busbw / ceiling) <= 1e-5 * busbw / ceiling, f"ceiling of {r}")
        need(predicted > 0 and abs(float(r["model_efficiency"]) - busbw / predicted) <= 1e-5 * busbw / predicted,
             f"prediction of {r}")
        need(float(r["predicted_time[us]"]) > 0 and r["model_link"] == "measured ceiling" and r["model_reason"] == "",
             f"model columns of {r}")
    for r in [r for r in rows if r["impl"] == "mpi"]:
        need(r["predicted_busbw[GB/s]"] == "" and "no algorithm for impl mpi" in r["model_reason"], f"mpi row {r}")
    run = json.load(open(os.path.join(d, "run.json")))
    need(json.load(open(copy)) == run, "the -J copy differs from run.json")
    need(run["context"]["model"]["topology"] == "cpu-node" and run["context"]["link_ceilings"]["ceilings"],
         f"context: {run['context'].get('model')} {run['context'].get('link_ceilings')}")
    need([r["efficiency"] for r in run["rows"] if r["impl"] == "ring"] == [float(r["efficiency"]) for r in rings] or
         all(abs(a - float(b["efficiency"])) <= 1e-5 * a
             for a, b in zip([r["efficiency"] for r in run["rows"] if r["impl"] == "ring"], rings)),
         "run.json and results.csv disagree on efficiency")
    md = open(os.path.join(d, "results.md")).read()
    need("| ceiling (GB/s) | efficiency | predicted busbw (GB/s) | measured / predicted |" in md, "results.md", md)

    for name, rc, word in (("pass", ExitCode.ok, "PASS"), ("fail", ExitCode.threshold, "FAIL")):
        a = run_command([CCBENCH, "accept", "--rules", rules[name], d], timeout=60)
        need(a.rc == rc, f"accept {name}: exit {a.rc}, expected {rc.describe()}", a.output)
        for check in ("ceiling", "prediction"):
            need(f"{word} min_busbw_fraction_of_{check}" in a.out, f"accept {name}: {check} not judged", a.out)
        need("no selected row carries the column" not in a.out, f"accept {name}: a check was not available",
             a.out)
    print(f"ok: {len(rings)} ring rows judged against their ceiling and prediction")



def case_link_verdicts():
    # Links reach a verdict: `ccbench links` and a `--groups pairs` run name each link the same way
    # (HOST:R-HOST:R), `accept` judges links.csv and results.csv per link (PASS or FAIL, never N/A),
    # over both runs at once, and report.py draws the matrix from ccbench's own links.json.
    host = socket.gethostname()
    want = {f"{host}:{a}-{host}:{b}" for a in range(3) for b in range(a + 1, 3)}
    links_dir, pairs_dir = fresh("link-verdicts-links"), fresh("link-verdicts-pairs")
    run(3, ["-b", "4K", "-e", "64K", "-n", "3", "-w", "1", "--out", links_dir], ExitCode.ok)
    rows = read_rows(links_dir)
    need({r["link"] for r in rows if r["mode"] == "pair"} == want, f"links.csv links {[r['link'] for r in rows]}")
    for r in rows:
        a, b = sorted((int(r["src"]), int(r["dst"])))
        need(r["link"] == f"{host}:{a}-{host}:{b}", f"link name of {r}")
    cmd = mpirun_command(MPIEXEC, 3, CCBENCH) + [
        "--device", "cpu", "--collective",
        "allreduce", "--impl", "ring", "-b", "4K", "-e", "64K", "-f", "4", "-n", "3", "-w", "1", "--groups", "pairs",
        "--out", pairs_dir]
    p = run_command(cmd, timeout=240)
    need(p.rc == ExitCode.ok, f"{' '.join(cmd)} exited {p.rc}", p.output)
    with open(os.path.join(pairs_dir, "results.csv"), newline="") as f:
        prow = list(csv.DictReader([l for l in f if not l.startswith("#")]))
    need({r["link"] for r in prow} == want and all(r["group"].startswith("pair ") for r in prow),
         f"--groups pairs rows' links {sorted({r['link'] for r in prow})}")
    run_json = json.load(open(os.path.join(pairs_dir, "run.json")))
    need({r["link"] for r in run_json["rows"]} == want, "run.json rows lack the link")

    rules = os.path.join(WORKDIR, "link-verdicts.yaml")
    for floor, rc, word in (("0.000001", ExitCode.ok, "PASS"), ("1000000", ExitCode.threshold, "FAIL")):
        with open(rules, "w") as f:
            f.write("rules:\n  - name: every link\n    select: {min_size: 4K}\n"
                    f"    require: {{min_busbw: {floor}}}\n")
        # per link: links.csv 3 sizes x 2 directions; pairs 3 sizes x out of place and in place
        for runs, per_link in (([links_dir], 6), ([os.path.join(links_dir, "links.csv")], 6),
                               ([pairs_dir], 6), ([links_dir, pairs_dir], 12)):
            a = run_command([CCBENCH, "accept", "--rules", rules] + runs, timeout=60)
            need(a.rc == rc, f"accept {runs}: exit {a.rc}, expected {rc.describe()}",
                 a.output)
            text = a.out.split("# per link:")[-1]
            for link in want:
                line = f"{word} {link}: {per_link if rc else 0} of {per_link} rows broke a rule"
                need(line in text, f"accept {runs}: '{line}' missing", a.out)
            need("N/A" not in text, f"accept {runs}: a link without a verdict", a.out)

    report = os.path.join(WORKDIR, "link-verdicts-report")
    shutil.rmtree(report, ignore_errors=True)
    python = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable  # Debian's matplotlib
    r = run_command([python, os.path.join(SCRIPTS, "report.py"),
                     pairs_dir, "--links", os.path.join(links_dir, "links.json"), "--out", report], timeout=120)
    need(r.rc == 0, f"report.py --links exited {r.rc}", r.output)
    md = open(os.path.join(report, "report.md")).read()
    need("link bandwidth, shm, one way, 65536 B" in md, "report.md has no link matrix", md)
    print(f"ok: {len(want)} links judged from links.csv and --groups pairs, the matrix drawn")



def case_rdma():
    if not os.path.isdir("/sys/class/infiniband") or not os.listdir("/sys/class/infiniband"):
        print("skipped: no RDMA device: /sys/class/infiniband is empty or missing on this host")
        return SKIP
    d = fresh("links-rdma")
    out = run(2, ["--transport", "ib", "-b", "8", "-e", "4M", "-n", "10", "--out", d], ExitCode.ok)
    check_pairs(read_rows(d), "ib", 2, [8, 64, 512, 4096, 32768, 262144, 2097152])
    print(out)


CASES = {"matrix": case_matrix, "transports": case_transports, "bad_input": case_bad_input,
         "ib_missing": case_ib_missing, "efficiency": case_efficiency, "model": case_model,
         "model_hier": case_model_hier, "accept_references": case_accept_references,
         "link_verdicts": case_link_verdicts, "rdma": case_rdma}


def main():
    need(CASE in CASES, f"unknown case {CASE}")
    return CASES[CASE]() or 0


if __name__ == "__main__":
    sys.exit(main_guard(main))
