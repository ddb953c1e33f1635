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

  // From any thread, without MPI: the ranks of this node behind this rank, with where they are:
  // "rank 1 (host a) started 1 call there, this rank 2 calls" (same phase) or "rank 1 (host a)
  // is still in '<phase>' (3 calls started)", joined by "; "; "" when none is behind.
  std::string describe_behind(const std::vector<std::string>& host_of) const;

 private:
  // 128 bytes, so that ranks write separate cache lines when the window's base is 64-byte
  // aligned; MPI promises only 8-byte alignment, which is all the atomics need.
  struct Slot {
    std::atomic<std::uint32_t> seq;    // odd while the owner rewrites the phase
    std::int32_t world_rank;
    std::atomic<std::uint64_t> phase;  // phases entered so far
    std::atomic<std::uint64_t> calls;  // calls started in the current phase
    char name[104];
  };
  static_assert(sizeof(Slot) == 128 && alignof(Slot) == 8);
  struct Peer {
    int rank = -1;            // world rank
    std::string phase;        // the phase it is in
    std::uint64_t calls = 0;  // calls it started in that phase
  };
  bool read(int i, Peer& out, std::uint64_t& phase) const;

  MPI_Comm node_ = MPI_COMM_NULL;
  MPI_Win win_ = MPI_WIN_NULL;
  std::atomic<Slot*> slots_{nullptr};  // the node's slots, by node-local rank
  int local_ = 0, local_size_ = 0;
};

}  // namespace ccbench
