#!/usr/bin/env python3
"""Checks the `algorithm` column of a GPU run (tests/gpu/gpu_tests.cmake, gpu_algorithm_2):
NCCL's rows name the algorithm, protocol and channels its profiler reported, the forced
variants show the forced algorithm, and `best` names the kernel it picked for each size."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from runs import rows as read_rows  # noqa: E402
from testlib import problems_exit  # noqa: E402

NCCL = re.compile(r"^(RING|TREE|COLLNET_DIRECT|COLLNET_CHAIN|NVLS|NVLS_TREE|PAT)/(LL|LL128|SIMPLE) \d+ch$")


def main(path):
    rows = [r for r in read_rows(path) if r["status"] == "ok"]
    problems = []
    seen = set()
    for r in rows:
        impl, algo, size = r["impl"], r["algorithm"], int(r["size[B]"])
        where = f"{r['collective']}/{impl} {size} B {r['mode']} in_place={r['in_place']}: algorithm '{algo}'"
        seen.add(impl)
        if impl.startswith("nccl"):
            parts = algo.split("+")
            if not all(NCCL.match(p) for p in parts):
                problems.append(where + " is not ALGO/PROTO Nch")
            elif impl == "nccl-ring" and not all(p.startswith("RING/") for p in parts):
                problems.append(where + " but NCCL_ALGO=Ring was forced")
            elif impl == "nccl-tree" and not all(p.startswith("TREE/") for p in parts):
                problems.append(where + " but NCCL_ALGO=Tree was forced")
        elif impl == "best" and r["collective"] == "allreduce":
            # best's default thresholds: one-shot up to 512 KiB, two-shot up to 64 MiB.
            want = "oneshot" if size <= 512 * 1024 else "twoshot" if size <= 64 << 20 else "ring"
            if not algo.startswith(want + " "):
                problems.append(where + f", expected {want}")
    for impl in ("nccl", "nccl-ring", "nccl-tree", "best"):
        if impl not in seen:
            problems.append(f"no measured row of {impl}")
    return problems_exit("check_algorithm", problems, f"{len(rows)} measured rows checked")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
