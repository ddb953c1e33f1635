#include "transports/connect.h"

#include <climits>
#include <cstring>
#include <exception>
#include <functional>
#include <optional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "results/error.h"
#include "transports/ib/ib_transport.h"
#include "transports/mpi_channel.h"
#include "transports/shm.h"
#include "transports/tcp.h"
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

constexpr int kMaxTag = 1 << 20;

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
    if (backoff.polls() % 256 == 0 && Clock::now() > deadline)
      fail(ExitCode::timeout, "channel set-up: rank {} waited {} for {}", rank, seconds(timeout), describe());
    backoff.pause();
  }
}

// Agreement on the outcome of a set-up phase: if any rank failed, every rank throws the error of
// the lowest failing rank (others prefix its rank), so that no rank waits for one that gave up.
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
  if (first == rank) throw *mine.error;
  throw Error(static_cast<ExitCode>(msg.code), fmt::format("rank {}: {}", first, msg.text));
}

// The transport for data from `from` to `to` under `wanted`; throws on an impossible choice.
int choose_transport(const RankLayout& l, int from, int to, const std::string& wanted) {
  const auto& ops = cpu_transports();
  for (size_t i = 0; i < ops.size(); ++i) {
    if (wanted == "auto") {
      if (ops[i].automatic && ops[i].can_connect(l, from, to, nullptr)) return static_cast<int>(i);
      continue;
    }
    if (ops[i].name != wanted) continue;
    std::string why;
    if (ops[i].can_connect(l, from, to, &why)) return static_cast<int>(i);
    std::string valid;
    for (const TransportOps& t : ops)
      if (t.can_connect(l, from, to, nullptr)) valid += (valid.empty() ? "" : ", ") + std::string(t.name);
    fail(ExitCode::precondition, "transport {} cannot connect rank {} (host {}) to rank {} (host {}): {}; valid here: {}",
         wanted, from, l.host_of[from], to, l.host_of[to], why, valid.empty() ? "none" : valid);
  }
  fail(ExitCode::precondition, "no CPU transport can connect rank {} (host {}) to rank {} (host {})", from,
       l.host_of[from], to, l.host_of[to]);
}

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
  return std::make_unique<TcpJob>(token, tcp_local_address(*a.layout), rank, a.options->timeout);
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
    MPI_Finalized(&finalized);
    if (!finalized && c_ != MPI_COMM_NULL) MPI_Comm_free(&c_);
  }

 private:
  MPI_Comm c_;
};

}  // namespace

const std::vector<TransportOps>& cpu_transports() {
  static const std::vector<TransportOps> ops = {
      {"shm", true, shm_can_connect, nullptr, shm_create_recv, shm_attach_send, shm_connected},
      {"mpi", true, mpi_can_connect, nullptr, mpi_create_recv, mpi_attach_send, mpi_connected},
      {"tcp", false, tcp_can_connect, tcp_prepare, tcp_create_recv, tcp_attach_send, tcp_connected},
      ib_transport_ops(),  // RDMA (transports/ib/ib_transport.h)
  };
  return ops;
}

std::string valid_cpu_transports() {
  std::string s = "auto";
  for (const TransportOps& t : cpu_transports()) s += ", " + std::string(t.name);
  return s;
}

