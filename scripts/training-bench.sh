#!/usr/bin/env bash
# Training conditions on a GPU node, in one go (docs/guides/training.md): FP8 against float, the
# collectives beside a GEMM (busbw kept, TFLOPS lost), energy per GB, and a two-setting
# --nccl-config sweep; then short tables. On one GPU it shows the mechanics (ranks share the GPU,
# NCCL on one rank); with two or more GPUs it measures the tables on 2 GPUs.
# Usage: scripts/training-bench.sh [OUT]     (OUT: a new folder [training-bench-<UTC time>])
# Environment: CCBENCH_BUILD_DIR (build), MAXB (1G: the largest size of the tables),
#              GEMM_N (8192: m = n = k of the load), ITERS (20).
set -uo pipefail
cd "$(dirname "$0")/.."
build="${CCBENCH_BUILD_DIR:-build}"
ccbench="$build/ccbench"
out="${1:-training-bench-$(date -u +%Y%m%d-%H%M%S)}"
maxb="${MAXB:-1G}" gemm="${GEMM_N:-8192}" iters="${ITERS:-20}"
[ -x "$ccbench" ] || { echo "training-bench: no $ccbench (build first: cmake --build $build)" >&2; exit 2; }
gpus=0
command -v nvidia-smi >/dev/null && gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
[ "$gpus" -gt 0 ] || { echo "training-bench: no GPU here (nvidia-smi lists none)" >&2; exit 3; }
mkdir -p "$out" || exit 2
# NVLink SHARP stays off everywhere (the machines' rule); root may run mpirun.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
status=0

# run NAME RANKS ccbench-arguments...: one launch into OUT/NAME, its output in OUT/NAME.log.
run() {
  local name="$1" ranks="$2"; shift 2
  local share=()
  [ "$ranks" -gt "$gpus" ] && share=(--share-gpus)
  echo "training-bench: $name ($ranks ranks): ccbench $*"
  mpirun --allow-run-as-root --oversubscribe --bind-to none -np "$ranks" -x NCCL_NVLS_ENABLE \
    "$ccbench" --device gpu --out "$out/$name" "${share[@]}" "$@" >"$out/$name.log" 2>&1
  local rc=$?
  [ "$rc" -eq 0 ] || { echo "training-bench: $name exited $rc (see $out/$name.log)" >&2; status=1; }
}

"$ccbench" --version >"$out/version.txt" 2>&1
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
common=(-n "$iters" -w 5 --in-place no)
if [ "$gpus" -ge 2 ]; then
  ranks=2
  sizes=(-b 64M -e "$maxb" -f 4)
  # 1. FP8 all-reduce against float, NCCL and our ring.
  run fp8 2 --collective allreduce --impl nccl,ring -d float,bfloat16,f8e4m3,f8e5m2 -o sum "${sizes[@]}" "${common[@]}"
  # 2. The same collectives alone and beside the GEMM: nccl default and at 4 and 8 CTAs, ring, ce.
  for load in none gemm; do
    over=()
    [ "$load" = gemm ] && over=(--overlap "gemm:$gemm")
    run "alone-$load" 2 --collective allreduce,allgather --impl nccl,ring,ce --nccl-config maxCTAs=default,4,8 \
      -d bfloat16 -b 64M -e "$maxb" -f 16 "${common[@]}" "${over[@]}"
  done
  # 3. Energy per GB of every implementation at the largest size.
  run energy 2 --collective allreduce,allgather --impl all -d bfloat16 -b "$maxb" -e "$maxb" --energy on "${common[@]}"
else
  ranks=2  # two ranks on the one GPU: our kernels; NCCL on one rank (it refuses two on one GPU)
  sizes=(-b 1M -e 16M -f 4)
  run fp8 2 --collective allreduce --impl ring,tree,oneshot,twoshot -d float,f8e4m3,f8e5m2 -o sum,avg "${sizes[@]}" "${common[@]}"
  run fp8-nccl 1 --collective allreduce,reducescatter --impl nccl -d float,f8e4m3,f8e5m2 -o sum,avg "${sizes[@]}" "${common[@]}"
  for load in none gemm; do
    over=()
    [ "$load" = gemm ] && over=(--overlap "gemm:$gemm")
    run "alone-$load" 2 --collective allreduce,allgather --impl ring,ce -d bfloat16 "${sizes[@]}" "${common[@]}" "${over[@]}"
    run "alone-$load-nccl" 1 --collective allreduce --impl nccl --nccl-config maxCTAs=default,4,8 -d bfloat16 \
      "${sizes[@]}" "${common[@]}" "${over[@]}"
  done
  run energy 1 --collective allreduce,allgather --impl nccl -d bfloat16 -b 64M -e 64M --energy on "${common[@]}"
  run energy-shared 2 --collective allreduce,allgather --impl ring,ce,twoshot -d bfloat16 -b 64M -e 64M --energy on "${common[@]}"
