#pragma once
// Return-code checks for MPI (CUDA and NCCL: core/checks_cuda.h, for CUDA-built targets only).
// As NCCL's NCCLCHECK, the full message is written once where the error starts: the call (or
// what it was for), the library's own error text and file:line; it is thrown as ccbench::Error so
// that the callers above can add their context (Error::with_context) and end the job with one
// exit code. MPI returns codes only where the communicator has MPI_ERRORS_RETURN (mpi_start sets
// it on MPI_COMM_WORLD; duplicates inherit it).
#include <string>
#include <string_view>

#include <mpi.h>

#include "core/error.h"

namespace ccbench {

// A caller's file and line, as std::source_location gives them; built from the compiler
// builtins that GCC and clang both have (clang 14 with libstdc++ 12 has no std::source_location).
struct CallSite {
  const char* file;
  int line;
  static constexpr CallSite here(const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
    return {file, line};
  }
};

// MPI's text for an error code ("MPI error <rc>" when MPI cannot say).
std::string mpi_error_text(int rc);

// Throws Error(runtime) "<what> failed: <MPI's text> at <file:line>" unless rc == MPI_SUCCESS.
// `where` defaults to the caller's line.
void check_mpi(int rc, std::string_view what, CallSite where = CallSite::here());

}  // namespace ccbench

// CCB_MPI(MPI_Barrier(comm)): check_mpi with the call's own text.
#define CCB_MPI(call) ::ccbench::check_mpi((call), #call)