ChannelSet::~ChannelSet() {
  sends_.clear();
  recvs_.clear();
  jobs_.clear();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

SendChannel& ChannelSet::send(size_t i) const {
  if (i >= sends_.size() || !sends_[i]) fail(ExitCode::runtime, "channel request {} is not a send channel", i);
  return *sends_[i];
}

RecvChannel& ChannelSet::recv(size_t i) const {
  if (i >= recvs_.size() || !recvs_[i]) fail(ExitCode::runtime, "channel request {} is not a receive channel", i);
  return *recvs_[i];
}

std::unique_ptr<ChannelSet> connect_channels(MPI_Comm comm, const RankLayout& layout,
                                             const std::vector<ChannelRequest>& requests,
                                             const ChannelOptions& options) {
  if (options.transport != "auto") {
    bool known = false;
    for (const TransportOps& t : cpu_transports()) known = known || t.name == options.transport;
    if (!known)
      fail(ExitCode::usage, "unknown CPU transport '{}'; valid: {}", options.transport, valid_cpu_transports());
  }
  const auto& ops = cpu_transports();
  const auto deadline = Clock::now() + options.timeout;
  int rank = 0, nranks = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm, &nranks), "MPI_Comm_size");

  auto set = std::make_unique<ChannelSet>();
  check_mpi(MPI_Comm_dup(comm, &set->comm_), "MPI_Comm_dup for channels");
  MPI_Comm setup = MPI_COMM_NULL;
  check_mpi(MPI_Comm_dup(comm, &setup), "MPI_Comm_dup for channel set-up");
  CommGuard setup_guard(setup);
  MPI_Comm_set_errhandler(set->comm_, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(setup, MPI_ERRORS_RETURN);

  // 1. Check the requests and pick a transport for each.
  Pending status;
  std::vector<int> transport(requests.size(), -1);
  try {
    if (layout.nranks != nranks || layout.rank != rank ||
        static_cast<int>(layout.host_of.size()) != nranks || static_cast<int>(layout.node_of.size()) != nranks)
      fail(ExitCode::runtime, "rank layout describes rank {} of {}, the communicator has rank {} of {}", layout.rank,
           layout.nranks, rank, nranks);
    if (options.slot_bytes == 0 || options.slot_bytes % 64 != 0 || options.depth < 1)
      fail(ExitCode::usage, "channel slots of {} bytes x {} are invalid: slot size must be a positive multiple of "
           "64 bytes, depth at least 1", options.slot_bytes, options.depth);
    std::set<std::tuple<int, int, bool>> seen;
    for (size_t i = 0; i < requests.size(); ++i) {
      const ChannelRequest& r = requests[i];
      if (r.peer < 0 || r.peer >= nranks || r.tag < 0 || r.tag >= kMaxTag)
        fail(ExitCode::usage, "channel request {} on rank {} names peer {} tag {}: peers are 0..{}, tags 0..{}", i,
             rank, r.peer, r.tag, nranks - 1, kMaxTag - 1);
      if (!seen.insert({r.peer, r.tag, r.send}).second)
        fail(ExitCode::usage, "rank {} requests the {} channel with rank {} tag {} twice", rank,
             r.send ? "send" : "receive", r.peer, r.tag);
      transport[i] = r.send ? choose_transport(layout, rank, r.peer, options.transport)
                            : choose_transport(layout, r.peer, rank, options.transport);
    }
  } catch (const Error& e) {
    status.set(e);
  }
  agree(setup, rank, status, deadline, options.timeout, "checking channel requests");

  // The transports any rank uses: each of them prepares on every rank.
  int used = 0, all = 0;
  for (int t : transport) used |= 1 << t;
  std::vector<MPI_Request> reqs(1, MPI_REQUEST_NULL);
  check_mpi(MPI_Iallreduce(&used, &all, 1, MPI_INT, MPI_BOR, setup, &reqs[0]), "MPI_Iallreduce of transports");
  wait_bounded(reqs, deadline, options.timeout, rank, [] { return std::string("every rank to choose transports"); });
  auto args = [&](int peer, int tag, int t) {
    SetupArgs a;
    a.comm = set->comm_;
    a.layout = &layout;
    a.peer = peer;
    a.tag = tag;
    a.options = &options;
    a.deadline = deadline;
    a.job = set->jobs_[static_cast<size_t>(t)].get();
    return a;
  };
  set->jobs_.resize(ops.size());
  for (size_t t = 0; t < ops.size(); ++t) {
    if (!(all & (1 << t)) || !ops[t].prepare) continue;
    try {
      set->jobs_[t] = ops[t].prepare(args(-1, 0, static_cast<int>(t)));
    } catch (const Error& e) {
      status.set(e);
    }
    agree(setup, rank, status, deadline, options.timeout, fmt::format("preparing transport {}", ops[t].name));
  }

  // 2. Receivers create their ends.
  set->sends_.resize(requests.size());
  set->recvs_.resize(requests.size());
  std::vector<SetupMsg> out(requests.size()), in(requests.size());
  try {
    for (size_t i = 0; i < requests.size(); ++i) {
      const ChannelRequest& r = requests[i];
      if (r.send) continue;
      SetupMsg& m = out[i];
      m.transport = transport[i];
      m.depth = options.depth;
      m.slot_bytes = options.slot_bytes;
      set->recvs_[i] = ops[transport[i]].create_recv(args(r.peer, r.tag, transport[i]), &m.setup);
    }
  } catch (const Error& e) {
    status.set(e);
  }
  agree(setup, rank, status, deadline, options.timeout, "creating channels");

  // 3. Every description goes to its sender: all sends first, then receives, then one wait.
  reqs.clear();
  std::vector<size_t> waiting;  // send requests whose description is awaited
  for (size_t i = 0; i < requests.size(); ++i) {
    if (requests[i].send) continue;
    reqs.push_back(MPI_REQUEST_NULL);
    check_mpi(MPI_Isend(&out[i], sizeof(SetupMsg), MPI_BYTE, requests[i].peer, requests[i].tag, setup, &reqs.back()),
              "MPI_Isend of a channel description");
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    if (!requests[i].send) continue;
    reqs.push_back(MPI_REQUEST_NULL);
    check_mpi(MPI_Irecv(&in[i], sizeof(SetupMsg), MPI_BYTE, requests[i].peer, requests[i].tag, setup, &reqs.back()),
              "MPI_Irecv of a channel description");
    waiting.push_back(i);
  }
  wait_bounded(reqs, deadline, options.timeout, rank, [&] {
    std::string s;
    for (size_t i : waiting)
      s += fmt::format("{}rank {} to create the channel with tag {}", s.empty() ? "" : ", ", requests[i].peer,
                       requests[i].tag);
    return s + " (does each of those ranks request a receive from this rank with that tag?)";
  });

  // 4. Senders attach; the agreement after it is the barrier after which names can go.
  try {
    for (size_t i : waiting) {
      const ChannelRequest& r = requests[i];
      const SetupMsg& m = in[i];
      if (m.transport != transport[i] || m.depth != options.depth || m.slot_bytes != options.slot_bytes)
        fail(ExitCode::precondition, "rank {} set up the channel with tag {} as {} with {} slots of {} bytes, rank {} "
             "expected {} with {} of {} (transport and CCBENCH_CPU_SLOT_* settings must be the same on every rank)",
             r.peer, r.tag, transport_name(m.transport), m.depth, m.slot_bytes, rank, transport_name(transport[i]),
             options.depth, options.slot_bytes);
      set->sends_[i] = ops[transport[i]].attach_send(args(r.peer, r.tag, transport[i]), m.setup);
    }
  } catch (const Error& e) {
    status.set(e);
  }
  agree(setup, rank, status, deadline, options.timeout, "attaching to channels");

  // 5. Everyone is attached.
  try {
    for (size_t i = 0; i < requests.size(); ++i)
      if (!requests[i].send) ops[transport[i]].connected(args(requests[i].peer, requests[i].tag, transport[i]),
                                                         *set->recvs_[i]);
  } catch (const Error& e) {
    status.set(e);
  }
  agree(setup, rank, status, deadline, options.timeout, "connecting channels");

  for (size_t t = 0; t < ops.size(); ++t) {
    if (!(all & (1 << t))) continue;
    if (!set->label_.empty()) set->label_ += '+';
    set->label_ += ops[t].name;
  }
  if (set->label_.empty()) set->label_ = "none";
  return set;
}

}  // namespace ccbench
