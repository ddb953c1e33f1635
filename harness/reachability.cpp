#include "harness/reachability.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/checks.h"
#include "core/error.h"
#include "transports/connect.h"

namespace ccbench {

namespace {

using Clock = std::chrono::steady_clock;

// What each rank tells the others: where it listens, or (port 0) why it does not.
struct Card {
  char address[64];
  char why[192];
  std::uint16_t port;
};

// A non-blocking socket of `address`'s family, bound to it (port `port`; 0 for any), or -1.
int socket_at(const std::string& address, std::uint16_t port, sockaddr_storage* at, socklen_t* len) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  if (getaddrinfo(address.c_str(), std::to_string(port).c_str(), &hints, &res) != 0 || !res) return -1;
  std::memcpy(at, res->ai_addr, res->ai_addrlen);
  *len = res->ai_addrlen;
  const int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  freeaddrinfo(res);
  return fd;
}

// Listens on an ephemeral port of `address`; the port, or 0 with `why` set.
int listen_on(const std::string& address, std::uint16_t* port, std::string* why) {
  sockaddr_storage at{};
  socklen_t len = 0;
  const int fd = socket_at(address, 0, &at, &len);
  if (fd < 0) {
    *why = fmt::format("no socket for {}: {}", address, std::strerror(errno));
    return -1;
  }
  if (bind(fd, reinterpret_cast<sockaddr*>(&at), len) != 0 || listen(fd, 16) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&at), &len) != 0) {
    *why = fmt::format("cannot listen on {}: {}", address, std::strerror(errno));
    close(fd);
    return -1;
  }
  *port = ntohs(at.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&at)->sin6_port
                                         : reinterpret_cast<sockaddr_in*>(&at)->sin_port);
  return fd;
}

}  // namespace

Reachability::Reachability(MPI_Comm world, const RankLayout& layout, std::chrono::milliseconds timeout) {
  if (layout.hosts < 2) return;
  Card mine{};
  try {  // collective inside; throws only after every rank has taken part
    const std::string address = tcp_choose_address(world, layout, Clock::now() + timeout, timeout);
    std::string why;
    listener_ = listen_on(address, &mine.port, &why);
    address.copy(mine.address, sizeof mine.address - 1);
    why.copy(mine.why, sizeof mine.why - 1);
  } catch (const Error& e) {
    if (e.code() == ExitCode::timeout) throw;
    std::string(e.what()).copy(mine.why, sizeof mine.why - 1);
  }
  std::vector<Card> all(static_cast<size_t>(layout.nranks));
  CCB_MPI(MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, world));
  std::vector<std::string> seen{layout.host()};
  for (int r = 0; r < layout.nranks; ++r) {
    const std::string& host = layout.host_of[static_cast<size_t>(r)];
    if (std::find(seen.begin(), seen.end(), host) != seen.end()) continue;
    seen.push_back(host);
    const Card& c = all[static_cast<size_t>(r)];
    if (c.port == 0)
      unprobed_ += fmt::format("{}host {} (rank {}) could not be probed: {}", unprobed_.empty() ? "" : "; ", host, r,
                               std::string(c.why, strnlen(c.why, sizeof c.why)));
    else peers_.push_back({r, host, std::string(c.address, strnlen(c.address, sizeof c.address)), c.port});
  }
}

Reachability::~Reachability() {
  if (listener_ >= 0) close(listener_);
}

// Starts a handshake with every peer at once and waits until each ended or `budget` is spent:
// answered[i] when the handshake ended (its SO_ERROR says how), said[i] what failed at once.
Reachability::Report Reachability::describe(std::chrono::milliseconds budget) const {
  const size_t n = peers_.size();
  std::vector<pollfd> fds(n, pollfd{-1, POLLOUT, 0});
  std::vector<std::string> said(n);
  std::vector<bool> answered(n, false);
  for (size_t i = 0; i < n; ++i) {
    const Peer& p = peers_[i];
    sockaddr_storage at{};
    socklen_t len = 0;
    fds[i].fd = socket_at(p.address, p.port, &at, &len);
    if (fds[i].fd < 0)
      said[i] = fmt::format("host {} (rank {}) not probed: no socket: {}", p.host, p.rank, std::strerror(errno));
    else if (connect(fds[i].fd, reinterpret_cast<sockaddr*>(&at), len) == 0) answered[i] = true;
    else if (errno != EINPROGRESS)
      said[i] =
          fmt::format("host {} (rank {}, {}) cannot be reached: {}", p.host, p.rank, p.address, std::strerror(errno));
  }
  const auto deadline = Clock::now() + budget;
  for (;;) {
    for (size_t i = 0; i < n; ++i)  // poll only the handshakes still under way
      fds[i].events = fds[i].fd >= 0 && !answered[i] ? POLLOUT : 0;
    const bool waiting = std::any_of(fds.begin(), fds.end(), [](const pollfd& f) { return f.events != 0; });
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (!waiting || left <= 0) break;
    if (poll(fds.data(), fds.size(), static_cast<int>(left)) < 0 && errno != EINTR) break;
    for (size_t i = 0; i < n; ++i)
      if (fds[i].events != 0 && fds[i].revents != 0) answered[i] = true;
  }
  std::string out;
  size_t silent = 0;
  for (size_t i = 0; i < n; ++i) {
    const Peer& p = peers_[i];
    std::string what = said[i];
    if (what.empty() && !answered[i]) {
      what = fmt::format("host {} (rank {}, {}) did not answer within {:.1f} s (a link or the host is down)", p.host,
                         p.rank, p.address, budget.count() / 1000.0);
      ++silent;
    } else if (what.empty()) {
      int err = 0;
      socklen_t len = sizeof err;
      getsockopt(fds[i].fd, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0)
        what = fmt::format("rank {} (host {}, {}) did not accept: {}", p.rank, p.host, p.address, std::strerror(err));
    }
    if (fds[i].fd >= 0) close(fds[i].fd);
    if (!what.empty()) out += (out.empty() ? "" : "; ") + what;
  }
  if (silent > 1 && silent == n) out += "; no other host answered: this host's own link may be down";
  if (!unprobed_.empty()) out += (out.empty() ? "" : "; ") + unprobed_;
  return {out, static_cast<int>(silent)};
}

}  // namespace ccbench
