#!/usr/bin/env python3
"""ccbench over the ofi transport (libfabric), decided from what its result files hold.

Usage: ofi_runs.py --ccbench PATH --mpiexec PATH --workdir DIR CASE
CASE:
  run:PROVIDER:PROTOCOL:RANKS:NODES   every CPU implementation and collective over ofi on RANKS
                                      ranks split into NODES emulated nodes, several dtypes and
                                      ops, odd sizes; every row checked (transport column, status,
                                      wrong count, coverage)
  shm_without_cma:RANKS               the shm provider with cross-memory attach off
                                      (FI_SHM_DISABLE_CMA=1, as in a container that forbids ptrace):
                                      its RMA writes complete only as the receiver takes them, so a
                                      notice goes after the sender's last post; ring, tree and direct
                                      collectives up to 1.4 MB, every row checked as for run
  bad_names                           names that do not exist: exit 2 listing what does, exit 3
                                      for what cannot run here; run and links alike
  killed_peer:PROVIDER                a rank killed mid-run (CCBENCH_FAULT kill, the launcher told
                                      to keep the others running): run.json ends with exit code 5
                                      or 6 naming the provider and the peer; earlier rows stay
  early_end_shm                       a run over shm ended by its deadline: each rank removes
                                      its shm region, saying so, and none is left in /dev/shm
  links                               `ccbench links --transport ofi`: every pair measured
  links_early_end_shm                 links over shm cancelled (SIGTERM to mpirun): no region left
  topo                                `ccbench topo` lists the providers and domains
  channel_bench                       ccbench_channel_bench (--channel-bench PATH) at 1 MiB: the raw
                                      provider rows (a bare write loop, whose bytes rank 1 checks)
                                      of tcp;ofi_rxm and shm give a figure, and the ofi channel rows
                                      state their fraction of it (of_raw)
PROVIDER is as --ofi-provider takes it (tcp, shm, or `default` for ccbench's own choice);
CCBENCH_OFI_TEST_PROVIDER=efa replaces tcp in every case (a cluster with that NIC).
Prints what it checked; exits 1 when a check fails, 77 when this ccbench has no libfabric.
"""
import argparse
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from runs import launch as launch_ranks, mpirun_command, run  # noqa: E402
from testlib import SKIP, ExitCode, Failed, Skipped, main_guard, need  # noqa: E402

IMPLS = "ring,tree,direct,hier"  # every CPU implementation that runs over a transport
DTYPES = "float,int32,int8,bfloat16"
OPS = "sum,max"
# Odd sizes: 12 B then x7 (84, 588, 4116, 28812, 201684): element counts that split unevenly
# over 2 to 5 ranks and end slots mid-way.
SWEEP = ["-b", "12", "-e", "300K", "-f", "7", "-n", "2", "-w", "1"]


def launch(opts, np, args, timeout=240, env=None, mpirun_flags=()):
    r = launch_ranks(opts.mpiexec, np, opts.ccbench, args, env=env, flags=mpirun_flags, timeout=timeout, echo=True)
    return r, r.seconds


def fresh(opts, name):
    d = os.path.join(opts.workdir, name)
    shutil.rmtree(d, ignore_errors=True)
    return d


def rows_of(folder):
    path = os.path.join(folder, "results.csv")
    need(os.path.exists(path), f"{path} was not written")
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader([l for l in f if not l.startswith("#")], strict=True))


def run_json(folder):
    path = os.path.join(folder, "run.json")
    need(os.path.exists(path), f"{path} was not written")
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def provider_arg(opts, provider):
    forced = os.environ.get("CCBENCH_OFI_TEST_PROVIDER")
    if forced and provider == "tcp":
        provider = forced
    return [] if provider == "default" else ["--ofi-provider", provider]


