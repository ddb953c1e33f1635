#include "transports/cpu/tcp.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <condition_variable>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include "core/error.h"
#include "core/knobs.h"

namespace ccbench {

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kHeaderBytes = kTcpHeaderBytes;
constexpr size_t kCreditBytes = kTcpCreditBytes;
constexpr int kMaxIov = 32;

bool would_block(int e) { return e == EAGAIN || e == EWOULDBLOCK; }

int ms_left(TcpDeadline deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 1000));
}

std::string seconds_of(std::chrono::milliseconds ms) {
  return fmt::format("{:.3g} s", static_cast<double>(ms.count()) / 1000.0);
}

// A numeric address (with %scope for link-local IPv6) and port as a socket address.
sockaddr_storage resolve(const std::string& address, std::uint16_t port, socklen_t* len) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  const int rc = getaddrinfo(address.c_str(), service.c_str(), &hints, &res);
  if (rc != 0 || !res) fail(ExitCode::runtime, "tcp: '{}' is not a numeric IP address: {}", address, gai_strerror(rc));
  sockaddr_storage ss{};
  std::memcpy(&ss, res->ai_addr, res->ai_addrlen);
  *len = res->ai_addrlen;
  freeaddrinfo(res);
  return ss;
}

std::string numeric(const sockaddr* sa, socklen_t len) {
  char host[NI_MAXHOST] = {};
  if (getnameinfo(sa, len, host, sizeof host, nullptr, 0, NI_NUMERICHOST) != 0) return "?";
  return host;
}

bool is_loopback(const sockaddr* sa) {
  if (sa->sa_family == AF_INET) return (ntohl(reinterpret_cast<const sockaddr_in*>(sa)->sin_addr.s_addr) >> 24) == 127;
  if (sa->sa_family == AF_INET6) return IN6_IS_ADDR_LOOPBACK(&reinterpret_cast<const sockaddr_in6*>(sa)->sin6_addr);
  return false;
}

// The kernel's ceiling for a requested socket buffer (net.core.wmem_max / rmem_max); 0 if unknown.
size_t buffer_ceiling(int opt) {
  std::ifstream f(opt == SO_SNDBUF ? "/proc/sys/net/core/wmem_max" : "/proc/sys/net/core/rmem_max");
  size_t v = 0;
  return f >> v ? v : 0;
}

// Socket buffers of every data connection, set before connect/listen so that the window scale
// is negotiated for them: room for every slot the sender may have in flight (so a post goes out
// in one write), and no less than the usual autotuning ceiling of 4 MiB. Setting a size turns
// the kernel's autotuning off, and buffers of about one slot measured at half the loopback speed
// of autotuned ones; so where the kernel would cap the request below it, autotuning stays.
void set_buffers(int fd, size_t slot_bytes, int depth) {
  const size_t want = std::clamp<size_t>(static_cast<size_t>(depth) * (slot_bytes + kHeaderBytes), 4u << 20, 1u << 30);
  for (int opt : {SO_SNDBUF, SO_RCVBUF}) {
    const size_t ceiling = buffer_ceiling(opt);
    if (ceiling != 0 && ceiling < want) continue;
    const int v = static_cast<int>(want);
    setsockopt(fd, SOL_SOCKET, opt, &v, sizeof v);
  }
}

void set_nodelay(int fd, std::chrono::milliseconds timeout) {
  int one = 1;
  if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
    fail(ExitCode::runtime, "tcp: setsockopt(TCP_NODELAY) failed: {}", std::strerror(errno));
  // Data left unacknowledged this long (a peer host gone without a reset) fails the connection.
  const unsigned ms = static_cast<unsigned>(std::clamp<long long>(timeout.count(), 1000, 24LL * 3600 * 1000));
  setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof ms);
}

TcpSocket new_socket(int family) {
  TcpSocket s(socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (s.get() < 0) fail(ExitCode::runtime, "tcp: socket() failed: {}", std::strerror(errno));
  return s;
}

struct Interface {
  std::string name;
  bool loopback = false;
  std::vector<std::pair<int, std::string>> addresses;  // (family, numeric address)
};

std::vector<Interface> interfaces() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) fail(ExitCode::runtime, "tcp: getifaddrs() failed: {}", std::strerror(errno));
  std::vector<Interface> out;
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    auto it = std::find_if(out.begin(), out.end(), [&](const Interface& f) { return f.name == i->ifa_name; });
    if (it == out.end()) {
      out.push_back({i->ifa_name, (i->ifa_flags & IFF_LOOPBACK) != 0, {}});
      it = out.end() - 1;
    }
    if (!i->ifa_addr || (i->ifa_addr->sa_family != AF_INET && i->ifa_addr->sa_family != AF_INET6)) continue;
    const socklen_t len = i->ifa_addr->sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    it->addresses.emplace_back(i->ifa_addr->sa_family, numeric(i->ifa_addr, len));
  }
  freeifaddrs(list);
  return out;
}

