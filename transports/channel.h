#pragma once
// CPU channels: how bytes move from one rank to one peer for the CPU executors.
//
// A connection between two ranks is a pair of one-directional channels. Data moves in slots: a
// sender fills up to `depth` slots of at most slot_bytes() each before the receiver frees them.
// Every call is non-blocking; the executor polls and backs off (transports/wait.h). All calls on
// one channel come from one thread.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace ccbench {

// Zero-copy ends, offered by transports that move bytes straight from and into the caller's
// memory: no copy through the channel's own slots. tcp offers them always (the socket calls read
// and write the caller's buffers); ib where the caller gave the channel its own slot memory
// (ChannelRequest::slots), which it registers: sends must then lie in those slots, and a receive
// names the slot the peer's RDMA WRITE has already filled; ofi as ib, and its send end also for any
// of the caller's memory where the provider needs no registration to send (the CPU executors send
// from their buffers through it, collectives/cpu/executor.h). The depth and credits are the
// channel's as for slot posts. Same thread rule as the channel.
class DirectSend {
 public:
  virtual ~DirectSend() = default;
  // Queues `bytes` (<= slot_bytes(), else Error(runtime)) at `data` as the next message and
  // writes what the transport takes now; false, with nothing queued, while every slot is still
  // held by the receiver. The caller keeps those bytes untouched until sent() counts the post.
  virtual bool try_post_from(const void* data, size_t bytes) = 0;
  // Posts so far (of either kind, in order) whose bytes have wholly left the caller's memory;
  // try_drain() moves them on.
  virtual std::uint64_t sent() const = 0;
};

class DirectRecv {
 public:
  virtual ~DirectRecv() = default;
  // Reads the next message straight into `dst` (room for `cap` bytes) and sets *bytes; false while
  // it has not wholly arrived. Once a call has begun a message, the calls that follow must pass
  // the same dst until one returns true (Error(runtime) otherwise). A message longer than cap is
  // Error(runtime) as a malformed one. The message counts as held, as a peeked slot, until the
  // channel's release(): releasing is what grants the sender its credit back. A channel used
  // this way must not also be read with try_peek() (Error(runtime)).
  virtual bool try_receive_into(void* dst, size_t cap, size_t* bytes) = 0;
};

class SendChannel {
 public:
  virtual ~SendChannel() = default;
  // The next free slot to fill, or nullptr while every slot is still held by the receiver.
  // Calling it again before post() returns the same slot.
  virtual void* try_acquire() = 0;
  // Hands the slot from try_acquire(), holding `bytes` (<= slot_bytes()), to the receiver.
  virtual void post(size_t bytes) = 0;
  virtual size_t slot_bytes() const = 0;
  // Polls outstanding transfers; true once every posted slot has been taken by the transport
  // (the executor calls it before returning so that no send is still in flight).
  virtual bool try_drain() { return true; }
  // The zero-copy end, or nullptr where the transport has none.
  virtual DirectSend* direct() { return nullptr; }
};

class RecvChannel {
 public:
  virtual ~RecvChannel() = default;
  // The oldest filled slot and its size in *bytes, or nullptr while none has arrived.
  // Calling it again before release() returns the same slot.
  virtual const void* try_peek(size_t* bytes) = 0;
  // Gives the slot from try_peek() (or the oldest message of try_receive_into()) back to the sender.
  virtual void release() = 0;
  virtual size_t slot_bytes() const = 0;
  // The zero-copy end, or nullptr where the transport has none.
  virtual DirectRecv* direct() { return nullptr; }
};

}  // namespace ccbench
