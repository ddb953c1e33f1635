#!/usr/bin/env python3
"""Plants regressions into a copy of the tree, one at a time, and shows the test suite catch each.

    tests/mutate.py [--work DIR] [--only NAME,NAME] [--list]

The copy (the files git tracks or would track, as they are now) is built once in DIR/src/build
(CPU parts: -DCCBENCH_WITH_CUDA=OFF; with ccache, whose CCACHE_BASEDIR makes a tree's objects
serve its copy, the build folder sitting where it does in the tree), and the tests named for each
mutation must pass on it untouched. Then each mutation replaces one exact text in one file (it
must occur exactly once), rebuilds, runs its tests with ctest and expects every one of them to
fail; the file is put back before the next. A mutation none of its tests fails is a test that
cannot catch that regression. Exit status 0 when the untouched copy passes and every mutation is
caught; the table at the end says which test caught what.

Takes 15-25 minutes on 2 cores (a build, then one incremental build and a few tests per
mutation), too long for CI; its output is kept as evidence (docs/testing.md says which).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (name, file, text, replacement, tests that must fail, what it stands for)
MUTATIONS = [
    ("bus-factor-one", "harness/engine/runner.cpp", "const double factor = bus_factor(m.spec.coll, nranks_);",
     "const double factor = 1.0;", ["mpi.ccbench_misaligned.np3"],
     "busbw written as algbw (a bus factor of 1; on 3 ranks, since 2-rank all-reduce's true factor is 1)"),
    ("bus-factor-world", "harness/engine/runner.cpp", "const double factor = bus_factor(m.spec.coll, nranks_);",
     "int world_n = 1;\n  MPI_Comm_size(MPI_COMM_WORLD, &world_n);\n"
     "  const double factor = bus_factor(m.spec.coll, world_n);",
     ["mpi.ccbench_groups_rails"], "busbw of a --groups run with the world's rank count, not the group's"),
    ("noise-rule-loose", "results/compare_runs.cpp",
     "e.threshold = std::max({std::log1p(tolerance), from_scatter, sb + sa});",
     "e.threshold = 4 * std::max({std::log1p(tolerance), from_scatter, sb + sa});",
     ["reports.compare_detection", "reports.compare_detection_stable_medians"],
     "compare's noise allowance four times wider"),
    ("accept-equal-fails", "results/accept.cpp", "if (k.minimum ? *value < limit : *value > limit)",
     "if (k.minimum ? *value <= limit : *value >= limit)", ["reports.accept_boundaries"],
     "accept: a value equal to its limit fails"),
    ("accept-wrong-within-limit", "results/accept.cpp", "else if (wrong_check && x.status == RowStatus::wrong)",
     "else if (false)", ["reports.accept_boundaries"], "accept: a wrong row within max_wrong passes"),
    ("send-buffer-unchecked", "harness/engine/runner.cpp", "if (opts_.check && !m.in_place) check_send_buffer(m);", "",
     ["mpi.fault.corrupt_send_ring", "mpi.fault.corrupt_send_mpi"], "the send buffer is no longer checked"),
    ("skip-single-elements", "harness/engine/runner.cpp", "if (m.shape.count == 0)", "if (m.shape.count < 2)",
     ["mpi.ccbench_misaligned.np3"], "sizes of one element per rank skipped as 'less than one element'"),
    ("skip-declared-collective", "collectives/cpu/ring.cpp",
     "if (auto why = CpuImplementation::unsupported(spec, ctx)) return why;",
     "if (auto why = CpuImplementation::unsupported(spec, ctx)) return why;\n"
     "    if (spec.coll == Collective::reducescatter) return std::string(\"ring: not today\");",
     ["mpi.ccbench_misaligned.np3", "mpi.cpu_collectives.np2"], "ring skips a collective it declares"),
    ("ring-order-ignored", "collectives/cpu/ring.cpp", "order_ = ring_order(ctx.ring_order, *ctx.layout);",
     "order_ = ring_order(RingOrderChoice{}, *ctx.layout);", ["mpi.ring_order"],
     "the CPU ring connects in rank order whatever --ring-order says"),
    ("minmax-through-float", "collectives/numeric.h",
     "      case ReduceOp::max: return result_of<T>(narrow_minmax<true>(x, y));",
     "      case ReduceOp::max: return result_of<T>(narrow_minmax<true>(static_cast<float>(x), static_cast<float>(y)));",
     ["Reference.ExpectedValuesAreTheReferences<double>", "mpi.ccbench_precision.np3"],
     "reduce_pair's max rounds double to float (the bug the independent reference and the precision pattern see)"),
    ("batch-times-fewer-calls", "harness/engine/runner.cpp",
     "  backend_.mark(0);\n  for (int i = 0; i < opts_.iterations; ++i) call(impl, m.args(), opts_.agg_iters);",
     "  for (int i = 0; i < 1; ++i) call(impl, m.args(), opts_.agg_iters);\n  backend_.mark(0);\n"
     "  for (int i = 1; i < opts_.iterations; ++i) call(impl, m.args(), opts_.agg_iters);",
     ["mpi.fault.known_time"], "the timed batch times n-1 of its n calls, divided by n"),
    ("batch-divisor-plus-one", "harness/engine/runner.cpp",
     "m.batch_us = backend_.elapsed_us(0, 1) / (opts_.iterations * opts_.agg_iters);",
     "m.batch_us = backend_.elapsed_us(0, 1) / ((opts_.iterations + 1) * opts_.agg_iters);",
     ["mpi.fault.known_time", "mpi.fault.known_time_aggregated"], "the timed batch divided by n+1 calls"),
    ("batch-ignores-aggregation", "harness/engine/runner.cpp",
     "m.batch_us = backend_.elapsed_us(0, 1) / (opts_.iterations * opts_.agg_iters);",
     "m.batch_us = backend_.elapsed_us(0, 1) / opts_.iterations;", ["mpi.fault.known_time_aggregated"],
     "the timed batch not divided by -m's collectives per call"),
    ("vector-tail-dropped", "collectives/cpu/reduce_kernels.cpp",
     "  narrow_loop<T, OP, NS, ND, FIN>(tail_dst, tail_src, n - i, nranks);",
     "  if (n - i > 1) narrow_loop<T, OP, NS, ND, FIN>(tail_dst, tail_src, n - i - 1, nranks);",
     ["Reference.ReductionLoopsGiveTheReferenceAtEveryTail<ccbench::half_t>"],
     "the narrow-float vector loop drops the last element of its tail"),
    ("tune-picks-slowest", "scripts/tune.py", "best = max(others, key=lambda c: judged(last[c], last[base])[0])",
     "best = min(others, key=lambda c: judged(last[c], last[base])[0])", ["mpi.sweep"],
     "tune.py's verdict takes the slowest candidate"),
    ("sweep-picks-slowest", "scripts/sweep.py", "best = max(judged, key=lambda c: judged[c][0])",
     "best = min(judged, key=lambda c: judged[c][0])",
     ["mpi.sweep"], "sweep.py's best setting per band is the slowest"),
]


def sh(cmd, cwd, log, timeout=3600):
    """Runs `cmd`, appending its output to `log`; returns the exit code."""
    with open(log, "a", encoding="utf-8") as f:
        f.write(f"\n$ {' '.join(cmd)}\n")
        f.flush()
        try:
            return subprocess.run(cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            f.write(f"(timed out after {timeout} s)\n")
            return 124


def copy_tree(src, dst):
    """The files git tracks or would track (not ignored), as they are in the working tree."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=src, check=True,
                           capture_output=True).stdout.decode().split("\0")
    shutil.rmtree(dst, ignore_errors=True)
    for rel in filter(None, files):
        if not os.path.isfile(os.path.join(src, rel)):
            continue
        os.makedirs(os.path.dirname(os.path.join(dst, rel)), exist_ok=True)
        shutil.copy2(os.path.join(src, rel), os.path.join(dst, rel))


