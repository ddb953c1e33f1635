#!/bin/bash
cd /work/main
for i in 1 2 3 4 5 6; do for mode in default rmem; do
  unshare -n bash -c "ip link set lo up; [ $mode = rmem ] && echo '4096 4194304 33554432' > /proc/sys/net/ipv4/tcp_rmem; cat /proc/sys/net/ipv4/tcp_rmem > /tmp/ocx/$mode-$i.sysctl; python3 scripts/ofi_compare.py --only tcp --rounds 3 --repeat 1 --out /tmp/ocx/$mode-$i.json" > /tmp/ocx/$mode-$i.txt 2>&1
  echo "$(date +%T) $mode $i done"
done; done
