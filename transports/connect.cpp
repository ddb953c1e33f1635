#include "transports/connect.h"

#include <climits>
#include <cstring>
#include <exception>
#include <functional>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "core/checks.h"
#include "core/error.h"
#include "transports/cpu/mpi_channel.h"
#include "transports/cpu/shm.h"
#include "transports/cpu/tcp.h"
#include "transports/ib/ib_transport.h"
#include "core/transport_names.h"
#include "transports/ofi/ofi_transport.h"
#include "transports/wait.h"

namespace ccbench {

namespace {

using Clock = std::chrono::steady_clock;

bool shm_can_connect(const RankLayout& l, int from, int to, std::string* why) {
  if (l.same_node(from, to)) return true;
  if (why) *why = "shared memory connects ranks of one node only";
  return false;
}
std::unique_ptr<RecvChannel> shm_create_recv(const SetupArgs& a, ChannelSetup* setup) {
  auto ch = std::make_unique<ShmRecvChannel>(a.options->slot_bytes, a.options->depth);
  std::strncpy(setup->shm_name, ch->name().c_str(), sizeof setup->shm_name - 1);
  return ch;
}
std::unique_ptr<SendChannel> shm_attach_send(const SetupArgs& a, const ChannelSetup& setup) {
  const std::string name(setup.shm_name, strnlen(setup.shm_name, sizeof setup.shm_name));
  return std::make_unique<ShmSendChannel>(name, a.options->slot_bytes, a.options->depth);
}
// Everyone has attached: the name can go, so nothing stays in /dev/shm.
void shm_connected(const SetupArgs&, RecvChannel& ch) { static_cast<ShmRecvChannel&>(ch).unlink(); }

bool mpi_can_connect(const RankLayout&, int, int, std::string*) { return true; }
std::unique_ptr<RecvChannel> mpi_create_recv(const SetupArgs& a, ChannelSetup*) {
  return std::make_unique<MpiRecvChannel>(a.comm, a.peer, a.tag, a.options->slot_bytes, a.options->depth);
}
std::unique_ptr<SendChannel> mpi_attach_send(const SetupArgs& a, const ChannelSetup&) {
  return std::make_unique<MpiSendChannel>(a.comm, a.peer, a.tag, a.options->slot_bytes, a.options->depth);
}
// Receives are posted only now, after the set-up traffic between the pair is over.
void mpi_connected(const SetupArgs&, RecvChannel& ch) { static_cast<MpiRecvChannel&>(ch).start(); }

// Tags in [0, 2^20): far more than any schedule needs, and below every MPI_TAG_UB (the
// standard guarantees 32767; OpenMPI and MPICH give 2^31 - 1 and 2^21 - 1 or more).
constexpr int kMaxTag = 1 << 20;
// Slot sizes are whole cache lines: the executors copy and reduce by lines.
constexpr size_t kSlotMultiple = 64;

// What the receiver tells the sender about a channel: its choices, to be checked, and what the
// transport needs.
struct SetupMsg {
  std::int32_t transport;  // index into cpu_transports()
  std::int32_t depth;
  std::uint64_t slot_bytes;
  ChannelSetup setup;
};

std::string_view transport_name(int index) {
  const auto& ops = cpu_transports();
  return index >= 0 && index < static_cast<int>(ops.size()) ? ops[static_cast<size_t>(index)].name : "?";
}

struct Pending {
  std::optional<Error> error;
  void set(const Error& e) {
    if (!error) error = e;
  }
};

std::string seconds(std::chrono::milliseconds ms) { return fmt::format("{:.3g} s", ms.count() / 1000.0); }

// Reading the clock every 256 polls keeps it off the hot path of a short wait while a timeout is
// still seen within microseconds of its deadline.
constexpr unsigned kPollsPerClockRead = 256;

// Polls `reqs` until all complete; Error(timeout) with describe() once `deadline` passes.
void wait_bounded(std::vector<MPI_Request>& reqs, Clock::time_point deadline, std::chrono::milliseconds timeout,
                  int rank, const std::function<std::string()>& describe) {
  if (reqs.empty()) return;
  Backoff backoff;
  for (;;) {
    int flag = 0;
    check_mpi(MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &flag, MPI_STATUSES_IGNORE),
              "MPI_Testall during channel set-up");
    if (flag) return;
    if (backoff.polls() % kPollsPerClockRead == 0 && Clock::now() > deadline)
      fail(ExitCode::timeout, "channel set-up: rank {} waited {} for {}", rank, seconds(timeout), describe());
    backoff.pause();
  }
}

// Agreement on the outcome of a set-up phase: if any rank failed, every rank throws the error of
// the lowest failing rank, its rank in front, so that no rank waits for one that gave up (the same
// message on every rank: the harness gives it once).
void agree(MPI_Comm comm, int rank, const Pending& mine, Clock::time_point deadline, std::chrono::milliseconds timeout,
           std::string_view phase) {
  int me = mine.error ? rank : INT_MAX, first = INT_MAX;
  std::vector<MPI_Request> req(1, MPI_REQUEST_NULL);
  check_mpi(MPI_Iallreduce(&me, &first, 1, MPI_INT, MPI_MIN, comm, &req[0]), "MPI_Iallreduce during channel set-up");
  wait_bounded(req, deadline, timeout, rank, [&] { return fmt::format("every rank to finish {}", phase); });
  if (first == INT_MAX) return;
  struct {
    int code;
    char text[1024];
  } msg{};
  if (first == rank) {
    msg.code = static_cast<int>(mine.error->code());
    std::strncpy(msg.text, mine.error->what(), sizeof msg.text - 1);
  }
  check_mpi(MPI_Ibcast(&msg, sizeof msg, MPI_BYTE, first, comm, &req[0]), "MPI_Ibcast during channel set-up");
  wait_bounded(req, deadline, timeout, rank, [&] { return fmt::format("rank {}'s set-up error", first); });
  // Every rank throws: an agreed error, which one rank says for all.
  throw Error::agreed(static_cast<ExitCode>(msg.code), fmt::format("rank {}: {}", first, msg.text));
}

// The transport for data from `from` to `to` under `wanted`; throws on an impossible choice.
int choose_transport(const RankLayout& l, int from, int to, const std::string& wanted) {
  const auto& ops = cpu_transports();
  for (size_t i = 0; i < ops.size(); ++i) {
    if (parse_transport(wanted) == Transport::auto_select) {
      if (ops[i].automatic && ops[i].can_connect(l, from, to, nullptr)) return static_cast<int>(i);
      continue;
    }
    if (ops[i].name != wanted) continue;
    std::string why;
    if (ops[i].can_connect(l, from, to, &why)) return static_cast<int>(i);
    std::string valid;
    for (const TransportOps& t : ops)
      if (t.can_connect(l, from, to, nullptr)) valid += (valid.empty() ? "" : ", ") + std::string(t.name);
    fail(ExitCode::precondition,
         "transport {} cannot connect rank {} (host {}) to rank {} (host {}): {}; valid here: {}", wanted, from,
         l.host_of[from], to, l.host_of[to], why, valid.empty() ? "none" : valid);
  }
  fail(ExitCode::precondition, "no CPU transport can connect rank {} (host {}) to rank {} (host {})", from,
       l.host_of[from], to, l.host_of[to]);
}

}  // namespace

