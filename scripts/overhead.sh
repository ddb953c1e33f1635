#!/usr/bin/env bash
# The harness's own overhead on a 1 MiB `mpi` all-reduce (float sum, out-of-place, 2 CPU ranks):
# ccbench's batch average (time_avg[us] in results.csv) against a bare MPI_Allreduce loop timed
# the same way (tests/benchmarks/bare_allreduce.cpp), same N and W. The two run alternately,
# ROUNDS times each, so that drift over the minutes hits both; the bare program's first batch
# (W warm-up calls into a fresh process, as ccbench's) is the reference, its later batches are
# shown for spread. Every run waits for idle CPUs and measures what other processes used
# meanwhile (tests/benchmarks/quiet.py); a round where they took more than 2% of the cores is
# shown but left out of the medians. Builds nothing: give a build folder that has ccbench and
# bare_allreduce.
# Usage: scripts/overhead.sh BUILD_DIR [ROUNDS=7] [N=500] [W=20] [BYTES=1M]
# Prints one line per round, then medians, spread (min..max) and the overhead in percent: from the
# medians, from the minima, and paired (median over rounds of ccbench / bare in the same round).
set -euo pipefail
build="${1:?usage: scripts/overhead.sh BUILD_DIR [ROUNDS] [N] [W] [BYTES]}"
rounds="${2:-7}" n="${3:-500}" w="${4:-20}" size="${5:-1M}"
for exe in ccbench bare_allreduce; do
  [ -x "$build/$exe" ] || { echo "overhead.sh: $build/$exe not found (build it first)" >&2; exit 2; }
done
bytes=$(python3 -c "import sys; s=sys.argv[1]; m={'K':1<<10,'M':1<<20,'G':1<<30}; print(int(s[:-1])*m[s[-1]] if s[-1] in m else int(s))" "$size")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpi=(mpirun -np 2 --bind-to core)
quiet=(python3 "$(dirname "$0")/../tests/benchmarks/quiet.py" --wait 300)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "# $(date -u +%FT%TZ) $(hostname) load: $(cut -d' ' -f1-3 /proc/loadavg); ${bytes} B, N=$n W=$w, $rounds rounds"
echo "# bare: ${mpi[*]} $build/bare_allreduce -b $bytes -n $n -w $w -r 3"
echo "# ccbench: ${mpi[*]} $build/ccbench --device cpu --impl mpi --collective allreduce -b $size -e $size -n $n -w $w --in-place no --format csv --out DIR"
for ((i = 1; i <= rounds; i++)); do
  "${quiet[@]}" --log "$tmp/quiet$i" -- "${mpi[@]}" "$build/bare_allreduce" -b "$bytes" -n "$n" -w "$w" -r 3 \
    >"$tmp/bare$i.txt" 2>/dev/null
  "${quiet[@]}" --log "$tmp/quiet$i" -- "${mpi[@]}" "$build/ccbench" --device cpu --impl mpi --collective allreduce \
    -b "$size" -e "$size" -n "$n" -w "$w" --in-place no --format csv --out "$tmp/cc$i" >"$tmp/cc$i.log" 2>&1 ||
    { echo "overhead.sh: ccbench failed:" >&2; tail -20 "$tmp/cc$i.log" >&2; exit 1; }
done
python3 - "$tmp" "$rounds" <<'PY'
import csv, re, statistics, sys
tmp, rounds = sys.argv[1], int(sys.argv[2])
first, later, cc, ratios, dropped = [], [], [], [], 0
for i in range(1, rounds + 1):
    t = [float(l.split()[1]) for l in open(f"{tmp}/bare{i}.txt") if l.startswith("time_avg_us")]
    with open(f"{tmp}/cc{i}/results.csv", newline="") as f:
        rows = [r for r in csv.DictReader(l for l in f if not l.startswith("#")) if r["status"] == "ok"]
    if len(rows) != 1 or rows[0]["wrong[elements]"] != "0":
        sys.exit(f"overhead.sh: round {i}: expected one checked ok row, got {rows}")
    c = float(rows[0]["time_avg[us]"])
    others = max(float(m) for m in re.findall(r"= ([0-9.]+)% of", open(f"{tmp}/quiet{i}").read()))
    busy = others > 2.0
    print(f"round {i:2d}: bare {t[0]:8.2f} us (later batches {' '.join(f'{x:.2f}' for x in t[1:])})  "
          f"ccbench {c:8.2f} us  ratio {c / t[0]:.3f}  others {others:.1f}%{'  (left out)' if busy else ''}")
    if busy:
        dropped += 1
        continue
    first.append(t[0])
    later += t[1:]
    cc.append(c)
    ratios.append(c / t[0])
if not cc:
    sys.exit("overhead.sh: every round was disturbed by other processes; run again on a quiet machine")
def show(name, v):
    m = statistics.median(v)
    print(f"{name:20s} median {m:8.2f} us  min {min(v):8.2f}  max {max(v):8.2f}  "
          f"spread {(max(v) - min(v)) / m * 100:5.1f}%  (n={len(v)})")
    return m
b = show("bare, first batch", first)
show("bare, later batches", later)
c = show("ccbench time_avg", cc)
q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
print(f"overhead, medians:       {(c - b) / b * 100:+.2f}%")
print(f"overhead, minima:        {(min(cc) - min(first)) / min(first) * 100:+.2f}%")
print(f"overhead, paired rounds: {(statistics.median(ratios) - 1) * 100:+.2f}% "
      f"(median of ccbench/bare per round; quartiles {(q[0] - 1) * 100:+.1f}% .. {(q[2] - 1) * 100:+.1f}%)")
print(f"{dropped} disturbed round(s) left out. The machine drifts between speed modes over minutes; the paired "
      f"figure, from runs seconds apart, is the least affected.")
PY
