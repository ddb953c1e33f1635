#pragma once
// Return-code checks for MPI (CUDA and NCCL: core/checks_cuda.h, for CUDA-built targets only).
// As NCCL's NCCLCHECK, the full message is written once where the error starts: the call (or
// what it was for), the library's own error text and file:line; it is thrown as ccbench::Error so
// that the callers above can add their context (Error::with_context) and end the job with one
// exit code. MPI returns codes only where the communicator has MPI_ERRORS_RETURN (mpi_start sets
// it on MPI_COMM_WORLD; duplicates inherit it).
#include <source_location>
#include <string>
#include <string_view>

#include <mpi.h>

#include "core/error.h"

namespace ccbench {

// MPI's text for an error code ("MPI error <rc>" when MPI cannot say).
std::string mpi_error_text(int rc);

// Throws Error(runtime) "<what> failed: <MPI's text> at <file:line>" unless rc == MPI_SUCCESS.
// `where` defaults to the caller's line.
void check_mpi(int rc, std::string_view what, std::source_location where = std::source_location::current());

}  // namespace ccbench

// CCB_MPI(MPI_Barrier(comm)): check_mpi with the call's own text.
#define CCB_MPI(call) ::ccbench::check_mpi((call), #call)
