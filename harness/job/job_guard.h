#pragma once
// The guard of a job: its one way out when a stage cannot finish — a phase that outlives its
// deadline (the watchdog), a termination signal, a timeout the main thread meets itself — and
// everything that way out touches.
//
// An early end (end_job()) prints why, closes rank 0's result files with that reason (run.json
// says why the run stopped), waits on other ranks for rank 0 to do so (JobEnd::rank0_grace),
// aborts the communicators that could keep a GPU or the network busy, and ends the process with
// the exit code.
//
// Ownership: the guard owns its two threads (the watchdog's and the signal thread), the progress
// board, and rank 0's result writers once opened. The communicators it aborts belong to whoever
// set them up; they are attached for as long as an Attachment lives.
//
// Threads: construct the guard on the main thread before any other thread starts (MPI, CUDA,
// telemetry): threads inherit the signals it blocks. end_job() may be called from any thread and
// the first caller ends the process; every other member is for the main thread. Once the job is
// ending, the calls that change what end_job() touches (identify, open_board, close_board,
// open_results, detaching) wait for the process to end, so nothing goes away under it.
//
// Lifetime: the destructor stops both threads before any member goes, so the guard can be the
// first member of its owner: constructed before anything else, destroyed after everything else.
//
// A host lost (set_hosts_note): a timeout that finds a host no longer answering leaves the job's
// end to the launcher for kLauncherWait after closing the files, instead of ending it at once.
// mpirun told to end a job sends to every node's daemon, and a message to one that cannot be
// reached keeps its connection busy until TCP gives up (net.ipv4.tcp_retries2: 15 min); left
// alone, mpirun's keepalive (docs/guides/clusters.md) finds the node lost about 11 s after it went
// quiet and ends the job itself, at once. The launcher's signal ends the wait.
//
// Who speaks when the launcher ends a rank (a termination signal from its parent: mpirun ends
// every rank when one exits non-zero or calls MPI_Abort, and when it is itself signalled): rank 0
// once it holds the result files, which it closes with the reason; no other rank, since the rank
// that ended the job or the launcher says why. A signal from anyone else is said by every rank
// that gets it. Once the run's exit code is settled (settle()) a termination signal ends the
// process quietly with that code: the run is over, only MPI finalisation was left.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <mpi.h>

#include "harness/job/progress_board.h"
#include "harness/job/termination.h"
#include "harness/job/watchdog.h"
#include "results/sink.h"

namespace ccbench {

// How long ranks that found a host lost leave the job's end to the launcher: mpirun with the
// keepalive options of docs/guides/clusters.md ends the job 11 s after the host went quiet (12 s
// after a cut on the cluster in a box), Slurm after SlurmdTimeout; past this the ranks end it.
inline constexpr std::chrono::seconds kLauncherWait{20};
// How long a timed-out job waits for the other hosts' answers (set_hosts_note): a live host
// completes a handshake within milliseconds whatever its load (the kernel answers); 1.5 s keeps
// the job's end within a few seconds of its deadline.
inline constexpr std::chrono::milliseconds kTimeoutProbeWait{1500};
// How long rank 0, ended by its launcher, asks the other hosts: within the second mpirun leaves it
// before SIGKILL (odls_base_sigkill_timeout).
inline constexpr std::chrono::milliseconds kSignalProbeWait{400};

// Rank 0's result writers as the main thread and an early end share them: every call holds a
// lock, and rows after finish() are dropped. begin() may come late: a finish() before it first
// begins with the context given at construction, so the files always carry a context.
class GuardedSink final : public ResultSink {
 public:
  GuardedSink(std::unique_ptr<ResultSink> inner, Json context);
  void begin(const Json& context) override;
  void add(const RunRecord& row) override;
  void finish(const RunOutcome& outcome) override;
  void revise(const std::vector<RunRecord>& rows) override;
  // From another thread: false, having done nothing, when the main thread holds the writers
  // longer than `wait`.
  bool try_finish(const RunOutcome& outcome, std::chrono::milliseconds wait);

 private:
  void finish_locked(const RunOutcome& outcome);
  std::unique_ptr<ResultSink> inner_;
  Json context_;
  std::timed_mutex mu_;
  bool begun_ = false, finished_ = false;
};

class JobGuard {
 public:
  // What end_job() aborts: a set of communicators (ncclCommAbort, ...); returns what it did.
  using Abort = std::function<std::vector<std::string>()>;

