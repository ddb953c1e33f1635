#!/usr/bin/env python3
"""nccl-tests command lines, the start-up block, the progress line, NCCL_TESTS_MIN_BW and -m N,
each a real ccbench launch (mpirun -np 2 --oversubscribe, CPU ranks), checked in what the run
printed and wrote: the "# Using devices" lines of both ranks, the measurement count, the progress
lines on stderr (not a terminal here: one line per interval), the -J file, the rows and times of
-m runs, and the exit codes; -z 1 (nccl-tests' blocking mode), a launch without mpirun (one
rank) and -G on the CPU ranks --device auto found, each with the note it must print (-G's in
run.json too); the recorded command line quoted so that pasting it runs nothing.

Usage: cli_runs.py --ccbench PATH --mpiexec PATH
Prints one line per check; exits 1 if any failed.
"""
import argparse
import json
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import expected_cases  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from runs import launch as launch_ranks, run  # noqa: E402
from testlib import Checks, ExitCode  # noqa: E402

checks = Checks("cli runs")


def launch(opts, args, cwd, env=None):
    r = launch_ranks(opts.mpiexec, 2, opts.ccbench, args, env=env, cwd=cwd)
    return r.rc, r.out, r.err


def nccl_tests_line(opts, cwd):
    # As nccl-tests' README (mpirun ... all_reduce_perf -b 8 -e 8G -f 2 -g 1), with the largest
    # size that suits two CPU ranks on a CI machine, plus more of their flags.
    args = ("-b 8 -e 64K -f 4 -g 1 -t 1 -c 1 -n 3 -w 1 -a 3 -z 0 -m 1 -T 60 -N 1 -I 1 -K 1 -p 0 -R 0 -C 0 -S 0 -M 0 "
            "-u 0 -y 0 -D 0 -J copy.json --collective allreduce --impl mpi,ring --out res --progress-interval 0.01")
    rc, out, err = launch(opts, args.split(), cwd)
    both = out + err
    checks(rc == ExitCode.ok, "nccl-tests flags: exit code 0", both)
    checks("# Using devices" in out, "start-up block: '# Using devices'", out)
    for r in (0, 1):
        line = re.search(rf"^#  Rank +{r} Pid +\d+ on +\S+ CPU \(cores [0-9,-]+ NUMA [0-9,?-]+\) transport (.*)$", out, re.M)
        checks(line is not None, f"start-up block: rank {r} with host, pid, cores and NUMA node", out)
        if line:
            checks(line.group(1) == "auto: shm to 1 rank", f"start-up block: rank {r} transport '{line.group(1)}'")
    # 1 collective x 2 implementations x 1 dtype x 1 op x 7 sizes (8 B .. 32K) x 2 in-place variants
    checks("# Measurements: 28\n" in out, "start-up block: 28 measurements", out)
    checks(re.search(r"^# Results: res/ \(results.csv, run.json, results.md\); JSON also in copy.json \(-J\)$", out, re.M)
           is not None, "start-up block: results folder and -J file", out)
    checks("# note: -I/--per_iter_timing 1: ccbench always times single iterations" in out, "note for -I 1", out)
    checks("# note: -K/--per_iter_skip 1: 1 more warm-up iterations" in out, "note for -K 1", out)
    progress = re.findall(r"^ccbench: progress: (\d+)/28 measurements \((\d+)%\), (.*) elapsed, (.*)$", err, re.M)
    # Lines come as rows arrive (at most one per interval), so how many depends on the machine's
    # speed; what must hold: at least one line on the way, counts that only rise, the last line.
    checks(len(progress) >= 1, f"progress lines on stderr ({len(progress)})", err)
    counts = [int(p[0]) for p in progress]
    checks(counts == sorted(counts) and all(0 < c <= 28 for c in counts), f"progress counts rise: {counts}")
    checks(re.search(r"^ccbench: progress: 28 measurements in .*, done$", err, re.M) is not None,
           "the last progress line says all 28 measurements are done", err)
    checks(all(p[3].startswith("about ") and p[3].endswith(" left") for p in progress), "progress lines estimate the time left")
    checks(re.search(r"^ccbench: progress: 28 measurements in .*, done$", err, re.M) is not None, "last progress line", err)
    checks("\r" not in err, "no carriage return when stderr is not a terminal")
    try:
        with open(os.path.join(cwd, "copy.json")) as f:
            copy = json.load(f)
        with open(os.path.join(cwd, "res", "run.json")) as f:
            run = json.load(f)
        checks(len(copy["rows"]) == len(run["rows"]) == 28 and copy["verdict"] == "OK", "-J file holds the 28 rows, OK")
    except (OSError, ValueError, KeyError) as e:
        checks(False, "-J file and run.json readable", str(e))


