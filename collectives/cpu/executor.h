#pragma once
// The CPU progress engine. A collective is a few Flows (state machines over channels: a ring, the
// up and down halves of each tree, ...); run_flows() polls them round-robin without blocking, so
// independent flows overlap, and backs off (transports/wait.h) while none can move. Every wait is
// bounded: a flow that sees no progress for the timeout ends the run with Error(timeout) naming
// what it waited for.
//
// A Move is the data movement primitive the schedules are written in (as NCCL's primitives):
// read my input piece and/or received slots, reduce them, write my output piece and/or slots to
// send, in one pass over the data.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collectives/cpu/reduce_kernels.h"
#include "transports/channel.h"

namespace ccbench {

// Set from any thread (a watchdog) to make every CPU wait give up: run_flows() then throws
// Error(timeout, "aborted: ...") within milliseconds. Stays set until cleared.
extern std::atomic<bool> cpu_abort_requested;

// Whether this node runs more ranks than it has cores (set by the implementations' setup()):
// waits then yield at once instead of spinning first.
extern std::atomic<bool> cpu_oversubscribed;

class Flow {
 public:
  virtual ~Flow() = default;
  // Tries the next operation without blocking; true if it made progress (moved data or
  // finished). Called only while !done(). Throws Error on protocol or transport failures.
  virtual bool advance() = 0;
  virtual bool done() const = 0;
  // What it waits for, for timeout messages: "data from rank 2 (ring step 3 of loop 0)"; empty
  // when it only waits for other flows.
  virtual std::string waiting_for() const = 0;
};

// Runs `flows` until all are done, on the calling thread. `what` names the run in messages
// ("allreduce/ring"), `rank` is this rank. Throws Error(timeout) when no flow progressed for
// `timeout` ("<what>: rank R waited N s for <waiting_for() of the stuck flows>") or when
// cpu_abort_requested is set; errors from flows get "<what>: rank R: " in front. After a throw
// the channels are in an unknown state: the implementation must not be used again.
void run_flows(std::span<Flow* const> flows, std::chrono::milliseconds timeout, int rank, std::string_view what);

// One step: src = [in] + received slots, dst = [out] + slots to send;
// dst[k] = src[0] op src[1] op ... (finalized when `finalize`), then sends are posted and the
// received slots released. A single source is copied. count * element size <= slot size.
// Where a send channel has a zero-copy end (channel.h's direct()) and the bytes to send already lie
// in the caller's memory, they go from there instead of through a slot: from `out`, which the move
// fills with exactly what a slot would hold, or from `in` for a plain send (no receives, nothing
// to finalize). The schedules never write such memory again within a call before the bytes left
// (each output piece is written once; an input piece in place is overwritten only by a result that
// needed the peer to have received it), and the executors drain every send before returning.
struct Move {
  const void* in = nullptr;  // this rank's input piece, or nullptr
  void* out = nullptr;       // this rank's output piece, or nullptr (may equal `in`)
  RecvChannel* from[2] = {nullptr, nullptr};
  SendChannel* to[2] = {nullptr, nullptr};
  int from_rank[2] = {-1, -1};
  int to_rank[2] = {-1, -1};
  int nfrom = 0, nto = 0;
  size_t count = 0;  // elements
  bool finalize = false;
  // try_move's progress: whether the reduction ran, and the direct sends (bit i: to[i]) it still
  // has to post (a zero-copy end without a free slot yet).
  bool reduced = false;
  unsigned direct_left = 0;

  void recv_from(RecvChannel* c, int rank) {
    from[nfrom] = c;
    from_rank[nfrom++] = rank;
  }
  void send_to(SendChannel* c, int rank) {
    to[nto] = c;
    to_rank[nto++] = rank;
  }
};

// What a move that could not run is missing.
struct MoveWait {
  bool recv = true;  // true: data to receive; false: a free slot to send into
  int rank = -1;     // the peer
};

// Performs `m` if every slot it needs is there (true); otherwise sets *wait and returns false,
// having done nothing, or (m.reduced now set) having reduced and released what it received while a
// zero-copy send still waits for a free slot: the next call posts only what is left.
// Throws Error(runtime) when a received slot's size differs from the expected one.
bool try_move(Move& m, const ReduceKernels& k, MoveWait* wait);

// A flow of moves in order, produced one at a time by next().
class MoveFlow : public Flow {
 public:
  explicit MoveFlow(const ReduceKernels& k) : kernels_(k) {}
  bool advance() override;
  bool done() const override { return done_; }
  std::string waiting_for() const override;

 protected:
  // Fills the next move (never an empty one) and returns true, or returns false after the last.
  virtual bool next(Move& m) = 0;
  // Where the move that next() returned last is in the schedule: "ring step 3 of loop 0".
  virtual std::string where() const = 0;

 private:
  const ReduceKernels& kernels_;
  Move cur_;
  MoveWait wait_;
  bool have_ = false, done_ = false;
};

// One contiguous range streamed in slot-sized pieces over one channel, in order: `in` to a peer
// (sending) or from a peer into `out` (receiving). `what` names it in messages ("sendrecv send").
class StreamFlow final : public MoveFlow {
 public:
  static StreamFlow sending(const ReduceKernels& k, const void* in, size_t count, size_t slice, SendChannel* to,
                            int peer, std::string what) {
    return StreamFlow(k, in, nullptr, count, slice, to, nullptr, peer, std::move(what));
  }
  static StreamFlow receiving(const ReduceKernels& k, void* out, size_t count, size_t slice, RecvChannel* from,
                              int peer, std::string what) {
    return StreamFlow(k, nullptr, out, count, slice, nullptr, from, peer, std::move(what));
  }

 protected:
  bool next(Move& m) override;
  std::string where() const override;

 private:
  StreamFlow(const ReduceKernels& k, const void* in, void* out, size_t count, size_t slice, SendChannel* to,
             RecvChannel* from, int peer, std::string what);
  const void* in_;
  void* out_;
  size_t count_, slice_, esz_, pieces_, piece_ = 0;
  SendChannel* to_;
  RecvChannel* from_;
  int peer_;
  std::string what_;
};

// Done once the flows in `after` are done and then every send channel has no transfer in flight
// (SendChannel::try_drain()): run it with the flows that send, so that run_flows() returns with
// nothing still on its way.
class DrainFlow final : public Flow {
 public:
  DrainFlow(std::vector<SendChannel*> channels, std::vector<int> peers, std::vector<const Flow*> after);
  bool advance() override;
  bool done() const override { return next_ == channels_.size(); }
  std::string waiting_for() const override;

 private:
  std::vector<SendChannel*> channels_;
  std::vector<int> peers_;
  std::vector<const Flow*> after_;
  size_t next_ = 0;
};

}  // namespace ccbench
