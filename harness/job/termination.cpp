#include "harness/job/termination.h"

#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <future>

#include <fmt/format.h>
#include <mpi.h>

namespace ccbench {

namespace {

std::mutex hooks_mu;
JobEndHooks hooks;
std::atomic<int> job_rank{-1};
std::atomic<bool> ending{false};
// The grace of end_job() on ranks other than 0, cut short by a second caller (a signal).
std::mutex grace_mu;
std::condition_variable grace_cv;
bool grace_cut = false;

void wait_for_rank0(std::chrono::milliseconds grace) {
  std::unique_lock lock(grace_mu);
  grace_cv.wait_for(lock, grace, [] { return grace_cut; });
}

// Runs `abort` in a thread of its own and prints what it did, or that it took too long.
void abort_bounded(const std::function<std::vector<std::string>()>& abort, int rank) {
  std::packaged_task<std::vector<std::string>()> task(abort);
  auto done = task.get_future();
  std::thread(std::move(task)).detach();
  if (done.wait_for(kAbortWait) != std::future_status::ready) {
    fmt::print(stderr, "ccbench: rank {}: aborting the communicators took over {} s; ending without\n", rank,
               kAbortWait.count());
    return;
  }
  try {
    for (const std::string& what : done.get()) fmt::print(stderr, "ccbench: rank {}: {}\n", rank, what);
  } catch (const std::exception& e) {
    fmt::print(stderr, "ccbench: rank {}: aborting the communicators failed: {}\n", rank, e.what());
  }
}

bool mpi_running() {
  int initialized = 0, finalized = 0;
  return MPI_Initialized(&initialized) == MPI_SUCCESS && initialized && MPI_Finalized(&finalized) == MPI_SUCCESS &&
         !finalized;
}

}  // namespace

void set_job_end_hooks(JobEndHooks h) {
  std::lock_guard lock(hooks_mu);
  hooks = std::move(h);
}

void set_job_end_rank(int rank) { job_rank = rank; }

void end_job(const JobEnd& end) {
  if (ending.exchange(true)) {
    // Another thread is ending the job: let it finish and exit; a caller that would not wait
    // (a termination signal; not the watchdog after the main thread's own timeout) cuts its grace.
    if (end.rank0_grace.count() == 0) {
      {
        std::lock_guard lock(grace_mu);
        grace_cut = true;
      }
      grace_cv.notify_all();
    }
    for (;;) pause();
  }
  JobEndHooks h;
  {
    std::lock_guard lock(hooks_mu);
    h = hooks;
  }
  const int rank = job_rank.load();
  if (!end.message.empty()) fmt::print(stderr, "ccbench: {}\n", end.message);
  if (h.close_results && !h.close_results({false, end.reason, end.exit_code, end.verdict}, kCloseResultsWait))
    fmt::print(stderr, "ccbench: rank {}: the result files stayed busy for {} s: left as they are\n", rank,
               kCloseResultsWait.count());
  if (rank != 0 && end.rank0_grace.count() > 0) wait_for_rank0(end.rank0_grace);
  if (h.abort_communicators) abort_bounded(h.abort_communicators, rank);
  std::fflush(nullptr);
  if (end.abort_mpi && mpi_running()) (void)MPI_Abort(MPI_COMM_WORLD, end.exit_code);
  _exit(end.exit_code);
}

TerminationSignals::TerminationSignals() {
  sigemptyset(&set_);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) sigaddset(&set_, s);
  pthread_sigmask(SIG_BLOCK, &set_, &previous_);
  thread_ = std::thread([this] { wait_loop(); });
}

TerminationSignals::~TerminationSignals() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  pthread_kill(thread_.native_handle(), SIGTERM);  // wakes sigwait(); ignored as stopping_
  thread_.join();
  pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
}

void TerminationSignals::set_handler(Handler h) {
  std::lock_guard lock(mu_);
  handler_ = std::move(h);
}

void TerminationSignals::wait_loop() {
  while (true) {
    int sig = 0;
    if (sigwait(&set_, &sig) != 0) continue;
    std::lock_guard lock(mu_);  // held while the handler runs: set_handler() waits for it
    if (stopping_) return;
    if (handler_) handler_(sig);
    _exit(128 + sig);
  }
}

}  // namespace ccbench
