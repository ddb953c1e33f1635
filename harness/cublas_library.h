#pragma once
// cuBLAS loaded at run time with dlopen, as NCCL is (collectives/nccl/nccl_library.h): the
// ccbench binary starts without it, and only `--overlap gemm` needs it. Tried in order:
// CCBENCH_CUBLAS_LIBRARY, libcublas.so.13, libcublas.so.12, then both under /usr/local/cuda/lib64.
// <cublas_v2.h> is needed at build time only (types and the entry points' signatures).
#include <cublas_v2.h>

#include <string>

namespace ccbench {

struct CublasApi {
  std::string path;  // the file loaded
  int version = 0;   // cublasGetProperty: major * 10000 + minor * 100 + patch
  decltype(&cublasCreate_v2) Create = nullptr;
  decltype(&cublasDestroy_v2) Destroy = nullptr;
  decltype(&cublasSetStream_v2) SetStream = nullptr;
  decltype(&cublasGemmEx) GemmEx = nullptr;
  decltype(&cublasGetStatusString) GetStatusString = nullptr;
  decltype(&cublasGetProperty) GetProperty = nullptr;
};

// The process's cuBLAS, loaded on first call; nullptr with `why` ("libcublas.so.13: cannot open
// shared object file ...; libcublas.so.12: ... (set CCBENCH_CUBLAS_LIBRARY)") when none loads.
// Thread-safe.
const CublasApi* cublas_api(std::string* why = nullptr);

}  // namespace ccbench
