#pragma once
// CPU channels: how bytes move from one rank to one peer for the CPU executors.
//
// A connection between two ranks is a pair of one-directional channels. Data moves in slots: a
// sender fills up to `depth` slots of at most slot_bytes() each before the receiver frees them.
// Every call is non-blocking; the executor polls and backs off (transports/wait.h). All calls on
// one channel come from one thread.
#include <cstddef>
#include <memory>
#include <string>

namespace ccbench {

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
};

class RecvChannel {
 public:
  virtual ~RecvChannel() = default;
  // The oldest filled slot and its size in *bytes, or nullptr while none has arrived.
  // Calling it again before release() returns the same slot.
  virtual const void* try_peek(size_t* bytes) = 0;
  // Gives the slot from try_peek() back to the sender.
  virtual void release() = 0;
  virtual size_t slot_bytes() const = 0;
};

}  // namespace ccbench
