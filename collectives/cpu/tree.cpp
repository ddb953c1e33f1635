// `tree` on CPU ranks.
//
// All-reduce on NCCL's double binary tree (collectives/schedules/tree.h): tree 0 carries the
// first half of the buffer, tree 1 the rest, each pipelined in slot-sized pieces. With --tree
// binary, tree 0 alone carries the whole buffer. Per tree an up
// flow reduces toward the root (my input with my children's slots, into my parent's slot) and a
// down flow broadcasts from it (my parent's slot into my output and my children's slots); the
// root reduces, finalizes, writes its output and feeds its children in one pass. The four flows
// progress concurrently in the progress engine, so pieces stream up and down at once.
//
// All-gather by Bruck's exchange: ceil(log2 n) rounds, round k sends the 2^k blocks I hold to
// rank - 2^k and receives as many from rank + 2^k, each piece landing at its final place in the
// output.
#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "collectives/cpu/cpu_common.h"
#include "collectives/cpu/cpu_impls.h"
#include "collectives/cpu/executor.h"
#include "collectives/schedules/tree.h"
#include "core/error.h"

namespace ccbench {

namespace {

using schedule::Piece;
using schedule::TreeLinks;

constexpr int up_tag(int tree) { return 1 + 2 * tree; }
constexpr int down_tag(int tree) { return 2 + 2 * tree; }
constexpr int bruck_tag(int round) { return 16 + round; }

// The channels of this rank in one tree.
struct TreeChannels {
  TreeLinks links;
  SendChannel* up_to_parent = nullptr;
  RecvChannel* down_from_parent = nullptr;
  RecvChannel* up_from_child[2] = {nullptr, nullptr};
  SendChannel* down_to_child[2] = {nullptr, nullptr};
};

struct BruckChannels {
  schedule::BruckRound round;
  SendChannel* to = nullptr;
  RecvChannel* from = nullptr;
};

// One half of one tree: up (toward the root; at the root also back down) or down.
class TreeFlow final : public MoveFlow {
 public:
  TreeFlow(const ReduceKernels& k, const CallArgs& a, const TreeChannels& t, int which, bool up, Piece share,
           size_t slice)
      : MoveFlow(k), a_(a), t_(t), which_(which), up_(up), share_(share), slice_(slice),
        pieces_(schedule::div_up(share.count, slice)), esz_(k.element_bytes()) {}

 protected:
  bool next(Move& m) override {
    if (piece_ == pieces_) return false;
    const size_t off = share_.offset + piece_ * slice_;
    const size_t count = std::min(slice_, share_.offset + share_.count - off);
    ++piece_;
    const TreeLinks& l = t_.links;
    m = Move{};
    m.count = count;
    void* out = static_cast<char*>(a_.recv) + off * esz_;
    if (up_) {
      m.in = static_cast<const char*>(a_.send) + off * esz_;
      for (int c = 0; c < 2; ++c)
        if (l.child[c] >= 0) m.recv_from(t_.up_from_child[c], l.child[c]);
      if (l.parent >= 0) {
        m.send_to(t_.up_to_parent, l.parent);
      } else {  // the root: the reduction is complete, send it back down
        m.out = out;
        m.finalize = true;
        for (int c = 0; c < 2; ++c)
          if (l.child[c] >= 0) m.send_to(t_.down_to_child[c], l.child[c]);
      }
    } else {
      m.out = out;
      m.recv_from(t_.down_from_parent, l.parent);
      for (int c = 0; c < 2; ++c)
        if (l.child[c] >= 0) m.send_to(t_.down_to_child[c], l.child[c]);
    }
    return true;
  }

  std::string where() const override {
    return fmt::format("tree {} {}, piece {} of {}", which_, up_ ? "up" : "down", piece_ - 1, pieces_);
  }

 private:
  const CallArgs& a_;
  const TreeChannels& t_;
  int which_;
  bool up_;
  Piece share_;
  size_t slice_, pieces_, piece_ = 0, esz_;
};

// Bruck all-gather: rounds in order; within a round sends and receives interleave, so that ranks
// that send to each other in a cycle never wait on one another.
class BruckFlow final : public Flow {
 public:
  BruckFlow(const ReduceKernels& k, const CallArgs& a, const std::vector<BruckChannels>& rounds, int rank, int n,
            size_t slice)
      : k_(k), a_(a), rounds_(rounds), rank_(rank), n_(n), slice_(slice), per_block_(schedule::div_up(a.count, slice)),
        esz_(k.element_bytes()) {}