def check_run(opts, provider, protocol, np, nodes, name=None, env=None, impls=IMPLS, dtypes=DTYPES, sweep=SWEEP):
    """Every CPU implementation and collective over ofi; every row read back and checked."""
    d = fresh(opts, name or f"ofi-run-{provider}-{protocol}-{np}-{nodes}")
    args = ["--device", "cpu", "--transport", "ofi", *provider_arg(opts, provider), "--ofi-protocol", protocol,
            "--emulate-nodes", str(nodes), "--impl", impls, "--collective", "all", "-d", dtypes, "-o", OPS,
            *sweep, "--timeout", "120", "--out", d]
    p, _ = launch(opts, np, args, timeout=280, env=env)
    need(p.rc == ExitCode.ok, f"exit code {p.rc}\n{p.out[-3000:]}\n{p.err[-3000:]}")
    rows = rows_of(d)
    j = run_json(d)
    need(j["complete"] is True and j["exit_code"] == ExitCode.ok,
         f"run.json: complete={j['complete']} exit={j['exit_code']}")
    need(len(j["rows"]) == len(rows), "run.json and results.csv hold different rows")
    labels = {r["transport"] for r in rows}
    need(len(labels) == 1 and next(iter(labels)).startswith("ofi:") and next(iter(labels)).endswith(":" + protocol),
         f"the transport column holds {labels}, expected one ofi:<provider>:{protocol}")
    label = next(iter(labels))
    if provider == "shm":
        need(label == "ofi:shm:" + protocol, f"transport {label}")
    elif provider in ("tcp", "default") and not os.environ.get("CCBENCH_OFI_TEST_PROVIDER"):
        # One node takes shm by default; emulated nodes cannot, and take tcp;ofi_rxm.
        want = "shm" if provider == "default" and nodes == 1 else "tcp;ofi_rxm"
        need(label == f"ofi:{want}:{protocol}", f"transport {label}, expected ofi:{want}:{protocol}")
    bad = [r for r in rows if r["status"] not in ("ok", "skipped")]
    need(not bad, f"{len(bad)} rows neither ok nor skipped, e.g. {bad[:1]}")
    wrong = [r for r in rows if r["status"] == "ok" and r["wrong[elements]"] != "0"]
    need(not wrong, f"{len(wrong)} ok rows with wrong elements")
    need(not any("ofi" in r["reason"] for r in rows if r["status"] == "skipped"),
         "a row was skipped for a reason of the transport")
    # Coverage: each implementation ran every collective it declares, in every dtype (and op) asked;
    # what it does not declare is skipped saying so.
    checked = 0
    for impl in impls.split(","):
        mine = [r for r in rows if r["impl"] == impl]
        for coll in sorted({r["collective"] for r in mine}):
            rs = [r for r in mine if r["collective"] == coll]
            if all("implements" in r["reason"] for r in rs):
                continue  # not declared: every row says so
            for dtype in dtypes.split(","):
                ok = [r for r in rs if r["dtype"] == dtype and r["status"] == "ok"]
                need(ok, f"{impl} {coll} {dtype}: no row measured")
                need(any(int(r["size[B]"]) & (int(r["size[B]"]) - 1) for r in ok),
                     f"{impl} {coll} {dtype}: no odd (non power of two) size measured")
                checked += 1
    print(f"  {len(rows)} rows, {sum(r['status'] == 'ok' for r in rows)} ok, transport {label}, "
          f"{checked} (implementation, collective, dtype) combinations measured")


def check_shm_without_cma(opts, np):
    """shm with cross-memory attach off: writes go through the provider's bounce buffers and
    complete only as the receiver takes them. Each run's last notice used to be left queued by a
    sender that had finished (the receiver then waited out --timeout)."""
    fi_info = shutil.which("fi_info")
    if fi_info:  # a provider that does not know the switch would run with CMA and prove nothing
        listed = run([fi_info, "-e", "-p", "shm"]).out
        if "FI_SHM_DISABLE_CMA" not in listed:
            raise Skipped("this libfabric's shm provider has no FI_SHM_DISABLE_CMA (fi_info -e -p shm)")
        print("  fi_info -e -p shm lists FI_SHM_DISABLE_CMA")
    else:
        print("  fi_info is not installed: FI_SHM_DISABLE_CMA taken as known (libfabric 1.17 has it)")
    sweep = ["-b", "12", "-e", "1500K", "-f", "7", "-n", "3", "-w", "1"]  # up to 1411788 B: many slots
    check_run(opts, "shm", "rma", np, 1, name=f"ofi-shm-without-cma-{np}", env={"FI_SHM_DISABLE_CMA": "1"},
              impls="ring,tree,direct", dtypes="float,int8", sweep=sweep)


