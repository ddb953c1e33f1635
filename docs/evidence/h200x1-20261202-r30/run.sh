#!/usr/bin/env bash
# The offsets test (as at e4aeffe, its own CUDA checks; offsets.cu here) against the data loop as
# shipped (run from a scratch folder of the tree): the
# head-then-vector path and, for pointers misaligned differently, the element loop.
o=${OUT:-/tmp/out}; mkdir -p $o build/generated
/usr/local/cuda/bin/nvcc -std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -I. -Ibuild/generated docs/evidence/h200x1-20261202-r30/offsets.cu -o /tmp/offsets 2> $o/build.log || { tail -n 20 $o/build.log; exit 1; }
timeout 100 /tmp/offsets | tee $o/offsets.log