// IPv4 first, then global IPv6, then link-local IPv6 (its text carries the %scope).
std::string best_address(const Interface& f) {
  for (const auto& [family, a] : f.addresses)
    if (family == AF_INET) return a;
  for (const auto& [family, a] : f.addresses)
    if (a.find('%') == std::string::npos) return a;
  return f.addresses.empty() ? std::string() : f.addresses.front().second;
}

}  // namespace

TcpToken tcp_random_token() {
  TcpToken t{};
  size_t got = 0;
  while (got < t.size()) {
    const ssize_t r = getrandom(t.data() + got, t.size() - got, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      fail(ExitCode::runtime, "tcp: getrandom() for the job token failed: {}", std::strerror(errno));
    }
    got += static_cast<size_t>(r);
  }
  return t;
}

std::string tcp_interfaces() {
  std::string s;
  for (const Interface& f : interfaces()) {
    std::string addrs;
    for (const auto& a : f.addresses) addrs += (addrs.empty() ? "" : ", ") + a.second;
    s += fmt::format("{}{} ({})", s.empty() ? "" : ", ", f.name, addrs.empty() ? "no IP address" : addrs);
  }
  return s.empty() ? "none" : s;
}

std::vector<TcpInterfaceAddress> tcp_host_addresses() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) fail(ExitCode::runtime, "tcp: getifaddrs() failed: {}", std::strerror(errno));
  std::vector<TcpInterfaceAddress> out;
  for (ifaddrs* i = list; i; i = i->ifa_next) {
    if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || (i->ifa_flags & IFF_LOOPBACK) || !i->ifa_netmask) continue;
    const std::uint32_t mask = ntohl(reinterpret_cast<const sockaddr_in*>(i->ifa_netmask)->sin_addr.s_addr);
    out.push_back({i->ifa_name, numeric(i->ifa_addr, sizeof(sockaddr_in)), __builtin_popcount(mask)});
  }
  freeifaddrs(list);
  return out;
}

namespace {

// The address CCBENCH_TCP_IF names; Error(usage) listing the interfaces when it names none.
std::string address_of_interface(const std::string& wanted, const RankLayout& layout) {
  for (const Interface& f : interfaces()) {
    if (f.name != wanted) continue;
    const std::string a = best_address(f);
    if (a.empty()) break;
    if (f.loopback && layout.hosts > 1)
      fail(ExitCode::usage,
           "CCBENCH_TCP_IF='{}' is a loopback interface, which ranks on other hosts cannot reach "
           "(this run spans {} hosts); interfaces on host {}: {}",
           wanted, layout.hosts, layout.host(), tcp_interfaces());
    return a;
  }
  fail(ExitCode::usage,
       "CCBENCH_TCP_IF='{}' is not a network interface with an IP address on host {}; give one "
       "of the interfaces here: {}",
       wanted, layout.host(), tcp_interfaces());
}

// The first non-loopback address (IPv4 first) the host name resolves to; "" with `why` set when
// it resolves to nothing else.
std::string address_of_name(const std::string& host, std::string* why) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
  if (rc != 0) {
    *why = fmt::format("cannot resolve host name {}: {}", host, gai_strerror(rc));
    return {};
  }
  std::string v4, v6, loop;
  for (addrinfo* r = res; r; r = r->ai_next) {
    const std::string a = numeric(r->ai_addr, r->ai_addrlen);
    if (is_loopback(r->ai_addr)) {
      loop += (loop.empty() ? "" : ", ") + a;
      continue;
    }
    std::string& slot = r->ai_family == AF_INET ? v4 : v6;
    if (slot.empty()) slot = a;
  }
  freeaddrinfo(res);
  if (v4.empty() && v6.empty()) *why = fmt::format("host name {} resolves only to loopback addresses ({})", host, loop);
  return !v4.empty() ? v4 : v6;
}

}  // namespace

std::string tcp_local_address(const RankLayout& layout, const std::vector<std::string>& addresses_of) {
  if (const auto wanted = env_text(Knob::tcp_if)) return address_of_interface(*wanted, layout);
  if (layout.hosts == 1) return "127.0.0.1";  // one machine, emulated nodes or not
  std::string why;
  if (std::string a = address_of_name(layout.host(), &why); !a.empty()) return a;
  // The interface on the route to the peers: one address list per other host.
  const std::vector<TcpInterfaceAddress> mine = tcp_host_addresses();
  std::vector<std::vector<TcpInterfaceAddress>> others;
  std::vector<std::string> seen{layout.host()};
  for (size_t r = 0; r < addresses_of.size() && r < layout.host_of.size(); ++r) {
    if (std::find(seen.begin(), seen.end(), layout.host_of[r]) != seen.end()) continue;
    seen.push_back(layout.host_of[r]);
    others.push_back(tcp_parse_addresses(addresses_of[r]));
  }
  if (std::string a = tcp_route_address(mine, others); !a.empty()) return a;
  fail(ExitCode::precondition,
       "tcp: {}, and no interface of host {} is on a subnet with every other host of the run "
       "({} host(s)); set CCBENCH_TCP_IF to the interface to use (interfaces here: {})",
       why, layout.host(), others.size(), tcp_interfaces());
}