def quiet_and_refusals(opts, cwd):
    rc, out, err = launch(opts, "-b 8 -e 1K -g 1 --collective allgather --impl ring --out none --format table --quiet "
                                "--progress-interval 0.01".split(), cwd)
    checks(rc == ExitCode.ok and "progress" not in err, "--quiet: no progress line", err)
    rc, out, err = launch(opts, "-b 8 -e 128M -f 2 -g 8".split(), cwd)
    checks(rc == ExitCode.usage and "-g/--ngpus 8: ccbench runs one thread and one GPU per process" in err and not out,
           "-g 8 refused before MPI start-up, saying how to get more GPUs", out + err)


def first_run(opts, cwd):
    """-z 1 runs (it was refused) and says where the blocking figures are; a start without mpirun
    (one rank) says how to start several (it printed a table of zeros without a word)."""
    small = "-b 8 -e 64 -n 2 -w 1 --collective allreduce --impl mpi,ring --out none --format table --quiet".split()
    rc, out, err = launch(opts, ["-z", "1"] + small, cwd)
    checks(rc == ExitCode.ok and "# note: -z/--blocking 1: the time column is always the back-to-back batch" in out
           and "median, min, p95 and cv columns" in out, "-z 1: runs, with a note saying where the blocking figures are",
           out + err)
    p = run([opts.ccbench] + small, cwd=cwd, timeout=120)
    checks(p.rc == ExitCode.ok and "# note: 1 rank: a collective of one rank moves no data between ranks. "
           "Start N ranks with mpirun -np N ccbench" in p.out, "one rank (no mpirun): the start-up block says how to start N ranks",
           p.output)
    rc, out, err = launch(opts, small, cwd)
    checks(rc == ExitCode.ok and "# note: 1 rank" not in out, "two ranks: no one-rank note", out)


def options_that_do_not_apply(opts, cwd):
    """-G on CPU ranks that --device auto found: a note at start-up and in run.json's context.notes,
    and no graph row; with --device cpu a usage error before MPI (tests/mpi/bad_input.py has the
    matrix). On 2 ranks of a machine with 2 or more hardware threads no oversubscription is said,
    a command line with a `$(...)` in a path is recorded so that pasting it runs nothing."""
    folder = os.path.join(cwd, "g$(touch pwned)")
    args = ["-G", "3", "--collective", "allreduce", "--impl", "ring", "-b", "1K", "-e", "1K", "-n", "2", "-w", "1",
            "--out", folder, "--quiet"]
    rc, out, err = launch(opts, args, cwd)
    if "cpu ranks" not in out.splitlines()[0] if out else True:
        print("skip -G note: --device auto found GPU ranks here; the note is for CPU ranks")
    else:
        note = "-G 3 acts on GPU ranks, and --device auto found CPU ranks (not every rank has a usable GPU): it changes nothing here"
        checks(rc == ExitCode.ok and out.count(note) == 1, "-G on CPU ranks found by --device auto: one note at start-up", out + err)
        try:
            with open(os.path.join(folder, "run.json"), encoding="utf-8") as f:
                context = json.load(f)["context"]
            rows = read_rows(os.path.join(folder, "results.csv"))
        except (OSError, ValueError, KeyError) as e:
            checks(False, "-G on CPU ranks: run.json and results.csv readable", str(e))
            return
        checks(note in context.get("notes", []), "-G on CPU ranks: the note in run.json's context.notes", str(context.get("notes")))
        checks(rows and all(r["mode"] == "eager" for r in rows), "-G on CPU ranks: no graph row")
        over = 2 > len(os.sched_getaffinity(0))
        checks((context.get("oversubscribed") is not None) == over and ("oversubscribed" in out) == over,
               "2 ranks: oversubscription said exactly where the ranks outnumber the hardware threads", out)
        recorded = context.get("command_line", "")
        checks("'" + folder + "'" in recorded, f"the command line quotes the folder: {recorded}")
        run(["bash", "-c", "set -- " + recorded.split(" ", 1)[1]], cwd=cwd)
        checks(not os.path.exists(os.path.join(cwd, "pwned")), "the recorded command line, pasted, ran nothing")


