#!/usr/bin/env bash
# A/B of the data-loop bench: device.cuh before (097d983) and now, compiled alike, run alternately.
o=${OUT:-/tmp/out}; mkdir -p $o
N="/usr/local/cuda/bin/nvcc -std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -lineinfo"
mkdir -p build/generated
$N -I$PWD/tmp_old -I. -Ibuild/generated tmp_old/bench.cu -o /tmp/bench_old 2> $o/old-build.log &
$N -I. -Ibuild/generated tmp_new/bench.cu -o /tmp/bench_new 2> $o/new-build.log &
wait
ls -la /tmp/bench_old /tmp/bench_new; tail -n 5 $o/old-build.log $o/new-build.log
for i in 1 2; do echo "== old"; /tmp/bench_old | grep aligned; echo "== new"; /tmp/bench_new | grep aligned; done
