#!/usr/bin/env bash
# Installs ccbench into a temporary prefix (cmake --install) and runs what was installed, from a
# folder outside the source and build trees: ccbench --version, a 2-rank run whose results files
# are checked, and the installed Slurm script (outside Slurm: mpirun -np 2 on this machine).
# Then builds the Debian package (cpack -G DEB) and checks what it holds.
# Usage: install_test.sh BUILD_DIR MPIEXEC
set -euo pipefail
build="$(cd "$1" && pwd)"
mpiexec="$2"
work="$(mktemp -d "${TMPDIR:-/tmp}/ccbench-install-XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "install_test: FAIL: $*" >&2; exit 1; }

prefix="$work/prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }
for f in bin/ccbench share/ccbench/scripts/slurm.sbatch share/doc/ccbench/README.md; do
  [ -e "$prefix/$f" ] || fail "$f was not installed"
done
cd "$work"
"$prefix/bin/ccbench" --version | tee version.txt
grep -q "^ccbench [0-9]" version.txt || fail "the installed ccbench --version says no version"
# One binary for CPU-only and GPU nodes: no CUDA or NCCL library among its dynamic dependencies
# (the CUDA runtime is linked in, NCCL loaded at run time), and without NCCL it says why.
if ldd "$prefix/bin/ccbench" | grep -E "libcudart|libnccl|libcuda\.|libcublas"; then
  fail "the installed ccbench needs a CUDA or NCCL library to start (ldd above)"
fi
if grep -q "NCCL     built in" version.txt; then
  CCBENCH_NCCL_LIBRARY=/nonexistent/libnccl.so.2 "$prefix/bin/ccbench" --version >no-nccl.txt
  grep -q "nccl .*none (NCCL could not be loaded: /nonexistent/libnccl.so.2" no-nccl.txt ||
    { cat no-nccl.txt; fail "without its NCCL, ccbench --version does not say so"; }
fi

"$mpiexec" --oversubscribe --allow-run-as-root -np 2 "$prefix/bin/ccbench" --device cpu --collective allreduce \
  --impl mpi,ring -b 8 -e 4K -f 8 -n 3 -w 1 --out run --quiet >run.txt || { cat run.txt; fail "the 2-rank run"; }
grep -q "Result: OK" run.txt || { cat run.txt; fail "the 2-rank run printed no 'Result: OK'"; }
rows=$(grep -vc -e '^#' -e '^collective,' run/results.csv || true)
[ "$rows" = 16 ] || fail "run/results.csv has $rows rows, expected 16 (2 implementations x 4 sizes x 2 in-place)"
python3 -c 'import json,sys; r=json.load(open("run/run.json")); sys.exit(0 if r["verdict"]=="OK" and r["complete"] and len(r["rows"])==16 else 1)' ||
  fail "run/run.json does not say a complete OK run of 16 rows"
echo "install_test: installed ccbench ran on 2 ranks: 16 rows, OK"

# The installed plot.py finds its modules beside it: plots where the python3 on PATH (or the
# system's) has matplotlib, else exit 3 naming the interpreter; never an ImportError.
set +e
"$prefix/share/ccbench/scripts/plot.py" run/results.csv --out plots >plot.txt 2>&1
rc=$?
set -e
! grep -q Traceback plot.txt || { cat plot.txt; fail "the installed plot.py: a traceback"; }
case $rc in
  0) ls plots/*.png >/dev/null || fail "the installed plot.py wrote no PNG" ;;
  3) grep -q "cannot import matplotlib (scripts/requirements.txt)" plot.txt || { cat plot.txt; fail "plot.py exit 3"; } ;;
  *) cat plot.txt; fail "the installed plot.py: exit $rc" ;;
esac
echo "install_test: the installed plot.py: exit $rc"

# The installed Slurm script, called from another folder: it finds ../../../bin/ccbench itself.
mkdir elsewhere && cd elsewhere
PATH="$(dirname "$mpiexec"):/usr/bin:/bin" CCBENCH_NP=2 bash "$prefix/share/ccbench/scripts/slurm.sbatch" \
  --device cpu --collective allgather --impl ring -b 8 -e 64 -n 2 -w 0 --quiet >slurm.txt 2>&1 ||
  { cat slurm.txt; fail "slurm.sbatch outside Slurm"; }
grep -q "$prefix/bin/ccbench" slurm.txt || { cat slurm.txt; fail "slurm.sbatch did not run the installed ccbench"; }
ls ccbench-results/slurm-local-*/results.csv >/dev/null || fail "slurm.sbatch wrote no results under the calling folder"
echo "install_test: slurm.sbatch ran the installed ccbench from $(pwd)"

# The Debian package.
(cd "$build" && cpack -G DEB -B "$work/deb" >"$work/cpack.log" 2>&1) || { cat "$work/cpack.log"; fail "cpack -G DEB"; }
deb=$(ls "$work"/deb/ccbench_*.deb)
contents=$(dpkg-deb -c "$deb")
grep -q '\./usr/bin/ccbench$' <<<"$contents" || fail "$deb holds no /usr/bin/ccbench"
grep -q '\./usr/share/ccbench/scripts/slurm.sbatch$' <<<"$contents" || fail "$deb holds no slurm.sbatch"
depends=$(dpkg-deb -f "$deb" Depends)
grep -q "libopenmpi" <<<"$depends" || fail "$deb does not depend on Open MPI's library: '$depends'"
echo "install_test: $(basename "$deb"): Depends: $depends"
