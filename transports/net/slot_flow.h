#pragma once
// Credits and slot order of the RDMA-style channels (ib, ofi): the receiver owns `depth` slots the
// sender writes into directly; the sender fills at most `depth` slots ahead of the credits the
// receiver returns as it releases them, and a zero-copy sender reuses its own slot only once the
// transfer out of it has completed, in post order. Pure logic, no device: unit-tested in
// tests/unit/test_ib_logic.cpp and test_ofi_logic.cpp.
//
// Every class names its transport ("ib", "ofi") at the start of its messages. Caller bugs (a post
// without a credit, a release of nothing) and protocol violations by the peer are Error(runtime);
// a zero-sized window is Error(usage).
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace ccbench {

// The sender's view of the receiver's slots: how many it may fill before credits come back.
class CreditWindow {
 public:
  CreditWindow(std::string_view transport, std::uint32_t slots);
  bool can_post() const { return posted_ - credited_ < slots_; }
  std::uint32_t slot_to_fill() const { return static_cast<std::uint32_t>(posted_ % slots_); }
  // Takes the next slot; throws Error(runtime) if none is free (a caller bug).
  void on_post();
  // `n` slots came back; throws Error(runtime) naming both counts when the receiver returns more
  // than were posted (a protocol violation).
  void on_credit(std::uint32_t n);
  std::uint64_t posted() const { return posted_; }
  std::uint64_t credited() const { return credited_; }
  std::uint32_t in_flight() const { return static_cast<std::uint32_t>(posted_ - credited_); }

 private:
  std::string_view transport_;
  std::uint32_t slots_;
  std::uint64_t posted_ = 0, credited_ = 0;
};

// Caller-owned slot memory (zero-copy ends, channel.h's direct()): `depth` slots of `stride`
// bytes from address `base`, registered once; sends name bytes inside it.
struct SlotRegion {
  std::uint64_t base = 0;
  std::uint64_t stride = 0;
  std::uint32_t depth = 0;
  std::uint64_t bytes() const { return stride * depth; }
  std::uint64_t slot_offset(std::uint32_t slot) const { return static_cast<std::uint64_t>(slot) * stride; }
  // The offset of [data, data + bytes) from base; throws Error(runtime) naming both ranges when
  // any of it lies outside the region (a send from memory the channel has not registered).
  std::uint64_t offset_of(std::uint64_t data, std::uint64_t bytes) const;
};

// Posts whose bytes have left the sender's memory, in post order: where transfers can complete
// out of order (several QPs, an unordered provider) a later slot's can complete first, but a
// zero-copy sender may reuse slot k only once posts 0..k have all completed.
class InOrderCompletions {
 public:
  InOrderCompletions(std::string_view transport, std::uint32_t depth);  // at most `depth` outstanding
  void on_post();  // Error(runtime) with `depth` posts outstanding (a caller bug)
  // Post `seq` completed; Error(runtime) when it is not outstanding or completed twice.
  void on_complete(std::uint64_t seq);
  std::uint64_t posted() const { return posted_; }
  std::uint64_t done() const { return done_; }  // posts 0..done()-1 have all completed
  std::uint64_t outstanding() const { return posted_ - done_; }

 private:
  std::string_view transport_;
  std::vector<bool> completed_;  // per slot, for posts in [done_, posted_)
  std::uint64_t posted_ = 0, done_ = 0;
};

// The receiver's slots: the peer writes slot seq % depth once it holds a credit for it; the
// caller takes messages in order (peek for slot reads, take for zero-copy reads) and releases
// them in order, each release owing the sender one credit.
class ArrivalRing {
 public:
  ArrivalRing(std::string_view transport, std::uint32_t depth);
  // The peer's write of message `seq`, `bytes` long, has landed. Error(runtime) naming `peer`
  // when it lands in a slot not yet released (the sender wrote without a credit) or twice.
  void on_arrival(std::uint64_t seq, std::uint64_t bytes, std::string_view peer);
  // The message that may land in `slot` now: the one of [released, released + depth) that maps to
  // it (transports whose completions name the slot, not the sequence number).
  std::uint64_t seq_of_slot(std::uint32_t slot) const;
  // The oldest unreleased message's length, if it has arrived (slot reads).
  std::optional<std::uint64_t> peek() const;
  // The next message not yet taken, if it has arrived: its slot and length (zero-copy reads).
  struct Taken {
    std::uint32_t slot = 0;
    std::uint64_t bytes = 0;
  };
  std::optional<Taken> take();
  // Frees the oldest unreleased message's slot; Error(runtime) when none has arrived.
  void release();
  std::uint64_t released() const { return released_; }
  std::uint64_t taken() const { return taken_; }
  std::uint32_t depth() const { return static_cast<std::uint32_t>(length_.size()); }

 private:
  static constexpr std::uint64_t kEmpty = UINT64_MAX;
  std::string_view transport_;
  std::vector<std::uint64_t> length_;  // per slot: the arrived message's length, or kEmpty
  std::uint64_t released_ = 0, taken_ = 0;
};

}  // namespace ccbench
