#pragma once
// Where each rank of this node is in the run: the phase it last entered (the watchdog's phases)
// and how many synchronising calls (collectives, barriers) it started in that phase, kept in
// memory shared by the node's ranks (an MPI shared-memory window).
//
// When a deadline expires inside MPI or NCCL, which cannot say whom they wait for, the rank reads
// the board without any MPI call and names the ranks of its node that are behind its own point.
// Ranks on other nodes are not visible from here; their own node-mates name them.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include <mpi.h>

namespace ccbench {

class ProgressBoard {
 public:
  // Collective over `world`. Throws Error(runtime) when MPI cannot make the window.
  explicit ProgressBoard(MPI_Comm world);
  // Collective: call free() on every rank while they are in step (before MPI_Finalize).
  ~ProgressBoard();
  ProgressBoard(const ProgressBoard&) = delete;
  ProgressBoard& operator=(const ProgressBoard&) = delete;
  void free();

  // This rank's progress; only the owning rank's main thread calls these.
  void enter_phase(const std::string& phase);
  void arrive();  // one more synchronising call started in the current phase
  // This rank is alive: called by its watchdog thread every check interval. A process stopped
  // (SIGSTOP, a debugger) or never scheduled stops beating, whatever point its calls reached.
  void beat();
  // Calls this rank started in its current phase (its own slot).
  std::uint64_t own_calls() const;
  // This rank got signal `sig` and is ending on it (called from its signal thread, first thing):
  // its node-mates then know that its process ended on a signal, not killed outright or crashed.
  void mark_signalled(int sig);

  // From any thread, without MPI: the ranks of this node behind this rank, with where they are:
  // "rank 1 (host a) started 1 call there, this rank 2 calls" (same phase) or "rank 1 (host a)
  // is still in '<phase>' (3 calls started)", and the ranks that have not run for kStalledAfter
  // whatever their point ("rank 0 (host a) has not run for 4.2 s: stopped, or given no CPU"),
  // joined by "; "; "" when none is behind or stalled.
  std::string describe_behind(const std::vector<std::string>& host_of) const;

  // From any thread, without MPI: the ranks of this node whose process no longer runs (gone, or
  // dead and not yet reaped) and never marked a signal, "rank 1 (host a, pid 4242)" joined by ", ";
  // "" when none. A rank killed outright (SIGKILL, the OOM killer) or crashed says nothing itself:
  // its node-mates name it. A rank that the launcher ended with SIGTERM before this rank got its
  // own SIGTERM (a node-mate scheduled first) marked itself and is not named.
  std::string describe_gone(const std::vector<std::string>& host_of) const;

  // A rank whose watchdog has not beaten for this long is not running: 10 missed beats of 100 ms,
  // far beyond a time slice even with a few ranks per hardware thread, and short beside a deadline
  // (a rank stopped 2 s before its peer's 3 s deadline went unnamed with 2 s).
  static constexpr std::int64_t kStalledAfterMs = 1000;

 private:
  // 128 bytes, so that ranks write separate cache lines when the window's base is 64-byte
  // aligned; MPI promises only 8-byte alignment, which is all the atomics need.
  struct Slot {
    std::atomic<std::uint32_t> seq;  // odd while the owner rewrites the phase
    std::int32_t world_rank;
    std::int32_t pid;                     // the rank's process, on this node
    std::atomic<std::int32_t> signalled;  // the signal this rank is ending on; 0 while none
    std::atomic<std::uint64_t> phase;     // phases entered so far
    std::atomic<std::uint64_t> calls;     // calls started in the current phase
    std::atomic<std::int64_t> alive_ms;   // the steady clock (CLOCK_MONOTONIC, one per host) at its last beat
    char name[88];
  };
  static_assert(sizeof(Slot) == 128 && alignof(Slot) == 8);
  struct Peer {
    int rank = -1;  // world rank
    int pid = 0;
    std::string phase;          // the phase it is in
    std::uint64_t calls = 0;    // calls it started in that phase
    std::int64_t alive_ms = 0;  // its last beat; 0 before the first
  };
  bool read(int i, Peer& out, std::uint64_t& phase) const;

  MPI_Comm node_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  std::atomic<Slot*> slots_{nullptr};  // the node's slots, by node-local rank
  std::mutex beat_mu_;                 // beat() never writes into a window free() is unmapping
  int local_ = 0, local_size_ = 0;
};

}  // namespace ccbench
