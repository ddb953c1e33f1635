#!/usr/bin/env python3
"""Checks that implementations really ran collectives in a GPU run, so that a run where they were
all skipped cannot pass (tests/gpu/gpu_tests.cmake, gpu_alltoall_* and the ce tests).

Environment:
  CCBENCH_EXPECT_MEASURED  "impl,impl:coll,coll ..." every row of these impls and collectives is
                           measured and checked with 0 wrong elements (or skipped because the size
                           is below one element per rank or there is no in-place form), and each
                           pair has measured rows
  CCBENCH_EXPECT_IN_PLACE  "coll,coll" those collectives have measured rows in both placements
  CCBENCH_EXPECT_ROOT      the root every measured row of a rooted collective names
  CCBENCH_EXPECT_ALGORITHM "impl=PREFIX ..." every measured row of impl names an algorithm starting
                           with PREFIX (best=ce: best picked the copy engines)
  CCBENCH_EXPECT_TRANSPORT "impl=TRANSPORT ..." every measured row of impl names exactly this transport
  CCBENCH_REFERENCE        an impl (nccl) whose measured (collective, dtype, size, placement) cases the
                           expected impls must all have measured as well
Usage: measured_check.py results.csv
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from runs import rows as read_rows  # noqa: E402
from testlib import problems_exit  # noqa: E402

ROOTED = {"broadcast", "reduce", "gather", "scatter"}
# The skips every implementation shares: a size below one element per rank, a collective with
# no in-place form; and NCCL's refusal of fp8 avg (collectives/nccl/nccl_impl.cpp, evidence
# h200x1-20261201-r26), said before NCCL is called.
SKIPS_ALLOWED = ("less than one", "has no in-place form", "NCCL does not take avg of f8e")


def case(r):
    return (r["collective"], r["dtype"], r["size[B]"], r["in_place"], r["mode"])


def check_rows(rows, impls, colls):
    problems = []
    for impl in impls:
        for coll in colls:
            mine = [r for r in rows if r["impl"] == impl and r["collective"] == coll]
            if not any(r["status"] == "ok" for r in mine):
                problems.append(f"{coll}/{impl}: no measured row")
            for r in mine:
                where = f"{coll}/{impl} {r['dtype']} {r['size[B]']} B in_place={r['in_place']}"
                if r["status"] == "skipped" and any(why in r["reason"] for why in SKIPS_ALLOWED):
                    continue
                if r["status"] != "ok":
                    problems.append(f"{where}: status {r['status']} ({r['reason']})")
                elif r["wrong[elements]"] != "0":
                    problems.append(f"{where}: wrong elements '{r['wrong[elements]']}' (expected a checked 0)")
    return problems


def main(path):
    rows = read_rows(path)
    problems = []
    expected = []
    for item in os.environ.get("CCBENCH_EXPECT_MEASURED", "").split():
        impls, colls = item.split(":", 1)
        expected.append((impls.split(","), colls.split(",")))
        problems += check_rows(rows, impls.split(","), colls.split(","))
    measured = [r for r in rows if r["status"] == "ok"]
    for coll in filter(None, os.environ.get("CCBENCH_EXPECT_IN_PLACE", "").split(",")):
        for impls, _ in expected:
            for impl in impls:
                places = {r["in_place"] for r in measured if r["impl"] == impl and r["collective"] == coll}
                if places != {"true", "false"}:
                    problems.append(f"{coll}/{impl}: placements measured {sorted(places)}, expected both")
    root = os.environ.get("CCBENCH_EXPECT_ROOT")
    if root:
        for r in measured:
            if r["collective"] in ROOTED and r["root"] != root:
                problems.append(f"{r['collective']}/{r['impl']}: root {r['root']}, expected {root}")
    for item in os.environ.get("CCBENCH_EXPECT_ALGORITHM", "").split():
        impl, prefix = item.split("=", 1)
        for r in measured:
            if r["impl"] == impl and not r["algorithm"].startswith(prefix):
                problems.append(f"{r['collective']}/{impl} {r['size[B]']} B: algorithm '{r['algorithm']}', "
                                f"expected '{prefix}...'")
    for item in os.environ.get("CCBENCH_EXPECT_TRANSPORT", "").split():
        impl, want = item.split("=", 1)
        for r in measured:
            if r["impl"] == impl and r["transport"] != want:
                problems.append(f"{r['collective']}/{impl} {r['size[B]']} B: transport '{r['transport']}', "
                                f"expected '{want}'")
    reference = os.environ.get("CCBENCH_REFERENCE")
    if reference:
        for impls, colls in expected:
            for impl in impls:
                ref = {case(r) for r in measured if r["impl"] == reference and r["collective"] in colls}
                got = {case(r) for r in measured if r["impl"] == impl}
                if not ref:
                    problems.append(f"no measured row of the reference {reference}")
                for c in sorted(ref - got):
                    problems.append(f"{impl}: {reference} measured {c} but {impl} did not")
    return problems_exit("measured_check", problems, f"{len(rows)} rows")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
