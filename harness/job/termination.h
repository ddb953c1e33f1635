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
  // On a rank other than 0: after the message, first wait up to this long for rank 0 to end the
  // job (a termination signal cuts the wait short). Rank 0 alone holds the result files, and
  // when another rank ends the job mpirun sends rank 0 SIGTERM and, 1 s later (OpenMPI's
  // odls_base_sigkill_timeout), SIGKILL: on a loaded host too soon, now and then, for rank 0 to
  // write why the run stopped (seen as run.json left 'running' in 2 of 15 runs of 5 ASan ranks
  // on 2 busy cores). A timeout gives rank 0 its own deadline plus its close (kCloseResultsWait):
  // rank 0 waits on the same stuck rank and ends the job with its own reason.
  std::chrono::milliseconds rank0_grace{0};
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
// end.verdict} (waiting at most kCloseResultsWait), on ranks other than 0 waits end.rank0_grace,
// aborts the communicators (at most kAbortWait: ncclCommAbort may wait for a hung device),
// MPI_Abort if asked, and ends the process with end.exit_code. Safe from any thread; a second
// caller while one is ending waits for the process to end, and cuts the first one's grace short
// unless it has a grace of its own.
[[noreturn]] void end_job(const JobEnd& end);

// The bounds of end_job()'s steps: long enough for a sink to write a few rows and for NCCL to
// tear down a healthy communicator (well under 1 s on the H200 node), short enough that a stuck
// job ends within seconds of its timeout.
inline constexpr std::chrono::seconds kCloseResultsWait{2};
inline constexpr std::chrono::seconds kAbortWait{2};

// JobEnd::rank0_grace of a timeout under --timeout `deadline`: rank 0's own deadline and close.
inline std::chrono::milliseconds rank0_grace_for_timeout(std::chrono::milliseconds deadline) {
  return deadline + kCloseResultsWait;
}

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

  // Replaces the handler; while a handler runs (it ends the process) this waits, so clearing it
  // ({}) before the locals it refers to go away keeps it from reading them after they are gone.
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
