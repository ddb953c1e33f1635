#!/usr/bin/env bash
o=${OUT:-/tmp/out}; mkdir -p $o
N="/usr/local/cuda/bin/nvcc -std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -lineinfo"
mkdir -p build/generated
$N -I$PWD/tmp_old -I. -Ibuild/generated tmp_old/bench.cu -o /tmp/bench_old 2> $o/old-build.log &
$N -I. -Ibuild/generated tmp_new/bench.cu -o /tmp/bench_new 2> $o/new-build.log &
$N -I$PWD/tmp_v2 -I. -Ibuild/generated tmp_v2/bench.cu -o /tmp/bench_v2 2> $o/v2-build.log &
$N -I$PWD/tmp_v2 -I. -Ibuild/generated tmp_v2/bench.cu -Xptxas -v -o /tmp/bench_v2b > $o/v2-ptxas.log 2>&1 &
wait
for i in 1; do for v in old new v2; do echo "== $v"; /tmp/bench_$v | grep -v "all three"; done; done
grep -E "registers|stack" $o/v2-ptxas.log | head -20
