#!/usr/bin/env python3
"""Checks the ring of a `--ring-order topo` GPU run with twice as many ranks as GPUs
(tests/gpu/gpu_tests.cmake, gpu_ring_order_topo_4): rank r uses GPU r % GPUs, so ranks r and
r + GPUs share a GPU, and the NVLink-aware order must put them next to each other on the ring
(run.json context.ring_order) so that the ring crosses between GPUs as few times as it can."""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from runs import run, run_json  # noqa: E402
from testlib import Failed, check, main_guard  # noqa: E402


def main(results_csv):
    ring = run_json(os.path.dirname(results_csv))["context"]["ring_order"]
    if not shutil.which("nvidia-smi"):
        raise Failed("nvidia-smi is not installed: the GPUs of this run cannot be counted")
    gpus = sum(1 for line in run(["nvidia-smi", "-L"]).out.splitlines() if line.startswith("GPU"))
    n = len(ring)
    check(gpus >= 2 and n == 2 * gpus, f"the check needs twice as many ranks as GPUs: {n} ranks, {gpus} GPUs")
    position = {r: i for i, r in enumerate(ring)}
    apart = [(r, r + gpus) for r in range(gpus) if (position[r] - position[r + gpus]) % n not in (1, n - 1)]
    check(not apart, f"ring {ring}: ranks sharing a GPU are not neighbours: {apart}")
    print(f"ring order (topo) {ring}: the ranks of each GPU are neighbours")
    return 0


if __name__ == "__main__":
    sys.exit(main_guard(lambda: main(sys.argv[1])))
