#!/usr/bin/env bash
# Installs the Debian/Ubuntu packages ccbench needs (only those missing; quiet when all are
# there), makes the Python tools' virtual environment (.venv), then configures and builds
# ccbench into build/ (Release, ninja when present).
# Usage: scripts/setup.sh [extra cmake arguments]
# Environment: CCBENCH_BUILD_DIR (default build), CCBENCH_VENV (default .venv), CCBENCH_NO_INSTALL=1 to skip apt,
# CCBENCH_NO_BROWSER=1 to leave Chromium out (the HTML report's browser test is then skipped).
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  cmake ninja-build g++ pkg-config
  libopenmpi-dev openmpi-bin
  libfmt-dev nlohmann-json3-dev libcli11-dev libyaml-cpp-dev libcsv-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libhwloc-dev libibverbs-dev librdmacm-dev ibverbs-providers
  libfabric-dev libfabric-bin    # the ofi transport (libfabric; fi_info, fi_pingpong)
  python3 python3-matplotlib
  python3-venv                   # the Python tools' virtual environment (.venv, scripts/requirements.txt)
  python3-yaml                   # scripts/tune.py reads its settings space (YAML)
  libsqlite3-dev                 # results history (--db FILE)
  libpq-dev                      # results history on a PostgreSQL server (--db postgresql://...)
  postgresql                     # tests: a PostgreSQL server each postgres test starts (initdb, postgres)
  prometheus                     # tests: promtool checks the metrics files (--metrics, ccbench export)
  prometheus-node-exporter       # tests: node_exporter's textfile collector serves them
  libxml2-utils                  # tests: xmllint validates the JUnit XML of `ccbench accept`
  dpkg-dev                       # cpack: dpkg-shlibdeps names the .deb's dependencies
  clang libclang-rt-dev  # scripts/test.sh: libFuzzer targets (tests/fuzz); the cluster tier's BPF loss filter
  clang-format                   # lint.format: the layout of .clang-format (14 on Debian 12 and Ubuntu 22.04)
  iproute2 procps util-linux     # the cluster tier (tests/cluster): ip, tc, nstat, pgrep, unshare, nsenter
  slurmctld slurmd slurm-client munge libpmix-dev  # its real Slurm; srun --mpi=pmix loads libpmix.so (10 s to install)
)

# scripts/report.py's test opens report.html in headless Chromium (tests/reports/report_browser.sh).
# Installing it took 77 s (122 MB) on the 2-core CI machine; CCBENCH_NO_BROWSER=1 leaves it out
# and the test is then skipped with that reason.
[ "${CCBENCH_NO_BROWSER:-0}" = 1 ] || packages+=(chromium)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ] && [ "${CCBENCH_NO_INSTALL:-0}" != 1 ]; then
  echo "ccbench setup: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { echo "ccbench setup: need root or sudo to install: ${missing[*]}" >&2; exit 3; }
    sudo="sudo"
  fi
  export DEBIAN_FRONTEND=noninteractive
  if ! $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >/tmp/ccbench-apt.log 2>&1; then
    $sudo apt-get update -q >>/tmp/ccbench-apt.log 2>&1 || true
    if ! $sudo apt-get install -y -q --no-install-recommends "${missing[@]}" >>/tmp/ccbench-apt.log 2>&1; then
      echo "ccbench setup: apt-get could not install ${missing[*]}; see /tmp/ccbench-apt.log" >&2
      tail -5 /tmp/ccbench-apt.log >&2
      exit 3
    fi
  fi
elif [ ${#missing[@]} -gt 0 ]; then
  echo "ccbench setup: CCBENCH_NO_INSTALL=1 and these packages are missing: ${missing[*]} (configuring anyway)"
fi

# The Python tools' packages (scripts/requirements.txt), for whichever python3 runs the tools: a
# virtual environment over the system's python3 (the one apt installs python3-matplotlib and
# python3-yaml for), reusing its packages; a tool started by a python3 that lacks a package
# re-runs itself there (scripts/toolenv.py). pip fills in what the system lacks, where it can
# reach an index. CCBENCH_VENV names another place for it.
system_python=$(command -v /usr/bin/python3 || command -v python3)
if ! "$system_python" scripts/toolenv.py --setup; then
  # Without apt the build still goes on: the tools say what they lack when they start.
  [ "${CCBENCH_NO_INSTALL:-0}" = 1 ] || exit 3
fi

build="${CCBENCH_BUILD_DIR:-build}"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@" >/tmp/ccbench-cmake.log 2>&1 ||
    { cat /tmp/ccbench-cmake.log >&2; exit 3; }
  grep -E "^-- ccbench" /tmp/ccbench-cmake.log || true
elif [ $# -gt 0 ]; then
  cmake "$build" "$@" >/dev/null
fi
cmake --build "$build" -j "$(nproc)"
