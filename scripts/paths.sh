#!/usr/bin/env bash
# Measures the same ccbench run over several transports side by side: one mpirun per transport
# (NCCL caches its path settings — NCCL_P2P_DISABLE, NCCL_SHM_DISABLE, NCCL_NET, NCCL_HOSTID —
# once per process, so each path needs fresh processes), each into OUT/<transport>/, then the
# rows of all of them merged into OUT/results.csv and printed as one table.
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
[ -n "$ccbench" ] || ccbench="$(command -v ccbench || echo "$here/../build/ccbench")"
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

python3 - "$out" "${list[@]}" <<'PY'
import csv, os, sys
out, transports = sys.argv[1], sys.argv[2:]
header, rows = None, []
for t in transports:
    path = os.path.join(out, t, "results.csv")
    if not os.path.exists(path):
        print(f"paths.sh: no results for --transport {t} ({path})", file=sys.stderr)
        continue
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.DictReader(l for l in f if not l.startswith("#"))
        header = header or reader.fieldnames
        for r in reader:
            r["path"] = t
            rows.append(r)
if header is None:
    sys.exit(0)
fields = ["path"] + list(header)
with open(os.path.join(out, "results.csv"), "w", newline="", encoding="utf-8") as f:
    f.write("# ccbench results of several paths (scripts/paths.sh): " + ",".join(transports) + "\n")
    w = csv.DictWriter(f, fieldnames=fields)
    w.writeheader()
    w.writerows(rows)
print(f"{'path':>6} {'collective':>13} {'impl':>10} {'transport':>18} {'size[B]':>12} {'in_place':>8} "
      f"{'time[us]':>10} {'busbw':>8}  status")
for r in rows:
    if r["mode"] != "eager":
        continue
    print(f"{r['path']:>6} {r['collective']:>13} {r['impl']:>10} {r['transport']:>18} {r['size[B]']:>12} "
          f"{r['in_place']:>8} {r['time_avg[us]']:>10} {r['busbw[GB/s]']:>8}  {r['status']}")
print(f"merged: {os.path.join(out, 'results.csv')} ({len(rows)} rows)")
PY
exit "$worst"