// ---- TcpJob, TcpSocket ----

TcpJob::TcpJob(const TcpToken& token, std::string local_address, int rank, std::chrono::milliseconds timeout)
    : token_(token), local_address_(std::move(local_address)), rank_(rank), timeout_(timeout) {}

TcpJob::~TcpJob() = default;
TcpJob::TcpJob(TcpJob&&) noexcept = default;

void TcpJob::progress(const TcpEndpoint* moved) {
  for (TcpEndpoint* e : endpoints_)
    if (e != moved) e->progress_io();
}

void TcpJob::remove(TcpEndpoint* e) {
  endpoints_.erase(std::remove(endpoints_.begin(), endpoints_.end(), e), endpoints_.end());
}

TcpSocket& TcpSocket::operator=(TcpSocket&& o) noexcept {
  if (this != &o) {
    reset();
    fd_ = o.release();
  }
  return *this;
}

void TcpSocket::reset() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

// ---- the accepting thread ----

// Serves the listeners of one TcpJob from their creation until their peer is in: accepts every
// connection at once (so that none waits in the kernel's backlog), reads each one's introduction,
// and drops those that are not the peer (TcpRecvChannel::accept_peer says which). The listening
// sockets and the unintroduced connections are the thread's alone; the channels' thread only
// marks listeners forgotten and takes the connection of a listener that is done.
class TcpAcceptor {
 public:
  explicit TcpAcceptor(const TcpToken& token) : token_(token) {
    wake_ = TcpSocket(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (wake_.get() < 0) fail(ExitCode::runtime, "tcp: eventfd() failed: {}", std::strerror(errno));
    thread_ = std::thread([this] { loop(); });
  }
  ~TcpAcceptor() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    wake();
    thread_.join();
  }
  TcpAcceptor(const TcpAcceptor&) = delete;
  TcpAcceptor& operator=(const TcpAcceptor&) = delete;

  int add(TcpSocket listener, int peer, int tag, size_t slot_bytes, std::uint64_t depth) {
    std::lock_guard lock(mu_);
    const int id = next_id_++;
    Listener& l = listeners_[id];
    l.sock = std::move(listener);
    l.peer = peer;
    l.tag = tag;
    l.slot_bytes = slot_bytes;
    l.depth = depth;
    wake();
    return id;
  }

  // The peer's connection, or an empty socket at the deadline; throws the listener's Error.
  TcpSocket claim(int id, TcpDeadline deadline, TcpRefusals* seen) {
    std::unique_lock lock(mu_);
    const auto it = listeners_.find(id);
    if (it == listeners_.end()) fail(ExitCode::runtime, "tcp: no listener {} to accept on", id);
    Listener& l = it->second;
    cv_.wait_until(lock, deadline, [&] { return l.done; });
    *seen = l.refusals;
    if (!l.done) return {};
    std::optional<Error> error = std::move(l.error);
    TcpSocket conn = std::move(l.conn);
    listeners_.erase(it);  // done: the thread holds nothing of it any more
    if (error) throw *error;
    return conn;
  }

  void forget(int id) {
    std::lock_guard lock(mu_);
    if (const auto it = listeners_.find(id); it != listeners_.end()) it->second.forgotten = true;
    wake();
  }

 private:
  struct Listener {
    TcpSocket sock;  // the listening socket, closed by the thread once done or forgotten
    int peer = -1, tag = 0;
    size_t slot_bytes = 0;
    std::uint64_t depth = 0;
    bool done = false, forgotten = false;
    TcpSocket conn;  // done: the peer's connection, unless `error`
    std::optional<Error> error;
    TcpRefusals refusals;
  };
  struct Candidate {
    TcpSocket sock;
    int listener;
    Clock::time_point since;
    TcpHello hello{};
    size_t got = 0;
  };

  void wake() const {
    const std::uint64_t one = 1;
    (void)!write(wake_.get(), &one, sizeof one);
  }