std::string tcp_choose_address(MPI_Comm comm, const RankLayout& layout, Clock::time_point deadline,
                               std::chrono::milliseconds timeout) {
  int rank = 0, size = 1;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  std::vector<std::string> addresses_of;
  if (layout.hosts > 1) {  // every rank's interface addresses, for the route to the peers
    const std::string mine = tcp_format_addresses(tcp_host_addresses());
    int len = static_cast<int>(mine.size());
    std::vector<int> lens(static_cast<size_t>(size)), displs(static_cast<size_t>(size));
    std::vector<MPI_Request> req(1, MPI_REQUEST_NULL);
    auto describe = [] { return std::string("every rank's interface addresses"); };
    check_mpi(MPI_Iallgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm, &req[0]), "MPI_Iallgather");
    wait_bounded(req, deadline, timeout, rank, describe);
    int total = 0;
    for (int r = 0; r < size; ++r) {
      displs[static_cast<size_t>(r)] = total;
      total += lens[static_cast<size_t>(r)];
    }
    std::string all(static_cast<size_t>(total), '\0');
    check_mpi(
        MPI_Iallgatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, comm, &req[0]),
        "MPI_Iallgatherv");
    wait_bounded(req, deadline, timeout, rank, describe);
    for (int r = 0; r < size; ++r)
      addresses_of.push_back(all.substr(static_cast<size_t>(displs[static_cast<size_t>(r)]),
                                        static_cast<size_t>(lens[static_cast<size_t>(r)])));
  }
  return tcp_local_address(layout, addresses_of);
}

