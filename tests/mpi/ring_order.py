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
import json
import os
import subprocess
import sys
import tempfile

SMALL = ["--device", "cpu", "--impl", "ring", "-b", "4", "-e", "300K", "-f", "9", "-n", "2", "-w", "1",
         "--timeout", "60"]


class Checker:
    def __init__(self):
        self.failures = 0

    def expect(self, name, ok, detail):
        print(("ok    " if ok else "FAIL  ") + name + ("" if ok else "\n      " + detail.strip()[-2000:]))
        self.failures += 0 if ok else 1


def mpirun(a, np, wrap_env=None):
    cmd = [a.mpiexec, "--oversubscribe", "--allow-run-as-root", "-np", str(np)]
    if wrap_env:  # a per-rank environment variable, computed from the rank
        return cmd + ["sh", "-c", wrap_env + ' exec "$0" "$@"', a.ccbench]
    return cmd + [a.ccbench]


def checked_run(a, c, name, np, args, out, expected_order, wrap_env=None, tree="double"):
    """A run whose rows check_results.py judges; then the order and tree in run.json and on stdout."""
    cmd = [sys.executable, a.check_results, "--dir", out, "--unchecked", "none", "--allow", "ok,skipped", "--"]
    cmd += mpirun(a, np, wrap_env) + args + ["--out", out]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    text = p.stdout + p.stderr
    c.expect(name + ": every row exact (check_results.py)", p.returncode == 0, text)
    if p.returncode != 0:
        return []
    with open(os.path.join(out, "run.json"), encoding="utf-8") as f:
        run = json.load(f)
    ctx = run["context"]
    c.expect(name + f": run.json records ring_order {expected_order}", ctx.get("ring_order") == expected_order,
             f"context ring_order={ctx.get('ring_order')}")
    if "ring" in args[args.index("--impl") + 1].split(","):
        n = len(expected_order)
        built = ctx.get("ring_neighbours", {}).get("ring")
        want = sorted(({"rank": r, "prev": expected_order[(p - 1) % n], "next": expected_order[(p + 1) % n]}
                       for p, r in enumerate(expected_order)), key=lambda x: x["rank"])
        c.expect(name + ": every rank's ring neighbours, as the ring connected them, follow the order",
                 built == want, f"context ring_neighbours.ring={built}, expected {want}")
    line = "# Ring order ({}): {}".format(ctx["options"]["ring_order"] if ctx["options"]["ring_order"] in
                                          ("rank", "topo") else "list", " ".join(map(str, expected_order)))
    c.expect(name + ": rank 0 prints the order", text.count(line) == 1, f"wanted '{line}' once in\n{text}")
    c.expect(name + f": the tree is {tree}, printed and recorded",
             ctx["options"]["tree"] == tree and text.count(f"# Tree: {tree}\n") == 1, f"{ctx['options']}\n{text}")
    rows = run["rows"]
    ok_rows = [r for r in rows if r["status"] == "ok"]
    c.expect(name + ": rows measured", len(ok_rows) > 0, f"{rows[:2]}")
    return rows


def refused(a, c, name, np, args, wanted):
    p = subprocess.run(mpirun(a, np) + SMALL + ["--out", "none"] + args, capture_output=True, text=True, timeout=120)
    text = p.stdout + p.stderr
    c.expect(name + ": exit 2 with the reason", p.returncode == 2 and all(w in text for w in wanted),
             f"rc={p.returncode}, wanted {wanted} in\n{text}")
    c.expect(name + ": refused before start-up", "# Using devices" not in text, text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ccbench", required=True)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--check-results", required=True)
    a = ap.parse_args()
    c = Checker()
    with tempfile.TemporaryDirectory() as tmp:
        rows = checked_run(a, c, "4 ranks 0,2,1,3", 4,
                           SMALL + ["--collective", "allreduce,allgather,reducescatter,broadcast,reduce,sendrecv",
                                    "-d", "float,int32", "-o", "sum,max", "--root", "2", "--ring-order", "0,2,1,3"],
                           os.path.join(tmp, "list4"), [0, 2, 1, 3])
        sendrecv = [r for r in rows if r["collective"] == "sendrecv"]
        c.expect("4 ranks 0,2,1,3: sendrecv skipped with its reason",
                 sendrecv and all(r["status"] == "skipped" and "not a neighbour on --ring-order 0,2,1,3" in
                                  r.get("reason", "") for r in sendrecv), f"{sendrecv[:1]}")
        ring_rows = [r for r in rows if r["collective"] != "sendrecv"]
        c.expect("4 ranks 0,2,1,3: the ring collectives were all measured",
                 {r["collective"] for r in ring_rows if r["status"] == "ok"} ==
                 {"allreduce", "allgather", "reducescatter", "broadcast", "reduce"}, f"{ring_rows[:2]}")

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
                           wrap_env='if [ $((OMPI_COMM_WORLD_RANK % 2)) = 0 ]; then export CCBENCH_HOSTID=a; '
                                    'else export CCBENCH_HOSTID=b; fi;')
        c.expect("topo, CCBENCH_HOSTID a b a b: 2 nodes, shm inside and mpi across",
                 rows and all(r["nodes"] == 2 and r["transport"] == "shm+mpi" for r in rows if r["status"] == "ok"),
                 f"{rows[:1]}")

        for np in (3, 4):
            rows = checked_run(a, c, f"--tree binary, {np} ranks", np,
                               ["--device", "cpu", "--impl", "tree", "--collective", "allreduce", "-d", "float,int8",
                                "-o", "sum,min", "-b", "4", "-e", "3M", "-f", "11", "-n", "2", "-w", "1",
                                "--timeout", "60", "--tree", "binary"],
                               os.path.join(tmp, f"binary{np}"), list(range(np)), tree="binary")
            c.expect(f"--tree binary, {np} ranks: tree rows measured",
                     rows and all(r["impl"] == "tree" and r["status"] == "ok" for r in rows), f"{rows[:1]}")

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
            c.expect(f"{name}: every row measured by hier over {transport} on {nodes} node(s)",
                     sized and all(r["impl"] == "hier" and r["status"] == "ok" and r["transport"] == transport and
                                   r["nodes"] == nodes for r in sized), f"{sized[:1]}")

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
    print(f"{c.failures} failure(s)")
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
