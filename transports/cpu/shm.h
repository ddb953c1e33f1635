#pragma once
// Shared-memory channels between ranks of one node.
//
// One directed channel is one POSIX shared-memory segment, created by the RECEIVER:
//
//   [header: magic, geometry | tail (own cache line) | head (own cache line) | sizes[depth]]
//   [slot 0][slot 1]...[slot depth-1]           every slot starts on a page boundary
//
// `tail` counts slots posted by the sender, `head` slots released by the receiver; slot k lives
// at index k % depth. The sender fills slot[tail % depth] while tail - head < depth, stores its
// byte count, then publishes it with a release store of tail. The receiver sees it with an
// acquire load of tail and gives it back with a release store of head. Each side keeps a cached
// copy of the other's counter and re-reads it only when it would otherwise have to wait.
//
// Set-up (transports/connect.h does it): the receiver creates the segment under an unguessable
// name (/ccbench-<128 random bits in hex>, mode 0600, O_EXCL), sends the name to the sender over
// MPI, the sender attaches and checks the header, and once every rank has attached the receiver
// unlinks the name, so nothing is left in /dev/shm even if a rank crashes later. Both ends unmap
// in their destructors.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "transports/channel.h"

namespace ccbench {

// One mapping of a channel segment (internal to the shm transport; shared by both ends).
struct ShmSegment {
  void* base = nullptr;
  size_t bytes = 0;
  ShmSegment() = default;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;
  ~ShmSegment();  // munmap
};

// Receiving end: owns the segment and its name.
class ShmRecvChannel final : public RecvChannel {
 public:
  // Creates, sizes (memory reserved up front, so a full /dev/shm fails here and not later with
  // SIGBUS) and maps a new segment. Throws Error(precondition) naming the failing call.
  // slot_bytes > 0 and a multiple of 64; depth >= 1.
  ShmRecvChannel(size_t slot_bytes, int depth);
  ~ShmRecvChannel() override;  // unlinks the name if still linked, then unmaps

  // The name the sender passes to ShmSendChannel ("/ccbench-<32 hex digits>").
  const std::string& name() const { return name_; }
  // Removes the name from /dev/shm; the mapping stays valid. Call once the sender has attached.
  // Idempotent.
  void unlink();

  const void* try_peek(size_t* bytes) override;
  void release() override;
  size_t slot_bytes() const override { return slot_bytes_; }

 private:
  ShmSegment seg_;
  std::string name_;
  bool linked_ = false;
  size_t slot_bytes_ = 0, stride_ = 0;
  std::uint64_t depth_ = 0;
  std::atomic<std::uint64_t>* tail_ = nullptr;
  std::atomic<std::uint64_t>* head_ = nullptr;
  const std::uint64_t* sizes_ = nullptr;
  char* slots_ = nullptr;
  std::uint64_t head_local_ = 0;   // slots released so far (only this end writes head)
  std::uint64_t tail_cached_ = 0;  // last tail read
};

// Sending end: attaches to the receiver's segment.
class ShmSendChannel final : public SendChannel {
 public:
  // Opens and maps `name`; checks that the header's magic and geometry equal (slot_bytes, depth).
  // Throws Error(precondition) naming what failed or differs.
  ShmSendChannel(const std::string& name, size_t slot_bytes, int depth);
  ~ShmSendChannel() override = default;  // unmaps

  void* try_acquire() override;
  void post(size_t bytes) override;
  size_t slot_bytes() const override { return slot_bytes_; }

 private:
  ShmSegment seg_;
  size_t slot_bytes_ = 0, stride_ = 0;
  std::uint64_t depth_ = 0;
  std::atomic<std::uint64_t>* tail_ = nullptr;
  std::atomic<std::uint64_t>* head_ = nullptr;
  std::uint64_t* sizes_ = nullptr;
  char* slots_ = nullptr;
  std::uint64_t tail_local_ = 0;   // slots posted so far (only this end writes tail)
  std::uint64_t head_cached_ = 0;  // last head read
};

}  // namespace ccbench
