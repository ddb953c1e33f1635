#!/usr/bin/env python3
"""Training conditions on CPU ranks, each a real ccbench launch (mpirun -np 2 --oversubscribe),
checked in what it printed and wrote:
  - fp8 (f8e4m3, f8e5m2) all-reduce and reduce-scatter of mpi, ring and tree, every op, both
    placements: every row measured with 0 wrong elements;
  - one corrupted element of an fp8 all-reduce's output is found and named (exit code 1);
  - --overlap refused: with --device cpu a usage error (exit 2) before MPI work, on CPU ranks found
    at run time a precondition error (exit 3), each saying why;
  - --energy on CPU ranks: the run completes, every row's energy columns are empty, run.json's
    energy block and the start-up line say why;
  - --nccl-config with --device cpu: refused (exit 2) before anything is measured, saying why;
  - scripts/tune.py groups the settings NCCL reads per communicator into one launch each
    (--nccl-config), one launch per value of the others, and gives each candidate its rows;
  - check_results' model of a run (tests/expected_cases.py) knows fp8 and --nccl-config's cases,
    which the GPU tests rely on.

Usage: training_cpu.py --ccbench PATH --mpiexec PATH
Prints one line per check; exits 1 if any failed.
"""
import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from runs import launch as launch_ranks, rows  # noqa: E402
from testlib import Checks, ExitCode  # noqa: E402

checks = Checks("training_cpu")


def launch(opts, args, cwd, env=None):
    """2 CPU ranks that see no GPU; CCBENCH_ variables (of env and of this process) go to every rank."""
    env = dict(CUDA_VISIBLE_DEVICES="", **(env or {}))
    export = ["CUDA_VISIBLE_DEVICES"] + [k for k in {**os.environ, **env} if k.startswith("CCBENCH_")]
    r = launch_ranks(opts.mpiexec, 2, opts.ccbench, args, env=env, export=export, cwd=cwd, timeout=300)
    return r.rc, r.out, r.err


def fp8_rows_exact(opts, cwd):
    rc, out, err = launch(opts, ["--device", "cpu", "--collective", "allreduce,reducescatter", "--impl", "mpi,ring,tree",
                                 "-d", "f8e4m3,f8e5m2", "-o", "all", "-b", "2", "-e", "1M", "-f", "32", "-n", "2",
                                 "-w", "1", "--out", "fp8"], cwd)
    checks(rc == ExitCode.ok, "fp8 on CPU ranks: exit code 0", out + err)
    measured = [r for r in rows(os.path.join(cwd, "fp8")) if r["status"] == "ok"]
    cases = {(r["impl"], r["collective"], r["dtype"], r["op"]) for r in measured}
    # tree: all-reduce only (its reduce-scatter is not declared); every other pair every dtype x op.
    want = {(i, c, d, o) for i in ("mpi", "ring", "tree") for c in ("allreduce", "reducescatter")
            for d in ("f8e4m3", "f8e5m2") for o in ("sum", "prod", "min", "max", "avg")
            if not (i == "tree" and c == "reducescatter")}
    checks(want <= cases, f"fp8 on CPU ranks: {len(want)} cases measured", str(sorted(want - cases)))
    wrong = [r for r in measured if r["wrong[elements]"] != "0"]
    checks(not wrong and measured, f"fp8 on CPU ranks: {len(measured)} rows, all with 0 wrong elements",
           str([(r["impl"], r["dtype"], r["op"], r["size[B]"], r["reason"]) for r in wrong[:5]]))


def fp8_corruption_found(opts, cwd):
    rc, out, err = launch(opts, ["--device", "cpu", "--collective", "allreduce", "--impl", "ring", "-d", "f8e5m2",
                                 "-o", "avg", "-b", "64K", "-e", "64K", "-n", "2", "-w", "1", "--out", "none"], cwd,
                          {"CCBENCH_FAULT": "corrupt:rank=1,size=64K,index=7"})
    checks(rc == ExitCode.wrong_results, "fp8 corrupted element: exit code 1", f"exit {rc}\n{out}\n{err}")
    checks("rank 1 (host" in out + err and "element 7" in out + err, "fp8 corrupted element: rank and element named",
           out + err)


def overlap_refused(opts, cwd):
    rc, out, err = launch(opts, ["--device", "cpu", "--overlap", "gemm", "--out", "none"], cwd)
    checks(rc == ExitCode.usage and "not with --device cpu" in err, "--overlap with --device cpu: usage error (exit 2)",
           f"exit {rc}\n{err}")
    rc, out, err = launch(opts, ["--overlap", "membw", "--collective", "allreduce", "-b", "1K", "-e", "1K",
                                 "--out", "none"], cwd)
    checks(rc == ExitCode.precondition and "these are CPU ranks" in err,
           "--overlap on CPU ranks found at run time: precondition (exit 3)", f"exit {rc}\n{out}\n{err}")


