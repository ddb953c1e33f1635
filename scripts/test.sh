#!/usr/bin/env bash
# Sets ccbench up (scripts/setup.sh) and runs every test: unit tests, MPI tests (mpirun -np 2..5
# --oversubscribe, the bad-input matrix and the fault tests among them), the installation (label
# install: cmake --install into a temporary prefix, the installed ccbench --version and a 2-rank
# run, the installed Slurm script, cpack -G DEB), the cluster tier (label cluster: ccbench across 3
# hosts of a cluster in a box, a real Slurm among them, tests/cluster; cluster.leftovers fails on
# any namespace a box left; skipped with the reason where this machine cannot make namespaces) and
# GPU tests (skipped with the reason where no GPU is present). Then two more stages, which CI always runs, on one clang build of the CPU
# parts with AddressSanitizer and UBSan (<build>-asan, no CUDA):
#   sanitizers  the unit and MPI tests run there;
#   fuzzers     its libFuzzer targets, each run for CCBENCH_FUZZ_SECONDS (default 20) from its
#               seeds; a crash fails the script.
# Extra arguments go to the first ctest, e.g. scripts/test.sh -L unit
# Environment: CCBENCH_BUILD_DIR (default build); CCBENCH_QUICK=1 skips the two extra stages
# (quick local runs); CCBENCH_FUZZ_SECONDS.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each stage's wall time, so a slow CI run says where its minutes went.
stage_start=$SECONDS
stage_done() {
  echo "test.sh: $1 took $((SECONDS - stage_start)) s (total $SECONDS s)"
  stage_start=$SECONDS
}
./scripts/setup.sh
stage_done "set-up and build"
build="${CCBENCH_BUILD_DIR:-build}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export NCCL_NVLS_ENABLE="${NCCL_NVLS_ENABLE:-0}"
jobs="$(nproc)"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

# Prints which tests of a build folder were skipped and why (skipped is not passed), GoogleTest
# cases run in shards too (their names, then their reasons).
report_skipped() {
  local log="$1/Testing/Temporary/LastTest.log"
  grep -h "^SKIPPED:" "$log" 2>/dev/null | sort | uniq -c | sed "s|^|ctest ($1): skipped test(s): |" || true
  grep -h "^\[  SKIPPED \] [A-Za-z]" "$log" 2>/dev/null | sed 's/ ([0-9]* ms)$//; s/^\[  SKIPPED \] //' | sort -u |
    sed "s|^|ctest ($1): skipped GoogleTest case: |" || true
  grep -h -A1 ": Skipped$" "$log" 2>/dev/null | grep -v -e ": Skipped$" -e "^--$" | sort | uniq -c |
    sed "s|^|ctest ($1): GoogleTest cases skipped because: |" || true
}

# MPI tests the sanitizer stage leaves to this build (each is also reached another way there):
#   the bad-input matrix and mpi.links_bad_input: command-line parsing, which the unit tests run
#     there and fuzz_cli fuzzes;
#   the 3- and 4-rank all-case runs: the 2- and 5-rank all-case runs and the 3-rank tcp run take
#     the same code paths there;
#   mpi.cpu_collectives at 4 and 5 ranks and mpi.fault.group_pairs: the executors at 1-3 ranks,
#     the all-case runs at 4-5 ranks and mpi.fault.group_node take those paths;
#   the default run: the all-case runs take its paths;
#   mpi.cli_runs: nccl-tests flags and option handling, unit-tested and fuzzed there;
#   mpi.sweep: Python driving ccbench runs covered there;
#   mpi.culprit_links and mpi.culprit_accept: the culprit search and its verdicts over runs with
#     a rank 400 ms late a call (their waiting ranks spin: 78 and 49 s under the sanitizers);
#     links, accept and the slow fault run there in mpi.links_*, mpi.culprit_pairs and _bisect.
# Tests that judge timings (settings against each other, a shaped host against healthy ones) run
# with the background sanitizer build paused: beside it mpi.sweep once found a 2x "gain" between
# identical settings, and cluster.culprit saw healthy pairs of hosts at 0.06-0.08 GB/s against
# 0.25-0.43 for others, below the shaped host's links, in both of its attempts (CI at b20ffa5).
quiet_tests='^(mpi\.sweep|cluster\.culprit|cluster\.shaped)$'
release_mpi='mpi\.ccbench_all_cases\.np[34]|mpi\.ccbench_default_run|mpi\.cli_runs|mpi\.bad_input|mpi\.links_bad_input|mpi\.cpu_collectives\.np[45]|mpi\.fault\.group_pairs|mpi\.sweep|mpi\.culprit_(links|accept)$'