namespace {

// Sockets reach any rank: over loopback on one host, over the network across hosts.
bool tcp_can_connect(const RankLayout&, int, int, std::string*) { return true; }
// Rank 0 draws the job token; every rank picks the address it listens on and connects from.
std::unique_ptr<TransportJob> tcp_prepare(const SetupArgs& a) {
  int rank = 0;
  check_mpi(MPI_Comm_rank(a.comm, &rank), "MPI_Comm_rank");
  TcpToken token{};
  std::optional<Error> failed;  // thrown after the broadcast, so that no rank waits in it for nothing
  if (rank == 0) {
    try {
      token = tcp_random_token();
    } catch (const Error& e) {
      failed = e;
    }
  }
  std::vector<MPI_Request> req(1, MPI_REQUEST_NULL);
  check_mpi(MPI_Ibcast(token.data(), static_cast<int>(token.size()), MPI_BYTE, 0, a.comm, &req[0]),
            "MPI_Ibcast of the tcp job token");
  wait_bounded(req, a.deadline, a.options->timeout, rank, [] { return std::string("rank 0's tcp job token"); });
  if (failed) throw *failed;
  return std::make_unique<TcpJob>(token, tcp_choose_address(a.comm, *a.layout, a.deadline, a.options->timeout), rank,
                                  a.options->timeout);
}
std::unique_ptr<RecvChannel> tcp_create_recv(const SetupArgs& a, ChannelSetup* setup) {
  auto& job = static_cast<TcpJob&>(*a.job);
  auto ch = std::make_unique<TcpRecvChannel>(job, a.peer, a.layout->host_of[a.peer], a.tag, a.options->slot_bytes,
                                             a.options->depth);
  std::strncpy(setup->tcp_address, ch->address().c_str(), sizeof setup->tcp_address - 1);
  setup->tcp_port = ch->port();
  std::memcpy(setup->tcp_token, job.token().data(), sizeof setup->tcp_token);
  return ch;
}
std::unique_ptr<SendChannel> tcp_attach_send(const SetupArgs& a, const ChannelSetup& setup) {
  auto& job = static_cast<TcpJob&>(*a.job);
  if (std::memcmp(setup.tcp_token, job.token().data(), sizeof setup.tcp_token) != 0)
    fail(ExitCode::runtime, "tcp: rank {} described the channel with tag {} with another job token than rank 0's",
         a.peer, a.tag);
  const std::string address(setup.tcp_address, strnlen(setup.tcp_address, sizeof setup.tcp_address));
  return std::make_unique<TcpSendChannel>(job, a.peer, a.layout->host_of[a.peer], a.tag, a.options->slot_bytes,
                                          a.options->depth, address, setup.tcp_port, a.deadline);
}
// Every sender has connected and introduced itself (the kernel holds the connections): accept.
void tcp_connected(const SetupArgs& a, RecvChannel& ch) { static_cast<TcpRecvChannel&>(ch).accept_peer(a.deadline); }

class CommGuard {
 public:
  explicit CommGuard(MPI_Comm c) : c_(c) {}
  ~CommGuard() {
    // After an error, operations that a missing rank never joined may still be pending on it:
    // leave the communicator to the process's end rather than free it under them.
    if (std::uncaught_exceptions() > 0) return;
    int finalized = 0;
    if (MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized && c_ != MPI_COMM_NULL) (void)MPI_Comm_free(&c_);
  }

