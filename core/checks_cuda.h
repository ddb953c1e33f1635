#pragma once
// CUDA return-code checks for host code (MPI's: core/checks.h; NCCL's: CCB_NCCL in
// collectives/nccl/nccl_library.h). Only targets built with CUDA include this header. As NCCL's
// CUDACHECK: the call's text, CUDA's error name and text and file:line, thrown once as
// ccbench::Error where the error starts.
#include <cuda_runtime.h>

#include "core/error.h"

namespace ccbench {

// Out of device memory is a precondition of the run (exit 3); every other CUDA error is a
// runtime error (exit 6).
[[noreturn]] inline void throw_cuda_error(cudaError_t rc, const char* call, const char* file, int line) {
  ExitCode code = rc == cudaErrorMemoryAllocation ? ExitCode::precondition : ExitCode::runtime;
  fail(code, "CUDA error {} ({}) in {} at {}:{}", cudaGetErrorName(rc), cudaGetErrorString(rc), call, file, line);
}

// The driver API version of the entry points host code looks up with
// cudaGetDriverEntryPointByVersion (no link-time libcuda, so the binary starts without a driver):
// CUDA 12.0.
constexpr unsigned kDriverApiVersion = 12000;

}  // namespace ccbench

#define CCB_CUDA(call)                                                                           \
  do {                                                                                           \
    cudaError_t ccb_rc_ = (call);                                                                \
    if (ccb_rc_ != cudaSuccess) ::ccbench::throw_cuda_error(ccb_rc_, #call, __FILE__, __LINE__); \
  } while (0)