# One ctest over the build folder $1 (arguments after it go to ctest); says what was skipped.
run_ctest() {
  local dir=$1 rc=0
  shift
  ctest --test-dir "$dir" --output-on-failure --no-tests=error -j "$jobs" "$@" || rc=$?
  report_skipped "$dir"
  grep -h "^bad inputs tried:" "$dir/Testing/Temporary/LastTest.log" 2>/dev/null | sed 's/^/ctest: /' || true
  return $rc
}

# Sanitizers and fuzzers: one clang build (<build>-asan, no CUDA) with AddressSanitizer and UBSan
# on everything and the libFuzzer targets beside it. One build serves both: it takes 13 minutes on
# 2 cores, where a g++ sanitizer build (18) and a separate clang fuzz build (8) took 26. In the
# full run it starts before the release build's tests, at idle priority (SCHED_IDLE: it runs only
# on cycles the tests leave free, and a test that wakes takes its core back at once), and the
# script waits for what is left of it after them.
# detect_leaks=0: Open MPI does not free what MPI_Init allocates (nor its progress threads' state),
# so LeakSanitizer would fail every MPI process at exit over memory that is not ours. Leaks in
# our code are still caught where no MPI runs: the fuzzers (below) keep leak detection on.
asan="$build-asan"
seconds="${CCBENCH_FUZZ_SECONDS:-20}"
asan_build_pid=""
start_sanitizer_build() {
  echo "test.sh: sanitizers: building $asan (clang, AddressSanitizer + UBSan, libFuzzer targets; no CUDA) at idle priority"
  # A folder configured otherwise (the g++ sanitizer build of earlier versions) starts afresh.
  grep -qs '^CCBENCH_FUZZ:BOOL=ON' "$asan/CMakeCache.txt" || rm -rf "$asan"
  mkdir -p "$asan"
  local idle=()
  chrt --idle 0 true 2>/dev/null && idle=(chrt --idle 0) || idle=(nice -n 19)
  (
    if [ ! -f "$asan/CMakeCache.txt" ]; then
      # -O1 -g1: what ASan recommends for useful stack traces, and quick to compile on 2 cores.
      "${idle[@]}" cmake -S . -B "$asan" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCCBENCH_SANITIZE=ON -DCCBENCH_FUZZ=ON -DCCBENCH_WITH_CUDA=OFF \
        -DCCBENCH_BUILD_BENCHMARKS=OFF -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ >"$asan/configure.log" 2>&1 ||
        { echo configure >"$asan/build.failed"; exit 3; }
    fi
    "${idle[@]}" cmake "$asan" -DCCBENCH_FUZZ_SECONDS="$seconds" >/dev/null &&
      "${idle[@]}" cmake --build "$asan" -j "$jobs" >"$asan/build.log" 2>&1 || { echo build >"$asan/build.failed"; exit 3; }
  ) &
  asan_build_pid=$!
}
# Waits for the sanitizer build; exits 3 with its log's end when it failed.
finish_sanitizer_build() {
  [ -n "$asan_build_pid" ] || start_sanitizer_build
  wait "$asan_build_pid" || true
  asan_build_pid=""
  if [ -f "$asan/build.failed" ]; then
    if [ "$(cat "$asan/build.failed")" = configure ]; then cat "$asan/configure.log" >&2; else tail -40 "$asan/build.log" >&2; fi
    rm -f "$asan/build.failed"
    exit 3
  fi
}
# The background build (its subshell, cmake, ninja and the compilers) goes with the script,
# however it ends (SIGCONT first: a paused ninja would hold its SIGTERM).
kill_tree() {
  local child
  for child in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$child"; done
  kill -CONT "$1" 2>/dev/null || true
  kill "$1" 2>/dev/null || true
}
# Sends SIGSTOP or SIGCONT ($1) to a process and its descendants, each before its children, so
# that a stopped ninja starts no compiler after its children were listed.
signal_tree() {
  local child
  kill "-$1" "$2" 2>/dev/null || true
  for child in $(pgrep -P "$2" 2>/dev/null); do signal_tree "$1" "$child"; done
}
# The tests that judge timings; the cluster tier's get a second attempt as the tier's others do.
run_quiet_tests() {
  local rc=0
  run_ctest "$build" -L cluster -R "$quiet_tests" --repeat until-pass:2 || rc=$?
  run_ctest "$build" -L mpi -R "$quiet_tests" || rc=$?
  return $rc
}
# Runs its arguments with the background build paused (if one runs), resumed however they end.
with_build_paused() {
  local rc=0
  [ -z "$asan_build_pid" ] || signal_tree STOP "$asan_build_pid"
  "$@" || rc=$?
  [ -z "$asan_build_pid" ] || signal_tree CONT "$asan_build_pid"
  return $rc
}
trap '[ -z "$asan_build_pid" ] || kill_tree "$asan_build_pid"' EXIT