 private:
  MPI_Comm c_;
};

}  // namespace

const std::vector<TransportOps>& cpu_transports() {
  static const std::vector<TransportOps> ops = {
      {name(Transport::shm), true, shm_can_connect, nullptr, shm_create_recv, shm_attach_send, shm_connected},
      {name(Transport::mpi), true, mpi_can_connect, nullptr, mpi_create_recv, mpi_attach_send, mpi_connected},
      {name(Transport::tcp), false, tcp_can_connect, tcp_prepare, tcp_create_recv, tcp_attach_send, tcp_connected},
      ib_transport_ops(),   // RDMA (transports/ib/ib_transport.h)
      ofi_transport_ops(),  // libfabric (transports/ofi/ofi_transport.h)
  };
  return ops;
}

std::string valid_cpu_transports() { return valid_transports(kCpuRanks); }

ChannelSet::~ChannelSet() {
  sends_.clear();
  recvs_.clear();
  jobs_.clear();
  // A destructor cannot report a failed free; MPI_Finalize takes what is left.
  int finalized = 0;
  if (MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized && comm_ != MPI_COMM_NULL) (void)MPI_Comm_free(&comm_);
}

SendChannel& ChannelSet::send(size_t i) const {
  if (i >= sends_.size() || !sends_[i]) fail(ExitCode::runtime, "channel request {} is not a send channel", i);
  return *sends_[i];
}

RecvChannel& ChannelSet::recv(size_t i) const {
  if (i >= recvs_.size() || !recvs_[i]) fail(ExitCode::runtime, "channel request {} is not a receive channel", i);
  return *recvs_[i];
}

// One connect_channels() call on this rank: the set-up phases in order, each ended by an
// agreement among the ranks (agree) so that no rank goes on when another failed.
class ChannelConnector {
 public:
  ChannelConnector(MPI_Comm comm, const RankLayout& layout, const std::vector<ChannelRequest>& requests,
                   const ChannelOptions& options)
      : layout_(layout), requests_(requests), options_(options), deadline_(Clock::now() + options.timeout) {
    CCB_MPI(MPI_Comm_rank(comm, &rank_));
    CCB_MPI(MPI_Comm_size(comm, &nranks_));
    set_ = std::make_unique<ChannelSet>();
    check_mpi(MPI_Comm_dup(comm, &set_->comm_), "MPI_Comm_dup for channels");
    check_mpi(MPI_Comm_dup(comm, &setup_), "MPI_Comm_dup for channel set-up");
    setup_guard_.emplace(setup_);
    CCB_MPI(MPI_Comm_set_errhandler(set_->comm_, MPI_ERRORS_RETURN));
    CCB_MPI(MPI_Comm_set_errhandler(setup_, MPI_ERRORS_RETURN));
  }

  std::unique_ptr<ChannelSet> run() {
    phase("checking channel requests", [&] { choose_transports(); });
    prepare_transports();
    phase("creating channels", [&] { create_receivers(); });
    exchange_descriptions();
    // The agreement after attaching is the barrier after which shm names can go.
    phase("attaching to channels", [&] { attach_senders(); });
    phase("connecting channels", [&] { connect_receivers(); });
    set_->label_ = label();
    return std::move(set_);
  }

 private:
  // Runs `body`, then agrees with every rank on how `name` went (throws the first rank's error).
  template <typename F>
  void phase(std::string_view name, F&& body) {
    try {
      body();
    } catch (const Error& e) {
      status_.set(e);
    }
    agree(setup_, rank_, status_, deadline_, options_.timeout, name);
  }

  SetupArgs args(int peer, int tag, int t) const {
    SetupArgs a;
    a.comm = set_->comm_;
    a.layout = &layout_;
    a.peer = peer;
    a.tag = tag;
    a.options = &options_;
    a.deadline = deadline_;
    a.job = set_->jobs_.empty() ? nullptr : set_->jobs_[static_cast<size_t>(t)].get();
    return a;
  }
  SetupArgs args_of(size_t request) const {
    const ChannelRequest& r = requests_[request];
    SetupArgs a = args(r.peer, r.tag, transport_[request]);
    a.slots = r.slots;
    a.slots_gpu = r.slots_gpu;
    return a;
  }
  const TransportOps& ops_of(size_t request) const { return ops_[static_cast<size_t>(transport_[request])]; }