  void loop() {
    std::unique_lock lock(mu_);
    while (!stop_) {
      std::vector<pollfd> fds{{wake_.get(), POLLIN, 0}};
      std::vector<int> ids;
      for (auto it = listeners_.begin(); it != listeners_.end();) {
        if (it->second.forgotten) {
          close_listener(it->first, it->second);
          it = listeners_.erase(it);
          continue;
        }
        if (!it->second.done) {
          fds.push_back({it->second.sock.get(), POLLIN, 0});
          ids.push_back(it->first);
        }
        ++it;
      }
      int wait_ms = 1000;  // the next candidate's bound, at the latest
      for (const Candidate& c : candidates_) wait_ms = std::min(wait_ms, ms_left(c.since + kTcpHelloWait) + 1);
      for (const Candidate& c : candidates_) fds.push_back({c.sock.get(), POLLIN, 0});
      lock.unlock();
      const int ready = poll(fds.data(), fds.size(), wait_ms);
      lock.lock();
      if (ready < 0) continue;  // EINTR; nothing else can fail on descriptors we own
      std::uint64_t count = 0;
      if (fds[0].revents & POLLIN) (void)!read(wake_.get(), &count, sizeof count);
      for (size_t i = 0; i < ids.size(); ++i)
        if (fds[i + 1].revents) accept_all(ids[i]);
      read_candidates();
    }
    for (auto& [id, l] : listeners_) close_listener(id, l);
    candidates_.clear();
  }

