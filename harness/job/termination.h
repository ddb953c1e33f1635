#pragma once
// How a job ends before its sweep is over: what an early end says and returns (JobEnd), the
// bounds of its steps, and the thread that turns termination signals into an early end.
// JobGuard (harness/job/job_guard.h) carries an early end out.
//
// TerminationSignals turns SIGTERM, SIGINT and SIGHUP (mpirun ends the other ranks with SIGTERM
// when one fails or when it is itself signalled; Slurm on scancel or at the time limit; Ctrl-C)
// into a call of its handler in normal thread context, which ends the job. The handler learns
// whether the signal came from the launcher (the process's parent: mpirun or its daemon,
// slurmstepd), which ends every rank when the job ends elsewhere.
#include <chrono>
#include <csignal>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace ccbench {

// What an early end says and returns.
struct JobEnd {
  int exit_code = 0;    // an ExitCode value, or 128 + signal as a shell reports it
  std::string reason;   // why the run stopped, for run.json ("timeout in 'allreduce ...' on rank 1")
  std::string verdict;  // the footer and run.json verdict ("FAILED: timeout")
  std::string message;  // printed to stderr first, prefixed "ccbench: "; empty for none
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

// The bounds of an early end's steps: long enough for a sink to write a few rows and for NCCL to
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
  // Gets the signal number and whether the parent process sent it, and must end the process;
  // when it is empty the process ends with exit code 128 + signal, as a shell reports it.
  using Handler = std::function<void(int signal, bool from_launcher)>;
  // Blocks the signals in the calling thread, and so in every thread it starts afterwards, then
  // starts the thread that waits for them and runs `handler`. Create it before any other thread
  // (MPI, CUDA and the watchdog start threads): threads inherit the blocked signals from their
  // creator.
  explicit TerminationSignals(Handler handler);
  // stop(), then the signal mask as it was.
  ~TerminationSignals();
  TerminationSignals(const TerminationSignals&) = delete;
  TerminationSignals& operator=(const TerminationSignals&) = delete;

  // Ends the waiting thread; when the handler is running (it ends the process) this waits for
  // the process to end. A signal that arrives afterwards stays pending until the destructor
  // restores the mask. Idempotent; from the thread that created it.
  void stop();

 private:
  void wait_loop();
  sigset_t set_{}, previous_{};
  Handler handler_;
  std::mutex mu_;  // held while the handler runs
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace ccbench
