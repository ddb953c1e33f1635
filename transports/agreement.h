#pragma once
// Set-up steps agreed over the ranks. A step that fails on one rank (a refused CUDA IPC mapping, a
// full /dev/shm) must end on every rank at once, with one error: a rank that throws alone leaves
// its peers waiting in the next collective call (an MPI_Barrier that only the watchdog ends).
#include <mpi.h>

#include <exception>
#include <utility>

namespace ccbench {

// Collective over `comm`: `error` is what this rank's step threw (null where it succeeded).
// Returns where no rank failed. Otherwise every rank throws the same Error::agreed: the exit code
// and message of the lowest failing rank, as "rank R: <its message>", naming the other ranks that
// failed ("(ranks 5, 6 failed too)"). A failure that was itself agreed keeps its message as it is.
void agree_on(MPI_Comm comm, std::exception_ptr error);

// Collective: runs `step` on this rank, then agree_on() its outcome.
template <typename Step>
void run_agreed(MPI_Comm comm, Step&& step) {
  std::exception_ptr error;
  try {
    std::forward<Step>(step)();
  } catch (...) {
    error = std::current_exception();
  }
  agree_on(comm, error);
}

}  // namespace ccbench
