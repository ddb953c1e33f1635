#!/usr/bin/env python3
"""ccbench on a cluster in a box (scripts/cluster-in-a-box.sh): hosts with their own names,
addresses, /tmp and /dev/shm, joined by links that can be slowed, made lossy and cut, and a
real Slurm. Every run is decided from its result files (tests/check_results.py), never by its
exit code alone.

Usage: cluster_tests.py --ccbench PATH --build DIR CASE
CASE:
  collectives:TRANSPORT  every CPU collective x implementation over TRANSPORT (tcp, ofi, mpi)
                         across 3 hosts, 3 dtypes, 2 ops, odd sizes, root 1: exact, every case
  groups                 --groups node and rails on 6 ranks of 3 hosts, pairs on 3: the groups
                         the hosts make, each a full case set, exact
  links_topo             `links` names the 3 hosts and measures every pair over tcp and mpi;
                         `topo --expect` passes 3 hosts and fails 4, naming the count
  interface              tcp finds its interface by host name, and where every host's name
                         resolves to 127.0.1.1 (Debian's line) by the route to the peers; a wrong
                         CCBENCH_TCP_IF is exit 2 listing the host's interfaces
  loss                   0.1 % loss each way on one host's link: tcp runs exact and complete, the
                         host's TCP retransmitted
  cut:IMPL               a link cut mid-run (ring over tcp, or mpi): exit 5 within the deadline
                         plus a few seconds, run.json naming the host that no longer answers,
                         mpirun and its daemons gone
  slurm                  sbatch -N3 scripts/slurm.sbatch under srun --mpi=pmix and under
                         CCBENCH_LAUNCHER=mpirun: exact results in ccbench-results/slurm-<job>;
                         a node cut off mid-job is named and the job ends
  shaped                 one host shaped to 1 Gbit/s: compare of a healthy and a shaped run fails
                         on the large rows; the model fed the shaped rate predicts the shaped
                         ring within 15 %
  fleet_store            one PostgreSQL server on h1 (198.18.0.1), a job on every host at once
                         writing its run to it over the box's network: each run stored whole,
                         once, under its host, no password printed
Prints what it checked and how long the box took; exits 0 when every check passes, 1 when one
fails, 77 (skipped, with the reason) where this machine cannot host a box.
"""
import argparse
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from box import Box  # noqa: E402  (tests/cluster/box.py)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from testlib import ExitCode, Failed, main_guard, need  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.abspath(os.path.join(HERE, "..", ".."))
CHECK = os.path.join(SOURCE, "tests", "check_results.py")
PG_SERVER = os.path.join(SOURCE, "tests", "postgres", "pg_server.py")
SKIP = 77
HOSTS = 3
IMPLS = "mpi,ring,tree,direct,hier"
DTYPES = "int8,bfloat16,float64"  # 1, 2 and 8 bytes: the reductions themselves are checked on one host
# Odd sizes: 12 B then x7 (84, 588, 4116, 28812, 201684): element counts that split unevenly over
# 3 ranks and end slots mid-way.
SWEEP = ["-b", "12", "-e", "300K", "-f", "7", "-n", "2", "-w", "1"]
# How long a reachable host's daemon may outlive mpirun: it ends once it reads mpirun's connection
# closed (a local close, well under a second on an idle box; a loaded 2-core CI machine once kept
# one past the first look). Longer means it is stuck.
ORTED_GRACE_S = 5


def fresh(opts, name):
    d = os.path.join(opts.work, name)
    shutil.rmtree(d, ignore_errors=True)
    return d


def timed(cmd, timeout=570, env=None):
    print("$ " + " ".join(cmd), flush=True)
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=timeout,
                       env=dict(os.environ, **(env or {})))
    took = time.monotonic() - start
    print(f"  exit code {p.returncode} after {took:.1f} s", flush=True)
    return p, took