def expect_exit(p, rc, parts, what):
    text = p.output
    need(p.rc == rc, f"{what}: exit code {p.rc}, expected {rc.describe()}\n{text[-2000:]}")
    for part in parts:
        need(part in text, f"{what}: the output does not say {part!r}\n{text[-2000:]}")
    print(f"  {what}: exit {rc}, says {parts}")


def check_bad_names(opts):
    base = ["--device", "cpu", "--transport", "ofi", "--impl", "ring", "--collective", "allreduce", "-b", "1K", "-e",
            "1K", "-n", "1", "-w", "0", "--out", "none"]
    p, _ = launch(opts, 2, base + ["--ofi-provider", "carrier-pigeon"])
    expect_exit(p, ExitCode.usage, ["--ofi-provider: 'carrier-pigeon' is not a provider of this libfabric", "it has: ",
                                    "providers with reliable-datagram endpoints here: ", "tcp;ofi_rxm ("],
                "unknown provider")
    p, _ = launch(opts, 2, base + ["--ofi-provider", "tcp", "--ofi-domain", "no-such-nic"])
    expect_exit(p, ExitCode.usage,
                ["--ofi-domain: provider tcp;ofi_rxm has no domain 'no-such-nic' here (valid: ", "lo"],
                "unknown domain")
    p, _ = launch(opts, 2, base + ["--ofi-protocol", "rdma"])
    expect_exit(p, ExitCode.usage, ["--ofi-protocol: unknown value 'rdma' (valid: auto, rma, tagged)"],
                "unknown protocol")
    p, _ = launch(opts, 2, base + ["--ofi-provider", "shm", "--emulate-nodes", "2"])
    expect_exit(p, ExitCode.precondition, ["provider shm moves data within one node and these ranks span nodes"],
                "shm across nodes")
    p, _ = launch(opts, 2, ["links", "--device", "cpu", "--transport", "ofi", "--ofi-provider", "carrier-pigeon",
                            "-e", "1K", "--out", "none"])
    expect_exit(p, ExitCode.usage, ["'carrier-pigeon' is not a provider of this libfabric"], "links: unknown provider")


SHM_REGION = re.compile(r"^(\d+):\d+:\d+$")  # libfabric shm's /dev/shm/<pid>:<domain>:<endpoint>


def shm_regions():
    try:
        return set(os.listdir("/dev/shm"))
    except OSError:
        return set()


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def new_regions(before):
    """libfabric shm's regions new since `before` (a set of /dev/shm names), sorted."""
    return sorted(n for n in shm_regions() - before if SHM_REGION.match(n))


def dead_regions(before):
    """The shm regions new since `before` whose process is gone."""
    return [n for n in new_regions(before) if not pid_alive(int(SHM_REGION.match(n).group(1)))]


def remove_dead_regions(before):
    """Removes the shm regions a killed rank left (new since `before`, their process gone): a later
    process given the same id could not create its own (fi_enable: FI_EBUSY; it failed a CI run)."""
    for name in dead_regions(before):
        try:
            os.unlink(os.path.join("/dev/shm", name))
            print(f"  removed /dev/shm/{name}, left by the killed rank")
        except OSError:
            pass


