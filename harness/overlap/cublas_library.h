#pragma once
// cuBLAS loaded at run time with dlopen, as NCCL is (collectives/nccl/nccl_library.h): the ccbench
// binary starts where no cuBLAS is installed, and only `--overlap gemm` needs it. The library is
// CCBENCH_CUBLAS_LIBRARY, else libcublas.so.<major of the cuBLAS built against> found by the
// dynamic linker. <cublas_v2.h> is needed at build time only, for the types and the entry
// points' signatures (decltype keeps them checked).
//
// Loaded once per process on first use, never unloaded.
#include <cublas_v2.h>

#include <string>

namespace ccbench {

// cublasGemmEx's C entry point (the header adds a C++ overload taking a cudaDataType compute
// type); the cast checks the signature against the header.
using CublasGemmEx = decltype(static_cast<cublasStatus_t (*)(
                                  cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                                  const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                                  cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t)>(&cublasGemmEx));

struct CublasApi {
  std::string path;  // the file dlopen loaded, as the dynamic linker resolved it
  int version = 0;   // cublasGetProperty: major * 10000 + minor * 100 + patch
  decltype(&cublasCreate_v2) Create = nullptr;
  decltype(&cublasDestroy_v2) Destroy = nullptr;
  decltype(&cublasSetStream_v2) SetStream = nullptr;
  decltype(&cublasSetSmCountTarget) SetSmCountTarget = nullptr;  // the SMs its kernels may take (0: all)
  CublasGemmEx GemmEx = nullptr;
  decltype(&cublasGetStatusString) GetStatusString = nullptr;
  decltype(&cublasGetProperty) GetProperty = nullptr;
  // "13.0.2".
  std::string version_text() const;
};

// The library this process loads: CCBENCH_CUBLAS_LIBRARY, else "libcublas.so.13" (the major
// version of the header built against).
std::string cublas_library_path();

// The process's cuBLAS, loaded on first call; nullptr when it cannot be, with `why` (if given)
// saying why: "cuBLAS could not be loaded: libcublas.so.13: cannot open shared object file ...
// (set CCBENCH_CUBLAS_LIBRARY to a cuBLAS library)". Thread-safe.
const CublasApi* cublas_api(std::string* why = nullptr);

// cublas_api(), or Error(precondition) with the reason.
const CublasApi& cublas();

// A cuBLAS call's result once checked: any status but success is Error(runtime) with the call's
// text, cuBLAS's status string, the library and file:line.
cublasStatus_t check_cublas(cublasStatus_t rc, const char* call, const char* file, int line);

}  // namespace ccbench

#define CCB_CUBLAS(call) ::ccbench::check_cublas((call), #call, __FILE__, __LINE__)
