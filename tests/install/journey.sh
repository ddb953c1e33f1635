#!/usr/bin/env bash
# The journey of a user of an installed ccbench, with the source and build trees out of reach
# (hidden behind empty folders in a private mount namespace where that is allowed): a CPU
# benchmark twice, `links`, a `--groups pairs` run, `accept` with a shipped rule file (per-node
# and per-link verdicts present), `compare` of the two runs, `history`, `model` from a shipped
# preset, and the report through the installed tools, as README and docs/guides/ say them.
# Usage: journey.sh BUILD_DIR MPIEXEC SOURCE_DIR
set -euo pipefail
build="$(cd "$1" && pwd)"
mpiexec="$2"
source_dir="$(cd "$3" && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/ccbench-journey-XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "journey: FAIL: $*" >&2; exit 1; }

prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }
for f in share/ccbench/rules/cpu-node.yaml share/ccbench/presets share/ccbench/scripts/report.py \
         share/ccbench/scripts/tune.py share/ccbench/scripts/sizes.py share/ccbench/scripts/requirements.txt \
         share/ccbench/scripts/toolenv.py \
         share/doc/ccbench/docs/reference.md; do
  [ -e "$prefix/$f" ] || fail "$f was not installed"
done

# The rest runs where the trees cannot be read: `unshare` mounts an empty folder over each.
cat >"$work/steps.sh" <<'STEPS'
set -euo pipefail
fail() { echo "journey: FAIL: $*" >&2; exit 1; }
cd "$WORK"
if [ "$HIDDEN" = 1 ]; then
  [ ! -e "$SOURCE_DIR/CMakeLists.txt" ] && [ ! -e "$BUILD_DIR/CMakeCache.txt" ] || fail "the trees are still readable"
fi
P="$PREFIX/bin/ccbench"
S="$PREFIX/share/ccbench"
launch() { "$MPIEXEC" --oversubscribe --allow-run-as-root -np 3 "$@"; }
bench=(--device cpu --collective allreduce,allgather --impl ring,mpi -b 1K -e 256K -f 4 -n 5 -w 2 --quiet)

"$P" model --topology cpu-node --collective allreduce -b 1M -e 1M >model.txt ||
  { cat model.txt; fail "model from a shipped preset"; }
grep -q "allreduce" model.txt || fail "model printed no allreduce prediction"

for r in run1 run2; do
  launch "$P" "${bench[@]}" --out "$r" >"$r.txt" || { cat "$r.txt"; fail "the CPU benchmark ($r)"; }
  grep -q "Result: OK" "$r.txt" || fail "$r: no 'Result: OK'"
done
launch "$P" links -b 4K -e 256K -n 5 -w 1 --out links >links.txt || { cat links.txt; fail "ccbench links"; }
launch "$P" --device cpu --collective allreduce --impl ring -b 64K -e 256K -f 4 -n 5 -w 1 --groups pairs \
  --out pairs --quiet >pairs.txt || { cat pairs.txt; fail "--groups pairs"; }

set +e
"$P" accept --rules "$S/rules/cpu-node.yaml" run1 links pairs --junit accept.xml >accept.txt
rc=$?
set -e
[ $rc = 0 ] || { cat accept.txt; fail "accept with the shipped cpu-node rules: exit $rc"; }
host=$(hostname)
for place in "per node:" "PASS $host: " "per link:" "PASS $host:0-$host:1:" "PASS $host:1-$host:2:"; do
  grep -qF "$place" accept.txt || { cat accept.txt; fail "accept: '$place' missing"; }
done
! grep -q "N/A  (all)" accept.txt || { cat accept.txt; fail "accept: a place without a verdict"; }

set +e
"$P" compare run1 run2 >compare.txt
rc=$?
set -e
# The verdict line agrees with the exit code: OK and 0, or FAILED and 4 (a busy machine may slow one run).
{ [ $rc = 0 ] && grep -q "^# OK: 0 failures in [1-9][0-9]* matched rows" compare.txt; } ||
  { [ $rc = 4 ] && grep -q "^# FAILED" compare.txt; } || { cat compare.txt; fail "compare: exit $rc and its verdict"; }

"$P" history --db hist.db --add run1 run2 >hist-add.txt || { cat hist-add.txt; fail "history --add"; }
"$P" history --db hist.db >hist.txt || { cat hist.txt; fail "history"; }
[ "$(grep -c "$host" hist.txt)" -ge 2 ] || { cat hist.txt; fail "history lists fewer than the 2 runs added"; }

# The report under the first python3 on PATH, which lacks the tools' packages: the tool finds
# the environment the installed set-up made ($CCBENCH_VENV).
python3 -c 'import matplotlib' 2>/dev/null && fail "the python3 on PATH was meant to lack matplotlib"
python3 "$S/scripts/report.py" run1 run2 --links links/links.json --out report >report.txt 2>&1 ||
  { cat report.txt; fail "report.py"; }
for f in report/report.md report/report.html; do [ -s "$f" ] || fail "$f missing"; done
grep -q "link bandwidth" report/report.md || fail "report.md has no link matrix"
grep -q "Acceptance verdicts" report/report.md || fail "report.md has no verdict section"
echo "journey: installed ccbench: model, 2 runs, links, pairs, accept (per node and link), compare, history, report"
STEPS

# A python3 that lacks the tools' packages, first on PATH; the installed tools' set-up.
python_sys=$(command -v /usr/bin/python3 || command -v python3)
"$python_sys" -m venv --without-pip "$work/bare-python" || fail "$python_sys -m venv"
CCBENCH_VENV="$work/tools-venv" "$python_sys" "$prefix/share/ccbench/scripts/toolenv.py" --setup >"$work/setup.txt" 2>&1 ||
  { cat "$work/setup.txt"; fail "the installed tools' set-up (toolenv.py --setup)"; }

env_vars=(WORK="$work" PREFIX="$prefix" MPIEXEC="$mpiexec" SOURCE_DIR="$source_dir" BUILD_DIR="$build"
          CCBENCH_VENV="$work/tools-venv" PATH="$work/bare-python/bin:$(dirname "$mpiexec"):/usr/bin:/bin"
          OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
hide="mount -t tmpfs none '$build' && mount -t tmpfs none '$source_dir'"
mkdir -p "$work/probe"
if unshare -m sh -c "mount -t tmpfs none '$work/probe'" 2>/dev/null && [[ "$work" != "$source_dir"* && "$work" != "$build"* ]]; then
  unshare -m bash -c "$hide && env ${env_vars[*]@Q} HIDDEN=1 bash '$work/steps.sh'"
else
  echo "journey: note: no private mount namespace with tmpfs here (unshare -m or mount refused): the trees stay readable"
  env "${env_vars[@]}" HIDDEN=0 bash "$work/steps.sh"
fi
