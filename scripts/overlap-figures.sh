#!/usr/bin/env bash
# The --overlap load's figures on one GPU (docs/guides/training.md): the GEMM and the copy alone
# before and after the rows (the second on a GPU warm and at its power cap), what the load leaves
# to a collective with --overlap-room 0 and 16, and the collective's time beside it against
# alone. NCCL on one rank: its all-reduce is then a local copy on the collectives' stream, so the
# time kept is what the load takes from NCCL's own work on the GPU, not from a transfer between
# GPUs (that needs two: scripts/training-bench.sh). Exits 1 when a launch failed or a figure is
# missing.
# Usage: scripts/overlap-figures.sh [OUT]    (OUT: a new folder [overlap-figures-<UTC time>])
# Environment: CCBENCH_BUILD_DIR (build).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
ccbench="${CCBENCH_BUILD_DIR:-build}/ccbench"
out="${1:-overlap-figures-$(date -u +%Y%m%d-%H%M%S)}"
[ -x "$ccbench" ] || { echo "overlap-figures: no $ccbench (build first)" >&2; exit 2; }
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then echo "overlap-figures: no GPU here (nvidia-smi lists none)" >&2; exit 3; fi
mkdir -p "$out" || exit 2
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CUDA_VISIBLE_DEVICES=0
status=0
# 256 MiB to 1 GiB, 1000 iterations, two NCCL settings: ~10 s of load a launch, so that the load
# alone after the rows meets a GPU as warm as the rows left it.
common=(--collective allreduce --impl nccl -d bfloat16 -b 256M -e 1G -f 2 -n 1000 -w 20 --in-place no --telemetry on)
run() {
  local name="$1"; shift
  echo "overlap-figures: $name: ccbench ${common[*]} $*"
  mpirun --allow-run-as-root -np 1 -x NCCL_NVLS_ENABLE -x CUDA_VISIBLE_DEVICES "$ccbench" --device gpu \
    --out "$out/$name" "${common[@]}" "$@" >"$out/$name.log" 2>&1 || { echo "overlap-figures: $name failed (see $out/$name.log)" >&2; status=1; }
}
run none
for load in gemm:8192 membw:1G; do
  for room in 0 16; do
    run "${load%%:*}-room$room" --overlap "$load" --overlap-room "$room" --nccl-config maxCTAs=default,16
  done
done
"$ccbench" --version >"$out/version.txt" 2>&1
nvidia-smi >"$out/nvidia-smi.txt" 2>&1
python3 - "$out" <<'EOF' | tee "$out/figures.md" || status=1
import json, os, statistics, sys

sys.path.insert(0, "scripts")
import results_csv  # noqa: E402 (the checked reader of report.py and plot.py)

out = sys.argv[1]

def rows(name):
    path = os.path.join(out, name, "results.csv")
    if not os.path.isfile(path):
        return []
    return [r for r in results_csv.read(path)[0] if r["status"] == "ok" and r["mode"] == "eager"]

alone = {(r["size[B]"], r["nccl_config"]): float(r["time_avg[us]"]) for r in rows("none")}
missing = [] if alone else ["none: no measured rows"]
print("| load | room | alone before (per GPU) | alone after | during (median of rows) | nccl_config | "
      "collective time kept (alone / beside, median of sizes) | throttle seen |")
print("|---|---|---|---|---|---|---|---|")
for load in ("gemm", "membw"):
    for room in (0, 16):
        name = f"{load}-room{room}"
        got = rows(name)
        ctx = json.load(open(os.path.join(out, name, "run.json"))).get("context", {}) if got else {}
        block = ctx.get("overlap", {})
        if not got or not block.get("alone") or not block.get("alone_end"):
            missing.append(f"{name}: rows {len(got)}, context.overlap {block}")
            continue
        unit = block["unit"]
        for config in sorted({r["nccl_config"] for r in got}):
            mine = [r for r in got if r["nccl_config"] == config]
            during = statistics.median(float(r["load_during"]) for r in mine)
            # the collective alone: the run without a load has NCCL's default settings only
            kept = [alone[(r["size[B]"], "")] / float(r["time_avg[us]"]) for r in mine if (r["size[B]"], "") in alone]
            if not kept:
                missing.append(f"{name} [{config}]: no size measured alone too")
                continue
            throttle = sorted({r.get("gpu_throttle", "") for r in mine} - {""})
            print(f"| {block['load']} | {room} of {block['sms']} SMs | {block['alone']:.1f} {unit} | "
                  f"{block['alone_end']:.1f} ({100 * (block['alone_end'] / block['alone'] - 1):+.1f} %) | "
                  f"{during:.1f} ({100 * (1 - during / block['alone_end']):.1f} % lost vs after) | {config} | "
                  f"{statistics.median(kept):.2f} | {', '.join(throttle) or '-'} |")
for m in missing:
    print(f"overlap-figures: missing: {m}", file=sys.stderr)
sys.exit(1 if missing else 0)
EOF
echo "overlap-figures: logs and results in $out/, table in $out/figures.md"
exit "$status"