def min_bandwidth(opts, cwd):
    base = "-b 1K -e 4K -g 1 --collective allreduce --impl ring --out none --format table --quiet".split()
    rc, out, _ = launch(opts, base, cwd, {"NCCL_TESTS_MIN_BW": "1000000"})
    checks(rc == ExitCode.threshold
           and re.search(r"^#   allreduce ring shm float sum eager +[0-9.]+ GB/s FAILED$", out, re.M) is not None,
           "NCCL_TESTS_MIN_BW above the bandwidth: exit code 4, the case FAILED", out)
    rc, out, _ = launch(opts, base, cwd, {"NCCL_TESTS_MIN_BW": "0.000001"})
    checks(rc == ExitCode.ok
           and re.search(r"^#   allreduce ring shm float sum eager +[0-9.]+ GB/s OK$", out, re.M) is not None,
           "NCCL_TESTS_MIN_BW below the bandwidth: exit code 0, the case OK", out)


# -m: per-collective times of -m 64 against -m 1 at a bandwidth-bound size (1 MiB), both with
# 128 collectives in the batch, must agree within a factor 16: on a loaded 2-core machine such runs
# agreed within 1.5x, on the idle one the mpi rows once differed by 8.3x (-m 1 at 3.7 ms a
# collective, the best of 3 runs), while a missing division by 64 gives about 64. (With equal -n
# instead, the short -m 1 batch fits in a time slice: 74 us against 699 us per collective.)
AGG_N = 64
AGG_BATCH = 128
AGG_MAX_RATIO = 16.0
# Runs of each setting, the fastest counting. Two were not always enough with the 2 cores taken by
# two more busy processes: one -m 64 run's batch of two iterations lost a time slice (time_avg
# 997 us per collective against its median 125 us).
AGG_ROUNDS = 3
AGG_BYTES = str(1 << 20)


def read_rows(path):
    """results.csv's rows, each measured row's busbw checked against its bus factor."""
    return expected_cases.read_rows(path)


def agg_iters_rows(opts, cwd):
    """-m 4: every case measured and checked with 0 wrong elements (in place too, where 4 sums on
    their own output would differ: one collective alone is checked), agg_iters 4 in run.json's
    context and in the start-up block."""
    out_dir = os.path.join(cwd, "m4")
    rc, out, err = launch(opts, ["--device", "cpu", "--collective", "allreduce,reduce,allgather", "--impl", "mpi,ring",
                                 "--root", "1", "-b", "4K", "-e", "4M", "-f", "32", "-n", "3", "-w", "1", "-m", "4",
                                 "--out", out_dir, "--format", "csv,json", "--quiet"], cwd)
    checks(rc == ExitCode.ok, "-m 4: exit code 0", out + err)
    checks("# Iterations: 1 warm-up, 3 timed, agg iters 4 (collectives back to back per iteration; times are per "
           "collective)\n" in out, "start-up block names agg iters 4", out)
    try:
        rows = read_rows(os.path.join(out_dir, "results.csv"))
        with open(os.path.join(out_dir, "run.json")) as f:
            run = json.load(f)
    except (OSError, ValueError) as e:
        checks(False, "results.csv and run.json readable", str(e))
        return
    checks(run["context"]["options"].get("agg_iters") == 4, "run.json context.options.agg_iters is 4",
           json.dumps(run["context"]["options"]))
    # 3 collectives x 2 impls x 3 sizes (4K, 128K, 4M) x 2 placements
    checks(len(rows) == 36, f"-m 4: 36 rows ({len(rows)})")
    bad = [r for r in rows if r["status"] != "ok" or r["wrong[elements]"] != "0"]
    checks(not bad, "-m 4: every row measured and checked with 0 wrong elements",
           "\n".join(f"{r['collective']}/{r['impl']} {r['size[B]']} in_place={r['in_place']}: {r['status']} "
                     f"wrong={r['wrong[elements]']!r} {r['reason']}" for r in bad))
    in_place_sums = [r for r in rows if r["in_place"] == "true" and r["collective"] in ("allreduce", "reduce")]
    checks(len(in_place_sums) == 12 and all(r["wrong[elements]"] == "0" for r in in_place_sums),
           "in-place sums checked (one collective alone after the aggregated iterations)")


