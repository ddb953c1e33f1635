#pragma once
// The ring executor's flow (collectives/cpu/ring.cpp), shared with the implementations that run
// rings over parts of the ranks (hier): all-reduce, reduce-scatter and all-gather as ring steps,
// broadcast and reduce as pipelined chains along the ring from and to the root. A ring is a list
// of ranks (RingPeers::order); the schedules work on positions on it.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "collectives/cpu/cpu_common.h"
#include "collectives/cpu/executor.h"
#include "collectives/schedules/ring.h"
#include "core/error.h"
#include "topologies/ring_order.h"

namespace ccbench::cpu {

using schedule::Piece;
using schedule::RingOp;
using schedule::RingStep;

// One ring as this rank sees it: `rank` and its neighbours `next`/`prev` are ranks of the
// communicator (for messages), `n` the ring's length.
struct RingPeers {
  int rank, n, next, prev;
  int pos;                        // this rank's position on the ring
  const std::vector<int>* order;  // the ring: rank at every position
  int rank_at(int position) const { return (*order)[static_cast<size_t>(position)]; }
  int position_of(int r) const { return ring_position(*order, r); }
  SendChannel* to_next;
  RecvChannel* from_prev;
};

// All-reduce, reduce-scatter, all-gather (ring steps), broadcast and reduce (chains from and to the root) as one
// sequence of moves: (loop, step) in order.
class RingFlow final : public MoveFlow {
 public:
  RingFlow(const ReduceKernels& k, const CallArgs& a, const RingPeers& p, size_t slice)
      : MoveFlow(k), a_(a), p_(p), esz_(k.element_bytes()), slice_(slice), align_(align_elements(esz_)) {
    switch (a.spec.coll) {
      case Collective::allreduce:
        steps_ = schedule::ring_allreduce_steps(p.n);
        loops_ = schedule::ring_loops(a.count, p.n, slice);
        break;
      case Collective::reducescatter: steps_ = schedule::ring_reducescatter_steps(p.n); break;
      case Collective::allgather: steps_ = schedule::ring_allgather_steps(p.n); break;
      case Collective::broadcast:
      case Collective::reduce: steps_ = 1; break;
      case Collective::sendrecv:
      case Collective::alltoall:
      case Collective::alltoallv:
      case Collective::gather:
      case Collective::scatter: fail(ExitCode::runtime, "{} is not a ring flow", name(a.spec.coll));
    }
    if (a.spec.coll != Collective::allreduce) loops_ = schedule::div_up(a.count, slice);
  }

 protected:
  bool next(Move& m) override {
    while (loop_ < loops_) {
      if (step_ == steps_) {
        step_ = 0;
        ++loop_;
        continue;
      }
      cur_step_ = step_++;
      if (fill(m, cur_step_)) return true;
    }
    return false;
  }

  std::string where() const override {
    return fmt::format("ring step {} of {}, loop {} of {}", cur_step_, steps_, loop_, loops_);
  }

 private:
  const char* in_at(size_t elem) const { return static_cast<const char*>(a_.send) + elem * esz_; }
  char* out_at(size_t elem) const { return static_cast<char*>(a_.recv) + elem * esz_; }

  // Where step s of the current loop reads and writes, and how much.
  struct Placement {
    RingStep st;
    size_t in_off = 0, out_off = 0, count = 0;
  };

  // All-reduce: NCCL's ring, the same chunk offsets in input and output.
  Placement allreduce_step(int s) const {
    Placement p;
    p.st = schedule::ring_allreduce_step(p_.n, p_.pos, s);
    const Piece pc = schedule::ring_piece(a_.count, p_.n, slice_, align_, loop_, p.st.chunk);
    p.in_off = p.out_off = pc.offset;
    p.count = pc.count;
    return p;
  }
  // Reduce-scatter and all-gather move whole blocks, a slice per loop; chunk k names the rank at
  // position k. Reduce-scatter: it is that rank's block of the input and ends reduced there.
  // All-gather: it is that rank's piece and lands in its block of the output.
  Placement block_step(RingStep st, bool block_of_input) const {
    Placement p;
    p.st = st;
    const size_t off = loop_ * slice_;
    p.count = std::min(slice_, a_.count - off);
    const size_t block = static_cast<size_t>(p_.rank_at(st.chunk)) * a_.count + off;
    p.in_off = block_of_input ? block : off;
    p.out_off = block_of_input ? off : block;
    return p;
  }
  // Reduce: a chain along the ring from the root's successor to the root that reduces on the way
  // (NCCL's ring reduce): the first rank sends its input, the others add theirs and pass it on,
  // the root finalizes.
  Placement reduce_step() const {
    Placement p;
    const int q = schedule::mod_ranks(p_.pos - p_.position_of(a_.spec.root) - 1, p_.n);
    p.st = {q == 0 ? RingOp::send : q == p_.n - 1 ? RingOp::recv_reduce_copy : RingOp::recv_reduce_send, 0};
    p.in_off = p.out_off = loop_ * slice_;
    p.count = std::min(slice_, a_.count - p.in_off);
    return p;
  }
  // Broadcast: a chain along the ring from the root; position q on it decides the op.
  Placement broadcast_step() const {
    Placement p;
    const int q = schedule::mod_ranks(p_.pos - p_.position_of(a_.spec.root), p_.n);
    p.st = {q == 0 ? RingOp::copy_send : q == p_.n - 1 ? RingOp::recv : RingOp::recv_copy_send, 0};
    p.in_off = p.out_off = loop_ * slice_;
    p.count = std::min(slice_, a_.count - p.in_off);
    return p;
  }

  Placement placement(int s) const {
    switch (a_.spec.coll) {
      case Collective::allreduce: return allreduce_step(s);
      case Collective::reducescatter: return block_step(schedule::ring_reducescatter_step(p_.n, p_.pos, s), true);
      case Collective::allgather: return block_step(schedule::ring_allgather_step(p_.n, p_.pos, s), false);
      case Collective::broadcast: return broadcast_step();
      case Collective::reduce: return reduce_step();
      case Collective::sendrecv:
      case Collective::alltoall:
      case Collective::alltoallv:
      case Collective::gather:
      case Collective::scatter: break;
    }
    fail(ExitCode::runtime, "ring: {} is not a ring flow", name(a_.spec.coll));
  }

  // The move of step s of the current loop; false if its piece is empty.
  bool fill(Move& m, int s) {
    const auto [st, in_off, out_off, count] = placement(s);
    if (count == 0) return false;
    m = Move{};
    m.count = count;
    if (schedule::ring_op_reads_input(st.op)) m.in = in_at(in_off);
    if (schedule::ring_op_writes_output(st.op)) m.out = out_at(out_off);
    if (schedule::ring_op_receives(st.op)) m.recv_from(p_.from_prev, p_.prev);
    if (schedule::ring_op_sends(st.op)) m.send_to(p_.to_next, p_.next);
    m.finalize = schedule::ring_op_finalizes(st.op);
    return true;
  }

  const CallArgs& a_;
  RingPeers p_;
  size_t esz_, slice_, align_;
  int steps_ = 0;
  size_t loops_ = 0;
  size_t loop_ = 0;
  int step_ = 0, cur_step_ = 0;
};

}  // namespace ccbench::cpu