def check_killed_peer(opts, provider):
    """Rank 1 killed at 16K; the launcher keeps rank 0 running (--enable-recovery), so what ends the
    job is ccbench's own: exit code 5 (the wait for the dead peer, naming transport and peer) or 6
    (the provider failing a transfer to it, naming provider and peer)."""
    d = fresh(opts, f"ofi-killed-{provider}")
    before = shm_regions()
    timeout = 6
    args = ["--device", "cpu", "--transport", "ofi", *provider_arg(opts, provider), "--impl", "ring", "--collective",
            "allreduce", "-b", "1K", "-e", "64K", "-n", "3", "-w", "1", "--timeout", str(timeout), "--out", d]
    try:
        p, elapsed = launch(opts, 2, args, env={"CCBENCH_FAULT": "kill:rank=1,size=16K"},
                            mpirun_flags=["--enable-recovery"])
    finally:
        remove_dead_regions(before)
    need(elapsed < 2 * timeout + 20, f"the job took {elapsed:.1f} s")
    j = run_json(d)
    reason = j["incomplete_reason"] or ""
    need(j["complete"] is False, "run.json says complete after a rank was killed")
    need(j["exit_code"] in (ExitCode.timeout, ExitCode.runtime),
         f"run.json exit_code {j['exit_code']}, expected {ExitCode.timeout.describe()} or "
         f"{ExitCode.runtime.describe()}: {reason}")
    full = {"tcp": "tcp;ofi_rxm", "shm": "shm"}.get(provider, provider)
    provider_error = f"ofi ({full}): " in reason and "to rank 1 (host " in reason
    if j["exit_code"] == ExitCode.timeout:
        # The wait for the dead peer's data, or (the provider failed the transfer first) the
        # agreement on the results after that error, which cannot end with a dead peer: then the
        # reason carries the provider's error and says rank 1 has ended.
        need(f"over ofi:{full}:" in reason and "for data from rank 1" in reason or
             provider_error and "agreeing on the results" in reason and "rank 1 (host" in reason and
             "has ended" in reason, f"reason {reason!r}")
    else:
        need(provider_error, f"reason {reason!r}")
    rows = rows_of(d)
    for size in (1024, 2048, 4096, 8192):
        got = [r for r in rows if r["size[B]"] == str(size)]
        need(len(got) == 2 and all(r["status"] == "ok" for r in got), f"the {size} B rows before the kill: {got}")
    need(not any(r["size[B]"] == "16384" and r["status"] == "ok" for r in rows), "a 16K row claims to be ok")
    print(f"  run.json exit code {j['exit_code']}: {reason}")


def check_early_end_shm(opts):
    """Rank 1 sleeps 20 s inside the 16K row; rank 0's deadline (3 s) ends the job early (exit 5,
    MPI_Abort), and the launcher's SIGTERM ends rank 1 the same way: neither closes its endpoint,
    so each must remove its shm region itself, saying so, and none may be left in /dev/shm."""
    d = fresh(opts, "ofi-early-end-shm")
    before = shm_regions()
    args = ["--device", "cpu", "--transport", "ofi", "--ofi-provider", "shm", "--impl", "ring", "--collective",
            "allreduce", "-b", "1K", "-e", "64K", "-n", "3", "-w", "1", "--timeout", "3", "--out", d]
    try:
        p, elapsed = launch(opts, 2, args, env={"CCBENCH_FAULT": "delay:rank=1,size=16K,ms=20000"})
    finally:
        left = dead_regions(before)
        remove_dead_regions(before)
    need(p.rc == ExitCode.timeout, f"exit code {p.rc}, expected {ExitCode.timeout.describe()}\n{p.err[-2000:]}")
    need(run_json(d)["exit_code"] == ExitCode.timeout, "run.json does not say the timeout ended the run")
    said = re.findall(r"ccbench: rank (\d): removed /dev/shm/(\d+:\d+:\d+), libfabric shm's region", p.err)
    need(sorted(r for r, _ in said) == ["0", "1"], f"the ranks that said they removed their region: {said}\n{p.err}")
    gone = [n for _, n in said if os.path.exists(os.path.join("/dev/shm", n))]
    need(not gone, f"regions said removed are still there: {gone}")
    need(not left, f"regions of ended ranks left in /dev/shm: {left}")
    print(f"  exit 5 after {elapsed:.1f} s; both ranks removed their region: {[n for _, n in said]}")


