#!/usr/bin/env python3
"""Checks the ring of a `--ring-order topo` GPU run with twice as many ranks as GPUs
(tests/gpu/gpu_tests.cmake, gpu_ring_order_topo_4): rank r uses GPU r % GPUs, so ranks r and
r + GPUs share a GPU, and the NVLink-aware order must put them next to each other on the ring
(run.json context.ring_order) so that the ring crosses between GPUs as few times as it can."""
import json
import os
import subprocess
import sys


def main(results_csv):
    with open(os.path.join(os.path.dirname(results_csv), "run.json"), encoding="utf-8") as f:
        ring = json.load(f)["context"]["ring_order"]
    try:
        listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
    except FileNotFoundError:
        print("FAIL: nvidia-smi is not installed: the GPUs of this run cannot be counted")
        return 1
    gpus = sum(1 for line in listing.splitlines() if line.startswith("GPU"))
    n = len(ring)
    if gpus < 2 or n != 2 * gpus:
        print(f"FAIL: the check needs twice as many ranks as GPUs: {n} ranks, {gpus} GPUs")
        return 1
    position = {r: i for i, r in enumerate(ring)}
    apart = [(r, r + gpus) for r in range(gpus) if (position[r] - position[r + gpus]) % n not in (1, n - 1)]
    if apart:
        print(f"FAIL: ring {ring}: ranks sharing a GPU are not neighbours: {apart}")
        return 1
    print(f"ring order (topo) {ring}: the ranks of each GPU are neighbours")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