def checked_run(opts, box, name, np, args, check=(), mpirun_args=()):
    """A ccbench run across the box decided by check_results.py; returns its results folder."""
    d = fresh(opts, name)
    cmd = [sys.executable, CHECK, "--dir", d, "--unchecked", "none", *check, "--",
           *box.mpirun(np, *mpirun_args), opts.ccbench, *args, "--out", d]
    p, _ = timed(cmd, timeout=opts.deadline)
    print(p.stdout[-3000:])
    need(p.returncode == 0, f"{name}: check_results.py failed", p.stderr[-3000:])
    return d


def run_json(d):
    with open(os.path.join(d, "run.json"), encoding="utf-8") as f:
        return json.load(f)


def hosts_of(doc):
    """The hosts run.json says the ranks ran on."""
    return sorted({r["host"] for r in doc["context"]["ranks_detail"]})


# ---- cases ----

def case_collectives(opts, transport):
    with Box("coll" + transport[:3], HOSTS, build_dir=opts.build, deadline_s=opts.deadline) as box:
        args = ["--device", "cpu", "--collective", "all", "--impl", IMPLS, "--transport", transport, "-d", DTYPES,
                "-o", "sum,max", "--root", "1", "-T", "30", *SWEEP]
        if transport == "ofi":
            args += ["--ofi-provider", "tcp"]
        d = checked_run(opts, box, f"cluster-collectives-{transport}", HOSTS, args)
        doc = run_json(d)
        rows = doc["rows"]
        need(hosts_of(doc) == ["h1", "h2", "h3"], f"the ranks ran on {hosts_of(doc)}, not h1, h2, h3")
        need(all(r["nodes"] == HOSTS and r["ranks_per_node"] == 1 for r in rows), "a row not on 3 nodes of 1 rank")
        crossing = {r["transport"] for r in rows if r["status"] == "ok" and r["impl"] != "mpi"}
        need(any(transport in t for t in crossing), f"no row went over {transport}: {crossing}")
        print(f"ok: {len(rows)} rows over {sorted(crossing)} on hosts {hosts_of(doc)}")


def case_groups(opts):
    with Box("groups", HOSTS, build_dir=opts.build, deadline_s=opts.deadline) as box:
        common = ["--device", "cpu", "--collective", "allreduce,allgather,broadcast", "--impl", "ring,mpi",
                  "-d", "float,int32", "-o", "sum", "-b", "12", "-e", "64K", "-f", "9", "-n", "2", "-w", "1",
                  "--root", "1", "-T", "30"]
        for groups, np, mapping in (("node", 6, ["--map-by", "ppr:2:node"]), ("rails", 6, ["--map-by", "ppr:2:node"]),
                                    ("pairs", 3, [])):
            d = checked_run(opts, box, f"cluster-groups-{groups}", np, common + ["--groups", groups],
                            check=["--hosts", str(HOSTS)], mpirun_args=mapping)
            doc = run_json(d)
            names = sorted({r["group"] for r in doc["rows"]})
            want = {"node": ["node0", "node1", "node2"], "rails": ["rail0", "rail1"],
                    "pairs": ["pair 0-1", "pair 0-2", "pair 1-2"]}[groups]
            need(names == want, f"--groups {groups}: groups {names}, expected {want}")
            nodes = {r["group"]: (r["nodes"], r["ranks"]) for r in doc["rows"]}
            for g, (n, ranks) in nodes.items():  # node groups stay on a host, rails and pairs cross them
                need((n == 1) == (groups == "node"), f"--groups {groups}: group {g} spans {n} nodes")
            print(f"ok: --groups {groups}: {names}, {len(doc['rows'])} rows")


