#pragma once
// A kernel shaped like a collective's (tests/gpu/overlap_load.cpp): every block holds a whole SM
// (kSpinThreads threads at kSpinRegisters registers each fill an SM's register file, as a ring
// block of ours does at 512 x 128) and spins until every block of the grid has arrived, as a
// channel's blocks wait for their peers. It ends only once the whole grid was resident at once.
#include <cuda_runtime.h>

namespace spin {

inline constexpr int kSpinThreads = 1024;
inline constexpr int kSpinRegisters = 64;  // 1024 x 64 = 65536, an H100/H200 SM's register file

// The kernel's registers per thread (ptxas's count, cudaFuncGetAttributes).
int registers();
// Launch `round` (0, 1, ...) of a grid of `blocks` on `stream`, counting arrivals in `counter`
// (zeroed before round 0); a block that waits longer than `timeout_cycles` sets `*timed_out`.
cudaError_t launch(int blocks, int round, unsigned* counter, int* timed_out, long long timeout_cycles,
                   cudaStream_t stream);

}  // namespace spin
