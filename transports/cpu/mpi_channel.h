#pragma once
// Channels over MPI point-to-point, for ranks on different nodes (or when --transport mpi).
//
// Same slot protocol as the shared-memory channel, with the slots on each side:
//   sender    owns `depth` slots; post() starts an MPI_Isend from the slot; a slot can be filled
//             again once its previous Isend completed (MPI_Test);
//   receiver  owns `depth` slots with an MPI_Irecv pre-posted into each, in order; try_peek()
//             tests the oldest one (MPI_Get_count gives the size); release() re-posts it.
// MPI's non-overtaking rule (same source, tag and communicator) keeps the slots in order. The
// communicator is owned by the caller (the ChannelSet's private duplicate) and must outlive the
// channel; one tag per channel tells channels between the same pair apart.
#include <cstddef>
#include <memory>
#include <string_view>
#include <vector>

#include <mpi.h>

#include "transports/channel.h"
#include "transports/slot_memory.h"

namespace ccbench {

class MpiSendChannel final : public SendChannel {
 public:
  // slot_bytes <= INT_MAX; depth >= 1. Non-blocking; no communication yet.
  MpiSendChannel(MPI_Comm comm, int peer, int tag, size_t slot_bytes, int depth);
  // Sends still in flight are left to complete in the background (their slots are leaked rather
  // than freed under MPI); after a clean run try_drain() has completed them all.
  ~MpiSendChannel() override;

  void* try_acquire() override;
  void post(size_t bytes) override;
  size_t slot_bytes() const override { return slot_bytes_; }
  bool try_drain() override;

 private:
  MPI_Comm comm_;
  int peer_, tag_;
  size_t slot_bytes_;
  std::vector<MPI_Request> req_;
  SlotMemory mem_;
  std::uint64_t tail_ = 0;  // slots posted
};

class MpiRecvChannel final : public RecvChannel {
 public:
  // Allocates the slots; start() posts the receives (after set-up traffic on the pair is over).
  MpiRecvChannel(MPI_Comm comm, int peer, int tag, size_t slot_bytes, int depth);
  ~MpiRecvChannel() override;  // cancels the receives still posted

  void start();
  const void* try_peek(size_t* bytes) override;
  void release() override;
  size_t slot_bytes() const override { return slot_bytes_; }

 private:
  void post_slot(size_t i);
  MPI_Comm comm_;
  int peer_, tag_;
  size_t slot_bytes_;
  std::vector<MPI_Request> req_;
  SlotMemory mem_;
  std::uint64_t head_ = 0;  // slots released
  bool ready_ = false;      // the oldest receive completed (its size is in ready_bytes_)
  size_t ready_bytes_ = 0;
};

}  // namespace ccbench
