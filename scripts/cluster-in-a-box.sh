#!/usr/bin/env bash
# cluster-in-a-box: N hosts on one Linux machine, for rehearsing multi-node runs, acceptance rules
# and CI pipelines before there is a cluster (docs/guides/cluster-in-a-box.md).
#
# Each host is a network + UTS + mount namespace: its own host name (h1 .. hN), address
# 198.18.0.N/24 (RFC 2544's benchmarking range, nothing outside the box's namespaces), a veth
# (eth0) into a bridge in a "switch" namespace, its own /etc/hosts (DIR/etc/hosts.hN, naming every
# host), private /tmp and /dev/shm.
# Links can be slowed (tc tbf), made lossy (a tc BPF filter) and cut (ip link); Open MPI starts
# its daemons through an rsh agent that enters a host's namespaces; `up --slurm` adds a real Slurm
# (slurmctld on h1, one slurmd per host, a fresh munge key). Needs root.
#
# Usage: cluster-in-a-box.sh [--name NAME] [--dir DIR] VERB ...
#   check [--slurm]             can this machine host a box? exit 0, or 3 with the reason
#   up N [--slurm] [--share DIR]...
#                               start N hosts (2..250); idempotent (a box already up with N hosts stays);
#                               a DIR under /tmp or /dev/shm stays visible in every host (a build there)
#   status                      hosts, addresses, links, shaping, daemons
#   shape HOST RATE [LOSS]      RATE as tc writes it (1gbit, 500mbit) or none; LOSS percent per
#                               direction (0.1, 0.1%) or 0; both directions of HOST's link
#   cut HOST | heal HOST        take HOST's link down (its switch port) / bring it back
#   exec HOST CMD...            run CMD in HOST (in the current folder)
#   run [MPIRUN-ARGS] PROG ...  mpirun from h1 across every host (one rank per host unless -np)
#   mpirun-args                 print the mpirun options `run` adds, one per line
#   down                        end every process of the box, remove its namespaces and folder
# NAME: the box's name ([a-z0-9]{1,12}; $CCBENCH_BOX or "box"): namespaces are cbx-NAME-h1 ..,
# cbx-NAME-sw, so boxes of different names coexist. DIR: its folder ($CCBENCH_BOX_DIR or
# /run/ccbench-box/NAME; not under /tmp or /dev/shm, which every host replaces with its own).
# Exit codes: 0 ok, 2 usage, 3 this machine cannot host it (the reason says what is missing),
# 6 a step failed.
set -euo pipefail

readonly subnet_prefix=198.18.0      # hosts are .1 .. .N of 198.18.0.0/24
readonly subnet=198.18.0.0/24
# Open MPI's out-of-band channel (mpirun to its daemons) notices a dead peer only through TCP
# keepalive: by default after 300 + 9 x 20 s. A cut link then left mpirun waiting for ever for the
# daemon behind it; 5 s idle, 2 s between probes, 3 probes: mpirun ends 11 s after the link went
# quiet (docs/guides/cluster-in-a-box.md measures it).
readonly oob_keepalive=(--mca oob_tcp_keepalive_time 5 --mca oob_tcp_keepalive_intvl 2 --mca oob_tcp_keepalive_probes 3)

die() { local code=$1; shift; echo "cluster-in-a-box: $*" >&2; exit "$code"; }
note() { echo "cluster-in-a-box: $*" >&2; }

