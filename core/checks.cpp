#include "core/checks.h"

namespace ccbench {

std::string mpi_error_text(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS || len <= 0) return "MPI error " + std::to_string(rc);
  return std::string(text, static_cast<size_t>(len));
}

void check_mpi(int rc, std::string_view what, CallSite where) {
  if (rc == MPI_SUCCESS) return;
  fail(ExitCode::runtime, "{} failed: {} at {}:{}", what, mpi_error_text(rc), where.file, where.line);
}

}  // namespace ccbench
