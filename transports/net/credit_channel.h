#pragma once
// One channel for the RDMA-style transports (ib, ofi): the receiver owns `depth` slots the sender
// writes into directly, one credit back per slot released (slot_flow.h keeps the counts). This
// header holds the whole channel skeleton, the slot bookkeeping and the waits of both ends, the
// zero-copy ends (channel.h's direct()) and their error wording; a fabric supplies only its
// primitives: registered memory and connection data (its End, derived from CreditEnd), a poll
// of its completions, a write into the peer's slot, a credit back.
//
// The channels are templates over the fabric's final class (CRTP), so that the per-slot calls
// into the fabric are direct and inlined, as they were when each fabric spelled its own channel.
// Messages start with the transport's name ("ib", "ofi"). Caller bugs (a post longer than a
// slot, a zero-copy call on memory the channel does not own) are Error(runtime).
// Unit-tested with an in-memory fabric in tests/unit/test_credit_channel.cpp.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <mpi.h>

#include "core/error.h"
#include "transports/channel.h"
#include "transports/connect.h"
#include "core/transport_names.h"
#include "transports/net/gpu_direct.h"
#include "transports/net/slot_flow.h"
#include "transports/slot_memory.h"

namespace ccbench {

// What both ends of a credit channel hold: the slots (their own, or the caller's for zero-copy
// ends, SetupArgs::slots) and who the peer is. A fabric's end derives from it and adds its
// registered memory and connection.
class CreditEnd {
 public:
  // `transport` names the channel in messages; `huge_slots`: the channel's own slots in huge
  // pages (SlotMemory::allocate_huge).
  CreditEnd(Transport transport, const SetupArgs& a, bool huge_slots);
  CreditEnd(const CreditEnd&) = delete;
  CreditEnd& operator=(const CreditEnd&) = delete;

 protected:
  char* slot(std::uint32_t k) const { return reinterpret_cast<char*>(region_.base) + region_.slot_offset(k); }
  std::uint32_t slot_of(std::uint64_t seq) const {
    return static_cast<std::uint32_t>(seq % static_cast<std::uint64_t>(depth_));
  }

  const char* transport_;  // name(transport): the names table's literals end in a NUL
  std::string peer_;       // "rank 3 (host h2)"
  int peer_rank_, tag_;
  std::size_t slot_bytes_;
  int depth_;
  bool caller_slots_;  // zero-copy ends: the slots are the caller's
  int gpu_;            // the CUDA device holding the caller's slots (GPUDirect), or -1
  SlotMemory own_;     // the slots, unless the caller gave its own
  SlotRegion region_;  // the slots, own or the caller's
};

// Polls `req` (an exchange of connection data over MPI) until it completes; Error(timeout)
// "<transport>: channel set-up: <what>" once `deadline` passes.
void wait_setup_request(MPI_Request& req, MPI_Status* st, std::chrono::steady_clock::time_point deadline,
                        const char* transport, const std::string& what);

// The receiving end. `Channel` derives from it and supplies:
//   void progress();                       polls the fabric once; each message that has landed
//                                          goes to arrived()
//   void return_credit(std::uint32_t k);   slot k is free again (released, in order): tell the
//                                          sender (and re-arm the slot where the fabric must)
// End: the fabric's end, constructed from (SetupArgs, remote_write = whether the peer writes
// the slots with RDMA writes).
template <class Channel, class End>
class CreditRecvChannel : public RecvChannel, public DirectRecv, public End {
 public:
  CreditRecvChannel(const SetupArgs& a, bool remote_write)
      : End(a, remote_write), ring_(this->transport_, static_cast<std::uint32_t>(this->depth_)) {}

  const void* try_peek(std::size_t* bytes) override {
    if (this->caller_slots_)
      fail(ExitCode::runtime, "{}: the zero-copy channel from {} is read with try_receive_into", this->transport_,
           this->peer_);
    if (!ring_.peek()) channel().progress();
    const auto len = ring_.peek();
    if (!len) return nullptr;
    *bytes = static_cast<std::size_t>(*len);
    return this->slot(this->slot_of(ring_.released()));
  }
  void release() override {
    const std::uint32_t freed = this->slot_of(ring_.released());
    ring_.release();
    channel().return_credit(freed);
  }
  std::size_t slot_bytes() const override { return this->slot_bytes_; }
  DirectRecv* direct() override { return this->caller_slots_ ? this : nullptr; }
  // The peer's write has already landed in the caller's slot: `dst` must be that slot.
  bool try_receive_into(void* dst, std::size_t cap, std::size_t* bytes) override {
    const std::uint64_t slot_addr = this->region_.base + this->region_.slot_offset(this->slot_of(ring_.taken()));
    if (reinterpret_cast<std::uint64_t>(dst) != slot_addr || cap < this->slot_bytes_)
      fail(ExitCode::runtime,
           "{}: zero-copy receive from {} into {} ({} bytes), but the peer writes slot {:#x} ({} "
           "bytes)",
           this->transport_, this->peer_, dst, cap, slot_addr, this->slot_bytes_);
    auto got = ring_.take();
    if (!got) {
      channel().progress();
      got = ring_.take();
    }
    if (!got) return false;
    // The GPU reads what the NIC wrote only after a flush.
    if (this->gpu_ >= 0) flush_gpudirect_writes(this->gpu_, this->transport_);
    *bytes = static_cast<std::size_t>(got->bytes);
    return true;
  }

