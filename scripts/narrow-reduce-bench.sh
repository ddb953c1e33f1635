#!/usr/bin/env bash
# The CPU reduce loops of 16- and 8-bit floats against float (tests/benchmarks/microbench.cpp:
# BM_Reduce, two inputs and one output, a ring step; BM_ReduceOp, the same step for sum, prod,
# min and max, fp8 on each vector set the processor has), repeated with the benchmarks' order
# shuffled between repetitions (Google Benchmark's random interleaving), so that a shared
# machine's slow spells fall on every type alike. Prints, per size from 1 MiB, the median bytes/s
# (every byte read and written, per CPU second) over the repetitions, their spread (min-max) and
# the ratio to float's median (same size, same operation).
#
# With BASELINE=OTHER_MICROBENCH (an older build), BM_Reduce runs ROUNDS times in each binary in
# turn (baseline, this build, baseline, ...) and the table puts the two side by side, each type's
# ratio to float taken within its own binary.
# Usage: scripts/narrow-reduce-bench.sh [OUT_PREFIX]   (REPS: repetitions [9]; ROUNDS [5]; FILTER:
#        the benchmarks without BASELINE [both], e.g. 'BM_ReduceOp<' for the operations alone)
# Writes OUT_PREFIX.json (and OUT_PREFIX-baseline-N.json, OUT_PREFIX-N.json with BASELINE).
# Environment: CCBENCH_BUILD_DIR (build).
set -euo pipefail
cd "$(dirname "$0")/.."
bench="${CCBENCH_BUILD_DIR:-build}/ccbench_microbench"
out="${1:-narrow-reduce}"
[ -x "$bench" ] || { echo "narrow-reduce-bench: no $bench (build the benchmarks first)" >&2; exit 2; }
types='BM_Reduce<(float|half_t|bfloat16_t|fp8_e4m3_t|fp8_e5m2_t)>/bytes:[0-9]+/in:2/out:1$'
# Google Benchmark 1.8 wants a unit on --benchmark_min_time ("0.1s", else it warns once per
# benchmark); 1.7 (Debian 12) takes a bare number of seconds and refuses the suffix.
min_time() { "$1" --help 2>&1 | grep -q '<float>s' && echo 0.1s || echo 0.1; }
run() {  # BINARY FILTER REPETITIONS OUT.json
  "$1" --benchmark_filter="$2" --benchmark_repetitions="$3" --benchmark_enable_random_interleaving=true \
    --benchmark_min_time="$(min_time "$1")" --benchmark_format=json --benchmark_out="$4" >/dev/null
}
if [ -n "${BASELINE:-}" ]; then
  [ -x "$BASELINE" ] || { echo "narrow-reduce-bench: BASELINE=$BASELINE is not an executable" >&2; exit 2; }
  for r in $(seq "${ROUNDS:-5}"); do
    run "$BASELINE" "$types" 1 "$out-baseline-$r.json"
    run "$bench" "$types" 1 "$out-$r.json"
  done
  python3 - "$out" "${ROUNDS:-5}" <<'EOF'
import json, re, statistics, sys
prefix, rounds = sys.argv[1], int(sys.argv[2])
def rates(files):
    r = {}
    for f in files:
        for b in json.load(open(f))["benchmarks"]:
            m = re.match(r"BM_Reduce<(\w+)>/bytes:(\d+)/in:2/out:1$", b["name"])
            if b.get("run_type") == "iteration" and m and int(m.group(2)) >= 1 << 20:
                r.setdefault((int(m.group(2)), m.group(1)), []).append(b["bytes_per_second"] / 1e9)
    return r
old = rates([f"{prefix}-baseline-{r}.json" for r in range(1, rounds + 1)])
new = rates([f"{prefix}-{r}.json" for r in range(1, rounds + 1)])
print(f"{'size':>8}  {'type':<11} {'baseline GB/s (min-max)':>24} {'x float':>7}   {'this build GB/s (min-max)':>26} {'x float':>7}  n")
for size in sorted({s for s, _ in new}):
    fo, fn = statistics.median(old[(size, "float")]), statistics.median(new[(size, "float")])
    for t in ("float", "half_t", "bfloat16_t", "fp8_e4m3_t", "fp8_e5m2_t"):
        if (size, t) in new and (size, t) in old:
            o, n = old[(size, t)], new[(size, t)]
            mo, mn = statistics.median(o), statistics.median(n)
            print(f"{size >> 20:>5} MiB  {t:<11} {mo:>8.2f} ({min(o):>6.2f}-{max(o):<6.2f}) {mo / fo:>7.2f}   "
                  f"{mn:>10.2f} ({min(n):>6.2f}-{max(n):<6.2f}) {mn / fn:>7.2f}  {len(n)}")
EOF
  exit 0
fi
run "$bench" "${FILTER:-$types|BM_ReduceOp<}" "${REPS:-9}" "$out.json"
python3 - "$out.json" <<'EOF'
import json, re, statistics, sys
runs = [b for b in json.load(open(sys.argv[1]))["benchmarks"] if b.get("run_type") == "iteration"]
OPS = ["sum", "prod", "min", "max"]  # kAllReduceOps' order
rates = {}
for b in runs:
    m = re.match(r"BM_Reduce<(\w+)>/bytes:(\d+)/in:2/out:1$", b["name"])
    if m and int(m.group(2)) >= 1 << 20:
        rates.setdefault((int(m.group(2)), m.group(1)), []).append(b["bytes_per_second"] / 1e9)
    m = re.match(r"BM_ReduceOp<(\w+)>/bytes:(\d+)/op:(\d)/isa:(\d)", b["name"])
    if m:
        key = (int(m.group(2)), m.group(1), OPS[int(m.group(3))], b["label"])  # the vector set's name
        rates.setdefault(key, []).append(b["bytes_per_second"] / 1e9)

def row(label, v, base):
    med = statistics.median(v)
    print(f"{label}  {med:>11.2f}  {min(v):>6.2f}-{max(v):<6.2f}  {med / base:>7.2f}  {len(v)}")

sizes = sorted({k[0] for k in rates if len(k) == 2})
if sizes:
    print("Sum, the widest vector set (BM_Reduce)")
    print(f"{'size':>8}  {'type':<11} {'median GB/s':>11}  {'min-max':>13}  {'x float':>7}  n")
for size in sizes:
    base = statistics.median(rates[(size, "float")])
    for t in ("float", "half_t", "bfloat16_t", "fp8_e4m3_t", "fp8_e5m2_t"):
        if (size, t) in rates:
            row(f"{size >> 20:>5} MiB  {t:<11}", rates[(size, t)], base)
sizes = sorted({k[0] for k in rates if len(k) == 4})
if sizes:
    print("\nEvery operation, fp8 on each vector set (BM_ReduceOp)")
    print(f"{'size':>8}  {'op':<4}  {'type':<11} {'vector set':<13} {'median GB/s':>11}  {'min-max':>13}  {'x float':>7}  n")
for size in sizes:
    for op in OPS:
        floats = [v for k, v in rates.items() if len(k) == 4 and k[:3] == (size, "float", op)]
        if not floats:
            continue
        base = statistics.median(floats[0])
        for k in sorted(k for k in rates if len(k) == 4 and k[0] == size and k[2] == op):
            row(f"{size >> 20:>5} MiB  {op:<4}  {k[1]:<11} {k[3]:<13}", rates[k], base)
EOF
