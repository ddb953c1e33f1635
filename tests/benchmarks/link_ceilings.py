#!/usr/bin/env python3
"""Compares ccbench_link_bench's Google Benchmark JSON with the link ceilings measured on the
project's 2 x H200 machine (GB/s = 1e9 bytes/s, as ccbench and nccl-tests print them).

Usage: link_ceilings.py BENCH.json [--tolerance 0.05]
Prints one line per benchmark with its rate, the anchor of its path and the ratio; a GPU
benchmark that ran and misses its anchor by more than the tolerance is marked MISS (exit 1).
Skipped benchmarks (no GPU, no CUDA) are listed with their reason. Compare two runs of the same
benchmarks with Google Benchmark's own tools/compare.py BEFORE.json AFTER.json.
"""
import json
import sys

# Anchors (2 x H200 NV18, driver 580, CUDA 13.0; 1 GiB copies, CUDA events): evidence
# h200x2-20261130-ceilings (docs/evidence/INDEX.md).
ANCHORS_GBPS = {
    "BM_GpuPeerCopy_ce/1073741824": 397,   # copy engine GPU0 -> GPU1, one way
    "BM_GpuPeerCopy_sm/1073741824": 369,   # SM kernel writing peer memory
    "BM_GpuPeerBidir_ce/1073741824": 784,  # copy engines, both directions (sum)
    "BM_GpuPeerBidir_sm/1073741824": 726,  # SM kernels, both directions (sum)
    "BM_PinnedCopy_d2h/268435456": 55,     # pinned host memory over PCIe
    "BM_PinnedCopy_h2d/268435456": 55,
    "BM_TcpLoopback/1": 6.2,               # TCP over loopback, 1 MiB writes, on the GPU machine
    "BM_TcpLoopback/2": 11.8,
    "BM_TcpLoopback/4": 21.3,
    "BM_TcpLoopback/8": 34.2,
}


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    tolerance = float(sys.argv[sys.argv.index("--tolerance") + 1]) if "--tolerance" in sys.argv else 0.05
    doc = json.load(open(sys.argv[1]))
    missed = 0
    for b in doc.get("benchmarks", []):
        name = b["name"]
        key = name.replace("/manual_time", "").replace("/real_time", "")
        anchor = ANCHORS_GBPS.get(key)
        if b.get("error_occurred"):
            print(f"{name:50} skipped: {b.get('error_message', '')}")
            continue
        rate = b.get("bytes_per_second", 0) / 1e9
        if anchor is None:
            print(f"{name:50} {rate:9.2f} GB/s")
            continue
        ratio = rate / anchor
        gpu = key.startswith(("BM_Gpu", "BM_Pinned"))
        mark = "MISS" if gpu and ratio < 1 - tolerance else ""
        missed += mark == "MISS"
        print(f"{name:50} {rate:9.2f} GB/s  anchor {anchor:7.1f}  {100 * ratio:5.1f}% {mark}")
    sys.exit(1 if missed else 0)


if __name__ == "__main__":
    main()
