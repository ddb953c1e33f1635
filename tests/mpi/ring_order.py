#!/usr/bin/env python3
"""--ring-order, --tree and the hier all-reduce on CPU ranks, each a real ccbench launch under mpirun.

Checks, from what the runs wrote (never from the exit code alone):
  - ring all-reduce, all-gather, reduce-scatter, broadcast and reduce over a non-trivial order
    (4 ranks 0,2,1,3; 3 ranks 2,0,1) are exact: tests/check_results.py decides every row (status
    ok, 0 wrong elements, CSV and run.json agree); run.json's context records the order as a list
    and rank 0 prints it, and records every rank's neighbours as the ring implementation
    connected them (context.ring_neighbours.ring: prev and next of each rank follow the order);
    sendrecv is skipped with its reason (it is not a ring pattern);
  - --ring-order topo with emulated nodes: --emulate-nodes 2 keeps the halves (0 1 2 3), and
    CCBENCH_HOSTID alternating a,b,a,b gives 0 2 1 3, each node contiguous, results exact;
  - --tree binary: tree all-reduce on one binary tree (3 and 4 ranks) is exact, printed and recorded;
  - hier: all-reduce over 2 emulated nodes of 2 ranks (shm inside, mpi or tcp across), uneven
    nodes (2 + 1) and one node, every dtype class and avg: exact and measured;
  - bad orders (a repeated rank, a missing rank, a rank out of range, no such file, a list with
    --groups) are refused with exit code 2 and a message naming what is wrong, before any row.

Usage: ring_order.py --ccbench PATH --mpiexec PATH --check-results PATH
"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from runs import launch, mpirun_command, python, run, run_json  # noqa: E402
from testlib import Checks, ExitCode  # noqa: E402

SMALL = ["--device", "cpu", "--impl", "ring", "-b", "4", "-e", "300K", "-f", "9", "-n", "2", "-w", "1",
         "--timeout", "60"]


def checked_run(a, c, name, np, args, out, expected_order, per_rank="", tree="double"):
    """A run whose rows check_results.py judges; then the order and tree in run.json and on stdout."""
    cmd = python(a.check_results, "--dir", out, "--unchecked", "none", "--allow", "ok,skipped", "--")
    p = run(cmd + mpirun_command(a.mpiexec, np, a.ccbench, args + ["--out", out], per_rank=per_rank), timeout=300)
    text = p.output
    c(p.rc == 0, name + ": every row exact (check_results.py)", text)
    if p.rc != 0:
        return []
    doc = run_json(out)
    ctx = doc["context"]
    c(ctx.get("ring_order") == expected_order, name + f": run.json records ring_order {expected_order}",
      f"context ring_order={ctx.get('ring_order')}")
    if "ring" in args[args.index("--impl") + 1].split(","):
        n = len(expected_order)
        built = ctx.get("ring_neighbours", {}).get("ring")
        want = sorted(({"rank": r, "prev": expected_order[(p - 1) % n], "next": expected_order[(p + 1) % n]}
                       for p, r in enumerate(expected_order)), key=lambda x: x["rank"])
        c(built == want, name + ": every rank's ring neighbours, as the ring connected them, follow the order",
          f"context ring_neighbours.ring={built}, expected {want}")
    line = "# Ring order ({}): {}".format(ctx["options"]["ring_order"] if ctx["options"]["ring_order"] in
                                          ("rank", "topo") else "list", " ".join(map(str, expected_order)))
    c(text.count(line) == 1, name + ": rank 0 prints the order", f"wanted '{line}' once in\n{text}")
    c(ctx["options"]["tree"] == tree and text.count(f"# Tree: {tree}\n") == 1,
      name + f": the tree is {tree}, printed and recorded", f"{ctx['options']}\n{text}")
    rows = doc["rows"]
    ok_rows = [r for r in rows if r["status"] == "ok"]
    c(len(ok_rows) > 0, name + ": rows measured", f"{rows[:2]}")
    return rows


def refused(a, c, name, np, args, wanted):
    p = launch(a.mpiexec, np, a.ccbench, SMALL + ["--out", "none"] + args, timeout=120)
    text = p.output
    c(p.rc == ExitCode.usage and all(w in text for w in wanted), name + ": exit 2 with the reason",
      f"rc={p.rc}, wanted {wanted} in\n{text}")
    c("# Using devices" not in text, name + ": refused before start-up", text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ccbench", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--check-results", required=True)
    a = ap.parse_args()
    c = Checks("ring order")
    with tempfile.TemporaryDirectory() as tmp:
        rows = checked_run(a, c, "4 ranks 0,2,1,3", 4,
                           SMALL + ["--collective", "allreduce,allgather,reducescatter,broadcast,reduce,sendrecv",
                                    "-d", "float,int32", "-o", "sum,max", "--root", "2", "--ring-order", "0,2,1,3"],
                           os.path.join(tmp, "list4"), [0, 2, 1, 3])
        sendrecv = [r for r in rows if r["collective"] == "sendrecv"]
        c(sendrecv and all(r["status"] == "skipped" and "not a neighbour on --ring-order 0,2,1,3" in
                           r.get("reason", "") for r in sendrecv),
          "4 ranks 0,2,1,3: sendrecv skipped with its reason", f"{sendrecv[:1]}")
        ring_rows = [r for r in rows if r["collective"] != "sendrecv"]
        c({r["collective"] for r in ring_rows if r["status"] == "ok"} ==
          {"allreduce", "allgather", "reducescatter", "broadcast", "reduce"},
          "4 ranks 0,2,1,3: the ring collectives were all measured", f"{ring_rows[:2]}")

        order_file = os.path.join(tmp, "order.txt")
        with open(order_file, "w", encoding="utf-8") as f:
            f.write("# an odd ring\n2\n0, 1\n")
        checked_run(a, c, "3 ranks from a file (2 0 1)", 3,
                    SMALL + ["--collective", "allreduce,allgather", "--ring-order", order_file],
                    os.path.join(tmp, "file3"), [2, 0, 1])

        checked_run(a, c, "topo, --emulate-nodes 2", 4,
                    SMALL + ["--collective", "allreduce,allgather", "--ring-order", "topo", "--emulate-nodes", "2"],
                    os.path.join(tmp, "topo_emulated"), [0, 1, 2, 3])
        rows = checked_run(a, c, "topo, CCBENCH_HOSTID a b a b", 4,
                           SMALL + ["--collective", "allreduce,allgather", "--ring-order", "topo"],
                           os.path.join(tmp, "topo_hostid"), [0, 2, 1, 3],
                           per_rank='if [ $((OMPI_COMM_WORLD_RANK % 2)) = 0 ]; then export CCBENCH_HOSTID=a; '
                                    'else export CCBENCH_HOSTID=b; fi;')
        c(rows and all(r["nodes"] == 2 and r["transport"] == "shm+mpi" for r in rows if r["status"] == "ok"),
          "topo, CCBENCH_HOSTID a b a b: 2 nodes, shm inside and mpi across", f"{rows[:1]}")

        for np in (3, 4):
            rows = checked_run(a, c, f"--tree binary, {np} ranks", np,
                               ["--device", "cpu", "--impl", "tree", "--collective", "allreduce", "-d", "float,int8",
                                "-o", "sum,min", "-b", "4", "-e", "3M", "-f", "11", "-n", "2", "-w", "1",
                                "--timeout", "60", "--tree", "binary"],
                               os.path.join(tmp, f"binary{np}"), list(range(np)), tree="binary")
            c(rows and all(r["impl"] == "tree" and r["status"] == "ok" for r in rows),
              f"--tree binary, {np} ranks: tree rows measured", f"{rows[:1]}")

        hier_cases = [
            ("hier, 2 emulated nodes of 2", 4, ["--emulate-nodes", "2", "-d", "float,int32,half", "-o", "sum,avg,max"],
             "shm+mpi", 2),
            ("hier, uneven nodes (2 + 1)", 3, ["--emulate-nodes", "2", "-d", "float,int8", "-o", "sum,avg"], "shm+mpi", 2),
            ("hier, one node of 3", 3, ["-d", "float,bfloat16", "-o", "avg,prod"], "shm", 1),
            ("hier over tcp", 4, ["--emulate-nodes", "2", "--transport", "tcp", "-d", "float", "-o", "sum"], "tcp", 2),
        ]
        for name, np, extra, transport, nodes in hier_cases:
            rows = checked_run(a, c, name, np,
                               ["--device", "cpu", "--impl", "hier", "--collective", "allreduce", "-b", "4", "-e", "1M",
                                "-f", "15", "-n", "2", "-w", "1", "--timeout", "60"] + extra,
                               os.path.join(tmp, name.replace(" ", "_")), list(range(np)))
            sized = [r for r in rows if r["bytes"] > 0]
            c(sized and all(r["impl"] == "hier" and r["status"] == "ok" and r["transport"] == transport and
                            r["nodes"] == nodes for r in sized),
              f"{name}: every row measured by hier over {transport} on {nodes} node(s)", f"{sized[:1]}")

    refused(a, c, "a repeated rank", 4, ["--ring-order", "0,1,1,3"],
            ["--ring-order 0,1,1,3", "repeated 1", "missing 2", "every rank from 0 to 3 exactly once"])
    refused(a, c, "a missing rank", 4, ["--ring-order", "3,2,1"], ["3 rank(s) given for a run of 4", "missing 0"])
    refused(a, c, "no such rank", 2, ["--ring-order", "0,2"], ["no such rank 2", "missing 1"])
    refused(a, c, "no such file", 2, ["--ring-order", "no/such/ring.txt"], ["no readable file", "rank, topo"])
    refused(a, c, "a word", 2, ["--ring-order", "0,one"], ["'one' is not a rank"])
    refused(a, c, "a negative rank", 2, ["--ring-order", "-1,0"], ["'-1' is not a rank"])
    refused(a, c, "an unknown tree", 2, ["--tree", "triple"], ["--tree: unknown value 'triple'", "double, binary"])
    refused(a, c, "a list with --groups", 2, ["--ring-order", "1,0", "--groups", "node"],
            ["a list of ranks orders the whole run", "give rank or topo"])
    return c.exit_code()


if __name__ == "__main__":
    sys.exit(main())