def check_links_early_end_shm(opts):
    """`ccbench links` over ofi shm, cancelled (SIGTERM to mpirun, as scancel or Ctrl-C) while rank 1
    is slow with every message: no shm region may be left in /dev/shm. links has no job guard, so
    the signal reaches libfabric shm's own handler, which removes the regions; SIGKILL would leave
    them (docs/guides/ofi.md)."""
    d = fresh(opts, "ofi-links-early-end-shm")
    before = shm_regions()
    cmd = mpirun_command(opts.mpiexec, 2, opts.ccbench, ["links", "--device", "cpu", "--transport", "ofi",
                                                         "--ofi-provider", "shm", "-e", "64K", "-n", "20", "--out", d],
                         export=["CCBENCH_FAULT"])
    print("$ CCBENCH_FAULT=slow:rank=1,ms=300 " + " ".join(cmd), flush=True)
    p = subprocess.Popen(cmd, env=dict(os.environ, CCBENCH_FAULT="slow:rank=1,ms=300"), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, errors="replace")
    try:
        start = time.monotonic()  # both endpoints open: two new regions of live processes
        while time.monotonic() - start < 60 and p.poll() is None and len(new_regions(before)) < 2:
            time.sleep(0.1)
        opened = new_regions(before)
        need(p.poll() is None and len(opened) == 2, f"links ended or opened no endpoints: {opened}")
        time.sleep(1.0)  # into the slow messages
        p.send_signal(signal.SIGTERM)
        try:
            out, err = p.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            out, err = p.communicate()
            raise Failed("links did not end within 30 s of SIGTERM")
    finally:
        left = dead_regions(before)
        remove_dead_regions(before)
    need(p.returncode != ExitCode.ok, f"exit code 0 after SIGTERM\n{err[-2000:]}")
    need(not left, f"regions of ended ranks left in /dev/shm: {left}")
    print(f"  exit {p.returncode} after SIGTERM; the regions {opened} are gone")


def check_links(opts):
    d = fresh(opts, "ofi-links")
    p, _ = launch(opts, 3, ["links", "--device", "cpu", "--transport", "ofi", *provider_arg(opts, "tcp"), "-e",
                            "256K", "-n", "3", "-w", "1", "--out", d])
    need(p.rc == ExitCode.ok, f"exit code {p.rc}\n{p.out[-2000:]}{p.err[-2000:]}")
    with open(os.path.join(d, "links.csv"), newline="") as f:
        rows = [r for r in csv.DictReader(f) if r["mode"] == "pair"]
    labels = {r["transport"] for r in rows}
    need(len(labels) == 1 and next(iter(labels)).startswith("ofi:"), f"links transports {labels}")
    pairs = {(r["src"], r["dst"]) for r in rows}
    need(len(pairs) == 6, f"pairs measured: {sorted(pairs)}")
    need(all(float(r["oneway_GBps"]) > 0 and float(r["bidir_GBps"]) > 0 for r in rows), "a pair without bandwidth")
    print(f"  {len(rows)} pair rows over {labels}")


def check_topo(opts):
    d = fresh(opts, "ofi-topo")
    p, _ = launch(opts, 1, ["topo", "--out", d])
    need(p.rc == ExitCode.ok, f"exit code {p.rc}\n{p.err}")
    need("ofi: libfabric " in p.out, f"topo does not list libfabric:\n{p.out}")
    with open(os.path.join(d, "topology.json")) as f:
        node = json.load(f)["hosts"][0]["node"]
    ofi = node["ofi"]
    need(ofi["available"] is True, f"ofi not available: {ofi}")
    providers = {e["provider"] for e in ofi["endpoints"]}
    need({"tcp;ofi_rxm", "shm"} <= providers, f"providers listed: {providers}")
    need(any(e["provider"] == "tcp;ofi_rxm" and e["domain"] == "lo" for e in ofi["endpoints"]), "no lo domain")
    print(f"  providers listed: {sorted(providers)}")


