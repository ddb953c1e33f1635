#pragma once
// CUDA and NCCL return-code checks for host code (the MPI one is core/checks.h). Only targets
// built with CUDA include this header; its NCCL half is there when <nccl.h> is on the include
// path (targets that link NCCL). As NCCL's CUDACHECK/NCCLCHECK: the call's text, the library's
// error name and text and file:line, thrown once as ccbench::Error where the error starts.
#include <cuda_runtime.h>

#include "core/error.h"

namespace ccbench {

// Out of device memory is a precondition of the run (exit 3); every other CUDA error is a
// runtime error (exit 6).
[[noreturn]] inline void throw_cuda_error(cudaError_t rc, const char* call, const char* file, int line) {
  ExitCode code = rc == cudaErrorMemoryAllocation ? ExitCode::precondition : ExitCode::runtime;
  fail(code, "CUDA error {} ({}) in {} at {}:{}", cudaGetErrorName(rc), cudaGetErrorString(rc), call, file, line);
}

}  // namespace ccbench

#define CCB_CUDA(call)                                                                            \
  do {                                                                                            \
    cudaError_t ccb_rc_ = (call);                                                                 \
    if (ccb_rc_ != cudaSuccess) ::ccbench::throw_cuda_error(ccb_rc_, #call, __FILE__, __LINE__); \
  } while (0)

#if __has_include(<nccl.h>)
#include <nccl.h>

namespace ccbench {

// Every NCCL error is a runtime error (exit 6). ncclInProgress is not an error: a non-blocking
// communicator's call goes on in the background (ncclCommGetAsyncError tells when it is done).
inline ncclResult_t check_nccl(ncclResult_t rc, const char* call, const char* file, int line) {
  if (rc != ncclSuccess && rc != ncclInProgress)
    fail(ExitCode::runtime, "NCCL error {} ({}) in {} at {}:{}", static_cast<int>(rc), ncclGetErrorString(rc), call,
         file, line);
  return rc;
}

}  // namespace ccbench

// An expression: the call's result (ncclSuccess or ncclInProgress) once checked.
#define CCB_NCCL(call) ::ccbench::check_nccl((call), #call, __FILE__, __LINE__)
#endif
