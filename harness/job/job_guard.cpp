#include "harness/job/job_guard.h"

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <future>
#include <thread>

#include <fmt/format.h>

#include "core/exit_code.h"

namespace ccbench {

GuardedSink::GuardedSink(std::unique_ptr<ResultSink> inner, Json context)
    : inner_(std::move(inner)), context_(std::move(context)) {}

void GuardedSink::begin(const Json& context) {
  std::lock_guard l(mu_);
  if (begun_ || finished_) return;
  begun_ = true;
  inner_->begin(context);
}

void GuardedSink::add(const RunRecord& row) {
  std::lock_guard l(mu_);
  if (!finished_) inner_->add(row);
}

void GuardedSink::finish(const RunOutcome& outcome) {
  std::lock_guard l(mu_);
  finish_locked(outcome);
}

void GuardedSink::revise(const std::vector<RunRecord>& rows) {
  std::lock_guard l(mu_);
  if (!finished_) inner_->revise(rows);
}

bool GuardedSink::try_finish(const RunOutcome& outcome, std::chrono::milliseconds wait) {
  if (!mu_.try_lock_for(wait)) return false;
  std::lock_guard l(mu_, std::adopt_lock);
  finish_locked(outcome);
  return true;
}

void GuardedSink::finish_locked(const RunOutcome& outcome) {
  if (finished_) return;
  finished_ = true;
  if (!begun_) inner_->begin(context_);
  begun_ = true;
  inner_->finish(outcome);
}

namespace {

// Runs every abort in a thread of its own and prints what each did, or that it took too long.
void abort_bounded(std::vector<JobGuard::Abort> aborts, int rank) {
  std::packaged_task<std::vector<std::string>()> task([aborts = std::move(aborts)] {
    std::vector<std::string> done;
    for (const JobGuard::Abort& abort : aborts)
      for (std::string& what : abort()) done.push_back(std::move(what));
    return done;
  });
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

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? fmt::format("SIG{}", abbrev) : "a signal";
}

}  // namespace

JobGuard::JobGuard(std::chrono::milliseconds timeout, int rank)
    : timeout_(timeout), rank_(rank), signals_([this](int sig, bool from_launcher) { on_signal(sig, from_launcher); }),
      watchdog_(timeout, [this](const Expiry& e) { on_deadline(e); }) {}

// The signal handler reads the watchdog, which goes first: the signal thread ends before it.
JobGuard::~JobGuard() { signals_.stop(); }

void JobGuard::identify(int rank, std::string host, std::vector<std::string> host_of) {
  std::lock_guard lock(end_mu_);
  rank_ = rank;
  host_ = std::move(host);
  host_of_ = std::move(host_of);
}

void JobGuard::open_board(MPI_Comm world) {
  auto board = std::make_unique<ProgressBoard>(world);
  std::lock_guard lock(end_mu_);
  board_ = std::move(board);
  watchdog_.set_board(board_.get());
}

void JobGuard::close_board(bool in_step) {
  watchdog_.set_board(nullptr);
  std::lock_guard lock(end_mu_);
  if (board_ && in_step) board_->free();
  board_.reset();
}

void JobGuard::set_hosts_note(std::function<HostsNote(std::chrono::milliseconds)> note) {
  std::lock_guard lock(end_mu_);
  hosts_note_ = std::move(note);
}

GuardedSink& JobGuard::open_results(std::unique_ptr<ResultSink> sinks, Json context) {
  auto results = std::make_unique<GuardedSink>(std::move(sinks), std::move(context));
  std::lock_guard lock(end_mu_);
  results_ = std::move(results);
  return *results_;
}

JobGuard::Attachment JobGuard::attach(Abort abort) {
  std::lock_guard lock(end_mu_);
  aborts_.emplace(next_id_, std::move(abort));
  return Attachment(this, next_id_++);
}

JobGuard::Attachment::~Attachment() {
  if (guard_) guard_->detach(id_);
}

void JobGuard::detach(std::uint64_t id) {
  std::lock_guard lock(end_mu_);
  aborts_.erase(id);
}

void JobGuard::settle(int exit_code) {
  settled_code_ = exit_code;
  settled_ = true;
}

void JobGuard::end_job(const JobEnd& end) {
  begin_ending(end.rank0_grace);
  carry_out(end);
}

void JobGuard::begin_ending(std::chrono::milliseconds own_grace) {
  if (ending_.exchange(true)) {
    // Another thread is ending the job: let it finish and exit; a caller that would not wait
    // (a termination signal; not the watchdog after the main thread's own timeout) cuts its grace.
    if (own_grace.count() == 0) {
      {
        std::lock_guard lock(grace_mu_);
        grace_cut_ = true;
      }
      grace_cv_.notify_all();
    }
    for (;;) pause();
  }
  end_mu_.lock();  // never unlocked: the process ends
}

void JobGuard::carry_out(const JobEnd& given) {
  JobEnd end = given;
  bool host_lost = false;
  if (end.exit_code == static_cast<int>(ExitCode::timeout) && hosts_note_) {
    const HostsNote note = hosts_note_(kTimeoutProbeWait);
    if (!note.text.empty()) {
      end.reason += "; " + note.text;
      if (!end.message.empty()) end.message += "; " + note.text;
    }
    host_lost = note.host_lost;
  }
  if (!end.message.empty()) fmt::print(stderr, "ccbench: {}\n", end.message);
  try {
    if (results_ && !results_->try_finish({false, end.reason, end.exit_code, end.verdict}, kCloseResultsWait))
      fmt::print(stderr, "ccbench: rank {}: the result files stayed busy for {} s: left as they are\n", rank_,
                 kCloseResultsWait.count());
  } catch (const std::exception& e) {  // the files' own error (a full disk): the job ends all the same
    fmt::print(stderr, "ccbench: rank {}: the result files could not be closed: {}\n", rank_, e.what());
  }
  std::chrono::milliseconds wait = rank_ != 0 ? end.rank0_grace : std::chrono::milliseconds(0);
  if (host_lost) wait = std::max<std::chrono::milliseconds>(wait, kLauncherWait);  // see the header
  bool signalled = false;
  if (wait.count() > 0) {
    std::unique_lock lock(grace_mu_);
    signalled = grace_cv_.wait_for(lock, wait, [this] { return grace_cut_; });
  }
  if (!aborts_.empty()) {
    std::vector<Abort> aborts;
    for (const auto& [id, abort] : aborts_) aborts.push_back(abort);
    abort_bounded(std::move(aborts), rank_);
  }
  std::fflush(nullptr);
  // Ended by a signal meanwhile: the launcher ends the job, and MPI_Abort would only ask it again.
  if (end.abort_mpi && !signalled && mpi_running()) (void)MPI_Abort(MPI_COMM_WORLD, end.exit_code);
  _exit(end.exit_code);
}

namespace {

// Why a phase ran out of time, as far as this rank can tell: still starting calls when its
// deadline came (the work asked takes longer than --timeout; nothing is stuck), or not.
std::string expiry_cause(const Expiry& e, std::chrono::milliseconds timeout) {
  if (!e.progressing) return "a rank or link is stuck";
  if (e.calls_asked > e.calls_started) {
    const double needed_s = e.waited.count() / 1000.0 * static_cast<double>(e.calls_asked) /
                            static_cast<double>(std::max<std::uint64_t>(e.calls_started, 1));
    return fmt::format(
        "nothing is stuck: this rank had started {} of the {} calls of this phase and was still "
        "starting more; the deadline is too short for the work asked: give a longer --timeout (about "
        "{:.0f} s at this rate) or fewer iterations (-n, -w)",
        e.calls_started, e.calls_asked, needed_s);
  }
  return fmt::format(
      "this rank was still working ({} calls started in this phase): the deadline of {:.0f} s may be "
      "too short for the work asked, or a peer stopped answering",
      e.calls_started, timeout.count() / 1000.0);
}

}  // namespace

void JobGuard::on_deadline(const Expiry& e) {
  begin_ending(rank0_grace_for_timeout(timeout_));
  const std::string late = board_ ? board_->describe_behind(host_of_) : "";
  JobEnd end;
  end.exit_code = static_cast<int>(ExitCode::timeout);
  const std::string cause = expiry_cause(e, timeout_);
  end.message = fmt::format(
      "rank {} (host {}): timeout: '{}' has taken {:.1f} s (--timeout {:.0f} s); {}; {}; ending the run with exit "
      "code 5",
      rank_, host_, e.phase, e.waited.count() / 1000.0, timeout_.count() / 1000.0, cause,
      late.empty() ? "no rank of this node is behind or stopped" : "behind it on this node: " + late);
  end.reason = fmt::format("timeout in '{}' on rank {}{}{}", e.phase, rank_, e.progressing ? "; " + cause : "",
                           late.empty() ? "" : "; behind it: " + late);
  end.verdict = "FAILED: timeout";
  end.rank0_grace = rank0_grace_for_timeout(timeout_);
  carry_out(end);
}

void JobGuard::on_signal(int sig, bool from_launcher) {
  begin_ending(std::chrono::milliseconds(0));
  if (board_) board_->mark_signalled(sig);  // before this process can end: node-mates must not blame it
  JobEnd quiet;  // no message: the run is over, or the launcher ends this rank (see the header)
  if (settled_) {
    quiet.exit_code = settled_code_;
    carry_out(quiet);
  }
  if (from_launcher && !(rank_ == 0 && results_)) {
    quiet.exit_code = 128 + sig;
    carry_out(quiet);
  }
  const std::string phase = watchdog_.phase();
  std::string reason = fmt::format("rank {} (host {}) was terminated by {} during '{}'", rank_, host_, signal_name(sig),
                                   phase.empty() ? "-" : phase);
  // The launcher ends the others when a rank dies: a node-mate already gone is the first cause.
  if (const std::string gone = board_ && from_launcher ? board_->describe_gone(host_of_) : ""; !gone.empty())
    reason = fmt::format(
        "{} ended first, without a word from ccbench (killed: SIGKILL, the OOM killer; or a crash: "
        "the launcher's message names the signal); then {}",
        gone, reason);
  // The launcher may end the job because a node went away (mpirun's keepalive): say which.
  if (from_launcher && hosts_note_)
    if (const HostsNote note = hosts_note_(kSignalProbeWait); note.host_lost) reason += "; " + note.text;
  carry_out({.exit_code = 128 + sig,
             .reason = reason,
             .verdict = "FAILED: terminated",
             .message = fmt::format("{}; ending the run with exit code {}", reason, 128 + sig)});
}

}  // namespace ccbench