  // 1. Check the layout, the geometry and the requests; pick a transport for each request.
  void choose_transports() {
    transport_.assign(requests_.size(), -1);
    if (layout_.nranks != nranks_ || layout_.rank != rank_ || static_cast<int>(layout_.host_of.size()) != nranks_ ||
        static_cast<int>(layout_.node_of.size()) != nranks_)
      fail(ExitCode::runtime, "rank layout describes rank {} of {}, the communicator has rank {} of {}", layout_.rank,
           layout_.nranks, rank_, nranks_);
    if (options_.slot_bytes == 0 || options_.slot_bytes % kSlotMultiple != 0 || options_.depth < 1)
      fail(ExitCode::usage,
           "channel slots of {} bytes x {} are invalid: slot size must be a positive multiple of "
           "{} bytes, depth at least 1",
           options_.slot_bytes, options_.depth, kSlotMultiple);
    std::set<std::tuple<int, int, bool>> seen;
    for (size_t i = 0; i < requests_.size(); ++i) {
      const ChannelRequest& r = requests_[i];
      if (r.peer < 0 || r.peer >= nranks_ || r.tag < 0 || r.tag >= kMaxTag)
        fail(ExitCode::usage, "channel request {} on rank {} names peer {} tag {}: peers are 0..{}, tags 0..{}", i,
             rank_, r.peer, r.tag, nranks_ - 1, kMaxTag - 1);
      if (!seen.insert({r.peer, r.tag, r.send}).second)
        fail(ExitCode::usage, "rank {} requests the {} channel with rank {} tag {} twice", rank_,
             r.send ? "send" : "receive", r.peer, r.tag);
      transport_[i] = r.send ? choose_transport(layout_, rank_, r.peer, options_.transport)
                             : choose_transport(layout_, r.peer, rank_, options_.transport);
    }
  }

  // The transports any rank uses (a bit each) prepare on every rank.
  void prepare_transports() {
    int used = 0;
    for (int t : transport_) used |= 1 << t;
    std::vector<MPI_Request> reqs(1, MPI_REQUEST_NULL);
    check_mpi(MPI_Iallreduce(&used, &used_anywhere_, 1, MPI_INT, MPI_BOR, setup_, &reqs[0]),
              "MPI_Iallreduce of transports");
    wait_bounded(reqs, deadline_, options_.timeout, rank_,
                 [] { return std::string("every rank to choose transports"); });
    set_->jobs_.resize(ops_.size());
    for (size_t t = 0; t < ops_.size(); ++t) {
      if (!(used_anywhere_ & (1 << t)) || !ops_[t].prepare) continue;
      phase(fmt::format("preparing transport {}", ops_[t].name),
            [&] { set_->jobs_[t] = ops_[t].prepare(args(-1, 0, static_cast<int>(t))); });
    }
  }

  // 2. Receivers create their ends and describe them.
  void create_receivers() {
    set_->sends_.resize(requests_.size());
    set_->recvs_.resize(requests_.size());
    out_.assign(requests_.size(), SetupMsg{});
    for (size_t i = 0; i < requests_.size(); ++i) {
      if (requests_[i].send) continue;
      SetupMsg& m = out_[i];
      m.transport = transport_[i];
      m.depth = options_.depth;
      m.slot_bytes = options_.slot_bytes;
      set_->recvs_[i] = ops_of(i).create_recv(args_of(i), &m.setup);
    }
  }

