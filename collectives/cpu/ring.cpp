// `ring` on CPU ranks: NCCL's ring algorithms over CPU channels, driven by the schedules of
// collectives/schedules/ring.h. Ranks form the ring in rank order (with block placement by
// mpirun that is node-major). Every step moves one slot-sized piece in one pass over the data:
// e.g. recv_reduce_send reads the received slot and my input and writes straight into the next
// rank's slot. Piece sizes come from the same pure functions on both sides of a channel, so an
// empty piece is skipped by sender and receiver alike.
#include <algorithm>

#include <fmt/format.h>

#include "collectives/cpu/cpu_common.h"
#include "collectives/cpu/cpu_impls.h"
#include "collectives/cpu/executor.h"
#include "collectives/schedules/ring.h"
#include "results/error.h"

namespace ccbench {

namespace {

using schedule::Piece;
using schedule::RingOp;
using schedule::RingStep;

struct RingPeers {
  int rank, n, next, prev;
  SendChannel* to_next;
  RecvChannel* from_prev;
};

// All-reduce, reduce-scatter, all-gather (ring steps) and broadcast (a chain from the root) as one
// sequence of moves: (loop, step) in order.
class RingFlow final : public MoveFlow {
 public:
  RingFlow(const ReduceKernels& k, const CallArgs& a, const RingPeers& p, size_t slice)
      : MoveFlow(k), a_(a), p_(p), esz_(k.element_bytes()), slice_(slice), align_(cpu::align_elements(esz_)) {
    switch (a.spec.coll) {
      case Collective::allreduce:
        steps_ = schedule::ring_allreduce_steps(p.n);
        loops_ = schedule::ring_loops(a.count, p.n, slice);
        break;
      case Collective::reducescatter: steps_ = schedule::ring_reducescatter_steps(p.n); break;
      case Collective::allgather: steps_ = schedule::ring_allgather_steps(p.n); break;
      case Collective::broadcast: steps_ = 1; break;
      case Collective::sendrecv: fail(ExitCode::runtime, "sendrecv is not a ring flow");
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

  // The move of step s of the current loop; false if its piece is empty.
  bool fill(Move& m, int s) {
    RingStep st;
    size_t in_off = 0, out_off = 0, count = 0;
    const size_t c = a_.count;
    switch (a_.spec.coll) {
      case Collective::allreduce: {
        st = schedule::ring_allreduce_step(p_.n, p_.rank, s);
        const Piece pc = schedule::ring_piece(c, p_.n, slice_, align_, loop_, st.chunk);
        in_off = out_off = pc.offset;
        count = pc.count;
        break;
      }
      case Collective::reducescatter: {
        // Chunk k is block k of the input: it ends reduced at rank k.
        st = schedule::ring_reducescatter_step(p_.n, p_.rank, s);
        const size_t off = loop_ * slice_;
        count = std::min(slice_, c - off);
        in_off = static_cast<size_t>(st.chunk) * c + off;
        out_off = off;
        break;
      }
      case Collective::allgather: {
        // Chunk k is rank k's piece: it lands in block k of the output.
        st = schedule::ring_allgather_step(p_.n, p_.rank, s);
        const size_t off = loop_ * slice_;
        count = std::min(slice_, c - off);
        in_off = off;
        out_off = static_cast<size_t>(st.chunk) * c + off;
        break;
      }
      default: {  // broadcast: position q on the chain root, root+1, ...
        const int q = schedule::mod_ranks(p_.rank - a_.spec.root, p_.n);
        st = {q == 0 ? RingOp::copy_send : q == p_.n - 1 ? RingOp::recv : RingOp::recv_copy_send, 0};
        in_off = out_off = loop_ * slice_;
        count = std::min(slice_, c - in_off);
        break;
      }
    }
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

// One direction of sendrecv: my input to the next rank, or the previous rank's data to my output.
class StreamFlow final : public MoveFlow {
 public:
  StreamFlow(const ReduceKernels& k, const CallArgs& a, const RingPeers& p, size_t slice, bool sending)
      : MoveFlow(k), a_(a), p_(p), slice_(slice), sending_(sending), pieces_(schedule::div_up(a.count, slice)) {}

 protected:
  bool next(Move& m) override {
    if (piece_ == pieces_) return false;
    const size_t off = piece_++ * slice_;
    const size_t esz = element_size(a_.spec.dtype);
    m = Move{};
    m.count = std::min(slice_, a_.count - off);
    if (sending_) {
      m.in = static_cast<const char*>(a_.send) + off * esz;
      m.send_to(p_.to_next, p_.next);
    } else {
      m.out = static_cast<char*>(a_.recv) + off * esz;
      m.recv_from(p_.from_prev, p_.prev);
    }
    return true;
  }
  std::string where() const override {
    return fmt::format("sendrecv {} piece {} of {}", sending_ ? "send" : "receive", piece_ - 1, pieces_);
  }

 private:
  const CallArgs& a_;
  RingPeers p_;
  size_t slice_;
  bool sending_;
  size_t pieces_, piece_ = 0;
};

class RingCpu final : public Implementation {
 public:
  std::optional<std::string> unsupported(const CaseSpec&, const ImplContext& ctx) const override {
    return cpu::unsupported_context(ctx, "ring");
  }

  void setup(const ImplContext& ctx) override {
    if (!ctx.layout) fail(ExitCode::runtime, "ring: setup() needs the rank layout");
    if (cpu::unsupported_context(ctx, "ring")) return;  // unsupported() skips every case, with the reason
    cfg_ = cpu::slot_config_from_env();
    timeout_ = ctx.timeout;
    cpu::note_node_load(*ctx.layout);
    int rank = 0, n = 1;
    MPI_Comm_rank(ctx.comm, &rank);
    MPI_Comm_size(ctx.comm, &n);
    peers_ = {rank, n, (rank + 1) % n, (rank + n - 1) % n, nullptr, nullptr};
    std::vector<ChannelRequest> req;
    if (n > 1) req = {{peers_.next, 0, true}, {peers_.prev, 0, false}};
    channels_ = connect_channels(ctx.comm, *ctx.layout, req, cpu::channel_options(ctx, cfg_));
    if (n > 1) {
      peers_.to_next = &channels_->send(0);
      peers_.from_prev = &channels_->recv(1);
    }
  }

  void run(const CallArgs& a) override {
    if (!channels_) fail(ExitCode::runtime, "ring: run() before setup()");
    if (peers_.n == 1) return cpu::run_single_rank(a);
    const Collective coll = a.spec.coll;
    const ReduceKernels k(a.spec.dtype, has_reduce_op(coll) ? a.spec.op : ReduceOp::none, peers_.n);
    const size_t slice = cpu::slice_elements(cfg_, k.element_bytes());
    if (coll == Collective::sendrecv) {
      if (a.send == a.recv) fail(ExitCode::usage, "sendrecv/ring has no in-place form");
      StreamFlow out(k, a, peers_, slice, true), in(k, a, peers_, slice, false);
      DrainFlow drain({peers_.to_next}, {peers_.next}, {&out});
      Flow* flows[] = {&out, &in, &drain};
      return run_flows(flows, timeout_, peers_.rank, "sendrecv/ring");
    }
    RingFlow ring(k, a, peers_, slice);
    DrainFlow drain({peers_.to_next}, {peers_.next}, {&ring});
    Flow* flows[] = {&ring, &drain};
    run_flows(flows, timeout_, peers_.rank, what(coll));
  }

  std::string transport() const override { return channels_ ? channels_->label() : "none"; }

 private:
  static std::string_view what(Collective c) {
    switch (c) {
      case Collective::allreduce: return "allreduce/ring";
      case Collective::allgather: return "allgather/ring";
      case Collective::reducescatter: return "reducescatter/ring";
      case Collective::broadcast: return "broadcast/ring";
      case Collective::sendrecv: return "sendrecv/ring";
    }
    return "ring";
  }

  cpu::SlotConfig cfg_;
  std::chrono::milliseconds timeout_{};
  RingPeers peers_{};
  std::unique_ptr<ChannelSet> channels_;
};

}  // namespace

std::unique_ptr<Implementation> make_ring_cpu() { return std::make_unique<RingCpu>(); }

}  // namespace ccbench
