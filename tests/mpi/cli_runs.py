#!/usr/bin/env python3
"""nccl-tests command lines, the start-up block, the progress line and NCCL_TESTS_MIN_BW, each a
real ccbench launch (mpirun -np 2 --oversubscribe, CPU ranks), checked in what the run printed and
wrote: the "# Using devices" lines of both ranks, the measurement count, the progress lines on
stderr (not a terminal here: one line per interval), the -J file, and the exit codes.

Usage: cli_runs.py --ccbench PATH --mpiexec PATH
Prints one line per check; exits 1 if any failed.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

FAILED = []


def check(ok, what, detail=""):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        FAILED.append(what)
        if detail:
            print("     " + detail.replace("\n", "\n     ")[:3000])


def launch(opts, args, cwd, env=None):
    cmd = [opts.mpiexec, "--oversubscribe", "--allow-run-as-root", "-np", "2"]
    for k in env or {}:
        cmd += ["-x", k]
    cmd += [opts.ccbench] + args
    p = subprocess.run(cmd, cwd=cwd, env=dict(os.environ, **(env or {})), capture_output=True, text=True,
                       timeout=240)
    return p.returncode, p.stdout, p.stderr


def nccl_tests_line(opts, cwd):
    # As nccl-tests' README (mpirun ... all_reduce_perf -b 8 -e 8G -f 2 -g 1), with the largest
    # size that suits two CPU ranks on a CI machine, plus more of their flags.
    args = ("-b 8 -e 64K -f 4 -g 1 -t 1 -c 1 -n 3 -w 1 -a 3 -z 0 -m 1 -T 60 -N 1 -I 1 -K 1 -p 0 -R 0 -C 0 -S 0 -M 0 "
            "-u 0 -y 0 -D 0 -J copy.json --collective allreduce --impl mpi,ring --out res --progress-interval 0.01")
    rc, out, err = launch(opts, args.split(), cwd)
    both = out + err
    check(rc == 0, "nccl-tests flags: exit code 0", both)
    check("# Using devices" in out, "start-up block: '# Using devices'", out)
    for r in (0, 1):
        line = re.search(rf"^#  Rank +{r} Pid +\d+ on +\S+ CPU \(cores [0-9,-]+ NUMA [0-9,?-]+\) transport (.*)$", out, re.M)
        check(line is not None, f"start-up block: rank {r} with host, pid, cores and NUMA node", out)
        if line:
            check(line.group(1) == "auto: shm to 1 rank", f"start-up block: rank {r} transport '{line.group(1)}'")
    # 1 collective x 2 implementations x 1 dtype x 1 op x 7 sizes (8 B .. 32K) x 2 in-place variants
    check("# Measurements: 28\n" in out, "start-up block: 28 measurements", out)
    check(re.search(r"^# Results: res/ \(results.csv, run.json, results.md\); JSON also in copy.json \(-J\)$", out, re.M)
          is not None, "start-up block: results folder and -J file", out)
    check("# note: -I/--per_iter_timing 1: ccbench always times single iterations" in out, "note for -I 1", out)
    check("# note: -K/--per_iter_skip 1: 1 more warm-up iterations" in out, "note for -K 1", out)
    progress = re.findall(r"^ccbench: progress: (\d+)/28 measurements \((\d+)%\), (.*) elapsed, (.*)$", err, re.M)
    # Lines come as rows arrive (at most one per interval), so how many depends on the machine's
    # speed; what must hold: at least one line on the way, counts that only rise, the last line.
    check(len(progress) >= 1, f"progress lines on stderr ({len(progress)})", err)
    counts = [int(p[0]) for p in progress]
    check(counts == sorted(counts) and all(0 < c <= 28 for c in counts), f"progress counts rise: {counts}")
    check(re.search(r"^ccbench: progress: 28 measurements in .*, done$", err, re.M) is not None,
          "the last progress line says all 28 measurements are done", err)
    check(all(p[3].startswith("about ") and p[3].endswith(" left") for p in progress), "progress lines estimate the time left")
    check(re.search(r"^ccbench: progress: 28 measurements in .*, done$", err, re.M) is not None, "last progress line", err)
    check("\r" not in err, "no carriage return when stderr is not a terminal")
    try:
        with open(os.path.join(cwd, "copy.json")) as f:
            copy = json.load(f)
        with open(os.path.join(cwd, "res", "run.json")) as f:
            run = json.load(f)
        check(len(copy["rows"]) == len(run["rows"]) == 28 and copy["verdict"] == "OK", "-J file holds the 28 rows, OK")
    except (OSError, ValueError, KeyError) as e:
        check(False, "-J file and run.json readable", str(e))


def quiet_and_refusals(opts, cwd):
    rc, out, err = launch(opts, "-b 8 -e 1K -g 1 --collective allgather --impl ring --out none --format table --quiet "
                                "--progress-interval 0.01".split(), cwd)
    check(rc == 0 and "progress" not in err, "--quiet: no progress line", err)
    rc, out, err = launch(opts, "-b 8 -e 128M -f 2 -g 8".split(), cwd)
    check(rc == 2 and "-g/--ngpus 8: ccbench runs one thread and one GPU per process" in err and not out,
          "-g 8 refused before MPI start-up, saying how to get more GPUs", out + err)


def min_bandwidth(opts, cwd):
    base = "-b 1K -e 4K -g 1 --collective allreduce --impl ring --out none --format table --quiet".split()
    rc, out, _ = launch(opts, base, cwd, {"NCCL_TESTS_MIN_BW": "1000000"})
    check(rc == 4 and re.search(r"^#   allreduce ring shm float sum eager +[0-9.]+ GB/s FAILED$", out, re.M) is not None,
          "NCCL_TESTS_MIN_BW above the bandwidth: exit code 4, the case FAILED", out)
    rc, out, _ = launch(opts, base, cwd, {"NCCL_TESTS_MIN_BW": "0.000001"})
    check(rc == 0 and re.search(r"^#   allreduce ring shm float sum eager +[0-9.]+ GB/s OK$", out, re.M) is not None,
          "NCCL_TESTS_MIN_BW below the bandwidth: exit code 0, the case OK", out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ccbench", required=True)
    ap.add_argument("--mpiexec", default="mpirun")
    opts = ap.parse_args()
    opts.ccbench = os.path.abspath(opts.ccbench)
    with tempfile.TemporaryDirectory(prefix="ccbench-cli-runs-") as cwd:
        nccl_tests_line(opts, cwd)
        quiet_and_refusals(opts, cwd)
        min_bandwidth(opts, cwd)
    print(f"cli runs: {len(FAILED)} check(s) failed")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
