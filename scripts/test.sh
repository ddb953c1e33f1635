#!/usr/bin/env bash
# Sets ccbench up (scripts/setup.sh) and runs every test: unit tests, MPI tests (mpirun -np 2..5
# --oversubscribe) and GPU tests (skipped with the reason where no GPU is present).
# Extra arguments go to ctest, e.g. scripts/test.sh -L unit
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
build="${CCBENCH_BUILD_DIR:-build}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export NCCL_NVLS_ENABLE="${NCCL_NVLS_ENABLE:-0}"
cd "$build"
status=0
ctest --output-on-failure -j "$(nproc)" "$@" || status=$?
# Skipped is not passed: say which tests were skipped and why.
grep -h "^SKIPPED:" Testing/Temporary/LastTest.log 2>/dev/null | sort | uniq -c | sed 's/^/ctest: skipped test(s): /' || true
exit $status
