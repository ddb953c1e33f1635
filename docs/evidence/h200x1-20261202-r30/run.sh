#!/usr/bin/env bash
# The offsets test (tests/gpu/reduce_copy_offsets.cu as at e4aeffe, with its own CUDA checks, put at
# docs/evidence/h200x1-20261202-r30/offsets.cu: git show e4aeffe:tests/gpu/reduce_copy_offsets.cu)
# against the data loop as shipped: the head-then-vector path and, for pointers misaligned
# differently, the element loop.
o=${OUT:-/tmp/out}; mkdir -p $o build/generated
/usr/local/cuda/bin/nvcc -std=c++17 -O3 -arch=sm_90 --expt-relaxed-constexpr -I. -Ibuild/generated docs/evidence/h200x1-20261202-r30/offsets.cu -o /tmp/offsets 2> $o/build.log || { tail -n 20 $o/build.log; exit 1; }
timeout 100 /tmp/offsets | tee $o/offsets.log