  bool advance() override {
    const BruckChannels& r = rounds_[round_];
    const size_t total = static_cast<size_t>(r.round.blocks) * per_block_;
    bool progress = false;
    if (sent_ < total) {
      if (!sending_) sending_ = piece(r, sent_, true);  // kept until done: a direct send may wait
      const bool reduced = sending_->reduced;
      if (try_move(*sending_, k_, &send_wait_)) {
        ++sent_;
        sending_.reset();
        progress = true;
      } else {
        progress = progress || sending_->reduced != reduced;
      }
    }
    if (received_ < total) {
      Move m = piece(r, received_, false);
      if (try_move(m, k_, &recv_wait_)) {
        ++received_;
        progress = true;
      }
    }
    if (sent_ == total && received_ == total) {
      ++round_;
      sent_ = received_ = 0;
      progress = true;
    }
    return progress;
  }

  bool done() const override { return round_ == rounds_.size(); }

  std::string waiting_for() const override {
    const BruckChannels& r = rounds_[round_];
    const size_t total = static_cast<size_t>(r.round.blocks) * per_block_;
    std::string s;
    if (received_ < total) s = fmt::format("data from rank {}", recv_wait_.rank);
    if (sent_ < total) s += fmt::format("{}a free slot toward rank {}", s.empty() ? "" : " and ", send_wait_.rank);
    return fmt::format("{} (Bruck round {} of {})", s, round_, rounds_.size());
  }

 private:
  // Piece i of this round's sends or receives: block i / per_block_, slice i % per_block_.
  Move piece(const BruckChannels& r, size_t i, bool sending) const {
    const int first = sending ? r.round.send_first : r.round.recv_first;
    const int block = (first + static_cast<int>(i / per_block_)) % n_;
    const size_t off = (i % per_block_) * slice_;
    Move m;
    m.count = std::min(slice_, a_.count - off);
    char* out = static_cast<char*>(a_.recv) + (static_cast<size_t>(block) * a_.count + off) * esz_;
    if (!sending) {
      m.out = out;
      m.recv_from(r.from, r.round.recv_from);
      return m;
    }
    if (block == rank_ && round_ == 0) {  // my own block: from my input, into my output on the way
      m.in = static_cast<const char*>(a_.send) + off * esz_;
      m.out = out;
    } else {
      m.in = out;
    }
    m.send_to(r.to, r.round.send_to);
    return m;
  }

  const ReduceKernels& k_;
  const CallArgs& a_;
  const std::vector<BruckChannels>& rounds_;
  int rank_, n_;
  size_t slice_, per_block_, esz_;
  size_t round_ = 0, sent_ = 0, received_ = 0;
  std::optional<Move> sending_;  // the send piece in progress
  MoveWait send_wait_, recv_wait_;
};

// What one requested channel is for, so that set-up can hand it to its owner once connected.
enum class ChannelRole { up_to_parent, down_from_parent, up_from_child, down_to_child, bruck_send, bruck_recv };

// One requested channel: its index in the request list and its role; `owner` is the tree (0, 1)
// or, for the Bruck roles, the round; `child` the child index for the child roles.
struct ChannelUse {
  size_t index;
  ChannelRole role;
  int owner, child;
};

// reduce is not declared: the double binary trees are rooted where NCCL roots them (set up once,
// before any root is known), and a reduce to another root would need one more hop.
class TreeCpu final : public cpu::CpuImplementation {
 public:
  TreeCpu() : CpuImplementation(ImplId::tree) {}
  CollectiveSet collectives() const override { return {Collective::allreduce, Collective::allgather}; }

  void setup(const ImplContext& ctx) override {
    if (!begin_setup(ctx)) return;  // unsupported() skips every case, with the reason
    shape_ = ctx.tree;
    std::vector<ChannelRequest> req;
    std::vector<ChannelUse> uses;
    request_channels(req, uses);
    channels_ = connect_channels(ctx.comm, *ctx.layout, req, cpu::channel_options(ctx, cfg_));
    hand_out_channels(req, uses);
  }

