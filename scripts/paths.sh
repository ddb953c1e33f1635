#!/usr/bin/env bash
# Measures the same ccbench run over several transports side by side: one mpirun per transport
# (NCCL caches its path settings — NCCL_P2P_DISABLE, NCCL_SHM_DISABLE, NCCL_NET, NCCL_HOSTID —
# once per process, so each path needs fresh processes), each into OUT/<transport>/, then the
# rows of all of them merged into OUT/results.csv with a `path` column (as scripts/sweep.py merges
# settings) and printed as one table.
#
# Usage: scripts/paths.sh --transport p2p,host,tcp [--np N] [--ccbench PATH] [--out DIR] -- OPTIONS
#   OPTIONS are passed to every ccbench launch (not --transport or --out).
#   MPIRUN (environment) is the launcher, split into words [mpirun].
# Exit: 2 on bad usage; otherwise the worst exit code of the launches (their rows are kept).
set -uo pipefail
transports="" np=2 ccbench="" out=""
usage() { echo "usage: scripts/paths.sh --transport T1,T2,... [--np N] [--ccbench PATH] [--out DIR] -- ccbench options" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case "$1" in
    --transport) transports="${2:-}"; shift 2 || usage ;;
    --np) np="${2:-}"; shift 2 || usage ;;
    --ccbench) ccbench="${2:-}"; shift 2 || usage ;;
    --out) out="${2:-}"; shift 2 || usage ;;
    --) shift; break ;;
    *) echo "paths.sh: unknown option '$1'" >&2; usage ;;
  esac
done
[ -n "$transports" ] || { echo "paths.sh: --transport is required (e.g. p2p,host,tcp)" >&2; usage; }
[[ "$np" =~ ^[1-9][0-9]*$ ]] || { echo "paths.sh: --np '$np' is not a positive whole number" >&2; exit 2; }
for a in "$@"; do
  case "$a" in --transport|--transport=*|--out|--out=*) echo "paths.sh: give $a to paths.sh, not after --" >&2; exit 2 ;; esac
done
here="$(cd "$(dirname "$0")" && pwd)"
# On PATH; else installed (share/ccbench/scripts -> bin) or the build tree beside the scripts.
[ -n "$ccbench" ] || ccbench="$(command -v ccbench || true)"
for c in "$here/../../../bin/ccbench" "$here/../build/ccbench"; do
  [ -n "$ccbench" ] || { [ -x "$c" ] && ccbench="$c"; } || true
done
[ -x "$ccbench" ] || { echo "paths.sh: no ccbench at '$ccbench' (give --ccbench PATH)" >&2; exit 2; }
[ -n "$out" ] || out="ccbench-results/paths-$(date -u +%Y%m%d-%H%M%S)"
mkdir -p "$out" || exit 2

worst=0
IFS=',' read -r -a list <<< "$transports"
for t in "${list[@]}"; do
  echo "== --transport $t" >&2
  # shellcheck disable=SC2086  # MPIRUN is a command with options
  ${MPIRUN:-mpirun} --oversubscribe --bind-to none -np "$np" -x NCCL_NVLS_ENABLE=0 \
    "$ccbench" --transport "$t" --out "$out/$t" --format csv,json "$@"
  rc=$?
  echo "== --transport $t: exit $rc" >&2
  [ "$rc" -gt "$worst" ] && worst=$rc
done

python3 - "$here" "$out" "${list[@]}" <<'PY'
import os, sys
here, out, transports = sys.argv[1], sys.argv[2], sys.argv[3:]
sys.path.insert(0, here)
import sweep  # the merge of several launches' results.csv, shared with scripts/sweep.py
parts = []
for t in transports:
    path = os.path.join(out, t, "results.csv")
    if not os.path.exists(path):
        print(f"paths.sh: no results for --transport {t} ({path})", file=sys.stderr)
        continue
    comments, fields, rows = sweep.read_rows(path)
    for r in rows:
        r["path"] = t
    parts.append((comments, fields, rows))
if not parts:
    sys.exit(0)
merged, rows = sweep.write_merged(out, ["path"], parts)
print(f"{'path':>6} {'collective':>13} {'impl':>10} {'transport':>18} {'size[B]':>12} {'in_place':>8} "
      f"{'time[us]':>10} {'busbw':>8}  status")
for r in rows:
    if r["mode"] != "eager":
        continue
    print(f"{r['path']:>6} {r['collective']:>13} {r['impl']:>10} {r['transport']:>18} {r['size[B]']:>12} "
          f"{r['in_place']:>8} {r['time_avg[us]']:>10} {r['busbw[GB/s]']:>8}  {r['status']}")
print(f"merged: {merged} ({len(rows)} rows)")
PY
exit "$worst"