 protected:
  // Message `seq`, `bytes` long, has landed in slot seq % depth.
  void arrived(std::uint64_t seq, std::uint64_t bytes) { ring_.on_arrival(seq, bytes, this->peer_); }

  ArrivalRing ring_;

 private:
  Channel& channel() { return static_cast<Channel&>(*this); }
};

// The sending end. `Channel` derives from it and supplies:
//   void progress();        polls the fabric once: completions go to written(), credits to
//                           credited() or credited_up_to()
//   void write_slot(std::uint64_t seq, std::uint32_t k, const char* from, std::size_t bytes,
//                   bool registered);
//                           posts `bytes` at `from` into the peer's slot k as post `seq`, with
//                           the notice that tells the receiver; `from` lies in the registered
//                           slots where `registered`, else in any of the caller's memory
//   bool sends_any_memory() const;   whether try_post_from() takes memory outside the slots
//   bool flushed() const;   no notice due after a write's completion still waits in a queue
//                           of ours for room in the fabric; try_drain() waits for it
// End: as CreditRecvChannel's, constructed with remote_write false.
template <class Channel, class End>
class CreditSendChannel : public SendChannel, public DirectSend, public End {
 public:
  explicit CreditSendChannel(const SetupArgs& a)
      : End(a, false), window_(this->transport_, static_cast<std::uint32_t>(this->depth_)),
        writes_(this->transport_, static_cast<std::uint32_t>(this->depth_)) {}

  void* try_acquire() override {
    if (!can_post()) channel().progress();
    return can_post() ? this->slot(window_.slot_to_fill()) : nullptr;
  }
  void post(std::size_t bytes) override {
    if (bytes > this->slot_bytes_)
      fail(ExitCode::runtime, "{}: post of {} bytes to {} into slots of {}", this->transport_, bytes, this->peer_,
           this->slot_bytes_);
    send(this->slot(window_.slot_to_fill()), bytes, true);
  }
  std::size_t slot_bytes() const override { return this->slot_bytes_; }
  bool try_drain() override {
    if (!drained()) channel().progress();
    return drained();
  }
  DirectSend* direct() override { return this->caller_slots_ || channel().sends_any_memory() ? this : nullptr; }
  // The bytes go as they are: from wherever they lie in the caller's registered slots, or from
  // any memory (never registered) where the fabric sends so.
  bool try_post_from(const void* data, std::size_t bytes) override {
    if (bytes > this->slot_bytes_)
      fail(ExitCode::runtime, "{}: zero-copy send of {} bytes to {} into slots of {}", this->transport_, bytes,
           this->peer_, this->slot_bytes_);
    if (this->caller_slots_) (void)this->region_.offset_of(reinterpret_cast<std::uint64_t>(data), bytes);
    if (!can_post()) channel().progress();
    if (!can_post()) return false;
    send(static_cast<const char*>(data), bytes, this->caller_slots_);
    return true;
  }
  std::uint64_t sent() const override { return writes_.done(); }

 protected:
  // Post `seq`'s bytes have left this rank's memory (its transfers may complete out of order).
  void written(std::uint64_t seq) { writes_.on_complete(seq); }
  // The receiver released `n` more slots.
  void credited(std::uint32_t n) { window_.on_credit(n); }
  // The receiver has released `released` slots in all (counts that only grow: an older one is
  // no news).
  void credited_up_to(std::uint64_t released) {
    if (released > window_.credited()) window_.on_credit(static_cast<std::uint32_t>(released - window_.credited()));
  }
  std::uint64_t written_so_far() const { return writes_.done(); }

 private:
  Channel& channel() { return static_cast<Channel&>(*this); }
  const Channel& channel() const { return static_cast<const Channel&>(*this); }
  // A slot is free once the receiver has credited it back and its own transfer has completed (a
  // credit can arrive before the completion of the transfer it answers).
  // Every post's bytes have left, and its notice too: the receiver can see all of them.
  bool drained() const { return writes_.outstanding() == 0 && channel().flushed(); }
  bool can_post() const { return window_.can_post() && writes_.outstanding() < this->region_.depth; }
  void send(const char* from, std::size_t bytes, bool registered) {
    const std::uint64_t seq = window_.posted();
    const std::uint32_t k = window_.slot_to_fill();
    window_.on_post();
    writes_.on_post();
    channel().write_slot(seq, k, from, bytes, registered);
  }

  CreditWindow window_;
  InOrderCompletions writes_;  // which posts' bytes have left the slots
};

// The ops table entry of a credit transport (never chosen by "auto"): its channels over the job
// `prepare` opens; Recv::connected(SetupArgs) waits, bounded, for what the senders did in attach.
template <class Recv, class Send>
TransportOps credit_transport_ops(std::string_view name, bool (*can_connect)(const RankLayout&, int, int, std::string*),
                                  std::unique_ptr<TransportJob> (*prepare)(const SetupArgs&)) {
  return {
      name,
      false,
      can_connect,
      prepare,
      [](const SetupArgs& a, ChannelSetup*) -> std::unique_ptr<RecvChannel> { return std::make_unique<Recv>(a); },
      [](const SetupArgs& a, const ChannelSetup&) -> std::unique_ptr<SendChannel> { return std::make_unique<Send>(a); },
      [](const SetupArgs& a, RecvChannel& ch) { static_cast<Recv&>(ch).connected(a); }};
}

}  // namespace ccbench