def energy_not_available(opts, cwd):
    rc, out, err = launch(opts, ["--device", "cpu", "--energy", "on", "--collective", "allreduce", "--impl", "ring",
                                 "-b", "1K", "-e", "64K", "-f", "8", "-n", "2", "-w", "1", "--out", "energy"], cwd)
    checks(rc == ExitCode.ok, "--energy on CPU ranks: exit code 0", out + err)
    checks("# energy: not available (CPU ranks" in out, "--energy on CPU ranks: the start-up line says why", out)
    folder = os.path.join(cwd, "energy")
    context = json.load(open(os.path.join(folder, "run.json")))["context"]
    energy = context.get("energy", {})
    checks(energy.get("enabled") is True and energy.get("available") is False and "CPU ranks" in energy.get("reason", ""),
           "--energy on CPU ranks: run.json's energy block says why", json.dumps(energy))
    measured = [r for r in rows(folder) if r["status"] == "ok"]
    checks(measured and all(r["energy[J/coll]"] == "" and r["energy_efficiency[GB/J]"] == "" for r in measured),
           "--energy on CPU ranks: energy columns empty (not available, never 0)")


def nccl_config_on_cpu(opts, cwd):
    rc, out, err = launch(opts, ["--device", "cpu", "--nccl-config", "maxCTAs=2,4", "--collective", "allreduce",
                                 "--impl", "ring,nccl", "-b", "1K", "-e", "1K", "--out", "configs"], cwd)
    checks(rc == ExitCode.usage,
           f"--nccl-config with --device cpu: exit code {rc}, expected {ExitCode.usage.describe()} (it changes nothing "
           "there)", out + err)
    checks("--nccl-config maxCTAs=2,4 acts on GPU ranks, and --device cpu measures CPU ranks" in err,
           "--nccl-config with --device cpu: the message says why and what to do", err)
    checks(not os.path.exists(os.path.join(cwd, "configs", "results.csv")), "--nccl-config with --device cpu: nothing measured")


def tune_launches():
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
    import tune  # noqa: E402 (scripts/tune.py)
    names = ["NCCL_P2P_DISABLE", "NCCL_PROTO", "NCCL_MAX_CTAS"]
    combos = [("default", "default", "default"), ("default", "LL", "4"), ("1", "LL", "default"), ("default", "Simple", "4")]
    plan = tune.launches(names, combos)
    checks([p for p, _, _ in plan] == [[("NCCL_P2P_DISABLE", "default")], [("NCCL_P2P_DISABLE", "1")]],
           "tune.py: one launch per value of a per-process setting", str(plan))
    checks(plan[0][1] == ["--nccl-config", "NCCL_PROTO=default,LL,Simple", "--nccl-config", "maxCTAs=default,4"]
           and len(plan[0][2]) == 3, "tune.py: per-communicator settings swept in that launch as --nccl-config",
           str(plan[0]))
    rows = [{"impl": "nccl", "nccl_config": "NCCL_PROTO=LL;maxCTAs=4"}, {"impl": "nccl", "nccl_config": "NCCL_PROTO=default;maxCTAs=default"},
            {"impl": "ring", "nccl_config": ""}]
    mine = tune.combo_rows(names, ("default", "LL", "4"), rows)
    checks(mine == [rows[0], rows[2]], "tune.py: a candidate gets its communicator's nccl rows and the others'", str(mine))
    # 9 x 9 CTA candidates: every combination of the values a launch gives is a communicator, so the
    # launches split where one would build more than ccbench's 64.
    ctas = [(str(a), str(b)) for a in range(1, 10) for b in range(1, 10)]
    split = tune.launches(["NCCL_MIN_CTAS", "NCCL_MAX_CTAS"], ctas)
    sizes = [len(a.split("=")[1].split(",")) * len(b.split("=")[1].split(",")) for _, (_, a, _, b), _ in split]
    checks(len(split) == 2 and max(sizes) <= 64 and [c for _, _, m in split for c in m] == ctas,
           "tune.py: launches split to at most 64 communicators each, every candidate in one", str(sizes))
    space = [("NCCL_MIN_CTAS", ["default", "8"]), ("NCCL_MAX_CTAS", ["default", "4", "16"])]
    checks([tune.ctas_conflict(space, c) for c in [("8", "4"), ("8", "16"), ("default", "4"), ("8", "default")]]
           == [True, False, False, False], "tune.py: a candidate with NCCL_MIN_CTAS above NCCL_MAX_CTAS is left out")
    checks(tune.launches(["CCBENCH_CPU_SLOT_DEPTH"], [("4",), ("2",)]) ==
           [([("CCBENCH_CPU_SLOT_DEPTH", "4")], [], [("4",)]), ([("CCBENCH_CPU_SLOT_DEPTH", "2")], [], [("2",)])],
           "tune.py: per-process settings only: a launch per candidate, as before")


