#include "harness/job/progress_board.h"

#include <algorithm>
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
  slots_.store(nullptr);
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
    std::atomic_thread_fence(std::memory_order_acquire);
    if (slot.seq.load(std::memory_order_relaxed) != before) continue;
    name[sizeof name - 1] = '\0';
    out.phase = name;
    out.rank = slot.world_rank;
    return true;
  }
  return false;
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
    if (phase > my_phase || (phase == my_phase && p.calls >= me.calls)) continue;  // not behind
    const std::string host = p.rank >= 0 && static_cast<size_t>(p.rank) < host_of.size() ? host_of[p.rank] : "?";
    text += text.empty() ? "" : "; ";
    if (phase == my_phase)
      text += fmt::format("rank {} (host {}) started {} there, this rank {}", p.rank, host, calls(p.calls),
                          calls(me.calls));
    else
      text += fmt::format("rank {} (host {}) is still in '{}' ({} started)", p.rank, host, p.phase, calls(p.calls));
  }
  return text;
}

}  // namespace ccbench
