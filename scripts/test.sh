#!/usr/bin/env bash
# Sets ccbench up (scripts/setup.sh) and runs every test: unit tests, MPI tests (mpirun -np 2..5
# --oversubscribe, the bad-input matrix and the fault tests among them), the installation (label
# install: cmake --install into a temporary prefix, the installed ccbench --version and a 2-rank
# run, the installed Slurm script, cpack -G DEB) and GPU tests (skipped with the reason where no
# GPU is present). Then two more stages, which CI always runs:
#   sanitizers  the CPU parts built with AddressSanitizer and UBSan (<build>-asan, no CUDA), and
#               the unit and MPI tests run there;
#   fuzzers     the libFuzzer targets built with clang (<build>-fuzz), each run for
#               CCBENCH_FUZZ_SECONDS (default 20) from its seeds; a crash fails the script.
# Extra arguments go to the first ctest, e.g. scripts/test.sh -L unit
# Environment: CCBENCH_BUILD_DIR (default build); CCBENCH_QUICK=1 skips the two extra stages
# (quick local runs); CCBENCH_FUZZ_SECONDS.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
build="${CCBENCH_BUILD_DIR:-build}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export NCCL_NVLS_ENABLE="${NCCL_NVLS_ENABLE:-0}"
jobs="$(nproc)"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)

# Prints which tests of a build folder were skipped and why (skipped is not passed).
report_skipped() {
  grep -h "^SKIPPED:" "$1/Testing/Temporary/LastTest.log" 2>/dev/null | sort | uniq -c |
    sed "s|^|ctest ($1): skipped test(s): |" || true
}

status=0
(cd "$build" && ctest --output-on-failure -j "$jobs" "$@") || status=$?
report_skipped "$build"
grep -h "^bad inputs tried:" "$build/Testing/Temporary/LastTest.log" 2>/dev/null | sed 's/^/ctest: /' || true

if [ "${CCBENCH_QUICK:-0}" = 1 ]; then
  echo "test.sh: CCBENCH_QUICK=1: sanitizer and fuzzer stages skipped"
  exit $status
fi

# Sanitizers: ASan + UBSan on the CPU parts, with g++.
# detect_leaks=0: Open MPI does not free what MPI_Init allocates (nor its progress threads' state),
# so LeakSanitizer would fail every MPI process at exit over memory that is not ours. Leaks in
# our code are still caught where no MPI runs: the fuzzers (below) keep leak detection on.
asan="$build-asan"
echo "test.sh: sanitizers: building $asan (AddressSanitizer + UBSan, no CUDA)"
mkdir -p "$asan"
if [ ! -f "$asan/CMakeCache.txt" ]; then
  # -O1 -g1: what ASan recommends for useful stack traces, and quick to compile on 2 cores.
  cmake -S . -B "$asan" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
    -DCCBENCH_SANITIZE=ON -DCCBENCH_WITH_CUDA=OFF -DCCBENCH_BUILD_BENCHMARKS=OFF >"$asan/configure.log" 2>&1 ||
    { cat "$asan/configure.log" >&2; exit 3; }
fi
cmake --build "$asan" -j "$jobs" >"$asan/build.log" 2>&1 || { tail -40 "$asan/build.log" >&2; exit 3; }
export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=0:print_summary=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
asan_status=0
# Left out under ASan, each run in the first stage (about 3 minutes of CI time under ASan):
#   the bad-input matrix and mpi.links_bad_input: command-line parsing, which the unit tests run
#     here and fuzz_cli fuzzes below;
#   the 3-rank all-case run and the 5 MiB run: the 2-, 4- and 5-rank all-case runs and the 3-rank
#     tcp run take the same code paths here;
#   mpi.cpu_collectives at 4 and 5 ranks and mpi.fault.group_pairs: the executors at 1-3 ranks,
#     the all-case runs at 4-5 ranks and mpi.fault.group_node take those paths;
#   the 4-rank all-case run and the default run: the 2- and 5-rank all-case runs take their paths;
#   mpi.cli_runs: nccl-tests flags and option handling, unit-tested here and fuzzed below;
#   the browser test and mpi.sweep: Python driving ccbench runs already covered.
ctest --test-dir "$asan" --output-on-failure -j "$jobs" -L 'unit|mpi' -LE browser \
  -E 'mpi\.ccbench_all_cases\.np[34]|mpi\.ccbench_default_run|mpi\.cli_runs|mpi\.ccbench_large|mpi\.bad_input|mpi\.links_bad_input|mpi\.cpu_collectives\.np[45]|mpi\.fault\.group_pairs|mpi\.sweep' ||
  asan_status=$?
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

# Fuzzers: libFuzzer + ASan + UBSan, with clang.
fuzz="$build-fuzz"
seconds="${CCBENCH_FUZZ_SECONDS:-20}"
echo "test.sh: fuzzers: building $fuzz (clang, libFuzzer), ${seconds} s each"
mkdir -p "$fuzz"
if [ ! -f "$fuzz/CMakeCache.txt" ]; then
  cmake -S . -B "$fuzz" "${generator[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" \
    -DCCBENCH_FUZZ=ON -DCCBENCH_WITH_CUDA=OFF \
    -DCCBENCH_BUILD_BENCHMARKS=OFF -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ >"$fuzz/configure.log" 2>&1 ||
    { cat "$fuzz/configure.log" >&2; exit 3; }
fi
cmake "$fuzz" -DCCBENCH_FUZZ_SECONDS="$seconds" >/dev/null
cmake --build "$fuzz" -j "$jobs" --target fuzz_parse_size fuzz_parse_fault fuzz_csv fuzz_cli >"$fuzz/build.log" 2>&1 ||
  { tail -40 "$fuzz/build.log" >&2; exit 3; }
fuzz_status=0
ctest --test-dir "$fuzz" --output-on-failure -j "$jobs" -L fuzz || fuzz_status=$?
grep -h "^fuzz fuzz_.*: Done" "$fuzz/Testing/Temporary/LastTest.log" | sed 's/^/test.sh: /' || true
[ $fuzz_status = 0 ] || status=$fuzz_status

exit $status