def timing_run(opts, cwd, m, round_no):
    """time_avg and time_median per impl of one run of -m m at AGG_BYTES."""
    out_dir = os.path.join(cwd, f"t{m}-{round_no}")
    rc, out, err = launch(opts, ["--device", "cpu", "--collective", "allreduce", "--impl", "mpi,ring", "-b", AGG_BYTES,
                                 "-e", AGG_BYTES, "-n", str(AGG_BATCH // m), "-w", "1", "-m", str(m), "--in-place",
                                 "no", "--out", out_dir, "--format", "csv", "--quiet"], cwd)
    checks(rc == ExitCode.ok, f"timing run -m {m} #{round_no + 1}: exit code 0", out + err)
    if rc != ExitCode.ok:
        return {}
    return {r["impl"]: (float(r["time_avg[us]"]), float(r["time_median[us]"]))
            for r in read_rows(os.path.join(out_dir, "results.csv"))}


def within(ratio):
    return 1 / AGG_MAX_RATIO < ratio < AGG_MAX_RATIO


def agg_iters_time(opts, cwd):
    """Times per collective: the batch (time_avg) of -m 64 against -m 1, and within the -m 64 run
    its single iterations (time_median, 64 collectives each) against its batch. Single iterations
    are not compared across -m: on CPU ranks one collective started after a barrier ran up to 30x
    faster than one among back-to-back collectives. Each setting runs AGG_ROUNDS times,
    alternating, and the fastest run counts: noise only ever adds time."""
    fastest = {1: {}, AGG_N: {}}  # m -> impl -> (least time_avg, least time_median)
    for round_no in range(AGG_ROUNDS):  # alternating, so that a slow phase of the machine hits both settings
        for m in (1, AGG_N):
            for impl, t in timing_run(opts, cwd, m, round_no).items():
                old = fastest[m].get(impl, t)
                fastest[m][impl] = (min(old[0], t[0]), min(old[1], t[1]))
    one, many = fastest[1], fastest[AGG_N]
    for impl in ("mpi", "ring"):
        if impl not in one or impl not in many:
            checks(False, f"{impl}: timing rows for -m 1 and -m {AGG_N}")
            continue
        ratio = many[impl][0] / one[impl][0]
        checks(within(ratio), f"allreduce/{impl} 1 MiB time_avg per collective: -m {AGG_N} {many[impl][0]:.1f} us, "
                              f"-m 1 {one[impl][0]:.1f} us, ratio {ratio:.2f} within a factor {AGG_MAX_RATIO}")
        ratio = many[impl][1] / many[impl][0]
        checks(within(ratio), f"allreduce/{impl} 1 MiB -m {AGG_N}: time_median per collective {many[impl][1]:.1f} us, "
                              f"time_avg {many[impl][0]:.1f} us, ratio {ratio:.2f} within a factor {AGG_MAX_RATIO}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ccbench", required=True)
    ap.add_argument("--mpiexec", default="mpirun")
    opts = ap.parse_args()
    opts.ccbench = os.path.abspath(opts.ccbench)
    with tempfile.TemporaryDirectory(prefix="ccbench-cli-runs-") as cwd:
        nccl_tests_line(opts, cwd)
        quiet_and_refusals(opts, cwd)
        first_run(opts, cwd)
        min_bandwidth(opts, cwd)
        options_that_do_not_apply(opts, cwd)
        agg_iters_rows(opts, cwd)
        agg_iters_time(opts, cwd)
    return checks.exit_code()


if __name__ == "__main__":
    sys.exit(main())
