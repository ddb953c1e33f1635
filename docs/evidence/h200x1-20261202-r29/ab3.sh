#!/usr/bin/env bash
o=${OUT:-/tmp/out}; mkdir -p $o
N="/usr/local/cuda/bin/nvcc -std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -lineinfo"
mkdir -p build/generated
$N -I$PWD/tmp_old -I. -Ibuild/generated tmp_old/bench.cu -o /tmp/bench_old 2> $o/old-build.log &
$N -I. -Ibuild/generated tmp_new/bench.cu -o /tmp/bench_new 2> $o/new-build.log &
wait; tail -n 3 $o/*-build.log
for b in 16 32 132; do for v in old new old new; do echo "== $v $b blocks"; /tmp/bench_$v $b | grep -E "aligned|one source"; done; done
