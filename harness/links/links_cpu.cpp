// `ccbench links` on CPU ranks: streams and ping-pongs over the CPU channels (transports/channel.h).
#include <algorithm>
#include <cstring>
#include <exception>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "collectives/cpu/executor.h"
#include "core/checks.h"
#include "harness/job/bootstrap.h"
#include "harness/links/links_measure.h"
#include "core/error.h"
#include "topologies/pair_rounds.h"
#include "transports/connect.h"

namespace ccbench {

namespace {

using Clock = std::chrono::steady_clock;

// Sends `messages` messages of `bytes` from `src`, each cut into slots: copied into the channel's
// slots, or, with `zero_copy`, posted through its zero-copy end so that the transport reads `src`
// itself (as the GPU net proxy sends its steps straight from the staging slots).
class StreamOut final : public Flow {
 public:
  StreamOut(SendChannel& ch, const char* src, std::uint64_t bytes, int messages, int peer, bool zero_copy)
      : ch_(ch), direct_(zero_copy ? ch.direct() : nullptr), src_(src), bytes_(bytes), messages_(messages),
        peer_(peer) {
    if (zero_copy && !direct_) fail(ExitCode::runtime, "links: the channel toward rank {} has no zero-copy end", peer);
  }
  bool advance() override {
    if (direct_) ch_.try_drain();  // writes what the socket did not take before, reads credits
    if (done()) return false;
    const std::uint64_t n = std::min<std::uint64_t>(ch_.slot_bytes(), bytes_ - offset_);
    if (direct_) {
      if (!direct_->try_post_from(src_ + offset_, n)) return false;
    } else {
      void* slot = ch_.try_acquire();
      if (!slot) return false;
      std::memcpy(slot, src_ + offset_, n);
      ch_.post(n);
    }
    offset_ += n;
    if (offset_ == bytes_) {
      offset_ = 0;
      ++sent_;
    }
    return true;
  }
  bool done() const override { return sent_ == messages_; }
  std::string waiting_for() const override { return fmt::format("a free slot toward rank {}", peer_); }

 private:
  SendChannel& ch_;
  DirectSend* direct_;
  const char* src_;
  std::uint64_t bytes_, offset_ = 0;
  int messages_, sent_ = 0, peer_;
};

// Receives `messages` messages of `bytes` into `dst`: copied out of the channel's slots, or, with
// `zero_copy`, read straight into `dst` by its zero-copy end (as the GPU net proxy reads each step
// into the GPU's FIFO slot).
class StreamIn final : public Flow {
 public:
  StreamIn(RecvChannel& ch, char* dst, std::uint64_t bytes, int messages, int peer, bool zero_copy)
      : ch_(ch), direct_(zero_copy ? ch.direct() : nullptr), dst_(dst), bytes_(bytes), messages_(messages),
        peer_(peer) {
    if (zero_copy && !direct_) fail(ExitCode::runtime, "links: the channel from rank {} has no zero-copy end", peer);
  }
  bool advance() override {
    if (done()) return false;
    size_t n = 0;
    if (direct_) {
      if (!direct_->try_receive_into(dst_ + offset_, bytes_ - offset_, &n)) return false;
    } else {
      const void* slot = ch_.try_peek(&n);
      if (!slot) return false;
      if (n > bytes_ - offset_)
        fail(ExitCode::runtime, "links: rank {} sent a slot of {} bytes where {} remained of a message", peer_, n,
             bytes_ - offset_);
      std::memcpy(dst_ + offset_, slot, n);
    }
    ch_.release();
    offset_ += n;
    if (offset_ == bytes_) {
      offset_ = 0;
      ++received_;
    }
    return true;
  }
  bool done() const override { return received_ == messages_; }
  std::string waiting_for() const override { return fmt::format("data from rank {}", peer_); }