def rows_as_written(plan):
    """The rows a run of `plan` writes when every case is measured, as ccbench labels them (an
    NCCL case of --nccl-config combination C: impl "nccl", nccl_config C)."""
    import expected_cases as ec
    out = []
    for (group, coll, case_impl, dtype, op), (n, wants) in ec.expected_cases(plan).items():
        impl, _, label = case_impl.partition("[")
        base = {"group": group, "collective": coll, "impl": impl, "dtype": dtype, "op": op, "ranks": str(n),
                "root": "-1", "nccl_config": label.rstrip("]"), "reason": ""}
        for w in wants:
            row = dict(base, **{"in_place": "true" if w.in_place else "false", "size[B]": str(w.size),
                                "count[elements]": str(w.count), "mode": "eager"})
            if w.kind == "skip":
                out.append(dict(row, status="skipped", reason=w.reason))
                continue
            out.append(dict(row, status="ok"))
            if w.graph:
                out.append(dict(row, status="ok", mode="graph"))
    return out


def expected_cases_know_training():
    """check_results' model (tests/expected_cases.py) of the GPU tests' training options: fp8, and
    one case per --nccl-config combination, told apart by the nccl_config column."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import expected_cases as ec  # noqa: E402
    plan = ec.plan_from_command(["mpirun", "-np", "2", "ccbench", "--emulate-nodes", "2", "--nccl-config",
                                 "NCCL_PROTO=Simple,LL", "--nccl-config", "maxCTAs=default,4", "--collective",
                                 "allreduce", "--impl", "nccl,ring", "-d", "f8e4m3,e5m2", "-b", "4", "-e", "1M",
                                 "-f", "16", "--energy", "on", "--overlap", "gemm"])
    plan.device = "gpu"
    checks(plan.nccl_configs == ["NCCL_PROTO=Simple;maxCTAs=default", "NCCL_PROTO=Simple;maxCTAs=4",
                                 "NCCL_PROTO=LL;maxCTAs=default", "NCCL_PROTO=LL;maxCTAs=4"],
           "expected_cases: --nccl-config's combinations in ccbench's order and labels", str(plan.nccl_configs))
    rows = rows_as_written(plan)
    fails = ec.check_case_set(rows, plan)
    checks(not fails and {r["dtype"] for r in rows} == {"f8e4m3", "f8e5m2"},
           "expected_cases: a run with every combination's rows passes", "\n".join(fails[:5]))
    missing = [r for r in rows if r["nccl_config"] != "NCCL_PROTO=LL;maxCTAs=4"]
    fails = ec.check_case_set(missing, plan)
    checks(any("allreduce/nccl[NCCL_PROTO=LL;maxCTAs=4]" in f and "no row at all" in f for f in fails),
           "expected_cases: a combination without rows fails, named", "\n".join(fails[:5]))
    unlabelled = [dict(r, nccl_config="") if r["impl"] == "nccl" else r for r in rows]
    checks(ec.check_case_set(unlabelled, plan) != [], "expected_cases: NCCL rows without their label fail")
    skipped = [dict(r, status="skipped", reason="f8e5m2 needs NCCL >= 2.24, the library loaded is 2.21.5 (x)",
                    **{"size[B]": "0", "in_place": "false"})
               for r in rows if r["impl"] == "nccl" and r["dtype"] == "f8e5m2" and r["size[B]"] == "4"
               and r["in_place"] == "false"]
    others = [r for r in rows if not (r["impl"] == "nccl" and r["dtype"] == "f8e5m2")]
    fails = ec.check_case_set(others + skipped, plan)
    checks(not fails and len(skipped) == 4, "expected_cases: NCCL's fp8 skipped whole with its reason passes",
           "\n".join(fails[:5]))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ccbench", required=True)
    p.add_argument("--mpiexec", required=True)
    opts = p.parse_args()
    with tempfile.TemporaryDirectory() as cwd:
        fp8_rows_exact(opts, cwd)
        fp8_corruption_found(opts, cwd)
        overlap_refused(opts, cwd)
        energy_not_available(opts, cwd)
        nccl_config_on_cpu(opts, cwd)
    tune_launches()
    expected_cases_know_training()
    return checks.exit_code()


if __name__ == "__main__":
    sys.exit(main())