  // 3. Every description goes to its sender: all sends first, then receives, then one wait.
  void exchange_descriptions() {
    in_.assign(requests_.size(), SetupMsg{});
    std::vector<MPI_Request> reqs;
    for (size_t i = 0; i < requests_.size(); ++i) {
      if (requests_[i].send) continue;
      reqs.push_back(MPI_REQUEST_NULL);
      check_mpi(
          MPI_Isend(&out_[i], sizeof(SetupMsg), MPI_BYTE, requests_[i].peer, requests_[i].tag, setup_, &reqs.back()),
          "MPI_Isend of a channel description");
    }
    for (size_t i = 0; i < requests_.size(); ++i) {
      if (!requests_[i].send) continue;
      reqs.push_back(MPI_REQUEST_NULL);
      check_mpi(
          MPI_Irecv(&in_[i], sizeof(SetupMsg), MPI_BYTE, requests_[i].peer, requests_[i].tag, setup_, &reqs.back()),
          "MPI_Irecv of a channel description");
      awaited_.push_back(i);
    }
    wait_bounded(reqs, deadline_, options_.timeout, rank_, [&] { return describe_awaited(); });
  }

  std::string describe_awaited() const {
    std::string s;
    for (size_t i : awaited_)
      s += fmt::format("{}rank {} to create the channel with tag {}", s.empty() ? "" : ", ", requests_[i].peer,
                       requests_[i].tag);
    return s + " (does each of those ranks request a receive from this rank with that tag?)";
  }

  // 4. Senders check the receiver's choices against their own and attach.
  void attach_senders() {
    for (size_t i : awaited_) {
      const ChannelRequest& r = requests_[i];
      const SetupMsg& m = in_[i];
      if (m.transport != transport_[i] || m.depth != options_.depth || m.slot_bytes != options_.slot_bytes)
        fail(ExitCode::precondition,
             "rank {} set up the channel with tag {} as {} with {} slots of {} bytes, rank {} "
             "expected {} with {} of {} (transport and CCBENCH_CPU_SLOT_* settings must be the same on every rank)",
             r.peer, r.tag, transport_name(m.transport), m.depth, m.slot_bytes, rank_, transport_name(transport_[i]),
             options_.depth, options_.slot_bytes);
      set_->sends_[i] = ops_of(i).attach_send(args_of(i), m.setup);
    }
  }

  // 5. Everyone is attached: receivers finish their ends.
  void connect_receivers() {
    for (size_t i = 0; i < requests_.size(); ++i)
      if (!requests_[i].send) ops_of(i).connected(args_of(i), *set_->recvs_[i]);
  }

  // "shm", "shm+mpi", ... or "none": the same on every rank.
  std::string label() const {
    std::string label;
    for (size_t t = 0; t < ops_.size(); ++t) {
      if (!(used_anywhere_ & (1 << t))) continue;
      if (!label.empty()) label += '+';
      const std::string own = set_->jobs_[t] ? set_->jobs_[t]->label() : std::string();
      label += own.empty() ? std::string(ops_[t].name) : own;
    }
    return label.empty() ? "none" : label;
  }

  const RankLayout& layout_;
  const std::vector<ChannelRequest>& requests_;
  const ChannelOptions& options_;
  const std::vector<TransportOps>& ops_ = cpu_transports();
  const Clock::time_point deadline_;
  int rank_ = 0, nranks_ = 0;
  std::unique_ptr<ChannelSet> set_;
  MPI_Comm setup_ = MPI_COMM_NULL;  // set-up traffic, apart from the channels' own
  std::optional<CommGuard> setup_guard_;
  Pending status_;
  std::vector<int> transport_;      // per request: index into ops_
  int used_anywhere_ = 0;           // bit t: some rank uses ops_[t]
  std::vector<SetupMsg> out_, in_;  // descriptions sent (receive requests) and received (send requests)
  std::vector<size_t> awaited_;     // send requests whose description is received
};

std::unique_ptr<ChannelSet> connect_channels(MPI_Comm comm, const RankLayout& layout,
                                             const std::vector<ChannelRequest>& requests,
                                             const ChannelOptions& options) {
  const auto t = parse_transport(options.transport);
  if (!t || !valid_in(*t, kCpuRanks))
    fail(ExitCode::usage, "unknown CPU transport '{}'; valid: {}", options.transport, valid_cpu_transports());
  return ChannelConnector(comm, layout, requests, options).run();
}

std::string peer_label(const SetupArgs& a) {
  return fmt::format("rank {} (host {})", a.peer, a.layout->host_of[a.peer]);
}

}  // namespace ccbench
