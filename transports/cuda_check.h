#pragma once
// CUDA error handling for host code: the full message is written once where the error starts
// (call, file:line, CUDA's error name and text) and thrown as ccbench::Error.
#include <cuda_runtime.h>

#include "results/error.h"

namespace ccbench {

[[noreturn]] inline void throw_cuda_error(cudaError_t rc, const char* call, const char* file, int line) {
  ExitCode code = rc == cudaErrorMemoryAllocation ? ExitCode::precondition : ExitCode::runtime;
  fail(code, "CUDA error {} ({}) in {} at {}:{}", cudaGetErrorName(rc), cudaGetErrorString(rc), call, file, line);
}

}  // namespace ccbench

#define CCB_CUDA(call)                                                             \
  do {                                                                             \
    cudaError_t ccb_rc_ = (call);                                                  \
    if (ccb_rc_ != cudaSuccess) ::ccbench::throw_cuda_error(ccb_rc_, #call, __FILE__, __LINE__); \
  } while (0)