name="${CCBENCH_BOX:-box}"
dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --name) [ $# -ge 2 ] || die 2 "--name needs a value"; name=$2; shift 2 ;;
    --name=*) name=${1#--name=}; shift ;;
    --dir) [ $# -ge 2 ] || die 2 "--dir needs a value"; dir=$2; shift 2 ;;
    --dir=*) dir=${1#--dir=}; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) break ;;
  esac
done
[[ "$name" =~ ^[a-z0-9]{1,12}$ ]] || die 2 "--name '$name' is not valid: 1 to 12 of a-z and 0-9"
dir="${dir:-${CCBENCH_BOX_DIR:-/run/ccbench-box/$name}}"
case "$dir" in /*) ;; *) dir="$PWD/$dir" ;; esac
case "$dir/" in
  /tmp/*|/dev/shm/*) die 2 "--dir '$dir' is under /tmp or /dev/shm, which every host of the box replaces with its own; give a folder elsewhere" ;;
esac
readonly ns_prefix="cbx-$name"
readonly switch_ns="$ns_prefix-sw"

host_ns() { echo "$ns_prefix-$1"; }
host_count() { [ -f "$dir/hosts.count" ] && cat "$dir/hosts.count" || echo 0; }
holder_pid() { cat "$dir/run/$1.pid" 2>/dev/null || true; }
is_up() { ip netns list 2>/dev/null | grep -q "^$switch_ns\\b"; }

# HOST valid for this box (h1 .. hN), else exit 2 naming the valid ones.
check_host() {
  local n; n=$(host_count)
  [ "$n" -gt 0 ] || die 2 "box '$name' is not up (cluster-in-a-box.sh --name $name up N)"
  [[ "$1" =~ ^h([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -ge 1 ] && [ "${BASH_REMATCH[1]}" -le "$n" ] ||
    die 2 "host '$1' is not in box '$name' (valid: h1 to h$n)"
}

# ---- check: what this machine must offer ----

missing_commands() {
  local c out=()
  for c in "$@"; do command -v "$c" >/dev/null || out+=("$c"); done
  echo "${out[*]}"
}

# Exit 3 with the reason where a box cannot be made here; a probe namespace proves the kernel
# lets us make namespaces, bridges and veths.
check_machine() {
  local slurm=$1 m probe="$ns_prefix-probe"
  [ "$(id -u)" = 0 ] || die 3 "needs root (network, UTS and mount namespaces); run it as root or with sudo"
  m=$(missing_commands ip tc unshare nsenter setsid mpirun)
  [ -z "$m" ] || die 3 "missing commands: $m (packages iproute2, util-linux, openmpi-bin)"
  if [ "$slurm" = 1 ]; then
    m=$(missing_commands slurmctld slurmd sbatch srun scontrol sinfo munged mungekey)
    [ -z "$m" ] || die 3 "--slurm: missing commands: $m (packages slurmctld slurmd slurm-client munge)"
  fi
  ip netns del "$probe" 2>/dev/null || true
  local err
  if ! err=$(ip netns add "$probe" 2>&1); then die 3 "cannot make a network namespace: $err"; fi
  if ! err=$( { ip -n "$probe" link add cbxbr type bridge && ip -n "$probe" link add cbxa type veth peer name cbxb &&
                unshare --uts --mount --propagation private true; } 2>&1); then
    ip netns del "$probe"; die 3 "cannot make a bridge, a veth pair or UTS/mount namespaces: $err"
  fi
  if ! err=$(tc -n "$probe" qdisc add dev cbxa root tbf rate 1gbit burst 128kb latency 50ms 2>&1); then
    ip netns del "$probe"; die 3 "tc cannot shape a link (tbf): $err"
  fi
  ip netns del "$probe"
}

# ---- up ----

write_host_files() {
  local n=$1 i
  mkdir -p "$dir/etc" "$dir/run" "$dir/log" "$dir/bin"
  # One /etc/hosts per host (etc/hosts.hN), alike unless a test makes one differ.
  for i in $(seq 1 "$n"); do
    { echo "127.0.0.1 localhost"; for j in $(seq 1 "$n"); do echo "$subnet_prefix.$j h$j"; done; } >"$dir/etc/hosts.h$i"
  done
  for i in $(seq 1 "$n"); do echo "h$i slots=1"; done >"$dir/etc/hostfile"
  # The host's first process: names the host, gives it its own /etc/hosts, /tmp and /dev/shm and a
  # sysfs of its network namespace (/sys/class/net lists its own interfaces) with the machine's
  # cgroup mounts under it (slurmd needs them), then holds the namespaces (nsenter -t PID).
  cat >"$dir/bin/host-init" <<EOF
#!/bin/sh
h=\$1 cg="$dir/run/cgroup-\$1"
echo \$\$ >"$dir/run/\$h.pid.new" && mv "$dir/run/\$h.pid.new" "$dir/run/\$h.pid"
mkdir -p "\$cg" && mount --rbind /sys/fs/cgroup "\$cg" && umount -l /sys && mount -t sysfs "sys-\$h" /sys &&
  mount --rbind "\$cg" /sys/fs/cgroup && umount -l "\$cg" &&
  hostname "\$h" && mount --bind "$dir/etc/hosts.\$h" /etc/hosts || exit 1
# Folders given with up --share stay where they are under the private /tmp and /dev/shm: held
# aside before those are replaced, then bound back at their own paths.
k=0; while IFS= read -r p; do k=\$((k+1)); mkdir -p "$dir/run/share-\$h-\$k" && mount --bind "\$p" "$dir/run/share-\$h-\$k" || exit 1; done <"$dir/etc/shared"
mount -t tmpfs -o mode=1777 "tmp-\$h" /tmp && mount -t tmpfs -o mode=1777 "shm-\$h" /dev/shm || exit 1
k=0; while IFS= read -r p; do k=\$((k+1)); mkdir -p "\$p" && mount --bind "$dir/run/share-\$h-\$k" "\$p" && umount -l "$dir/run/share-\$h-\$k" || exit 1; done <"$dir/etc/shared"
exec sleep infinity
EOF
  # Open MPI's plm_rsh_agent: HOST COMMAND... runs COMMAND in HOST, as ssh would.
  cat >"$dir/bin/rsh" <<EOF
#!/bin/sh
host=\$1; shift
pid=\$(cat "$dir/run/\$host.pid" 2>/dev/null) || { echo "rsh: no host \$host in box $name" >&2; exit 255; }
exec nsenter -t "\$pid" -n -u -m --wd=/ -- /bin/sh -c "\$*"
EOF
  chmod 755 "$dir/bin/host-init" "$dir/bin/rsh"
}

make_host() {
  local i=$1 h="h$1" ns; ns=$(host_ns "h$1")
  ip netns add "$ns"
  ip -n "$switch_ns" link add "$h" type veth peer name eth0 netns "$ns"
  ip -n "$switch_ns" link set "$h" master br0 up
  ip -n "$ns" addr add "$subnet_prefix.$i/24" dev eth0
  ip -n "$ns" link set lo up
  ip -n "$ns" link set eth0 up
  rm -f "$dir/run/$h.pid"
  setsid nsenter --net="/run/netns/$ns" unshare --uts --mount --propagation private --fork "$dir/bin/host-init" "$h" \
    </dev/null >"$dir/log/$h.log" 2>&1 &
}

wait_for_hosts() {
  local n=$1 i
  for _ in $(seq 1 100); do
    for i in $(seq 1 "$n"); do [ -s "$dir/run/h$i.pid" ] || continue 2; done
    # The pid file is written first; the host is ready when it answers to its name.
    for i in $(seq 1 "$n"); do [ "$(enter "h$i" hostname 2>/dev/null)" = "h$i" ] || continue 2; done
    return 0
  done
  die 6 "hosts did not start within 10 s: $(cat "$dir"/log/h*.log 2>/dev/null | head -5)"
}

up() {
  local n="" slurm=0 shared=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --slurm) slurm=1 ;;
      --share)
        [ $# -gt 1 ] && [[ "$2" == /* ]] && [ -d "$2" ] || die 2 "up: --share takes a folder's absolute path (got '${2:-nothing}')"
        shared+=("$(realpath "$2")"); shift ;;
      *) [ -z "$n" ] || die 2 "up: one host count, got '$n' and '$1'"; n=$1 ;;
    esac
    shift
  done
  [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge 2 ] && [ "$n" -le 250 ] || die 2 "up: give the number of hosts, 2 to 250 (got '${n:-nothing}')"
  local start; start=$(date +%s.%N)
  if is_up && [ "$(host_count)" = "$n" ] && hosts_alive "$n"; then
    note "box '$name' is already up with $n hosts"
  else
    if is_up || [ -d "$dir" ]; then
      [ "$(host_count)" = 0 ] || [ "$(host_count)" = "$n" ] || ! hosts_alive "$(host_count)" ||
        die 2 "box '$name' is up with $(host_count) hosts, not $n: take it down first (cluster-in-a-box.sh --name $name down)"
      teardown quiet
    fi
    check_machine "$slurm"
    mkdir -p "$dir"
    echo "$n" >"$dir/hosts.count"
    write_host_files "$n"
    printf '%s\n' "${shared[@]}" | grep -E '^/(tmp|dev/shm)/' >"$dir/etc/shared" || true
    ip netns add "$switch_ns"
    ip -n "$switch_ns" link add br0 type bridge
    ip -n "$switch_ns" link set br0 up
    local i
    for i in $(seq 1 "$n"); do make_host "$i"; done
    wait_for_hosts "$n"
    note "box '$name' up: $n hosts h1..h$n ($subnet_prefix.1-$n) in $(elapsed "$start") s; folder $dir"
  fi
  if [ "$slurm" = 1 ]; then
    check_machine 1
    start=$(date +%s.%N)
    slurm_up "$n"
    note "slurm up: slurmctld on h1, slurmd on h1..h$n, all idle in $(elapsed "$start") s"
  fi
}

hosts_alive() {
  local i pid
  for i in $(seq 1 "$1"); do
    pid=$(holder_pid "h$i"); [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 1
  done
}

elapsed() { echo "$(date +%s.%N) $1" | awk '{printf "%.2f", $1 - $2}'; }

# ---- entering a host ----

# enter HOST CMD...: CMD in HOST's namespaces, in the current folder where the host sees it.
enter() {
  local h=$1 pid wd=/; shift
  pid=$(holder_pid "$h")
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || die 6 "host $h of box '$name' is not running (cluster-in-a-box.sh --name $name up N)"
  # The current folder where the host sees it: not under /tmp or /dev/shm, unless shared (up --share).
  case "$PWD/" in
    /tmp/*|/dev/shm/*)
      local p; while IFS= read -r p; do case "$PWD/" in "$p"/*) wd=$PWD ;; esac; done <"$dir/etc/shared" ;;
    *) wd=$PWD ;;
  esac
  SLURM_CONF="$dir/slurm/slurm.conf" nsenter -t "$pid" -n -u -m --wd="$wd" -- "$@"
}

# The hosts share this machine's cores, so a rank waiting inside MPI yields its core
# (mpi_yield_when_idle; Open MPI does so by itself only where it sees a host oversubscribed, and
# each host here has cores of its own to it): 4 hosts on 2 cores, a culprit search's healthy half
# measured 0.06 GB/s with spinning waiters beside it, 0.36 with yielding ones.
mpirun_args() {
  local a=(--hostfile "$dir/etc/hostfile" --mca plm_rsh_agent "$dir/bin/rsh" --mca plm_rsh_no_tree_spawn 1
           --mca oob_tcp_if_include "$subnet" --mca btl_tcp_if_include "$subnet" "${oob_keepalive[@]}"
           --mca mpi_yield_when_idle 1 --bind-to none --oversubscribe)
  [ "$(id -u)" = 0 ] && a+=(--allow-run-as-root)
  printf '%s\n' "${a[@]}"
}

run() {
  [ $# -gt 0 ] || die 2 "run: give the program (and mpirun options before it)"
  [ "$(host_count)" -gt 0 ] || die 2 "box '$name' is not up (cluster-in-a-box.sh --name $name up N)"
  local args; mapfile -t args < <(mpirun_args)
  enter h1 mpirun "${args[@]}" "$@"
}

# ---- links ----

# tbf needs a bucket of at least one packet and of what the rate sends in a timer tick; 4 ms of
# the rate (min 64 KiB, one GSO segment of the veth) let a 1gbit tbf pass 0.95 Gbit/s of TCP.
tbf_burst() {
  local bits; bits=$(rate_bits "$1")
  awk -v b="$bits" 'BEGIN { x = b / 8 * 0.004; if (x < 65536) x = 65536; printf "%d", x }'
}

rate_bits() {
  [[ "$1" =~ ^([0-9]+(\.[0-9]+)?)(bit|kbit|mbit|gbit|tbit)$ ]] ||
    die 2 "shape: rate '$1' is not valid: a number with bit, kbit, mbit, gbit or tbit (1gbit, 500mbit), or none"
  local m; case "${BASH_REMATCH[3]}" in bit) m=1 ;; kbit) m=1e3 ;; mbit) m=1e6 ;; gbit) m=1e9 ;; tbit) m=1e12 ;; esac
  awk -v v="${BASH_REMATCH[1]}" -v m="$m" 'BEGIN { printf "%.0f", v * m }'
}

# The loss filter: drops a packet when a random 32-bit number falls below THRESHOLD
# (loss percent x 2^32 / 100). This kernel has no netem and no gact action, so the filter runs
# in direct-action mode under clsact (TC_ACT_SHOT = 2 drops, TC_ACT_OK = 0 passes).
loss_object() {
  local threshold=$1 obj="$dir/run/loss-$1.o"
  [ -f "$obj" ] && { echo "$obj"; return; }
  command -v clang >/dev/null || die 3 "shape: a loss needs clang with the BPF target (package clang) to build its tc filter"
  cat >"$dir/run/loss.c" <<'EOF'
#define SEC(n) __attribute__((section(n), used))
static unsigned int (*bpf_get_prandom_u32)(void) = (void *)7;  /* BPF_FUNC_get_prandom_u32 */
SEC("classifier") int drop_some(void *skb) { return bpf_get_prandom_u32() < THRESHOLD ? 2 : 0; }
char _license[] SEC("license") = "GPL";
EOF
  local err
  err=$(clang -O2 -target bpf -DTHRESHOLD="${threshold}u" -c "$dir/run/loss.c" -o "$obj" 2>&1) ||
    die 3 "shape: clang cannot build the BPF loss filter: $err"
  echo "$obj"
}

