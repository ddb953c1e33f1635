#!/usr/bin/env python3
"""The ofi transport (libfabric) against ccbench's own over the same medium, at 1 MiB and above:
ofi over tcp;ofi_rxm against our tcp, ofi over shm against our shm.

Three measurements, each alternating the two sides so that load on a shared machine falls on both:
  channels   one launch of ccbench_channel_bench (mpirun -np 2): each channel streaming 1, 4 and
             16 MiB, ROUNDS rounds, the sides' order swapped every round (same launch), each round
             after the provider's raw row (a bare write loop, no protocol of ours: the ceiling);
             rank 1 copies every slot out, as a collective's consumer reads it: ofi / ours;
  bare       the same launch with --no-copy-out: rank 1 releases every slot untouched, as the raw
             row's rank 1 does, so that ofi / raw compares like with like (the protocol's own cost
             against the provider's; the consumer's copy is no part of either);
  allreduce  ccbench runs of the ring all-reduce on 2 ranks, 1 to 16 MiB: one launch per side and
             round (a launch takes one --transport), the sides alternating.
--repeat N does all three N times (2N launches of the channel benchmark, N x ROUNDS all-reduce
launches per side), so that a figure is the best of more runs on a machine whose load comes and goes.
For each size and side it prints the best of the rounds, their median and the spread
(slowest..fastest), ofi / ours as best over best (the targets: 0.8 over shm, 0.9 over tcp), as
median over median, and paired: the median (and spread) of each round's ofi / ours, the two taken
next to each other, so that a slow phase of the machine that lasts longer than a pair falls on
both (the steadiest of the three here, where such phases halve every rate for a minute or two),
and ofi / raw, best over best (the target: 0.8; for the copying channels and the
all-reduce, the raw row is printed beside them for scale only). Writes everything to --out (JSON).

Usage: scripts/ofi_compare.py [--build DIR] [--rounds 3] [--repeat 1] [--out ofi-compare.json] [--skip-allreduce]
                               [--only tcp|shm]
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import tempfile

PAIRS = [("tcp", "ofi_tcp"), ("shm", "ofi_shm")]
RAW = {"ofi_tcp": "ofi_tcp_raw", "ofi_shm": "ofi_shm_raw"}  # the provider's ceiling of each ofi side
RUN_SIDES = {"tcp": ["--transport", "tcp"], "ofi_tcp": ["--transport", "ofi", "--ofi-provider", "tcp"],
             "shm": ["--transport", "shm"], "ofi_shm": ["--transport", "ofi", "--ofi-provider", "shm"]}
MPIRUN = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", "2"]


def channels(build, rounds, copy_out=True):
    """{(side, bytes): [GB/s per round]} from one launch of the channel benchmark (the media of PAIRS)."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        bench = [os.path.join(build, "ccbench_channel_bench")] + ([] if copy_out else ["--no-copy-out"])
        media = "|".join(side for pair in PAIRS for side in (*pair, RAW[pair[1]]))
        cmd = MPIRUN + bench + [f"--benchmark_out={out.name}", "--benchmark_out_format=json",
                                f"--benchmark_filter=BM_Channel/({media})/", "--benchmark_min_time=0.5"]
        print("$ " + " ".join(cmd), file=sys.stderr)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        data = json.load(open(out.name))
    got = {}
    for b in data["benchmarks"]:
        if b.get("error_occurred"):
            sys.exit(f"{b['name']}: {b.get('error_message')}")
        _, side, size, rnd = b["name"].split("/")[:4]
        if int(rnd.split(":")[1]) >= rounds:
            continue
        got.setdefault((side, int(size.split(":")[1])), []).append(b["bytes_per_second"] / 1e9)
    return got, data.get("context", {})


def allreduce(build, rounds):
    """{(side, bytes): [busbw GB/s per round]} from ccbench runs, the sides alternating."""
    got = {}
    for rnd in range(rounds):
        for ours, ofi in PAIRS:
            for side in ([ofi, ours] if rnd % 2 else [ours, ofi]):
                with tempfile.TemporaryDirectory() as d:
                    cmd = MPIRUN + [os.path.join(build, "ccbench"), "--device", "cpu", *RUN_SIDES[side], "--impl",
                                    "ring", "--collective", "allreduce", "-b", "1M", "-e", "16M", "-f", "4", "-n",
                                    "10", "-w", "3", "--in-place", "no", "--quiet", "--out", d]
                    print("$ " + " ".join(cmd), file=sys.stderr)
                    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
                    with open(os.path.join(d, "results.csv"), newline="") as f:
                        rows = list(csv.DictReader(l for l in f if not l.startswith("#")))
                for r in rows:
                    if r["status"] != "ok":
                        sys.exit(f"{side}: a row is {r['status']}: {r['reason']}")
                    got.setdefault((side, int(r["size[B]"])), []).append(float(r["busbw[GB/s]"]))
    return got