  // Takes every connection waiting on listener `id`; the oldest unintroduced ones go first when
  // it holds too many.
  void accept_all(int id) {
    Listener& l = listeners_.at(id);
    for (;;) {
      TcpSocket s(accept4(l.sock.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
      if (s.get() < 0) return;  // none left (EAGAIN), or a connection gone before it was taken
      int held = 0;
      auto oldest = candidates_.end();
      for (auto c = candidates_.begin(); c != candidates_.end(); ++c)
        if (c->listener == id && held++ == 0) oldest = c;
      if (held >= kTcpMaxPending) {
        candidates_.erase(oldest);
        ++l.refusals.silent;
      }
      candidates_.push_back({std::move(s), id, Clock::now()});
    }
  }

  // Reads what each candidate has sent of its introduction; decides those that are complete, have
  // ended, or have kept silent too long.
  void read_candidates() {
    const auto now = Clock::now();
    for (size_t i = 0; i < candidates_.size();) {
      Candidate& c = candidates_[i];
      Listener& l = listeners_.at(c.listener);
      const int listener = c.listener;
      bool drop = false;
      for (;;) {
        const ssize_t r = recv(c.sock.get(), reinterpret_cast<char*>(&c.hello) + c.got, sizeof(TcpHello) - c.got, 0);
        if (r > 0) {
          c.got += static_cast<size_t>(r);
          if (c.got < sizeof(TcpHello)) continue;
        } else if (r < 0 && (would_block(errno) || errno == EINTR)) {
          drop = now - c.since >= kTcpHelloWait;
          l.refusals.silent += drop;
        } else {
          drop = true;  // ended before introducing itself
          ++l.refusals.closed_early;
        }
        break;
      }
      if (!drop && c.got == sizeof(TcpHello)) {
        if (!tcp_hello_has_token(c.hello, token_)) {
          ++l.refusals.wrong_token;
          drop = true;
        } else {
          take(listener, l, c);  // the listener is done: its candidates, this one too, are gone
          cv_.notify_all();
          i = 0;
          continue;
        }
      }
      if (drop) candidates_.erase(candidates_.begin() + static_cast<std::ptrdiff_t>(i));
      else ++i;
    }
  }

  // A connection with the job token: the peer, or a set-up error when it names another channel.
  void take(int id, Listener& l, Candidate& c) {
    const TcpHelloFields h = tcp_hello_fields(c.hello);
    if (h.rank != l.peer || h.tag != l.tag || h.slot_bytes != l.slot_bytes || h.depth != l.depth)
      l.error = Error(ExitCode::runtime,
                      fmt::format("tcp: a connection with the job token to the channel meant for rank {} tag {} "
                                  "introduced itself as rank {} tag {} with {} slots of {} bytes (expected {} of {})",
                                  l.peer, l.tag, h.rank, h.tag, h.depth, h.slot_bytes, l.depth, l.slot_bytes));
    else l.conn = std::move(c.sock);
    l.done = true;
    close_listener(id, l);  // nobody else may connect now; the other candidates close
  }

  void close_listener(int id, Listener& l) {
    l.sock.reset();
    candidates_.erase(
        std::remove_if(candidates_.begin(), candidates_.end(), [id](const Candidate& c) { return c.listener == id; }),
        candidates_.end());
  }

  const TcpToken token_;
  TcpSocket wake_;  // an eventfd: add(), forget() and the destructor wake the thread's poll()
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<int, Listener> listeners_;
  std::vector<Candidate> candidates_;  // the thread's alone
  int next_id_ = 0;
  bool stop_ = false;
  std::thread thread_;
};

int TcpJob::listen(TcpSocket listener, int peer, int tag, size_t slot_bytes, std::uint64_t depth) {
  if (!acceptor_) acceptor_ = std::make_unique<TcpAcceptor>(token_);
  ++unclaimed_;
  return acceptor_->add(std::move(listener), peer, tag, slot_bytes, depth);
}

TcpSocket TcpJob::claim(int id, TcpDeadline deadline, TcpRefusals* seen) {
  TcpSocket conn;
  try {
    conn = acceptor_->claim(id, deadline, seen);
  } catch (const Error&) {
    --unclaimed_;
    stop_accepting_when_idle();
    throw;
  }
  if (conn.get() >= 0) {
    --unclaimed_;
    stop_accepting_when_idle();
  }
  return conn;
}

void TcpJob::forget(int id) {
  if (!acceptor_) return;
  acceptor_->forget(id);
  --unclaimed_;
  stop_accepting_when_idle();
}

void TcpJob::stop_accepting_when_idle() {
  if (unclaimed_ == 0) acceptor_.reset();
}

// ---- receiving end ----

namespace {

// Both ends' geometry: slots of some bytes, at least one of them.
void check_geometry(size_t slot_bytes, int depth) {
  if (slot_bytes == 0 || depth < 1)
    fail(ExitCode::usage, "tcp channel geometry {} bytes x {} slots is invalid (slots > 0 bytes, depth >= 1)",
         slot_bytes, depth);
}

}  // namespace

TcpRecvChannel::TcpRecvChannel(TcpJob& job, int peer, std::string peer_host, int tag, size_t slot_bytes, int depth)
    : job_(job), peer_(peer), tag_(tag), peer_host_(std::move(peer_host)), slot_bytes_(slot_bytes) {
  check_geometry(slot_bytes, depth);
  depth_ = static_cast<std::uint64_t>(depth);
  mem_.allocate(slot_bytes, depth);
  lengths_.assign(depth_, 0);

  socklen_t len = 0;
  sockaddr_storage ss = resolve(job.local_address(), 0, &len);
  TcpSocket listener = new_socket(ss.ss_family);
  set_buffers(listener.get(), slot_bytes, depth);  // inherited by the accepted connection
  if (bind(listener.get(), reinterpret_cast<sockaddr*>(&ss), len) != 0)
    fail(ExitCode::runtime, "tcp: cannot listen on {} for rank {}'s channel: bind() failed: {}", job.local_address(),
         peer, std::strerror(errno));
  if (listen(listener.get(), kTcpMaxPending) != 0)
    fail(ExitCode::runtime, "tcp: listen() on {} failed: {}", job.local_address(), std::strerror(errno));
  len = sizeof ss;
  if (getsockname(listener.get(), reinterpret_cast<sockaddr*>(&ss), &len) != 0)
    fail(ExitCode::runtime, "tcp: getsockname() failed: {}", std::strerror(errno));
  port_ = ntohs(ss.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&ss)->sin_port
                                        : reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  address_ = job.local_address();
  listener_ = job_.listen(std::move(listener), peer, tag, slot_bytes, depth_);
  job_.add(this);
}

TcpRecvChannel::~TcpRecvChannel() {
  if (listener_ >= 0) job_.forget(listener_);
  job_.remove(this);
}

void TcpRecvChannel::accept_peer(TcpDeadline deadline) {
  if (listener_ < 0) fail(ExitCode::runtime, "tcp: the channel from rank {} accepts its peer a second time", peer_);
  const auto start = Clock::now();
  const int id = std::exchange(listener_, -1);
  TcpSocket conn = job_.claim(id, deadline, &refusals_);  // its Error leaves nothing to forget
  if (conn.get() < 0) {
    listener_ = id;  // still served: forgotten when the channel goes
    std::string flood;
    if (refusals_.silent > 0)
      flood = fmt::format(
          "; {} silent connection(s) dropped (none introduced itself within {} s, or more than {} "
          "waited at once): something else connects to this port, a port scan or a flood of "
          "connections",
          refusals_.silent, kTcpHelloWait.count(), kTcpMaxPending);
    fail(ExitCode::timeout,
         "tcp: rank {} waited {:.3g} s for rank {} (host {}) to connect to {} port {} for the "
         "channel with tag {} ({} connection(s) with a wrong job token refused, {} closed before introducing "
         "themselves{})",
         job_.rank(), std::chrono::duration<double>(Clock::now() - start).count(), peer_, peer_host_, address_, port_,
         tag_, refusals_.wrong_token, refusals_.closed_early, flood);
  }
  sock_ = std::move(conn);
  set_nodelay(sock_.get(), job_.timeout());
}

namespace {

// The errors of both channel ends: the peer, its host and the channel are always named.
[[noreturn]] void fail_connection_reset(int peer, const std::string& host, int tag, const char* direction,
                                        const std::string& why) {
  fail(ExitCode::runtime, "tcp: connection to rank {} (host {}) was reset: {} ({} on the channel with tag {})", peer,
       host, why, direction, tag);
}
[[noreturn]] void fail_malformed_message(int peer, const std::string& host, int tag, const std::string& what) {
  fail(ExitCode::runtime, "tcp: rank {} sent a malformed message (host {}, channel tag {}): {}", peer, host, tag, what);
}

}  // namespace

[[noreturn]] void TcpRecvChannel::fail_reset(const std::string& why) const {
  fail_connection_reset(peer_, peer_host_, tag_, "receiving", why);
}

[[noreturn]] void TcpRecvChannel::fail_malformed(const std::string& what) const {
  fail_malformed_message(peer_, peer_host_, tag_, what);
}

// Whether the stream may be read now: the sender has a credit for the next message, and (direct)
// the caller has given the buffer for it.
bool TcpRecvChannel::reading() const {
  if (closed_ || received_ - released_ >= depth_) return false;
  return !direct_ || (into_ && received_ == returned_);
}

unsigned char* TcpRecvChannel::payload_at(size_t off) const {
  return (direct_ ? into_ : reinterpret_cast<unsigned char*>(mem_.slot(received_ % depth_))) + off;
}

void TcpRecvChannel::read_stream() {
  while (reading()) {
    unsigned char* dst;
    size_t want;
    if (header_got_ < kHeaderBytes) {
      dst = header_ + header_got_;
      want = kHeaderBytes - header_got_;
    } else {
      dst = payload_at(payload_got_);
      want = payload_len_ - payload_got_;
    }
    const ssize_t r = recv(sock_.get(), dst, want, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && would_block(errno)) return;
    if (r <= 0) {
      const std::string why = r == 0 ? "the peer closed it (end of stream)" : std::strerror(errno);
      if (header_got_ > 0) fail_reset(why + fmt::format(", in the middle of slot {}", received_));
      closed_ = why;  // an error only if more data is needed
      return;
    }
    if (header_got_ < kHeaderBytes) {
      header_got_ += static_cast<size_t>(r);
      if (header_got_ < kHeaderBytes) continue;
      std::uint64_t len = 0;
      if (auto problem = tcp_data_header_problem(header_, tag_, received_, slot_bytes_, direct_ ? into_cap_ : 0, &len))
        fail_malformed(*problem);
      payload_len_ = static_cast<size_t>(len);
      payload_got_ = 0;
    } else {
      payload_got_ += static_cast<size_t>(r);
    }
    if (payload_got_ == payload_len_) {
      lengths_[received_ % depth_] = payload_len_;
      ++received_;
      header_got_ = 0;
      payload_len_ = payload_got_ = 0;
    }
  }
}

void TcpRecvChannel::flush_credit() {
  while (!credit_dead_) {
    if (credit_sent_ == kCreditBytes) {
      if (credited_ == released_) return;
      credited_ = released_;  // cumulative: the latest count replaces any not yet started
      const auto c = tcp_credit(tag_, credited_);
      std::memcpy(credit_, c.data(), kCreditBytes);
      credit_sent_ = 0;
    }
    const ssize_t r = send(sock_.get(), credit_ + credit_sent_, kCreditBytes - credit_sent_, MSG_NOSIGNAL);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && would_block(errno)) return;
    if (r < 0) {
      // The sender is gone and needs no more credits; whether it still owed data shows on read
      // (EOF or reset), which also gives the better reason.
      credit_dead_ = true;
      return;
    }
    credit_sent_ += static_cast<size_t>(r);
  }
}

void TcpRecvChannel::progress_io() {
  if (sock_.get() < 0) return;
  flush_credit();
  read_stream();
}

const void* TcpRecvChannel::try_peek(size_t* bytes) {
  if (direct_)
    fail(ExitCode::runtime, "tcp: the channel from rank {} is read with try_peek() after try_receive_into()", peer_);
  if (released_ == received_) {
    if (sock_.get() < 0)
      fail(ExitCode::runtime, "tcp: the channel from rank {} is used before it was connected", peer_);
    progress_io();
    if (released_ == received_) {
      job_.progress(this);
      if (released_ == received_) {
        if (closed_) fail_reset(*closed_ + fmt::format(", while waiting for slot {}", received_));
        return nullptr;
      }
    }
  }
  *bytes = lengths_[released_ % depth_];
  return mem_.slot(released_ % depth_);
}

bool TcpRecvChannel::try_receive_into(void* dst, size_t cap, size_t* bytes) {
  if (sock_.get() < 0) fail(ExitCode::runtime, "tcp: the channel from rank {} is used before it was connected", peer_);
  if (!direct_ && received_ != released_)
    fail(ExitCode::runtime,
         "tcp: the channel from rank {} is read with try_receive_into() while slots from "
         "try_peek() are held",
         peer_);
  direct_ = true;
  // A message begun (or finished) into one buffer is the caller's in that buffer.
  if ((header_got_ > 0 || received_ > returned_) && into_ != dst)
    fail(ExitCode::runtime, "tcp: message {} from rank {} was begun into one buffer and continued into another",
         returned_, peer_);
  if (received_ == returned_) {
    into_ = static_cast<unsigned char*>(dst);
    into_cap_ = cap;
    progress_io();  // this channel only: the caller polls each of its channels in turn
    if (received_ == returned_) {
      if (closed_) fail_reset(*closed_ + fmt::format(", while waiting for slot {}", received_));
      return false;
    }
  }
  into_ = nullptr;
  *bytes = lengths_[returned_ % depth_];
  ++returned_;
  return true;
}

void TcpRecvChannel::release() {
  if (released_ == (direct_ ? returned_ : received_))
    fail(ExitCode::runtime, "tcp: release() on the channel from rank {} with no slot held", peer_);
  ++released_;
  flush_credit();
}

// ---- sending end ----

TcpSendChannel::TcpSendChannel(TcpJob& job, int peer, std::string peer_host, int tag, size_t slot_bytes, int depth,
                               const std::string& address, std::uint16_t port, TcpDeadline deadline)
    : job_(job), peer_(peer), tag_(tag), peer_host_(std::move(peer_host)), slot_bytes_(slot_bytes) {
  check_geometry(slot_bytes, depth);
  depth_ = static_cast<std::uint64_t>(depth);
  mem_.allocate(slot_bytes, depth);
  headers_.resize(depth_);
  lengths_.assign(depth_, 0);
  payloads_.assign(depth_, nullptr);

  socklen_t len = 0;
  const sockaddr_storage to = resolve(address, port, &len);
  sock_ = new_socket(to.ss_family);
  set_buffers(sock_.get(), slot_bytes, depth);
  set_nodelay(sock_.get(), job.timeout());
  // Leave from the chosen interface's address too (an ephemeral port), never from any address.
  socklen_t from_len = 0;
  sockaddr_storage from = resolve(job.local_address(), 0, &from_len);
  if (from.ss_family == to.ss_family && bind(sock_.get(), reinterpret_cast<sockaddr*>(&from), from_len) != 0)
    fail(ExitCode::runtime, "tcp: cannot bind to {} to connect to rank {}: {}", job.local_address(), peer,
         std::strerror(errno));

  auto where = [&] { return fmt::format("rank {} (host {}) at {} port {}", peer, peer_host_, address, port); };
  if (connect(sock_.get(), reinterpret_cast<const sockaddr*>(&to), len) != 0) {
    if (errno != EINPROGRESS && errno != EINTR)
      fail(ExitCode::runtime, "tcp: cannot connect to {}: {}", where(), std::strerror(errno));
    for (;;) {
      pollfd p{sock_.get(), POLLOUT, 0};
      const int n = poll(&p, 1, ms_left(deadline));
      if (n < 0 && errno != EINTR)
        fail(ExitCode::runtime, "tcp: poll() while connecting to {} failed: {}", where(), std::strerror(errno));
      if (n > 0) break;
      if (Clock::now() >= deadline)
        fail(ExitCode::timeout,
             "tcp: rank {} could not connect to {} before the set-up deadline ({} after set-up "
             "began)",
             job.rank(), where(), seconds_of(job.timeout()));
    }
    int err = 0;
    socklen_t elen = sizeof err;
    getsockopt(sock_.get(), SOL_SOCKET, SO_ERROR, &err, &elen);
    if (err != 0) fail(ExitCode::runtime, "tcp: cannot connect to {}: {}", where(), std::strerror(err));
  }

  const TcpHello h = tcp_hello(job.token(), job.rank(), tag, slot_bytes, depth);
  size_t sent = 0;
  while (sent < sizeof h) {
    const ssize_t r = send(sock_.get(), reinterpret_cast<const char*>(&h) + sent, sizeof h - sent, MSG_NOSIGNAL);
    if (r > 0) {
      sent += static_cast<size_t>(r);
      continue;
    }
    if (r < 0 && errno != EINTR && !would_block(errno))
      fail(ExitCode::runtime, "tcp: connection to rank {} (host {}) was reset: {} (introducing this rank)", peer,
           peer_host_, std::strerror(errno));
    if (Clock::now() >= deadline)
      fail(ExitCode::timeout,
           "tcp: rank {} could not introduce itself to {} before the set-up deadline ({} after "
           "set-up began)",
           job.rank(), where(), seconds_of(job.timeout()));
    pollfd p{sock_.get(), POLLOUT, 0};
    poll(&p, 1, ms_left(deadline));
  }
  job_.add(this);
}

TcpSendChannel::~TcpSendChannel() { job_.remove(this); }

[[noreturn]] void TcpSendChannel::fail_reset(const std::string& why) const {
  fail_connection_reset(peer_, peer_host_, tag_, "sending", why);
}

[[noreturn]] void TcpSendChannel::fail_malformed(const std::string& what) const {
  fail_malformed_message(peer_, peer_host_, tag_, what);
}

void TcpSendChannel::flush() {
  while (written_ < posted_) {
    iovec iov[kMaxIov];
    int n = 0;
    size_t off = write_off_;
    for (std::uint64_t s = written_; s < posted_ && n + 2 <= kMaxIov; ++s, off = 0) {
      const size_t i = s % depth_;
      if (off < kHeaderBytes) iov[n++] = {headers_[i].data() + off, kHeaderBytes - off};
      const size_t p = off > kHeaderBytes ? off - kHeaderBytes : 0;
      if (lengths_[i] > p) iov[n++] = {const_cast<char*>(payloads_[i]) + p, lengths_[i] - p};
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(n);
    const ssize_t r = sendmsg(sock_.get(), &msg, MSG_NOSIGNAL);
    if (r < 0) {
      if (errno == EINTR) continue;
      if (would_block(errno)) return;
      fail_reset(std::strerror(errno));
    }
    size_t left = static_cast<size_t>(r);
    while (left > 0) {
      const size_t total = kHeaderBytes + lengths_[written_ % depth_];
      const size_t take = std::min(left, total - write_off_);
      write_off_ += take;
      left -= take;
      if (write_off_ == total) {
        ++written_;
        write_off_ = 0;
      }
    }
  }
}

void TcpSendChannel::read_credits() {
  while (!closed_) {
    const ssize_t r = recv(sock_.get(), credit_buf_ + credit_got_, kCreditBytes - credit_got_, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && would_block(errno)) return;
    if (r <= 0) {
      closed_ = r == 0 ? "the peer closed it (end of stream)" : std::strerror(errno);
      return;
    }
    credit_got_ += static_cast<size_t>(r);
    if (credit_got_ < kCreditBytes) continue;
    credit_got_ = 0;
    std::uint64_t released = 0;
    if (auto problem = tcp_credit_problem(credit_buf_, tag_, credit_, written_, &released)) fail_malformed(*problem);
    credit_ = released;
  }
}

void TcpSendChannel::progress_io() {
  flush();
  // Credits come only for slots written; with none owed there is nothing to read (an end of the
  // stream then shows once a slot is written), and an idle poll saves a system call.
  if (credit_ < written_ || credit_got_ > 0) read_credits();
}

// Whether the receiver has room for one more message (credits read first if not; with
// `whole_job`, every channel of the job moves too).
bool TcpSendChannel::has_credit(bool whole_job) {
  if (posted_ - credit_ < depth_) return true;
  progress_io();
  if (posted_ - credit_ < depth_) return true;
  if (whole_job) job_.progress(this);
  if (posted_ - credit_ < depth_) return true;
  if (closed_) fail_reset(*closed_ + fmt::format(", with {} slot(s) not released", posted_ - credit_));
  return false;
}

void* TcpSendChannel::try_acquire() {
  // A released slot has been written in full, so its memory is free to fill again.
  return has_credit(true) ? mem_.slot(posted_ % depth_) : nullptr;
}

void TcpSendChannel::queue(const char* payload, size_t bytes) {
  if (bytes > slot_bytes_)
    fail(ExitCode::runtime, "tcp: post of {} bytes into slots of {} toward rank {}", bytes, slot_bytes_, peer_);
  const size_t i = posted_ % depth_;
  headers_[i] = tcp_data_header(tag_, posted_, bytes);
  lengths_[i] = bytes;
  payloads_[i] = payload;
  ++posted_;
  flush();
}

void TcpSendChannel::post(size_t bytes) { queue(mem_.slot(posted_ % depth_), bytes); }

bool TcpSendChannel::try_post_from(const void* data, size_t bytes) {
  if (!has_credit(false)) return false;  // the caller polls each of its channels in turn
  queue(static_cast<const char*>(data), bytes);
  return true;
}

bool TcpSendChannel::try_drain() {
  progress_io();
  if (written_ < posted_) job_.progress(this);
  return written_ == posted_;
}

}  // namespace ccbench
