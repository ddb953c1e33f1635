#!/usr/bin/env bash
# The CPU baseline: one ccbench run with 2 CPU ranks, one per core, of all-reduce and all-gather
# with mpi, ring and tree (float sum), 1 KiB to 64 MiB, out-of-place and in-place. Builds
# nothing. Writes OUTDIR/results.csv, run.json, results.md (ccbench), bench.log (its table),
# machine.txt (lscpu, memory, MPI, load, and the CPU time other processes used during the run,
# from tests/benchmarks/quiet.py, which also waits for idle CPUs first) and command.txt.
# Usage: [NP=2] [ITERS=20] [WARMUP=5] [MINB=1K] [MAXB=64M] scripts/cpu-bench.sh BUILD_DIR OUTDIR
#        [extra ccbench arguments]
# Ranks beyond the core count are oversubscribed (--oversubscribe, no binding): such runs check
# the schedules, their times are not CPU figures.
set -uo pipefail
build="${1:?usage: scripts/cpu-bench.sh BUILD_DIR OUTDIR [ccbench arguments]}"
out="${2:?usage: scripts/cpu-bench.sh BUILD_DIR OUTDIR [ccbench arguments]}"
shift 2
[ -x "$build/ccbench" ] || { echo "cpu-bench.sh: $build/ccbench not found (build it first)" >&2; exit 2; }
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
np="${NP:-2}"
if [ "$np" -le "$(nproc)" ]; then
  mpi=(mpirun -np "$np" --bind-to core)
else
  mpi=(mpirun -np "$np" --oversubscribe --bind-to none)
fi
cmd=("${mpi[@]}" "$build/ccbench" --device cpu --collective allreduce,allgather --impl mpi,ring,tree
     -d float -o sum -b "${MINB:-1K}" -e "${MAXB:-64M}" -f 2 -n "${ITERS:-20}" -w "${WARMUP:-5}" --in-place both --out "$out" "$@")
{
  echo "date: $(date -u +%FT%TZ)"
  echo "load before: $(cat /proc/loadavg)"
  lscpu
  free -b
  mpirun --version | head -1
  "$build/ccbench" --version
  env | grep -E '^(OMPI_MCA_|CCBENCH_)' || true
} >"$out/machine.txt" 2>&1
echo "${cmd[*]}" >"$out/command.txt"
python3 "$(dirname "$0")/../tests/benchmarks/quiet.py" --wait 600 --log "$out/machine.txt" -- "${cmd[@]}" \
  >"$out/bench.log" 2>&1
rc=$?
echo "load after: $(cat /proc/loadavg)" >>"$out/machine.txt"
echo "ccbench exit code $rc"
tail -3 "$out/machine.txt"
grep -A60 "busbw from the median" "$out/bench.log" | head -60
exit $rc
