#!/usr/bin/env bash
# The harness's own overhead on a 1 MiB `mpi` all-reduce (float sum, out-of-place, 2 CPU ranks):
# ccbench's batch average (time_avg[us] in results.csv) against a bare MPI_Allreduce loop timed
# the same way (tests/benchmarks/bare_allreduce.cpp), same N and W. The two run alternately,
# ROUNDS times each, so that drift over the minutes hits both; the bare program's first batch
# (W warm-up calls into a fresh process, as ccbench's) is the reference, its later batches are
# shown for spread. Builds nothing: give a build folder that has ccbench and bare_allreduce.
# Usage: scripts/overhead.sh BUILD_DIR [ROUNDS=7] [N=500] [W=20] [BYTES=1M]
# Prints one line per run, then medians, spread (min..max) and the overhead in percent.
set -euo pipefail
build="${1:?usage: scripts/overhead.sh BUILD_DIR [ROUNDS] [N] [W] [BYTES]}"
rounds="${2:-7}" n="${3:-500}" w="${4:-20}" size="${5:-1M}"
for exe in ccbench bare_allreduce; do
  [ -x "$build/$exe" ] || { echo "overhead.sh: $build/$exe not found (build it first)" >&2; exit 2; }
done
bytes=$(python3 -c "import sys; s=sys.argv[1]; m={'K':1<<10,'M':1<<20,'G':1<<30}; print(int(s[:-1])*m[s[-1]] if s[-1] in m else int(s))" "$size")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpirun -np 2 --bind-to core)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "# $(date -u +%FT%TZ) $(hostname) load: $(cut -d' ' -f1-3 /proc/loadavg); ${bytes} B, N=$n W=$w, $rounds rounds"
echo "# bare: ${mpi[*]} $build/bare_allreduce -b $bytes -n $n -w $w -r 3"
echo "# ccbench: ${mpi[*]} $build/ccbench --device cpu --impl mpi --collective allreduce -b $size -e $size -n $n -w $w --in-place no --format csv --out DIR"
for ((i = 1; i <= rounds; i++)); do
  "${mpi[@]}" "$build/bare_allreduce" -b "$bytes" -n "$n" -w "$w" -r 3 >"$tmp/bare$i.txt"
  "${mpi[@]}" "$build/ccbench" --device cpu --impl mpi --collective allreduce -b "$size" -e "$size" \
    -n "$n" -w "$w" --in-place no --format csv --out "$tmp/cc$i" >"$tmp/cc$i.log" 2>&1 ||
    { echo "overhead.sh: ccbench failed:" >&2; tail -20 "$tmp/cc$i.log" >&2; exit 1; }
done
python3 - "$tmp" "$rounds" <<'EOF'
import csv, statistics, sys
tmp, rounds = sys.argv[1], int(sys.argv[2])
first, later, cc = [], [], []
for i in range(1, rounds + 1):
    t = [float(l.split()[1]) for l in open(f"{tmp}/bare{i}.txt") if l.startswith("time_avg_us")]
    first.append(t[0])
    later += t[1:]
    with open(f"{tmp}/cc{i}/results.csv", newline="") as f:
        rows = [r for r in csv.DictReader(l for l in f if not l.startswith("#")) if r["status"] == "ok"]
    if len(rows) != 1 or rows[0]["wrong[elements]"] != "0":
        sys.exit(f"overhead.sh: round {i}: expected one checked ok row, got {rows}")
    cc.append(float(rows[0]["time_avg[us]"]))
    print(f"round {i}: bare {t[0]:9.2f} us (later batches {' '.join(f'{x:.2f}' for x in t[1:])})  ccbench {cc[-1]:9.2f} us")
def show(name, v):
    m = statistics.median(v)
    print(f"{name:28s} median {m:9.2f} us  min {min(v):9.2f}  max {max(v):9.2f}  spread {(max(v)-min(v))/m*100:5.1f}%  (n={len(v)})")
    return m
b = show("bare, first batch", first)
show("bare, later batches", later)
c = show("ccbench time_avg", cc)
print(f"overhead: {(c - b) / b * 100:+.2f}% (ccbench median against the bare first-batch median)")
EOF
