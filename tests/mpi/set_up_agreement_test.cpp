// A set-up step that fails on some ranks ends on every rank at once with one error (transports/
// agreement.h: how a CUDA IPC mapping refused on one rank reaches the others, which would otherwise
// wait in the next MPI_Barrier until the watchdog ends the job), and the harness gives that error
// once, not once per rank (harness/job/bootstrap.h: agree_outcome). Run under mpirun with 3 or more
// ranks; the failures are planted. Prints "set-up agreement: N ranks, C checks per rank: ok" and exits 0
// when every check holds on every rank; 1 naming the failures.
#include <chrono>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "core/error.h"
#include "harness/job/bootstrap.h"
#include "tests/mpi/mpi_checks.h"
#include "transports/agreement.h"

namespace {

using namespace ccbench;
using namespace ccbench::mpi_checks;

// Nobody waits for a rank that failed: every rank leaves the agreement within this.
constexpr std::chrono::seconds kBound{10};

// run_agreed(step) on every rank, where `fails(rank)` says which ranks throw `thrown`; every rank
// must then throw Error::agreed(code) with exactly `message`, within kBound.
template <typename Thrown>
void expect_agreed(const std::string& what, bool (*fails)(int), const Thrown& thrown, ExitCode code,
                   const std::string& message) {
  const auto t0 = std::chrono::steady_clock::now();
  ++g_checks;
  try {
    run_agreed(MPI_COMM_WORLD, [&] {
      if (fails(g_rank)) throw thrown;
    });
    failure("{}: no error on rank {}", what, g_rank);
  } catch (const Error& e) {
    if (!e.is_agreed() || e.code() != code || e.what() != message)
      failure("{}: got '{}' (code {}, agreed {}), expected '{}' (code {}, agreed)", what, e.what(),
              static_cast<int>(e.code()), e.is_agreed(), message, static_cast<int>(code));
    else if (g_rank == 0)
      std::printf("# %s: code %d: %s\n", what.c_str(), static_cast<int>(e.code()), e.what());
  }
  check(std::chrono::steady_clock::now() - t0 < kBound, what + ": left the agreement within the bound");
  // The ranks still call the same collectives in the same order: a rank left behind would hang here.
  int one = 1, sum = 0;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  check(sum == g_n, what + ": every rank reached the next collective");
}

void run() {
  const int last = g_n - 1;
  ++g_checks;
  try {
    run_agreed(MPI_COMM_WORLD, [] {});
  } catch (const Error& e) {
    failure("nothing failed, yet: {}", e.what());
  }
  expect_agreed("one rank refused", [](int r) { return r == 1; },
                Error(ExitCode::precondition, "cannot map rank 2's GPU buffer"), ExitCode::precondition,
                "rank 1: cannot map rank 2's GPU buffer");
  expect_agreed("two ranks refused", [](int r) { return r == 1 || r == g_n - 1; },
                Error(ExitCode::precondition, "cannot map a peer"), ExitCode::precondition,
                fmt::format("rank 1: cannot map a peer (rank {} failed too)", last));
  std::string others = "1";
  for (int r = 2; r < g_n; ++r) others += fmt::format(", {}", r);
  expect_agreed("every rank failed", [](int) { return true; }, Error(ExitCode::runtime, "cudaMalloc failed"),
                ExitCode::runtime, fmt::format("rank 0: cudaMalloc failed (ranks {} failed too)", others));
  expect_agreed("not a ccbench::Error", [](int r) { return r == g_n - 1; }, std::runtime_error("bad_alloc"),
                ExitCode::runtime, fmt::format("rank {}: bad_alloc", last));
  expect_agreed("an error already agreed", [](int) { return true; },
                Error::agreed(ExitCode::usage, "every rank must have the same settings"), ExitCode::usage,
                "every rank must have the same settings");
  // The harness's agreement of a step's outcome gives an agreed error once, as it is.
  const Outcome agreed = agree_outcome(MPI_COMM_WORLD, run_catching([] {
    run_agreed(MPI_COMM_WORLD, [] {
      if (g_rank == 1) throw Error(ExitCode::precondition, "cannot map rank 0's GPU scratch memory");
    });
  }));
  check(agreed.code == ExitCode::precondition, "agree_outcome keeps the code");
  check(agreed.message == "rank 1: cannot map rank 0's GPU scratch memory",
        "agree_outcome gives the agreed error once: " + agreed.message);
  // Errors that are each rank's own keep their ranks.
  const Outcome own = agree_outcome(MPI_COMM_WORLD, run_catching([] {
    if (g_rank == 1) throw Error(ExitCode::precondition, "out of memory");
  }));
  check(own.message == "rank 1: out of memory", "agree_outcome names the rank of its own error: " + own.message);
}

}  // namespace

int main(int argc, char** argv) { return ccbench::mpi_checks::main_of(&argc, &argv, "set-up agreement", 3, run); }
