#!/bin/sh
# CCBENCH_TCP_IF naming no interface: ccbench exits 2 (usage) naming the variable and listing the
# interfaces that exist.   usage: tcp_bad_interface.sh MPIEXEC CCBENCH
mpiexec=$1
ccbench=$2
out=$(CCBENCH_TCP_IF=nonexistent "$mpiexec" --oversubscribe --allow-run-as-root -np 2 "$ccbench" --device cpu \
      --transport tcp --impl ring -b 1K -e 1K --out none 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -ne 2 ]; then echo "FAIL: exit code $rc, expected 2 (usage)"; exit 1; fi
if ! printf '%s\n' "$out" | grep -q "CCBENCH_TCP_IF='nonexistent'.*interfaces here: .*lo ("; then
  echo "FAIL: the message does not name CCBENCH_TCP_IF and list the interfaces"; exit 1
fi
echo "OK: exit code 2 with the interfaces listed"
