#pragma once
// How a job ends before its sweep is over.
//
// end_job() is the one way out for a timeout, a termination signal or a fatal error that other
// ranks cannot be waited for: it closes the result files with the outcome (run.json says why the
// run stopped), aborts the communicators that could keep the GPU or the network busy, prints
// what it did and ends the process with the exit code. What it closes and aborts is registered
// by run_benchmark as each thing comes to exist (JobEndHooks).
//
// TerminationSignals turns SIGTERM, SIGINT and SIGHUP (mpirun ends the other ranks with SIGTERM
// when one fails; Slurm on scancel or at the time limit; Ctrl-C) into a call of its handler in
// normal thread context, which ends the job through end_job().
#include <chrono>
#include <csignal>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "results/sink.h"

namespace ccbench {

// What an early end says and returns.
struct JobEnd {
  int exit_code = 0;     // an ExitCode value, or 128 + signal as a shell reports it
  std::string reason;    // why the run stopped, for run.json ("timeout in 'allreduce ...' on rank 1")
  std::string verdict;   // the footer and run.json verdict ("FAILED: timeout")
  std::string message;   // printed to stderr first, prefixed "ccbench: "; empty for none
  // Also MPI_Abort(MPI_COMM_WORLD), so that ranks waiting in MPI for this one end now rather than
  // at their own deadline. Only from the thread that initialised MPI (MPI_THREAD_FUNNELED).
  bool abort_mpi = false;
};

// What end_job() closes and aborts. Each is optional and may be set, replaced or cleared
// (nullptr) from the main thread while the job runs; end_job() takes a copy under a lock.
struct JobEndHooks {
  // Closes the result files with the outcome; false if it could not within the wait (the main
  // thread holds them). Rank 0 only.
  std::function<bool(const RunOutcome&, std::chrono::milliseconds wait)> close_results;
  // Aborts every communicator set up so far (ncclCommAbort, ...); returns what each did.
  std::function<std::vector<std::string>()> abort_communicators;
};
void set_job_end_hooks(JobEndHooks hooks);
void set_job_end_rank(int rank);  // names the rank in end_job()'s messages

// Prints end.message, closes the results with {complete=false, end.reason, end.exit_code,
// end.verdict} (waiting at most kCloseResultsWait), aborts the communicators (at most
// kAbortWait: ncclCommAbort may wait for a hung device), MPI_Abort if asked, and ends the process
// with end.exit_code. Safe from any thread; a second caller while one is ending waits for the
// process to end.
[[noreturn]] void end_job(const JobEnd& end);

// The bounds of end_job()'s steps: long enough for a sink to write a few rows and for NCCL to
// tear down a healthy communicator (well under 1 s on the H200 node), short enough that a stuck
// job ends within seconds of its timeout.
inline constexpr std::chrono::seconds kCloseResultsWait{2};
inline constexpr std::chrono::seconds kAbortWait{2};

class TerminationSignals {
 public:
  // The handler gets the signal number and must end the process (normally through end_job());
  // without one the process ends with exit code 128 + signal, as a shell reports it.
  using Handler = std::function<void(int signal)>;
  // Create before any other thread (MPI, CUDA and the watchdog start threads): threads inherit
  // the blocked signals from their creator.
  TerminationSignals();
  ~TerminationSignals();
  TerminationSignals(const TerminationSignals&) = delete;
  TerminationSignals& operator=(const TerminationSignals&) = delete;

  void set_handler(Handler h);

 private:
  void wait_loop();
  sigset_t set_{}, previous_{};
  std::mutex mu_;
  Handler handler_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace ccbench