def failed_tests(build, names, log):
    """Runs the tests; returns the names among them that failed (or did not run)."""
    pattern = "^(" + "|".join(re.escape(n) for n in names) + ")$"
    out = os.path.join(build, "mutate-ctest.txt")
    sh(["ctest", "-R", pattern, "--output-on-failure", "-O", out], build, log)
    text = open(out, encoding="utf-8", errors="replace").read() if os.path.exists(out) else ""
    passed = set(re.findall(r"Test +#\d+: (\S+) \.+ +Passed", text))
    return [n for n in names if n not in passed]


def build(src, bld, log):
    return sh(["cmake", "--build", bld, "-j2", "--target", "ccbench", "ccbench_cpu_collectives_test",
               "ccbench_unit_tests"], src, log)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", default=os.path.join(ROOT, "build-mutate"), help="copy and build here [build-mutate]")
    ap.add_argument("--only", help="mutation names, comma-separated")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    chosen = [m for m in MUTATIONS if not a.only or m[0] in a.only.split(",")]
    if a.list or not chosen:
        for m in MUTATIONS:
            print(f"{m[0]:26} {m[1]:30} {m[5]}; caught by {', '.join(m[4])}")
        return 0 if chosen else 2
    src = os.path.join(a.work, "src")
    bld = os.path.join(src, "build")
    log = os.path.join(a.work, "mutate.log")
    os.makedirs(a.work, exist_ok=True)
    copy_tree(ROOT, src)
    open(log, "w").close()
    start = time.monotonic()
    launcher = (["-DCMAKE_CXX_COMPILER_LAUNCHER=ccache", "-DCMAKE_C_COMPILER_LAUNCHER=ccache"]
                if shutil.which("ccache") else [])
    if sh(["cmake", "-S", src, "-B", bld, "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release", "-DCCBENCH_WITH_CUDA=OFF"]
          + launcher, src, log) or build(src, bld, log) or sh(["cmake", "--build", bld, "-j2"], src, log):
        print(f"mutate: the copy does not build; see {log}")
        return 1
    tests = sorted({t for m in chosen for t in m[4]})
    baseline = failed_tests(bld, tests, log)
    print(f"untouched copy: {len(tests) - len(baseline)} of {len(tests)} tests pass"
          + (f"; failing: {', '.join(baseline)}" if baseline else ""))
    results = []
    for name, rel, old, new, must_fail, what in chosen:
        path = os.path.join(src, rel)
        text = open(path, encoding="utf-8").read()
        if text.count(old) != 1:
            results.append((name, what, f"NOT PLANTED: the text occurs {text.count(old)} times in {rel}", False))
            continue
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace(old, new))
        try:
            built = build(src, bld, log) == 0
            caught = failed_tests(bld, must_fail, log) if built else []
        finally:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        ok = built and caught == must_fail
        verdict = (f"caught by {', '.join(caught)}" if ok else "does not build" if not built else
                   f"MISSED by {', '.join(t for t in must_fail if t not in caught)}")
        results.append((name, what, verdict, ok))
        print(f"{name}: {verdict}", flush=True)
    build(src, bld, log)
    print(f"\n{'mutation':26} {'result':60} what it plants")
    for name, what, verdict, ok in results:
        print(f"{name:26} {verdict:60} {what}")
    caught = sum(1 for r in results if r[3])
    print(f"\n{caught} of {len(results)} mutations caught; untouched copy "
          f"{'passes' if not baseline else 'FAILS'}; {time.monotonic() - start:.0f} s; log {log}")
    return 0 if caught == len(results) and not baseline else 1


if __name__ == "__main__":
    sys.exit(main())