  // `timeout`: every phase's deadline (--timeout); `rank`: this process's rank until identify().
  JobGuard(std::chrono::milliseconds timeout, int rank);
  ~JobGuard();
  JobGuard(const JobGuard&) = delete;
  JobGuard& operator=(const JobGuard&) = delete;

  // The phases of the run and their deadlines; a phase past its deadline ends the job with exit
  // code 5, naming the phase and the ranks of this node behind it on the board.
  Watchdog& watchdog() { return watchdog_; }

  // After MPI start-up: this rank and its host, for the messages, and every rank's host (world
  // order), for the board's report.
  void identify(int rank, std::string host, std::vector<std::string> host_of);

  // Collective over `world`: the progress board (job/progress_board.h), where the watchdog records
  // every phase and from which a timeout names the ranks behind. Throws Error(runtime).
  void open_board(MPI_Comm world);
  // Before MPI_Finalize: no board any more. Frees its window collectively when `in_step` (every
  // rank came here the ordinary way); otherwise MPI_Finalize takes it.
  void close_board(bool in_step);

  // What an early end for a timeout, or rank 0's end by its launcher, adds to its message and
  // reason (harness/reachability.h: the hosts that no longer answer within `budget`), called once
  // from the thread ending the job. Main thread; {} for none.
  struct HostsNote {
    std::string text;        // "" adds nothing
    bool host_lost = false;  // a host did not answer at all (a link or the host is down)
  };
  void set_hosts_note(std::function<HostsNote(std::chrono::milliseconds budget)> note);

  // Rank 0: the result writers, closed from now on by an early end with its reason. Returns the
  // sink the main thread writes through (as long as the guard lives). `context`: what the files
  // begin with if the job ends before GuardedSink::begin().
  GuardedSink& open_results(std::unique_ptr<ResultSink> sinks, Json context);

  // Keeps `abort` attached while it lives; movable.
  class Attachment {
   public:
    Attachment(JobGuard* guard, std::uint64_t id) : guard_(guard), id_(id) {}
    Attachment(Attachment&& o) noexcept : guard_(std::exchange(o.guard_, nullptr)), id_(o.id_) {}
    Attachment& operator=(Attachment&&) = delete;
    ~Attachment();

   private:
    JobGuard* guard_;
    std::uint64_t id_;
  };
  [[nodiscard]] Attachment attach(Abort abort);

  // The run's outcome is decided and written, on every rank: from now on a termination signal
  // ends the process quietly with `exit_code`. Main thread, before MPI finalisation.
  void settle(int exit_code);

  // Prints end.message, closes the results with {complete=false, end.reason, end.exit_code,
  // end.verdict} (waiting at most kCloseResultsWait), on ranks other than 0 waits end.rank0_grace,
  // runs every attached abort (at most kAbortWait in all: ncclCommAbort may wait for a hung
  // device), MPI_Abort if asked, and ends the process with end.exit_code. From any thread; a
  // second caller while one is ending waits for the process to end, and cuts the first one's
  // grace short unless it has a grace of its own.
  [[noreturn]] void end_job(const JobEnd& end);

 private:
  // Returns for the first caller only, holding end_mu_ until the process ends.
  void begin_ending(std::chrono::milliseconds own_grace);
  [[noreturn]] void carry_out(const JobEnd& end);
  void on_deadline(const Expiry& e);            // watchdog thread
  void on_signal(int sig, bool from_launcher);  // signal thread
  void detach(std::uint64_t id);

  const std::chrono::milliseconds timeout_;
  // What an early end reads and touches; the ending thread holds the lock until the process ends.
  std::mutex end_mu_;
  int rank_;
  std::string host_ = "?";
  std::vector<std::string> host_of_;
  std::unique_ptr<ProgressBoard> board_;
  std::unique_ptr<GuardedSink> results_;
  std::function<HostsNote(std::chrono::milliseconds)> hosts_note_;
  std::map<std::uint64_t, Abort> aborts_;
  std::uint64_t next_id_ = 0;
  std::atomic<bool> settled_{false};  // settle() was called: settled_code_ holds the exit code
  std::atomic<int> settled_code_{0};
  // The first caller of end_job(), and its grace on ranks other than 0, cut short by a second.
  std::atomic<bool> ending_{false};
  std::mutex grace_mu_;
  std::condition_variable grace_cv_;
  bool grace_cut_ = false;
  // The threads, after all they read: the signals are blocked before the watchdog's thread starts.
  TerminationSignals signals_;
  Watchdog watchdog_;
};

}  // namespace ccbench