fi

python3 - "$out" "$gpus" <<'EOF' | tee "$out/tables.md"
import csv, glob, os, sys

out, gpus = sys.argv[1], int(sys.argv[2])

def rows(name):
    path = os.path.join(out, name, "results.csv")
    if not os.path.isfile(path):
        return []
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(l for l in f if not l.startswith("#")) if r["status"] == "ok" and r["mode"] == "eager"]

def size(b):
    b = int(b)
    return f"{b >> 30} GiB" if b >= 1 << 30 else f"{b >> 20} MiB"

def label(r):
    return r["impl"] + (f" [{r['nccl_config']}]" if r.get("nccl_config") else "")

def table(title, header, lines):
    print(f"\n### {title}\n\n| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    for l in lines:
        print("| " + " | ".join(str(c) for c in l) + " |")
    if not lines:
        print("| (no rows: see the launch's log) |" + " |" * (len(header) - 1))

print(f"# Training conditions on {gpus} GPU(s)" + ("" if gpus >= 2 else ": mechanics only (ranks share one GPU)"))
fp8 = rows("fp8") + rows("fp8-nccl")
sizes = sorted({int(r["size[B]"]) for r in fp8})
lines = []
for coll, impl, op in sorted({(r["collective"], r["impl"], r["op"]) for r in fp8}):
    for dt in ("float", "bfloat16", "f8e4m3", "f8e5m2"):
        got = {int(r["size[B]"]): r for r in fp8 if (r["collective"], r["impl"], r["op"], r["dtype"]) == (coll, impl, op, dt)}
        if got:
            lines.append([f"{coll} {impl} {op}", dt] + [got[s]["busbw[GB/s]"] + f" (wrong {got[s]['wrong[elements]']})"
                                                        if s in got else "-" for s in sizes])
table("FP8 busbw (GB/s) against float", ["case", "dtype"] + [size(s) for s in sizes], lines)

alone = rows("alone-none") + rows("alone-none-nccl")
loaded = rows("alone-gemm") + rows("alone-gemm-nccl")
key = lambda r: (r["collective"], label(r), int(r["size[B]"]))
base = {key(r): float(r["busbw[GB/s]"]) for r in alone}
lines = []
for r in sorted(loaded, key=key):
    b = base.get(key(r))
    a, d = float(r["load_alone"] or 0), float(r["load_during"] or 0)
    e = float(r.get("load_alone_end") or 0)  # alone again after the rows: warm, at the power cap
    lines.append([r["collective"], label(r), size(r["size[B]"]), f"{b:.1f}" if b else "-", r["busbw[GB/s]"],
                  f"{float(r['busbw[GB/s]']) / b:.2f}" if b else "-", f"{a:.0f} / {e:.0f}", f"{d:.0f}",
                  f"{1 - d / a:.1%} / {1 - d / e:.1%}" if a and e else "-"])
table(f"Beside a GEMM ({loaded[0]['load'] if loaded else 'gemm'}; per GPU): busbw kept, GEMM TFLOPS lost against "
      "alone before / after the rows",
      ["collective", "impl", "size", "busbw alone", "busbw beside", "kept", "TFLOPS alone (before / after)",
       "TFLOPS during", "lost (before / after)"], lines)

energy = rows("energy") + rows("energy-shared")
lines = [[r["collective"], label(r), size(r["size[B]"]), r["busbw[GB/s]"], r["energy[J/coll]"], r["energy_efficiency[GB/J]"],
          r.get("energy_window[s]", "")] for r in sorted(energy, key=key)]
table("Energy (all GPUs of the job; window >= 1 s, about +-10 %)",
      ["collective", "impl", "size", "busbw", "J/coll", "GB/J", "window s"], lines)
EOF
echo "training-bench: results and logs in $out/, tables in $out/tables.md"
exit "$status"