shape() {
  [ $# -ge 2 ] && [ $# -le 3 ] || die 2 "shape: give HOST RATE [LOSS] (shape h2 1gbit, shape h2 none 0.1)"
  local h=$1 rate=$2 loss=${3:-0} ns
  check_host "$h"; ns=$(host_ns "$h")
  loss=${loss%\%}
  [[ "$loss" =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v l="$loss" 'BEGIN { exit !(l >= 0 && l <= 100) }' ||
    die 2 "shape: loss '$3' is not valid: a percentage from 0 to 100 (0.1 or 0.1%)"
  [ "$rate" = none ] || rate_bits "$rate" >/dev/null
  # Both directions: the switch port's egress carries traffic to the host, eth0's traffic from it.
  tc -n "$switch_ns" qdisc del dev "$h" root 2>/dev/null || true
  tc -n "$ns" qdisc del dev eth0 root 2>/dev/null || true
  tc -n "$switch_ns" qdisc del dev "$h" clsact 2>/dev/null || true
  if [ "$rate" != none ]; then
    local burst; burst=$(tbf_burst "$rate")
    tc -n "$switch_ns" qdisc add dev "$h" root tbf rate "$rate" burst "$burst" latency 50ms
    tc -n "$ns" qdisc add dev eth0 root tbf rate "$rate" burst "$burst" latency 50ms
  fi
  if awk -v l="$loss" 'BEGIN { exit !(l > 0) }'; then
    local threshold obj
    threshold=$(awk -v l="$loss" 'BEGIN { printf "%.0f", l / 100 * 4294967295 }')
    obj=$(loss_object "$threshold")
    tc -n "$switch_ns" qdisc add dev "$h" clsact
    tc -n "$switch_ns" filter add dev "$h" ingress bpf da obj "$obj" sec classifier
    tc -n "$switch_ns" filter add dev "$h" egress bpf da obj "$obj" sec classifier
  fi
  note "$h: rate ${rate}, loss ${loss}% each way"
}

cut() { [ $# = 1 ] || die 2 "cut: give one HOST"; check_host "$1"; ip -n "$switch_ns" link set "$1" down; note "$1: link cut"; }
heal() { [ $# = 1 ] || die 2 "heal: give one HOST"; check_host "$1"; ip -n "$switch_ns" link set "$1" up; note "$1: link up"; }

status() {
  is_up || { echo "box '$name': down"; return 0; }
  local n i pid state q; n=$(host_count)
  echo "box '$name': $n hosts, folder $dir"
  for i in $(seq 1 "$n"); do
    pid=$(holder_pid "h$i")
    state=$(ip -n "$switch_ns" -br link show "h$i" 2>/dev/null | awk '{print $2}')
    q=$(tc -n "$switch_ns" qdisc show dev "h$i" 2>/dev/null | awk '/tbf/ {print "rate " $0}' | sed 's/.*rate \([^ ]*\).*/\1/' | head -1)
    [ -n "$(tc -n "$switch_ns" filter show dev "h$i" ingress 2>/dev/null)" ] && q="${q:+$q, }lossy"
    printf 'h%-3s %-14s link %-5s %s%s\n' "$i" "$subnet_prefix.$i" "${state:-?}" \
      "$( [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && echo "running" || echo "NOT RUNNING")" "${q:+, $q}"
  done
  [ -f "$dir/slurm/slurm.conf" ] && enter h1 sinfo -N -h -o '%N %T' 2>/dev/null | sed 's/^/slurm: /' || true
}

# ---- Slurm ----

slurm_conf() {
  local n=$1 i
  cat <<EOF
# Slurm of cluster-in-a-box '$name' (written by cluster-in-a-box.sh up --slurm)
ClusterName=cbx$name
SlurmctldHost=h1($subnet_prefix.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/slurm/state
SlurmdSpoolDir=$dir/slurm/spool/%n
SlurmctldPidFile=$dir/slurm/slurmctld.pid
SlurmdPidFile=$dir/slurm/slurmd-%n.pid
SlurmctldLogFile=$dir/slurm/log/slurmctld.log
SlurmdLogFile=$dir/slurm/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
# A host whose link is cut is DOWN after 10 s without an answer, and its job ends.
SlurmdTimeout=10
MessageTimeout=5
KillWait=5
MinJobAge=300
TmpFS=/tmp
SlurmdParameters=config_overrides
EOF
  for i in $(seq 1 "$n"); do echo "NodeName=h$i NodeAddr=$subnet_prefix.$i CPUs=4 State=UNKNOWN"; done
  echo "PartitionName=box Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES"
}

slurm_up() {
  local n=$1 i
  if [ -f "$dir/slurm/slurm.conf" ] && slurm_idle "$n"; then return 0; fi
  mkdir -p "$dir/munge" "$dir/slurm/state" "$dir/slurm/log"
  for i in $(seq 1 "$n"); do mkdir -p "$dir/slurm/spool/h$i"; done
  chmod 700 "$dir/munge"
  [ -f "$dir/munge/munge.key" ] || mungekey -c -k "$dir/munge/munge.key" >/dev/null
  slurm_conf "$n" >"$dir/slurm/slurm.conf"
  # munged lives in h1 so that `down` ends it with the rest; its socket is a file every host sees.
  if ! [ -S "$dir/munge/munge.socket" ]; then
    enter h1 munged --force --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
      --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" --seed-file="$dir/munge/munged.seed" ||
      die 6 "munged did not start: $(tail -3 "$dir/munge/munged.log" 2>/dev/null)"
  fi
  enter h1 slurmctld -f "$dir/slurm/slurm.conf" || die 6 "slurmctld did not start: $(tail -3 "$dir/slurm/log/slurmctld.log" 2>/dev/null)"
  for i in $(seq 1 "$n"); do
    enter "h$i" slurmd -f "$dir/slurm/slurm.conf" || die 6 "slurmd on h$i did not start: $(tail -3 "$dir/slurm/log/slurmd-h$i.log" 2>/dev/null)"
  done
  for _ in $(seq 1 150); do slurm_idle "$n" && return 0; sleep 0.2; done
  die 6 "Slurm's hosts are not all idle after 30 s: $(enter h1 sinfo -N -h -o '%N %T %E' 2>&1 | tr '\n' ';')"
}

slurm_idle() {
  local states
  states=$(enter h1 sinfo -N -h -o '%T' 2>/dev/null | sort | uniq -c | awk '{print $2 "=" $1}' | tr '\n' ' ') || return 1
  [ "$states" = "idle=$1 " ]
}

# ---- down ----

# Ends every process in the box's namespaces (TERM, then KILL after 3 s), removes the namespaces
# and the folder. Works from the names alone, so a box whose folder is gone is still removed.
teardown() {
  local quiet=${1:-} nss ns pids start; start=$(date +%s.%N)
  nss=$(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$ns_prefix-(h[0-9]+|sw|probe)$" || true)
  for ns in $nss; do pids=$(ip netns pids "$ns" 2>/dev/null || true); [ -z "$pids" ] || kill -TERM $pids 2>/dev/null || true; done
  for _ in $(seq 1 30); do
    pids=""
    for ns in $nss; do pids+=" $(ip netns pids "$ns" 2>/dev/null || true)"; done
    [ -z "${pids// /}" ] && break
    sleep 0.1
  done
  for ns in $nss; do pids=$(ip netns pids "$ns" 2>/dev/null || true); [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true; done
  for ns in $nss; do ip netns del "$ns" 2>/dev/null || true; done
  rm -rf "$dir"
  [ -n "$quiet" ] || note "box '$name' down in $(elapsed "$start") s"
  nss=$(ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$ns_prefix-" || true)
  [ -z "$nss" ] || die 6 "namespaces left after down: $nss"
}

verb=${1:-}
[ -n "$verb" ] || die 2 "give a verb: check, up, status, shape, cut, heal, exec, run, mpirun-args, down (--help)"
shift
case "$verb" in
  check) if [ "${1:-}" = --slurm ]; then check_machine 1; else check_machine 0; fi; echo "cluster-in-a-box: this machine can host a box" ;;
  up) up "$@" ;;
  status) status ;;
  shape) shape "$@" ;;
  cut) cut "$@" ;;
  heal) heal "$@" ;;
  exec) [ $# -ge 2 ] || die 2 "exec: give HOST and a command"; check_host "$1"; enter "$@" ;;
  run) run "$@" ;;
  mpirun-args) [ "$(host_count)" -gt 0 ] || die 2 "box '$name' is not up"; mpirun_args ;;
  down) teardown ;;
  *) die 2 "unknown verb '$verb' (valid: check, up, status, shape, cut, heal, exec, run, mpirun-args, down)" ;;
esac