status=0
if [ $# -gt 0 ] || [ "${CCBENCH_QUICK:-0}" = 1 ]; then
  # The whole suite runs the GoogleTest cases once: in shards (see tests/CMakeLists.txt).
  [ $# -gt 0 ] || set -- -LE gtest_case
  run_ctest "$build" "$@" || status=$?
  stage_done "ctest"
else
  start_sanitizer_build
  # In the full run each MPI test runs once: under the sanitizers, unless listed above.
  # GoogleTest cases in two shards (label unit), not one process each (tests/CMakeLists.txt).
  run_ctest "$build" -LE 'mpi|cluster|gtest_case' || status=$?
  stage_done "tests without mpi or cluster labels"
  # The cluster tier's hosts share the machine's 2 cores: a test whose timing a scheduler quantum
  # upset (cluster.culprit, .slurm and .shaped each failed once in 14 on an idle machine and passed
  # when run again) runs once more; ctest's output keeps the failed attempt.
  run_ctest "$build" -L cluster -E "$quiet_tests" --repeat until-pass:2 || status=$?
  stage_done "cluster tier"
  with_build_paused run_quiet_tests || status=$?
  stage_done "tests that judge timings (the sanitizer build paused)"
  run_ctest "$build" -L mpi -R "$release_mpi" -E "$quiet_tests" || status=$?
  stage_done "release MPI tests"
fi

if [ "${CCBENCH_QUICK:-0}" = 1 ]; then
  echo "test.sh: CCBENCH_QUICK=1: sanitizer and fuzzer stages skipped"
  exit $status
fi
finish_sanitizer_build
stage_done "sanitizer build (the rest of it after the release tests)"

export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=0:print_summary=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
asan_status=0
# Left out here: $release_mpi (run in the first stage), the browser test, the lints and
# reports.report_inputs (Python reading files, no ccbench run). Kept for what only they reach under
# the sanitizers: the 5 MiB run (several slots per step on 3 ranks) and the 5-rank all-case run.
run_ctest "$asan" -L 'unit|mpi' -LE 'browser|gtest_case|lint' -E "$release_mpi|reports\.report_inputs" || asan_status=$?
# A sanitizer report fails its test; say so plainly if one slipped into a log that passed. Only
# the reports' own lines count (a test's text may name a sanitizer).
if grep -qE "^==[0-9]+==ERROR: (Address|Leak)Sanitizer|^SUMMARY: (Address|Leak|UndefinedBehavior)Sanitizer|:[0-9]+:[0-9]+: runtime error:" \
  "$asan/Testing/Temporary/LastTest.log"; then
  echo "test.sh: sanitizers: a sanitizer report is in $asan/Testing/Temporary/LastTest.log" >&2
  asan_status=1
fi
[ $asan_status = 0 ] && echo "test.sh: sanitizers: unit and MPI tests clean under ASan + UBSan"
unset ASAN_OPTIONS UBSAN_OPTIONS
[ $asan_status = 0 ] || status=$asan_status
stage_done "sanitizer tests"

# Fuzzers: each libFuzzer target of the same build for $seconds from its seeds.
echo "test.sh: fuzzers: ${seconds} s each"
fuzz_status=0
run_ctest "$asan" -L fuzz || fuzz_status=$?
grep -h "^fuzz fuzz_.*: Done" "$asan/Testing/Temporary/LastTest.log" | sed 's/^/test.sh: /' || true
[ $fuzz_status = 0 ] || status=$fuzz_status
stage_done "fuzzers"

exit $status