  void run(const CallArgs& a) override {
    check_runnable(a);
    const Collective coll = a.spec.coll;
    if (n_ == 1) return cpu::run_single_rank(a);
    const ReduceKernels k(a.spec.dtype, coll == Collective::allreduce ? a.spec.op : ReduceOp::none, n_);
    const size_t slice = cpu::slice_elements(cfg_, k.element_bytes());
    if (coll == Collective::allgather) {
      BruckFlow bruck(k, a, bruck_, rank_, n_, slice);
      DrainFlow drain(sends_, send_peers_, {&bruck});
      Flow* flows[] = {&bruck, &drain};
      return run_flows(flows, timeout_, rank_, over_transport("allgather/tree"));
    }
    const size_t align = cpu::align_elements(k.element_bytes());
    const int trees = schedule::tree_count(shape_);
    std::optional<TreeFlow> up[2], down[2];
    Flow* flows[5];
    int nflows = 0;
    for (int t = 0; t < trees; ++t) {
      const Piece share = schedule::tree_share(a.count, align, t, trees);
      flows[nflows++] = &up[t].emplace(k, a, trees_[t], t, true, share, slice);
      down[t].emplace(k, a, trees_[t], t, false, share, slice);
    }
    for (int t = 0; t < trees; ++t)
      if (trees_[t].links.parent >= 0) flows[nflows++] = &*down[t];  // the root's up flow sends down itself
    DrainFlow drain(sends_, send_peers_, std::vector<const Flow*>(flows, flows + nflows));
    flows[nflows++] = &drain;
    run_flows(std::span<Flow* const>(flows, static_cast<size_t>(nflows)), timeout_, rank_,
              over_transport("allreduce/tree"));
  }

 private:
  // Request order: per tree parent (up send, down recv), then per child (up recv, down send);
  // then per Bruck round (send, recv). `uses` remembers what each request is for.
  void request_channels(std::vector<ChannelRequest>& req, std::vector<ChannelUse>& uses) {
    auto add = [&](int peer, int tag, bool send, ChannelRole role, int owner, int child) {
      uses.push_back({req.size(), role, owner, child});
      req.push_back({peer, tag, send});
    };
    for (int t = 0; t < 2; ++t) trees_[t] = TreeChannels{};
    for (int t = 0; t < schedule::tree_count(shape_); ++t) {
      trees_[t].links = schedule::double_tree(n_, rank_, t);
      const TreeLinks& l = trees_[t].links;
      if (l.parent >= 0) {
        add(l.parent, up_tag(t), true, ChannelRole::up_to_parent, t, -1);
        add(l.parent, down_tag(t), false, ChannelRole::down_from_parent, t, -1);
      }
      for (int c = 0; c < 2; ++c) {
        if (l.child[c] < 0) continue;
        add(l.child[c], up_tag(t), false, ChannelRole::up_from_child, t, c);
        add(l.child[c], down_tag(t), true, ChannelRole::down_to_child, t, c);
      }
    }
    bruck_.clear();
    for (int k = 0; k < schedule::bruck_rounds(n_); ++k) {
      bruck_.push_back({schedule::bruck_round(n_, rank_, k), nullptr, nullptr});
      add(bruck_[k].round.send_to, bruck_tag(k), true, ChannelRole::bruck_send, k, -1);
      add(bruck_[k].round.recv_from, bruck_tag(k), false, ChannelRole::bruck_recv, k, -1);
    }
  }

  // Gives each connected channel to its tree link or Bruck round; lists every send channel for
  // the drain flow.
  void hand_out_channels(const std::vector<ChannelRequest>& req, const std::vector<ChannelUse>& uses) {
    sends_.clear();
    send_peers_.clear();
    for (const ChannelUse& u : uses) {
      switch (u.role) {
        case ChannelRole::up_to_parent: trees_[u.owner].up_to_parent = &channels_->send(u.index); break;
        case ChannelRole::down_from_parent: trees_[u.owner].down_from_parent = &channels_->recv(u.index); break;
        case ChannelRole::up_from_child: trees_[u.owner].up_from_child[u.child] = &channels_->recv(u.index); break;
        case ChannelRole::down_to_child: trees_[u.owner].down_to_child[u.child] = &channels_->send(u.index); break;
        case ChannelRole::bruck_send: bruck_[u.owner].to = &channels_->send(u.index); break;
        case ChannelRole::bruck_recv: bruck_[u.owner].from = &channels_->recv(u.index); break;
      }
      if (req[u.index].send) {
        sends_.push_back(&channels_->send(u.index));
        send_peers_.push_back(req[u.index].peer);
      }
    }
  }

  schedule::TreeShape shape_ = schedule::TreeShape::double_binary;
  TreeChannels trees_[2];  // the second one unused with one tree
  std::vector<BruckChannels> bruck_;
  std::vector<SendChannel*> sends_;
  std::vector<int> send_peers_;
};

}  // namespace

std::unique_ptr<Implementation> make_tree_cpu() { return std::make_unique<TreeCpu>(); }

}  // namespace ccbench