# The raw rows' figures a run must fall within to be taken as a measurement: 1 MB/s (a machine
# loaded many times over still moves a MiB in well under a second: cpu2core-20261201-ofi-compare
# saw 20x slowdowns from 3-10 GB/s) up to 1 TB/s (no host memory copies that fast; a row that
# claims more moved nothing). Rank 1 checks that the bytes landed; a row whose bytes did not is an error.
RAW_SANE = (1e6, 1e12)
# The write each provider's raw row loops on: the one ccbench's rma channels send data with.
RAW_OP = {"ofi_tcp_raw": "raw fi_writedata", "ofi_shm_raw": "raw fi_write"}


def check_channel_bench(opts):
    """The channel micro-benchmark's raw provider rows and the ofi rows' fraction of them."""
    if not opts.channel_bench or not os.path.exists(opts.channel_bench):
        raise Skipped("ccbench_channel_bench is not built (Google Benchmark missing, or CCBENCH_BUILD_BENCHMARKS=OFF)")
    d = fresh(opts, "ofi-channel-bench")
    os.makedirs(d)
    out = os.path.join(d, "channels.json")
    cmd = [opts.mpiexec, "--oversubscribe", "--allow-run-as-root", "-np", "2", opts.channel_bench,
           "--benchmark_filter=BM_Channel/(ofi_tcp|ofi_shm|ofi_tcp_raw|ofi_shm_raw)/bytes:1048576/round:0",
           "--benchmark_min_time=0.05", f"--benchmark_out={out}", "--benchmark_out_format=json"]
    print("$ " + " ".join(cmd))
    p = run(cmd, timeout=240)
    need(p.rc == 0, f"exit code {p.rc}\n{p.out[-2000:]}\n{p.err[-2000:]}")
    with open(out, encoding="utf-8") as f:
        rows = {b["name"].split("/")[1]: b for b in json.load(f)["benchmarks"]}
    need(set(rows) == {"ofi_tcp", "ofi_shm", "ofi_tcp_raw", "ofi_shm_raw"}, f"rows: {sorted(rows)}")
    for name, b in sorted(rows.items()):
        need(not b.get("error_occurred"), f"{name}: {b.get('error_message')}")
        rate = b["bytes_per_second"]
        need(RAW_SANE[0] < rate < RAW_SANE[1], f"{name}: {rate:.3g} B/s, outside {RAW_SANE}")
        if name in RAW_OP:
            need(b["label"] == RAW_OP[name], f"{name}: label {b['label']!r}, expected {RAW_OP[name]!r}")
        else:
            frac = b.get("of_raw")
            need(frac is not None and 0 < frac < 100, f"{name}: of_raw {frac}")
        frac = "" if name in RAW_OP else f", of_raw {b['of_raw']:.2f}"
        print(f"  {name}: {rate / 1e9:.2f} GB/s ({b['label']}){frac}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ccbench", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--channel-bench", default="", help="ccbench_channel_bench (case channel_bench)")
    ap.add_argument("case")
    opts = ap.parse_args()
    version = run([opts.ccbench, "--version"]).out
    if "libfabric built in" not in version:
        print("SKIPPED: this ccbench was built without libfabric (install libfabric-dev)")
        return SKIP
    os.makedirs(opts.workdir, exist_ok=True)
    kind, *params = opts.case.split(":")
    try:
        if kind == "run":
            provider, protocol, np, nodes = params
            check_run(opts, provider, protocol, int(np), int(nodes))
        elif kind == "shm_without_cma":
            check_shm_without_cma(opts, int(params[0]))
        elif kind == "bad_names":
            check_bad_names(opts)
        elif kind == "killed_peer":
            check_killed_peer(opts, params[0])
        elif kind == "early_end_shm":
            check_early_end_shm(opts)
        elif kind == "links":
            check_links(opts)
        elif kind == "links_early_end_shm":
            check_links_early_end_shm(opts)
        elif kind == "topo":
            check_topo(opts)
        elif kind == "channel_bench":
            check_channel_bench(opts)
        else:
            raise Failed(f"unknown case {opts.case}")
    except Failed as e:
        raise Failed(f"{opts.case}: {e}") from None  # the FAIL line names the case
    print(f"OK {opts.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main_guard(main))