def table(title, got, raw):
    """Prints and returns, per pair and size, ours and ofi (best, median, spread), ofi / ours (best over
    best, median over median, median of the rounds' paired ratios) and ofi / raw (best over best)
    where `raw` ({(side, bytes): [GB/s]}) holds the provider's row."""
    print(f"\n{title}: best (median, slowest..fastest) of {len(next(iter(got.values())))} rounds, GB/s")
    print(f"{'size':>6}  {'ours':>4} {'best':>6} {'(median, spread)':>23}   {'ofi':>8} {'best':>6} {'(median, spread)':>23}"
          f"   ofi/ours best (median)   paired: median (spread)   {'raw':>6}  ofi/raw")
    lines = []
    for ours, ofi in PAIRS:
        for size in sorted({s for (side, s) in got if side == ours}):
            a, b = got[(ours, size)], got.get((ofi, size), [0])
            r = raw.get((RAW[ofi], size), [0])
            ratio = max(b) / max(a) if max(a) > 0 else 0
            median_ratio = statistics.median(b) / statistics.median(a) if statistics.median(a) > 0 else 0
            paired = [y / x for x, y in zip(a, b) if x > 0]  # round i of each side ran next to each other
            pair_median = statistics.median(paired) if paired else 0
            of_raw = max(b) / max(r) if max(r) > 0 else 0
            print(f"{size >> 20:>4}Mi  {ours:>4} {max(a):6.2f} ({statistics.median(a):5.2f}, {min(a):5.2f}..{max(a):<5.2f})"
                  f"   {ofi:>8} {max(b):6.2f} ({statistics.median(b):5.2f}, {min(b):5.2f}..{max(b):<5.2f})"
                  f"   {ratio:13.2f} ({median_ratio:4.2f})   {pair_median:13.2f} ({min(paired, default=0):4.2f}.."
                  f"{max(paired, default=0):<4.2f})   {max(r):6.2f}  {of_raw:7.2f}")
            lines.append({"bytes": size, "ours": ours, "ofi": ofi, "ours_gbps": a, "ofi_gbps": b, "ratio_best": ratio,
                          "ratio_median": median_ratio,
                          "ratio_paired": paired, "ratio_paired_median": pair_median, "raw": RAW[ofi], "raw_gbps": r,
                          "ofi_of_raw_best": of_raw})
    return lines


def merge(into, more):
    for k, v in more.items():
        into.setdefault(k, []).extend(v)


def tcp_buffers():
    """The kernel's TCP socket buffers here (this network namespace's), as ccbench's context records
    them: libfabric's tcp provider starts from tcp_rmem's and tcp_wmem's defaults, our tcp asks for
    its own (docs/guides/ofi.md)."""
    got = {}
    for key, path in [("tcp_rmem", "ipv4/tcp_rmem"), ("tcp_wmem", "ipv4/tcp_wmem"), ("rmem_max", "core/rmem_max"),
                      ("wmem_max", "core/wmem_max")]:
        try:
            with open(f"/proc/sys/net/{path}") as f:
                values = [int(v) for v in f.read().split()]
            got[key] = values if len(values) > 1 else values[0]
        except OSError:
            got[key] = None
    return got


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default="ofi-compare.json")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--skip-allreduce", action="store_true")
    ap.add_argument("--only", choices=[ours for ours, _ in PAIRS], help="one medium: ours and ofi over it")
    o = ap.parse_args()
    if o.only:
        PAIRS[:] = [p for p in PAIRS if p[0] == o.only]
    if not 1 <= o.rounds <= 3:
        sys.exit("--rounds: 1 to 3 (the channel benchmark registers three rounds)")
    if not 1 <= o.repeat <= 20:
        sys.exit("--repeat: 1 to 20")
    load = os.getloadavg()
    record = {"cpus": os.cpu_count(), "load_before": load, "repeat": o.repeat, "rounds": o.rounds,
              "tcp_buffers": tcp_buffers()}
    got, bare, reduced = {}, {}, {}
    for _ in range(o.repeat):
        more, context = channels(o.build, o.rounds)
        merge(got, more)
        merge(bare, channels(o.build, o.rounds, copy_out=False)[0])
        if not o.skip_allreduce:
            merge(reduced, allreduce(o.build, o.rounds))
    record["channels"] = table("channels as collectives use them, rank 1 copying each slot out (raw: for scale)",
                               got, got)
    record["channels_bare"] = table("channels alone, --no-copy-out (ofi/raw: like with like)", bare, bare)
    record["channel_bench_context"] = context
    if not o.skip_allreduce:
        record["allreduce"] = table("ring all-reduce busbw, 2 ranks (launches alternating; raw: the channel row)",
                                    reduced, got)
    record["load_after"] = os.getloadavg()
    print(f"\n{os.cpu_count()} CPUs; load average before {load[0]:.1f}, after {record['load_after'][0]:.1f}; "
          f"tcp_rmem {record['tcp_buffers']['tcp_rmem']}, tcp_wmem {record['tcp_buffers']['tcp_wmem']}")
    with open(o.out, "w") as f:
        json.dump(record, f, indent=2)
    print(f"written to {o.out}")


if __name__ == "__main__":
    main()
