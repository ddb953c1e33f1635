#include "transports/agreement.h"

#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/checks.h"
#include "core/error.h"

namespace ccbench {

namespace {

struct Failure {
  ExitCode code = ExitCode::runtime;
  std::string message;
  bool agreed = false;
};

Failure failure_of(std::exception_ptr error) {
  try {
    std::rethrow_exception(error);
  } catch (const Error& e) {
    return {e.code(), e.what(), e.is_agreed()};
  } catch (const std::exception& e) {
    return {ExitCode::runtime, e.what(), false};
  } catch (...) {
    return {ExitCode::runtime, "an exception that is not a std::exception", false};
  }
}

}  // namespace

void agree_on(MPI_Comm comm, std::exception_ptr error) {
  int rank = 0, size = 1;
  CCB_MPI(MPI_Comm_rank(comm, &rank));
  CCB_MPI(MPI_Comm_size(comm, &size));
  const int failed = error ? 1 : 0;
  std::vector<int> all(static_cast<std::size_t>(size));
  check_mpi(MPI_Allgather(&failed, 1, MPI_INT, all.data(), 1, MPI_INT, comm), "MPI_Allgather of a set-up outcome");
  std::vector<int> failing;
  for (int r = 0; r < size; ++r)
    if (all[static_cast<std::size_t>(r)]) failing.push_back(r);
  if (failing.empty()) return;
  const int first = failing.front();
  Failure f;
  if (rank == first) f = failure_of(error);
  // The first failing rank's code, whether it was agreed, and its message, to every rank.
  int head[3] = {static_cast<int>(f.code), f.agreed ? 1 : 0, static_cast<int>(f.message.size())};
  check_mpi(MPI_Bcast(head, 3, MPI_INT, first, comm), "MPI_Bcast of a set-up failure");
  f.message.resize(static_cast<std::size_t>(head[2]));
  check_mpi(MPI_Bcast(f.message.data(), head[2], MPI_CHAR, first, comm), "MPI_Bcast of a set-up failure");
  const auto code = static_cast<ExitCode>(head[0]);
  if (head[1]) throw Error::agreed(code, f.message);
  std::string text = fmt::format("rank {}: {}", first, f.message);
  if (failing.size() > 1)
    text += fmt::format(" (rank{} {} failed too)", failing.size() > 2 ? "s" : "",
                        fmt::join(failing.begin() + 1, failing.end(), ", "));
  throw Error::agreed(code, text);
}

}  // namespace ccbench
