#!/usr/bin/env bash
o=${OUT:-/tmp/out}; mkdir -p $o
N="/usr/local/cuda/bin/nvcc -std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -lineinfo"
mkdir -p build/generated
$N -I$PWD/tmp_old -I. -Ibuild/generated tmp_old/bench.cu -o /tmp/bench_old 2> $o/old-build.log &
$N -I$PWD/tmp_v3 -I. -Ibuild/generated tmp_v3/bench.cu -o /tmp/bench_v3 2> $o/v3-build.log &
wait; tail -n 3 $o/*-build.log
for b in 16 132; do for v in old v3; do echo "== $v $b blocks"; timeout 60 /tmp/bench_$v $b | grep -E "aligned|one source"; done; done