 private:
  RecvChannel& ch_;
  DirectRecv* direct_;
  char* dst_;
  std::uint64_t bytes_, offset_ = 0;
  int messages_, received_ = 0, peer_;
};

// This rank's channels to and from every peer, and the buffers the pair measurements use.
struct Endpoint {
  std::unique_ptr<ChannelSet> set;
  std::vector<int> send_index, recv_index;  // per peer: request index, -1 for this rank
  std::vector<char> out, in;
  std::chrono::milliseconds timeout{};
  int rank = 0;
  bool zero_copy = false;  // the channels' zero-copy ends (DirectOut / DirectIn) instead of slot copies
  int slow_ms = 0;         // CCBENCH_FAULT=slow on this rank: this late with every message it moves

  SendChannel& to(int peer) const { return set->send(static_cast<size_t>(send_index[static_cast<size_t>(peer)])); }
  RecvChannel& from(int peer) const { return set->recv(static_cast<size_t>(recv_index[static_cast<size_t>(peer)])); }

  // Runs flows to completion (plus draining the sends), bounded by the timeout.
  void run(std::vector<Flow*> flows, const std::vector<int>& send_peers, std::string_view what) {
    std::vector<SendChannel*> sends;
    for (int p : send_peers) sends.push_back(&to(p));
    std::vector<const Flow*> after(flows.begin(), flows.end());
    DrainFlow drain(sends, send_peers, after);
    flows.push_back(&drain);
    run_flows(flows, timeout, rank, what);
  }
  void late(int messages) const {
    if (slow_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(slow_ms) * messages);
  }
  void send(int peer, std::uint64_t bytes, int messages) {
    StreamOut f(to(peer), out.data(), bytes, messages, peer, zero_copy);
    run({&f}, {peer}, "links: send");
    late(messages);
  }
  void recv(int peer, std::uint64_t bytes, int messages) {
    StreamIn f(from(peer), in.data(), bytes, messages, peer, zero_copy);
    run({&f}, {}, "links: receive");
    late(messages);
  }
  void both(int peer, std::uint64_t bytes, int messages) {
    StreamOut o(to(peer), out.data(), bytes, messages, peer, zero_copy);
    StreamIn i(from(peer), in.data(), bytes, messages, peer, zero_copy);
    run({&o, &i}, {peer}, "links: both ways");
    late(messages);
  }
};

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// One ordered pair (src, dst) at one size, seen from a rank of the pair.
PairFigures measure_pair(Endpoint& e, bool is_src, int peer, std::uint64_t bytes, const LinksOptions& o, bool latency) {
  PairFigures f;
  const int n = o.iterations;
  // Warm-up, then a round trip that starts both ranks together.
  if (is_src) {
    e.send(peer, bytes, o.warmup);
    e.send(peer, 1, 1);
    e.recv(peer, 1, 1);
  } else {
    e.recv(peer, bytes, o.warmup);
    e.recv(peer, 1, 1);
    e.send(peer, 1, 1);
  }
  // One way: until the receiver acknowledges the last message.
  auto t0 = Clock::now();
  if (is_src) {
    e.send(peer, bytes, n);
    e.recv(peer, 1, 1);
    f.oneway_s = seconds_since(t0);
  } else {
    e.recv(peer, bytes, n);
    e.send(peer, 1, 1);
  }
  // Both ways at once: each side until it has everything; the slower side counts.
  t0 = Clock::now();
  e.both(peer, bytes, n);
  f.bidir_s = seconds_since(t0);
  if (latency) {  // ping-pong: half a round trip
    t0 = Clock::now();
    for (int i = 0; i < n; ++i) {
      if (is_src) {
        e.send(peer, bytes, 1);
        e.recv(peer, bytes, 1);
      } else {
        e.recv(peer, bytes, 1);
        e.send(peer, bytes, 1);
      }
    }
    if (is_src) f.latency_s = seconds_since(t0) / n / 2;
  }
  return f;
}

// What "auto" picks for data from `from` to `to` (connect.cpp's rule: the first automatic one).
std::string auto_choice(const RankLayout& l, int from, int to) {
  for (const TransportOps& t : cpu_transports())
    if (t.automatic && t.can_connect(l, from, to, nullptr)) return std::string(t.name);
  return "none";
}

Endpoint connect_all(const LinksOptions& o, Transport transport, const RankLayout& layout, MPI_Comm comm,
                     std::uint64_t max_bytes, int tag = 0, ChannelOptions co = {}) {
  Endpoint e;
  e.rank = layout.rank;
  e.timeout = o.timeout;
  std::vector<ChannelRequest> req;
  e.send_index.assign(static_cast<size_t>(layout.nranks), -1);
  e.recv_index.assign(static_cast<size_t>(layout.nranks), -1);
  for (int p = 0; p < layout.nranks; ++p) {
    if (p == layout.rank) continue;
    e.send_index[static_cast<size_t>(p)] = static_cast<int>(req.size());
    req.push_back({p, tag, true});
    e.recv_index[static_cast<size_t>(p)] = static_cast<int>(req.size());
    req.push_back({p, tag, false});
  }
  co.transport = name(transport);
  co.timeout = o.timeout;
  e.set = connect_channels(comm, layout, req, co);
  e.out.assign(max_bytes, 1);
  e.in.assign(max_bytes, 0);
  return e;
}

// Every rank streams to every other at once (the largest size): per pair, the receiver's rate.
void measure_all_at_once(Endpoint& e, const LinksOptions& o, const std::string& label, const RankLayout& l,
                         MPI_Comm comm, std::uint64_t bytes, std::vector<LinkResult>& out) {
  std::vector<std::unique_ptr<Flow>> own;
  std::vector<Flow*> flows;
  std::vector<int> peers;
  std::vector<std::vector<char>> inbox;  // one receive buffer per peer: they run at once
  for (int p = 0; p < l.nranks; ++p) {
    if (p == l.rank) continue;
    inbox.emplace_back(bytes);
    own.push_back(std::make_unique<StreamOut>(e.to(p), e.out.data(), bytes, o.iterations, p, e.zero_copy));
    own.push_back(std::make_unique<StreamIn>(e.from(p), inbox.back().data(), bytes, o.iterations, p, e.zero_copy));
    peers.push_back(p);
  }
  for (auto& f : own) flows.push_back(f.get());
  check_mpi(MPI_Barrier(comm), "MPI_Barrier");
  const auto t0 = Clock::now();
  e.run(flows, peers, "links: all pairs at once");
  const double mine = seconds_since(t0);
  std::vector<double> all(static_cast<size_t>(l.nranks));
  check_mpi(MPI_Gather(&mine, 1, MPI_DOUBLE, all.data(), 1, MPI_DOUBLE, 0, comm), "MPI_Gather");
  if (l.rank != 0) return;
  for (int s = 0; s < l.nranks; ++s)
    for (int d = 0; d < l.nranks; ++d) {
      if (s == d) continue;
      LinkResult r = link_cell(label, "all", l, s, d, bytes);
      r.oneway_gbps = static_cast<double>(bytes) * o.iterations / all[static_cast<size_t>(d)] / 1e9;
      out.push_back(std::move(r));
    }
}

// One pair from one of its ranks, every stream in its own thread at once: the slowest stream's
// times. An error in a stream is rethrown here.
PairFigures measure_pair_streams(std::vector<Endpoint>& ends, bool is_src, int peer, std::uint64_t bytes,
                                 const LinksOptions& o) {
  std::vector<PairFigures> figures(ends.size());
  std::vector<std::exception_ptr> errors(ends.size());
  std::vector<std::thread> threads;
  for (size_t k = 0; k < ends.size(); ++k)
    threads.emplace_back([&, k] {
      try {
        figures[k] = measure_pair(ends[k], is_src, peer, bytes, o, false);
      } catch (...) {
        errors[k] = std::current_exception();
      }
    });
  for (std::thread& t : threads) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  PairFigures slowest;
  for (const PairFigures& f : figures) {
    slowest.oneway_s = std::max(slowest.oneway_s, f.oneway_s);
    slowest.bidir_s = std::max(slowest.bidir_s, f.bidir_s);
  }
  return slowest;
}

}  // namespace

std::vector<LinkResult> measure_tcp_streams(const LinksOptions& o, const gpu::NetStreams& streams,
                                            const std::string& label, const RankLayout& layout, MPI_Comm comm,
                                            std::uint64_t bytes) {
  const std::uint64_t per_stream = std::max<std::uint64_t>(1, bytes / static_cast<std::uint64_t>(streams.count));
  ChannelOptions co;
  co.slot_bytes = streams.slot_bytes;
  co.depth = streams.depth;
  std::vector<Endpoint> ends;
  for (int k = 0; k < streams.count; ++k) {
    ends.push_back(connect_all(o, Transport::tcp, layout, comm, per_stream, k, co));
    ends.back().zero_copy = true;
  }
  std::vector<LinkResult> out;
  for (int s = 0; s < layout.nranks; ++s)
    for (int d = 0; d < layout.nranks; ++d) {
      if (layout.same_node(s, d)) continue;
      check_mpi(MPI_Barrier(comm), "MPI_Barrier between pairs");  // one pair at a time
      PairFigures mine;
      if (layout.rank == s || layout.rank == d)
        mine = measure_pair_streams(ends, layout.rank == s, layout.rank == s ? d : s, per_stream, o);
      const PairFigures f = gather_pair_figures(comm, mine);
      if (layout.rank != 0) continue;
      LinkResult r = link_cell(label, "pair", layout, s, d, bytes);
      const double moved = static_cast<double>(per_stream) * o.iterations * streams.count;
      r.oneway_gbps = moved / f.oneway_s / 1e9;
      r.bidir_gbps = 2 * moved / f.bidir_s / 1e9;
      out.push_back(std::move(r));
    }
  check_mpi(MPI_Barrier(comm), "MPI_Barrier after the pairs");
  return out;
}

LinkResult link_cell(const std::string& transport, const char* mode, const RankLayout& l, int src, int dst,
                     std::uint64_t bytes) {
  LinkResult r;
  r.transport = transport;
  r.mode = mode;
  r.src = src;
  r.dst = dst;
  r.src_host = l.host_of[static_cast<size_t>(src)];
  r.dst_host = dst < 0 ? r.src_host : l.host_of[static_cast<size_t>(dst)];
  r.bytes = bytes;
  return r;
}

PairFigures gather_pair_figures(MPI_Comm comm, const PairFigures& mine) {
  double in[3] = {mine.oneway_s, mine.bidir_s, mine.latency_s}, out[3] = {0, 0, 0};
  check_mpi(MPI_Reduce(in, out, 3, MPI_DOUBLE, MPI_MAX, 0, comm), "MPI_Reduce of a pair's times");
  return {out[0], out[1], out[2]};
}

namespace {

// Every rank's figures of a round, on rank 0 (its pairs' two ranks each report theirs).
std::vector<PairFigures> gather_round_figures(MPI_Comm comm, const PairFigures& mine, int nranks) {
  const double in[3] = {mine.oneway_s, mine.bidir_s, mine.latency_s};
  std::vector<double> all(3 * static_cast<size_t>(nranks));
  check_mpi(MPI_Gather(in, 3, MPI_DOUBLE, all.data(), 3, MPI_DOUBLE, 0, comm), "MPI_Gather of a round's times");
  std::vector<PairFigures> out(static_cast<size_t>(nranks));
  for (size_t r = 0; r < out.size(); ++r) out[r] = {all[3 * r], all[3 * r + 1], all[3 * r + 2]};
  return out;
}

// CCBENCH_FAULT=slow: the ms this rank is late with every message of size `bytes` (0: none).
int slow_ms_for(const LinksOptions& o, int rank, std::uint64_t bytes) {
  const auto& f = o.fault;
  if (!f || f->kind != FaultSpec::Kind::slow || f->rank != rank || (f->size && *f->size != bytes)) return 0;
  return f->ms;
}

// One direction of every pair of a round, measured at the same time: the first rank of each pair
// sends (`reverse`: the second); rank 0 gets one cell per pair.
void measure_round(Endpoint& e, const PairRound& round, bool reverse, std::uint64_t bytes, bool latency,
                   const LinksOptions& o, Transport transport, const RankLayout& layout, MPI_Comm comm,
                   std::vector<LinkResult>& out) {
  check_mpi(MPI_Barrier(comm), "MPI_Barrier between rounds of pairs");  // a round at a time
  PairFigures mine;
  for (const auto& [a, b] : round) {
    const int s = reverse ? b : a, d = reverse ? a : b;
    if (layout.rank == s || layout.rank == d)
      mine = measure_pair(e, layout.rank == s, layout.rank == s ? d : s, bytes, o, latency);
  }
  const std::vector<PairFigures> all = gather_round_figures(comm, mine, layout.nranks);
  if (layout.rank != 0) return;
  for (const auto& [a, b] : round) {
    const int s = reverse ? b : a, d = reverse ? a : b;
    const PairFigures& fs = all[static_cast<size_t>(s)];
    const PairFigures& fd = all[static_cast<size_t>(d)];
    // A forced transport's cells carry its set's label: ofi's names the provider and protocol.
    const bool chosen = transport == Transport::auto_select;
    LinkResult r = link_cell(chosen ? auto_choice(layout, s, d) : e.set->label(), "pair", layout, s, d, bytes);
    const double moved = static_cast<double>(bytes) * o.iterations;
    r.oneway_gbps = moved / std::max(fs.oneway_s, fd.oneway_s) / 1e9;
    r.bidir_gbps = 2 * moved / std::max(fs.bidir_s, fd.bidir_s) / 1e9;
    if (latency) r.latency_us = std::max(fs.latency_s, fd.latency_s) * 1e6;
    out.push_back(std::move(r));
  }
}

}  // namespace

std::vector<LinkResult> measure_cpu_links(const LinksOptions& o, Transport transport, const RankLayout& layout,
                                          MPI_Comm comm, const std::vector<std::uint64_t>& sizes) {
  // More ranks than cores (CI): waits yield at once rather than spin (collectives/cpu/executor.h).
  const unsigned cores = std::thread::hardware_concurrency();
  cpu_oversubscribed = cores > 0 && static_cast<unsigned>(layout.local_ranks()) > cores;
  Endpoint e = connect_all(o, transport, layout, comm, sizes.back());
  const std::vector<PairRound> rounds = pair_rounds(layout.node_of, o.serial);
  std::vector<LinkResult> out;
  for (std::uint64_t bytes : sizes) {
    e.slow_ms = slow_ms_for(o, layout.rank, bytes);
    const size_t first = out.size();
    for (const PairRound& round : rounds)
      for (bool reverse : {false, true})
        measure_round(e, round, reverse, bytes, bytes == sizes.front(), o, transport, layout, comm, out);
    // Cells in (src, dst) order whichever round measured them.
    std::sort(out.begin() + static_cast<long>(first), out.end(), [](const LinkResult& x, const LinkResult& y) {
      return std::pair(x.src, x.dst) < std::pair(y.src, y.dst);
    });
  }
  e.slow_ms = 0;
  if (o.all_at_once && layout.nranks > 1) {
    const std::string& label = e.set->label();
    measure_all_at_once(e, o, label, layout, comm, sizes.back(), out);
  }
  check_mpi(MPI_Barrier(comm), "MPI_Barrier after the pairs");
  return out;
}

}  // namespace ccbench