def case_links_topo(opts):
    with Box("links", HOSTS, build_dir=opts.build, deadline_s=opts.deadline) as box:
        d = fresh(opts, "cluster-links")
        p, _ = timed(box.mpirun(HOSTS) + [opts.ccbench, "links", "--transport", "tcp,mpi", "-b", "1K", "-e", "1M",
                                          "-n", "3", "--out", d])
        need(p.returncode == ExitCode.ok, "links failed", p.stdout + p.stderr)
        with open(os.path.join(d, "links.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        for t in ("tcp", "mpi"):
            pairs = {(r["src_host"], r["dst_host"]) for r in rows if r["transport"] == t and r["mode"] == "pair"}
            want = {(f"h{a}", f"h{b}") for a in range(1, 4) for b in range(1, 4) if a != b}
            need(pairs == want, f"links over {t}: host pairs {sorted(pairs)}, expected {sorted(want)}")
            need(all(float(r["oneway_GBps"]) > 0 for r in rows if r["transport"] == t), f"{t}: a pair without bandwidth")
        for h in ("h1", "h2", "h3"):
            need(re.search(rf"rank \d: {h}\b", p.stdout), f"links does not list host {h}", p.stdout)
        print(f"ok: links: {len(rows)} cells between h1, h2, h3")
        expect = os.path.join(opts.work, "cluster-expect.yaml")
        for hosts, rc in ((HOSTS, ExitCode.ok), (HOSTS + 1, ExitCode.threshold)):
            with open(expect, "w") as f:
                f.write(f"hosts: {hosts}\ngpus_per_host: 0\ncores_per_host: {os.cpu_count()}\n")
            p, _ = timed(box.mpirun(HOSTS) + [opts.ccbench, "topo", "--expect", expect,
                                              "--out", fresh(opts, f"cluster-topo-{hosts}")])
            need(p.returncode == rc, f"topo --expect hosts: {hosts}: exit {p.returncode}, expected {rc.describe()}",
                 p.stdout + p.stderr)
            for h in ("h1", "h2", "h3"):
                need(f"== host {h} (1 rank)" in p.stdout, f"topo does not describe host {h}", p.stdout)
            if rc:
                need(f"DIFFERENCE: {HOSTS} hosts in the job, expected {HOSTS + 1}" in p.stdout,
                     "topo --expect does not name the host count", p.stdout + p.stderr)
        print("ok: topo --expect: 3 hosts pass, 4 fail")


def case_interface(opts):
    with Box("iface", HOSTS, build_dir=opts.build, deadline_s=opts.deadline) as box:
        args = ["--device", "cpu", "--transport", "tcp", "--impl", "ring,tree", "--collective", "allreduce,allgather",
                "-d", "float,int8", "-o", "sum", "-b", "12", "-e", "64K", "-f", "9", "-n", "2", "-w", "1", "-T", "30"]
        checked_run(opts, box, "cluster-iface-name", HOSTS, args)
        print("ok: by host name (each resolves to its 198.18.0.N)")
        # Debian's "127.0.1.1 <host>" line: each host's own name resolves to loopback only.
        for i in range(1, HOSTS + 1):
            path = os.path.join(box.dir, "etc", f"hosts.h{i}")
            with open(path, encoding="utf-8") as f:
                text = f.read()
            text = re.sub(rf"^198\.18\.0\.{i} h{i}$", f"127.0.1.1 h{i}", text, flags=re.M)
            with open(path, "w", encoding="utf-8") as f:  # in place: the host's /etc/hosts is bound to it
                f.write(text)
        p = box.exec("h2", ["getent", "hosts", "h2"])
        need(p.stdout.startswith("127.0.1.1"), f"h2 does not resolve to 127.0.1.1: {p.stdout}")
        checked_run(opts, box, "cluster-iface-route", HOSTS, args)
        print("ok: by the route to the peers where every host name resolves to 127.0.1.1")
        p, _ = timed(box.mpirun(HOSTS, "-x", "CCBENCH_TCP_IF") + [opts.ccbench, *args, "--out", "none"],
                     env={"CCBENCH_TCP_IF": "eth9"})
        out = p.stdout + p.stderr
        need(p.returncode == ExitCode.usage,
             f"CCBENCH_TCP_IF=eth9: exit {p.returncode}, expected {ExitCode.usage.describe()}", out)
        need(re.search(r"CCBENCH_TCP_IF='eth9' is not a network interface .* on host h\d; give one of the interfaces "
                       r"here: lo \(127\.0\.0\.1.*eth0 \(198\.18\.0\.\d", out),
             "the message does not list the host's interfaces", out)
        print("ok: CCBENCH_TCP_IF=eth9 is exit 2 listing lo and eth0")


def retransmitted(box, host):
    p = box.exec(host, ["nstat", "-az", "TcpRetransSegs"])
    m = re.search(r"TcpRetransSegs\s+(\d+)", p.stdout)
    need(m, f"nstat on {host} gave no TcpRetransSegs", p.stdout + p.stderr)
    return int(m.group(1))


def case_loss(opts):
    with Box("loss", HOSTS, build_dir=opts.build, deadline_s=opts.deadline) as box:
        box.shape("h2", "none", "0.1")
        before = retransmitted(box, "h2")
        args = ["--device", "cpu", "--transport", "tcp", "--impl", "ring,tree,direct", "--collective",
                "allreduce,allgather,alltoall", "-d", "float,int32", "-o", "sum", "-b", "12", "-e", "4M", "-f", "9",
                "-n", "3", "-w", "1", "-T", "60"]
        checked_run(opts, box, "cluster-loss", HOSTS, args)
        resent = retransmitted(box, "h2") - before
        need(resent > 0, "h2 retransmitted nothing: the loss filter dropped nothing")
        print(f"ok: exact and complete with 0.1 % loss on h2's link ({resent} segments retransmitted)")


def case_cut(opts, impl):
    deadline = 5
    with Box("cut" + impl[:4], HOSTS, build_dir=opts.build, deadline_s=opts.deadline) as box:
        d = fresh(opts, f"cluster-cut-{impl}")
        transport = ["--transport", "tcp"] if impl == "ring" else []
        # A thousand sizes of 20 iterations: the run is still measuring when the link goes, and no
        # phase comes near the deadline on a loaded machine (20 calls of 4 KiB took 0.4 s at a
        # load average of 20 on 2 cores).
        cmd = box.mpirun(HOSTS) + [opts.ccbench, "--device", "cpu", "--impl", impl, "--collective", "allreduce",
                                   *transport, "-b", "4K", "-e", "4M", "-i", "4K", "-n", "20", "-w", "1",
                                   "-T", str(deadline), "--out", d]
        print("$ " + " ".join(cmd), flush=True)
        start = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
        try:
            rows = os.path.join(d, "results.csv")
            while time.monotonic() - start < 60 and proc.poll() is None:
                if os.path.exists(rows) and sum(1 for line in open(rows) if not line.startswith("#")) >= 3:
                    break
                time.sleep(0.2)
            if proc.poll() is not None:
                raise Failed(f"the run ended before the cut (exit code {proc.returncode})\n{proc.stdout.read()}")
            box.cut("h3")
            cut_at = time.monotonic()
            out, _ = proc.communicate(timeout=deadline * 3 + 40)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise Failed(f"mpirun still running {deadline * 3 + 40} s after the cut")
        ended = time.monotonic() - cut_at
        print(out[-4000:])
        print(f"mpirun exited with {proc.returncode}, {ended:.1f} s after the cut (deadline {deadline} s)")
        doc = run_json(d)
        need(doc["exit_code"] == ExitCode.timeout and doc["complete"] is False,
             f"run.json: exit code {doc['exit_code']}, complete {doc['complete']}, expected "
             f"{ExitCode.timeout.describe()} and false")
        need(re.search(r"host h3 \(rank 2, 198\.18\.0\.3\) did not answer", doc["incomplete_reason"]),
             f"run.json does not name h3 as unreachable: {doc['incomplete_reason']}")
        need(not re.search(r"host h[12] \(rank", doc["incomplete_reason"]), "a reachable host named as unreachable")
        # mpirun ends the job itself once its keepalive finds h3's daemon gone (the ranks leave it
        # the end, harness/job/job_guard.h), with Open MPI's own code for a lost daemon.
        need("ORTE has lost communication with a remote daemon" in out, "mpirun did not find h3's daemon lost", out)
        # Bound: the watchdog's deadline twice (a rank waits for rank 0's own end) + its 4 s, the
        # reachability probe, Open MPI's keepalive (5 + 2 x 3 s) and 10 s for a loaded machine.
        need(ended < 2 * deadline + 4 + 2 + 11 + 10, f"mpirun took {ended:.1f} s after the cut")
        # A daemon of h1/h2 ends itself once it sees mpirun gone, which can take a moment after
        # mpirun's own exit (once in CI an orted was still there at the first look, gone at the
        # retry): each gets ORTED_GRACE_S before it counts as left behind.
        waited = time.monotonic()
        left = box.processes("h1") + box.processes("h2")
        while left and time.monotonic() - waited < ORTED_GRACE_S:
            time.sleep(0.2)
            left = box.processes("h1") + box.processes("h2")
        need(not left, f"processes left on h1/h2 {ORTED_GRACE_S} s after mpirun ended: {left}")
        print(f"ok: exit 5 naming h3, mpirun gone {ended:.1f} s after the cut; reason: {doc['incomplete_reason'][:300]}")


SBATCH = os.path.join(SOURCE, "scripts", "slurm.sbatch")


def sbatch(opts, box, sub, launcher, args, wait=True):
    """sbatch -N3 scripts/slurm.sbatch from `sub` in h1: the job id, and with `wait` the job's exit
    code once it left the queue (polled every 0.2 s: sbatch --wait polls far less often)."""
    cmd = ["env", f"CCBENCH={opts.ccbench}", f"CCBENCH_LAUNCHER={launcher}", "sbatch", "--parsable",
           "-N", str(HOSTS), "--ntasks-per-node=1", SBATCH, *args]
    print("$ (h1) " + " ".join(cmd), flush=True)
    start = time.monotonic()
    p = subprocess.run(box.exec_cmd("h1", cmd), capture_output=True, text=True, timeout=60, cwd=sub)
    job = p.stdout.strip().split(";")[0]
    need(p.returncode == 0 and job.isdigit(), f"sbatch gave no job id: {p.stdout} {p.stderr}")
    if not wait:
        return job, None
    while box.exec("h1", ["squeue", "-h", "-j", job]).stdout.strip():
        need(time.monotonic() - start < 200, f"job {job} still queued after 200 s")
        time.sleep(0.2)
    state = box.exec("h1", ["scontrol", "show", "job", job]).stdout
    m = re.search(r"ExitCode=(\d+):(\d+)", state)
    need(m, f"scontrol show job {job} gives no exit code", state)
    job_state = re.search(r"JobState=\S+", state)
    print(f"  job {job} ended after {time.monotonic() - start:.1f} s: {job_state.group(0) if job_state else '?'} "
          f"{m.group(0)}")
    return job, int(m.group(1))


def job_output(box, sub, job):
    """What Slurm says of a job and what it printed (the script's --output file in `sub`)."""
    out = os.path.join(sub, f"ccbench-{job}.out")
    text = open(out, encoding="utf-8", errors="replace").read()[-3000:] if os.path.exists(out) else "(no output file)"
    return box.exec("h1", ["scontrol", "show", "job", job]).stdout + text


def case_slurm(opts):
    with Box("slurm", HOSTS, slurm=True, build_dir=opts.build, deadline_s=opts.deadline) as box:
        sub = fresh(opts, "cluster-slurm")
        os.makedirs(sub)
        args = ["--device", "cpu", "--collective", "allreduce,allgather,broadcast", "--impl", "mpi,ring,tree",
                "-d", "float,int8", "-o", "sum", "-b", "12", "-e", "64K", "-f", "9", "-n", "2", "-w", "1", "-T", "30"]
        for launcher in ("srun", "mpirun"):
            job, rc = sbatch(opts, box, sub, launcher, args)
            out = os.path.join(sub, f"ccbench-{job}.out")
            d = os.path.join(sub, "ccbench-results", f"slurm-{job}")
            with open(out, encoding="utf-8", errors="replace") as f:
                text = f.read()
            print(text[-2000:])
            need(rc == ExitCode.ok, f"job {job} under {launcher}: exit code {rc}, expected {ExitCode.ok.describe()}")
            want = "srun --mpi=pmix" if launcher == "srun" else "mpirun --bind-to none"
            need(want in text, f"the job did not launch with {want}", text)
            p = subprocess.run([sys.executable, CHECK, "--dir", d, "--unchecked", "none", "--stdout", out,
                                "--command", " ".join(["mpirun", "-np", str(HOSTS), opts.ccbench, *args])],
                               capture_output=True, text=True)
            print(p.stdout[-2000:])
            need(p.returncode == 0, f"job {job} ({launcher}): check_results.py failed")
            hosts = hosts_of(run_json(d))
            need(hosts == ["h1", "h2", "h3"], f"job {job} ran on {hosts}")
            print(f"ok: job {job} under {launcher}: exact, results in ccbench-results/slurm-{job}, hosts {hosts}")
        slurm_node_dies(opts, box, sub)


def slurm_node_dies(opts, box, sub):
    """A job whose third node is cut off mid-run: it ends, naming h3, and nothing of it stays."""
    deadline = 5
    job, _ = sbatch(opts, box, sub, "srun", ["--device", "cpu", "--impl", "ring", "--transport", "tcp",
                                             "--collective", "allreduce", "-b", "4K", "-e", "4M", "-i", "4K",
                                             "-n", "20", "-w", "1", "-T", str(deadline)], wait=False)
    rows = os.path.join(sub, "ccbench-results", f"slurm-{job}", "results.csv")
    start = time.monotonic()
    while time.monotonic() - start < 60:
        if os.path.exists(rows) and sum(1 for line in open(rows) if not line.startswith("#")) >= 3:
            break
        if not box.exec("h1", ["squeue", "-h", "-j", job]).stdout.strip():
            raise Failed(f"job {job} ended before the cut\n{job_output(box, sub, job)}")
        time.sleep(0.2)
    if not os.path.exists(rows):
        raise Failed(f"job {job} wrote no rows within 60 s\n{job_output(box, sub, job)}")
    box.cut("h3")
    cut_at = time.monotonic()
    while time.monotonic() - cut_at < 90:
        if not box.exec("h1", ["squeue", "-h", "-j", job]).stdout.strip():
            break
        time.sleep(0.5)
    ended = time.monotonic() - cut_at
    state = box.exec("h1", ["scontrol", "show", "job", job]).stdout
    print(state)
    need(ended < 90, f"job {job} still queued 90 s after the cut")
    doc = run_json(os.path.dirname(rows))
    need(doc["exit_code"] == ExitCode.timeout and doc["complete"] is False, f"run.json: exit {doc['exit_code']}")
    need(re.search(r"host h3 \(rank 2, 198\.18\.0\.3\) did not answer", doc["incomplete_reason"]),
         f"run.json does not name h3: {doc['incomplete_reason']}")
    need("JobState=PENDING" not in state, "the job was queued again after its node failed")
    print(f"ok: job {job}: h3 cut off, job gone {ended:.1f} s later; run.json: {doc['incomplete_reason'][:300]}")


def shaped_rate_mbit(healthy):
    """1 Gbit/s, or a quarter of the healthy ring's busbw where that is lower (a loaded machine)."""
    best = max(r["busbw_gbps"] for r in run_json(healthy)["rows"] if r["bytes"] == 4 << 20)
    return min(1000, int(best * 8000 / 4))


def case_shaped(opts):
    # 2 hosts of one rank: the machine's 2 cores are not oversubscribed, so the latency-bound rows
    # hold still (25-50 us; 3 ranks on 2 cores put every small call at 4 or 8 ms, a scheduler
    # quantum, and compare rightly calls rows inside that scatter noise).
    hosts = 2
    with Box("shaped", hosts, build_dir=opts.build, deadline_s=opts.deadline) as box:
        # 1 B to 4 MiB of int8: the rows up to 32 KiB, which the shape leaves alone (they fit its
        # burst), are most of the run (16 of 23 sizes), so that compare sees the bandwidth-bound
        # ones slow down against the run as a whole. Where they were 14 of 40 rows (float from 8 B),
        # compare's scatter of the rows (a median absolute deviation) grew to 102 % with them and
        # no row failed in 1 of 2 runs; at 200 Mbit/s (20 of 40 rows slower) 539 %, none failed in
        # 2 of 3, before compare capped the allowance a scatter gives (docs/guides/compare.md, "When many
        # rows moved together").
        args = ["--device", "cpu", "--transport", "tcp", "--impl", "ring", "--collective", "allreduce", "-d", "int8",
                "-b", "1", "-e", "4M", "-f", "2", "-n", "5", "-w", "1", "-T", "60"]
        healthy = checked_run(opts, box, "cluster-shaped-healthy", hosts, args)
        mbit = shaped_rate_mbit(healthy)
        box.shape("h2", f"{mbit}mbit")
        topo = os.path.join(opts.work, "cluster-shaped.yaml")
        with open(topo, "w") as f:  # the box as the model sees it: nodes of one rank, NICs at the shaped rate
            f.write(f"name: cluster-in-a-box-{mbit}mbit\nnodes: {hosts}\nnode:\n  ranks: 1\n  fabric: host\n"
                    f"  gpu_link: {{bandwidth_gbps: 10, latency_us: 1}}\n  nics: 1\n"
                    f"  nic: {{bandwidth_gbps: {mbit / 8000}, latency_us: 50}}\n")
        shaped = checked_run(opts, box, f"cluster-shaped-{mbit}mbit", hosts, args + ["--model", topo])
        p, _ = timed([opts.ccbench, "compare", os.path.join(healthy, "results.csv"), os.path.join(shaped, "results.csv")])
        print(p.stdout[-3000:])
        need(p.returncode == ExitCode.threshold,
             f"compare of healthy and shaped: exit {p.returncode}, expected {ExitCode.threshold.describe()}",
             p.stdout + p.stderr)
        slow = [line for line in p.stdout.splitlines() if "slower" in line.lower() and not line.startswith("#")]
        need(any(re.match(r"\s*4 MiB", line) for line in slow), "compare does not flag the 4 MiB rows", p.stdout)
        rows = [r for r in run_json(shaped)["rows"] if r["bytes"] == 4 << 20]  # bandwidth-bound at the rate
        effs = [r["model_efficiency"] for r in rows]
        need(rows and all(e is not None and 0.85 <= e <= 1.15 for e in effs),
             f"model efficiency of the shaped rows {effs}, expected within 15 % of 1")
        print(f"ok: h2 at {mbit} Mbit/s: compare flags {len(slow)} rows; model efficiency "
              f"{[round(e, 2) for e in effs]}")


def start_store(box, opts):
    """tests/postgres/pg_server.py on h1, listening on 198.18.0.1 too, with a database `fleet`;
    returns (the server's process, the URL every host reaches it at, the file that holds it up)."""
    ready, hold = os.path.join(opts.work, "store-server.json"), os.path.join(opts.work, "store-server.hold")
    for f in (ready, hold):
        if os.path.exists(f):
            os.remove(f)
    open(hold, "w").close()
    keep_up = (f"import json, os, time\njson.dump({{k: os.environ[k] for k in ('PG_FIXTURE_PORT', 'PG_FIXTURE_PASSWORD')}}, "
               f"open({ready!r}, 'w'))\nwhile os.path.exists({hold!r}): time.sleep(0.2)\n")
    server = subprocess.Popen(box.exec_cmd("h1", [sys.executable, PG_SERVER, "--listen", "198.18.0.1", "--databases",
                                                  "fleet", "--", sys.executable, "-c", keep_up]),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    while not os.path.exists(ready) and server.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    if not os.path.exists(ready):
        out = server.communicate(timeout=60)[0] if server.poll() is not None else ""
        if server.returncode == SKIP:
            print(out.strip())  # "SKIPPED: ..." with the reason: the machine lacks the server
            sys.exit(SKIP)
        server.kill()
        raise Failed(f"the PostgreSQL server on h1 did not come up (exit {server.returncode})\n{out}")
    time.sleep(0.2)  # the file is written whole before it is read
    got = json.load(open(ready))
    return server, f"postgresql://ccbench:{got['PG_FIXTURE_PASSWORD']}@198.18.0.1:{got['PG_FIXTURE_PORT']}/fleet", hold


def case_fleet_store(opts):
    """Every host of the box writes its run to one PostgreSQL server at the same moment."""
    with Box("store", HOSTS, build_dir=opts.build, deadline_s=opts.deadline) as box:
        server, url, hold = start_store(box, opts)
        password = url.split(":")[2].split("@")[0]
        try:
            hosts = [f"h{i}" for i in range(1, HOSTS + 1)]
            folders = {h: fresh(opts, f"cluster-store-{h}") for h in hosts}
            args = ["--device", "cpu", "--collective", "allreduce,allgather", "--impl", "ring,mpi", "-b", "1K", "-e",
                    "64K", "-f", "4", "-n", "3", "-w", "1", "--db", url]
            jobs = {h: subprocess.Popen(box.exec_cmd(h, [opts.ccbench, *args, "--out", folders[h]]),
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) for h in hosts}
            outs = {h: j.communicate(timeout=300)[0] for h, j in jobs.items()}
            for h in hosts:
                need(jobs[h].returncode == ExitCode.ok, f"the job on {h}: exit {jobs[h].returncode}", outs[h][-2000:])
                need("# history: run " in outs[h] and password not in outs[h], f"the job on {h}: stored, no password",
                     outs[h][-2000:])
            listed = box.exec("h2", [opts.ccbench, "history", "--db", url])
            print(listed.stdout)
            need(listed.returncode == ExitCode.ok and password not in listed.stdout + listed.stderr,
                 "history list from h2", listed.stdout + listed.stderr)
            runs = [line.split() for line in listed.stdout.splitlines() if re.match(r"\s+\d+\s", line)]
            for h in hosts:
                with open(os.path.join(folders[h], "results.csv")) as f:
                    want = len([line for line in f if not line.startswith("#")]) - 1  # the header
                mine = [r for r in runs if r[2] == h]
                # "  run  started  host  kind (2 words)  commit  rows  verdict": OK runs end in "ROWS OK"
                need(len(mine) == 1 and mine[0][-1] == "OK" and int(mine[0][-2]) == want,
                     f"{h}: one run of {want} rows in the store, found {mine}", listed.stdout)
            need(len(runs) == HOSTS, f"{len(runs)} runs stored, expected {HOSTS}", listed.stdout)
            print(f"ok: {HOSTS} hosts wrote their runs at once to one PostgreSQL server on h1, each whole and once")
        finally:
            os.remove(hold)
            try:
                server.wait(timeout=60)
            except subprocess.TimeoutExpired:
                server.kill()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ccbench", required=True)
    ap.add_argument("--build", required=True, help="the build folder (box names and the tests' folders)")
    ap.add_argument("--deadline", type=float, default=570,
                    help="seconds after which the test takes its box down and fails [570: below ctest's TIMEOUT]")
    ap.add_argument("case")
    opts = ap.parse_args()
    opts.ccbench = os.path.abspath(opts.ccbench)  # the hosts and Slurm jobs start elsewhere
    opts.work = os.path.join(opts.build, "tests", "cluster")
    os.makedirs(opts.work, exist_ok=True)
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    name, _, arg = opts.case.partition(":")
    cases = {"collectives": lambda: case_collectives(opts, arg), "groups": lambda: case_groups(opts),
             "links_topo": lambda: case_links_topo(opts), "interface": lambda: case_interface(opts),
             "loss": lambda: case_loss(opts), "cut": lambda: case_cut(opts, arg), "slurm": lambda: case_slurm(opts),
             "shaped": lambda: case_shaped(opts), "fleet_store": lambda: case_fleet_store(opts)}
    need(name in cases, f"unknown case {opts.case}")
    start = time.monotonic()
    cases[name]()
    print(f"{opts.case}: {time.monotonic() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main_guard(main))
