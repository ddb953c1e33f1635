#!/usr/bin/env python3
"""Emulated nodes and --transport on CPU ranks, each a real ccbench launch under mpirun.

Checks, from the results.csv rows and the messages (never from the exit code alone):
  - --emulate-nodes 2 on 4 ranks: 2 nodes of 2 ranks; the ring connects inside a node over shm and
    across nodes over mpi ("shm+mpi"), since shm refuses ranks of different nodes;
  - --emulate-nodes 2 --transport tcp: tcp between emulated nodes on one host (loopback);
  - CCBENCH_HOSTID per rank (as NCCL_HOSTID): ranks with different ids are different nodes;
  - --transport shm across emulated nodes: refused with the reason, nothing measured (exit 3);
  - bad values: --emulate-nodes beyond the ranks of a node, 0, and several --transport values
    (exit 2, with what is valid).

  - scripts/paths.sh --transport shm,tcp: one launch per path, rows merged with a `path` column.

Usage: emulated_nodes.py --ccbench PATH --mpiexec PATH --paths scripts/paths.sh
"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import expected_cases  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from runs import launch as launch_ranks, run  # noqa: E402
from testlib import Checks, ExitCode  # noqa: E402

SMALL = ["--device", "cpu", "--collective", "allreduce", "--impl", "ring", "-b", "1K", "-e", "256K", "-f", "16",
         "-n", "2", "-w", "1", "--timeout", "60"]


def launch(args, np, ccbench, mpiexec, out=None, per_rank=""):
    r = launch_ranks(mpiexec, np, ccbench, args + (["--out", out, "--format", "csv"] if out else ["--out", "none"]),
                     per_rank=per_rank)
    return r.rc, r.output


def rows(folder):
    """results.csv's rows, each measured row's busbw checked against its bus factor."""
    return expected_cases.read_rows(os.path.join(folder, "results.csv"))


def measured(rs):
    return [r for r in rs if r["status"] == "ok"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ccbench", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--paths", required=True)
    a = ap.parse_args()
    c = Checks("emulated nodes")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "auto")
        rc, text = launch(SMALL + ["--emulate-nodes", "2"], 4, a.ccbench, a.mpiexec, out)
        rs = measured(rows(out)) if rc == ExitCode.ok else []
        c(rc == ExitCode.ok and rs and all(r["transport"] == "shm+mpi" and r["nodes"] == "2" and
                                           r["ranks_per_node"] == "2" and r["wrong[elements]"] == "0" for r in rs),
          "emulate 2 nodes, auto: rows over shm+mpi on 2 nodes of 2 ranks", f"rc={rc} rows={rs[:2]}\n{text}")

        out = os.path.join(tmp, "tcp")
        rc, text = launch(SMALL + ["--emulate-nodes", "2", "--transport", "tcp"], 2, a.ccbench, a.mpiexec, out)
        rs = measured(rows(out)) if rc == ExitCode.ok else []
        c(rc == ExitCode.ok and rs and all(r["transport"] == "tcp" and r["nodes"] == "2" and
                                           r["wrong[elements]"] == "0" for r in rs),
          "emulate 2 nodes, tcp: rows over tcp between the nodes", f"rc={rc} rows={rs[:2]}\n{text}")

        out = os.path.join(tmp, "hostid")
        rc, text = launch(SMALL, 2, a.ccbench, a.mpiexec, out,
                          per_rank='CCBENCH_HOSTID="node$OMPI_COMM_WORLD_RANK"; export CCBENCH_HOSTID;')
        rs = measured(rows(out)) if rc == ExitCode.ok else []
        c(rc == ExitCode.ok and rs and all(r["transport"] == "mpi" and r["nodes"] == "2" for r in rs),
          "CCBENCH_HOSTID per rank: 2 nodes, mpi between them", f"rc={rc} rows={rs[:2]}\n{text}")

        out = os.path.join(tmp, "paths")
        p = run([a.paths, "--transport", "shm,tcp", "--np", "2", "--ccbench", a.ccbench, "--out", out, "--"] + SMALL,
                timeout=300, env={"MPIRUN": f"{a.mpiexec} --allow-run-as-root"})
        merged = rows(out) if p.rc == ExitCode.ok else []
        by_path = {t: [r for r in merged if r["path"] == t and r["status"] == "ok"] for t in ("shm", "tcp")}
        c(p.rc == ExitCode.ok and all(by_path[t] and all(r["transport"] == t for r in by_path[t])
                                      for t in by_path) and "merged:" in p.out,
          "paths.sh shm,tcp: one launch per path, rows merged with the path named",
          f"rc={p.rc}\n{p.out}\n{p.err}")

    rc, text = launch(SMALL + ["--emulate-nodes", "2", "--transport", "shm"], 2, a.ccbench, a.mpiexec)
    c(rc == ExitCode.precondition and "transport shm connects ranks of one node only" in text and "2 nodes" in text,
      "shm across emulated nodes: refused with the reason (exit 3)", f"rc={rc}\n{text}")
    rc, text = launch(SMALL + ["--emulate-nodes", "3"], 2, a.ccbench, a.mpiexec)
    c(rc == ExitCode.usage and "--emulate-nodes 3: expected 1 to 2" in text,
      "--emulate-nodes 3 with 2 ranks: exit 2 saying what is valid", f"rc={rc}\n{text}")
    rc, text = launch(SMALL + ["--emulate-nodes", "0"], 2, a.ccbench, a.mpiexec)
    c(rc == ExitCode.usage and "--emulate-nodes" in text, "--emulate-nodes 0: exit 2", f"rc={rc}\n{text}")
    rc, text = launch(SMALL + ["--transport", "p2p,host,tcp"], 2, a.ccbench, a.mpiexec)
    c(rc == ExitCode.usage and "scripts/paths.sh --transport p2p,host,tcp" in text,
      "several --transport values: exit 2 naming scripts/paths.sh", f"rc={rc}\n{text}")
    rc, text = launch(SMALL + ["--transport", "warp"], 2, a.ccbench, a.mpiexec)
    c(rc == ExitCode.usage and "unknown value 'warp'" in text and "host" in text,
      "unknown --transport: exit 2 listing p2p and host", f"rc={rc}\n{text}")
    return c.exit_code()


if __name__ == "__main__":
    sys.exit(main())
