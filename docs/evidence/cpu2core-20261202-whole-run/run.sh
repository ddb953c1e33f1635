#!/usr/bin/env bash
# Five identical 2-rank runs on the loaded 2-core machine, every ordered pair compared.
# Usage: run.sh BUILD_DIR OUT
set -u
B=$1 OUT=$2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$OUT" && cd "$OUT"
for i in 1 2 3 4 5; do
  mpirun -np 2 "$B/ccbench" --device cpu --collective allreduce,allgather --impl mpi,ring,tree -b 1K -e 1M -f 4 \
    -n 20 -w 5 --quiet --out run$i > run$i.log 2>&1 || echo "run$i exit $?"
done
for a in 1 2 3 4 5; do for b in 1 2 3 4 5; do
  [ $a = $b ] && continue
  "$B/ccbench" compare run$a run$b --format json > cmp-$a-$b.json; echo "$a $b $?" >> codes.txt
done; done
