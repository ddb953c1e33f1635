#include "harness/job/progress_board.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <iterator>
#include <chrono>
#include <cstring>
#include <new>

#include <fmt/format.h>

#include "core/checks.h"
#include "core/error.h"

namespace ccbench {

ProgressBoard::ProgressBoard(MPI_Comm world) {
  int world_rank = 0;
  CCB_MPI(MPI_Comm_rank(world, &world_rank));
  CCB_MPI(MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, world_rank, MPI_INFO_NULL, &node_));
  CCB_MPI(MPI_Comm_rank(node_, &local_));
  CCB_MPI(MPI_Comm_size(node_, &local_size_));
  // One contiguous array: rank 0 of the node allocates it all, the others map it.
  const MPI_Aint bytes = local_ == 0 ? static_cast<MPI_Aint>(sizeof(Slot)) * local_size_ : 0;
  void* mine = nullptr;
  check_mpi(MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, node_, &mine, &win_),
            "MPI_Win_allocate_shared for the progress board");
  MPI_Aint size = 0;
  int unit = 0;
  void* base = nullptr;
  CCB_MPI(MPI_Win_shared_query(win_, 0, &size, &unit, &base));
  Slot* slots = static_cast<Slot*>(base);
  Slot* own = new (&slots[local_]) Slot{};
  own->world_rank = world_rank;
  own->pid = static_cast<std::int32_t>(getpid());
  // Every slot is constructed before anyone reads it.
  check_mpi(MPI_Barrier(node_), "MPI_Barrier after building the progress board");
  slots_.store(slots);
}

ProgressBoard::~ProgressBoard() {
  // Not collective here: a run ending on an error may not be in step. The window goes with
  // MPI_Finalize then.
  slots_.store(nullptr);
}

void ProgressBoard::free() {
  {
    std::lock_guard lock(beat_mu_);
    slots_.store(nullptr);
  }
  if (win_ != MPI_WIN_NULL) CCB_MPI(MPI_Win_free(&win_));
  if (node_ != MPI_COMM_NULL) CCB_MPI(MPI_Comm_free(&node_));
}

void ProgressBoard::enter_phase(const std::string& phase) {
  Slot* s = slots_.load();
  if (!s) return;
  Slot& me = s[local_];
  const std::uint32_t seq = me.seq.load(std::memory_order_relaxed);
  me.seq.store(seq + 1, std::memory_order_relaxed);  // odd: being rewritten
  std::atomic_thread_fence(std::memory_order_release);
  const size_t n = std::min(phase.size(), sizeof me.name - 1);
  std::memcpy(me.name, phase.data(), n);
  me.name[n] = '\0';
  me.calls.store(0, std::memory_order_relaxed);
  me.phase.store(me.phase.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  me.seq.store(seq + 2, std::memory_order_release);
}

void ProgressBoard::arrive() {
  Slot* s = slots_.load(std::memory_order_relaxed);
  if (!s) return;
  Slot& me = s[local_];
  me.calls.store(me.calls.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

namespace {
std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

void ProgressBoard::beat() {
  std::lock_guard lock(beat_mu_);
  if (Slot* s = slots_.load()) s[local_].alive_ms.store(now_ms(), std::memory_order_relaxed);
}

void ProgressBoard::mark_signalled(int sig) {
  std::lock_guard lock(beat_mu_);
  if (Slot* s = slots_.load()) s[local_].signalled.store(sig, std::memory_order_release);
}

std::uint64_t ProgressBoard::own_calls() const {
  Slot* s = slots_.load();
  return s ? s[local_].calls.load(std::memory_order_relaxed) : 0;
}

// A consistent copy of slot i (seqlock); false if it kept changing.
bool ProgressBoard::read(int i, Peer& out, std::uint64_t& phase) const {
  Slot* s = slots_.load();
  if (!s) return false;
  const Slot& slot = s[i];
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::uint32_t before = slot.seq.load(std::memory_order_acquire);
    if (before & 1) continue;
    char name[sizeof slot.name];
    std::memcpy(name, slot.name, sizeof name);
    phase = slot.phase.load(std::memory_order_relaxed);
    out.calls = slot.calls.load(std::memory_order_acquire);
    out.alive_ms = slot.alive_ms.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (slot.seq.load(std::memory_order_relaxed) != before) continue;
    name[sizeof name - 1] = '\0';
    out.phase = name;
    out.rank = slot.world_rank;
    out.pid = slot.pid;
    return true;
  }
  return false;
}

namespace {

// Whether process `pid` has ended: gone, or a zombie its parent (the launcher's daemon) has not
// reaped yet.
bool process_ended(int pid) {
  if (pid <= 0) return false;
  if (kill(pid, 0) != 0) return errno == ESRCH;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t paren = text.rfind(')');  // the command name may hold spaces and parentheses
  return paren != std::string::npos && paren + 2 < text.size() && (text[paren + 2] == 'Z' || text[paren + 2] == 'X');
}

}  // namespace

std::string ProgressBoard::describe_gone(const std::vector<std::string>& host_of) const {
  Slot* s = slots_.load();
  if (!s) return {};
  std::string text;
  for (int i = 0; i < local_size_; ++i) {
    if (i == local_ || s[i].signalled.load(std::memory_order_acquire) != 0 || !process_ended(s[i].pid)) continue;
    const int rank = s[i].world_rank;
    const std::string host = rank >= 0 && static_cast<size_t>(rank) < host_of.size() ? host_of[rank] : "?";
    text += fmt::format("{}rank {} (host {}, pid {})", text.empty() ? "" : ", ", rank, host, s[i].pid);
  }
  return text;
}

std::string ProgressBoard::describe_behind(const std::vector<std::string>& host_of) const {
  Peer me;
  std::uint64_t my_phase = 0;
  if (!read(local_, me, my_phase)) return {};
  auto calls = [](std::uint64_t n) { return fmt::format("{} call{}", n, n == 1 ? "" : "s"); };
  std::string text;
  for (int i = 0; i < local_size_; ++i) {
    Peer p;
    std::uint64_t phase = 0;
    if (i == local_ || !read(i, p, phase)) continue;
    const std::int64_t silent_ms = p.alive_ms > 0 ? now_ms() - p.alive_ms : 0;
    const bool stalled = silent_ms > kStalledAfterMs;
    const bool behind = phase < my_phase || (phase == my_phase && p.calls < me.calls);
    if (!behind && !stalled) continue;
    const std::string host = p.rank >= 0 && static_cast<size_t>(p.rank) < host_of.size() ? host_of[p.rank] : "?";
    text += fmt::format("{}rank {} (host {})", text.empty() ? "" : "; ", p.rank, host);
    if (!behind) text += fmt::format(" is at this rank's point ('{}', {} started)", p.phase, calls(p.calls));
    else if (phase == my_phase) text += fmt::format(" started {} there, this rank {}", calls(p.calls), calls(me.calls));
    else text += fmt::format(" is still in '{}' ({} started)", p.phase, calls(p.calls));
    if (stalled && process_ended(p.pid)) text += " and has ended (its process is gone)";
    else if (stalled)
      text += fmt::format(" and has not run for {:.1f} s: stopped (SIGSTOP, a debugger) or given no CPU",
                          silent_ms / 1000.0);
  }
  return text;
}

}  // namespace ccbench
