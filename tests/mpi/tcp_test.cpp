// The tcp transport's hardening under mpirun (the collectives over tcp are checked element by
// element in cpu_collectives_test):
//   - protocol, on every rank over loopback, one process playing both ends or a hand-written peer:
//     flow control, partial reads and writes, a wrong job token refused while the real sender
//     still gets in, malformed headers and credits, a stream cut mid-slot or at a boundary;
//   - the zero-copy calls (try_post_from, try_receive_into) the same way: every size from 0 to a
//     whole slot, credits that bound the sender until release(), only a message's bytes written
//     into the caller's buffer, a length over the buffer refused, a cut stream named;
//   - floods: 100 idle connections filling a listener's backlog before its sender comes (in one
//     process, and across ranks in the set-up steps of connect_channels) keep nobody out; a listener with only idle connections times out naming the
//     flood; a silent connection is dropped after kTcpHelloWait;
//   - across ranks: a ring of zero-copy channels; a peer that closes its channels mid-transfer is Error(runtime) naming it,
//     CCBENCH_TCP_IF naming no interface is Error(usage) listing the interfaces, "auto" never
//     picks tcp.
// Exits 1 if any rank saw a failure.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <mpi.h>

#include "core/error.h"
#include "tests/mpi/mpi_checks.h"
#include "transports/connect.h"
#include "transports/cpu/tcp.h"

namespace ccbench {
namespace {

using Clock = std::chrono::steady_clock;

using namespace mpi_checks;

template <typename T>
bool same_bytes(const T& a, const T& b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

TcpDeadline in_ms(int ms) { return Clock::now() + std::chrono::milliseconds(ms); }

// A blocking raw socket connected to addr:port on loopback.
TcpSocket raw_connect(std::uint16_t port) {
  TcpSocket s(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    fail(ExitCode::runtime, "test: connect to port {}: {}", port, std::strerror(errno));
  return s;
}

void raw_send(const TcpSocket& s, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    const ssize_t r = send(s.get(), c, n, MSG_NOSIGNAL);
    if (r <= 0) fail(ExitCode::runtime, "test: send: {}", std::strerror(errno));
    c += r;
    n -= static_cast<size_t>(r);
  }
}

// Whether the peer closed `s` within `ms` (EOF or reset).
bool closed_by_peer(const TcpSocket& s, int ms) {
  pollfd p{s.get(), POLLIN, 0};
  if (poll(&p, 1, ms) <= 0) return false;
  char c;
  return recv(s.get(), &c, 1, MSG_DONTWAIT) <= 0;
}

unsigned char pattern(std::uint64_t msg, size_t i) { return static_cast<unsigned char>(msg * 131 + i * 7 + 1); }

// Sends `count` slots of varied sizes through one job's pair of channels, one thread playing
// both ends; checks every byte and that the sender never gets more than depth slots ahead.
void transfer(TcpSendChannel& tx, TcpRecvChannel& rx, size_t slot, int depth, int count, const std::string& what) {
  std::uint64_t sent = 0, got = 0;
  long bad = 0;
  const auto until = in_ms(30000);
  while (got < static_cast<std::uint64_t>(count) && Clock::now() < until) {
    if (sent < static_cast<std::uint64_t>(count)) {
      if (void* p = tx.try_acquire()) {
        if (sent - got >= static_cast<std::uint64_t>(depth))
          failure("{}: slot {} acquired with {} slots unreleased (depth {})", what, sent, sent - got, depth);
        const size_t n = sent % 5 == 4 ? 0 : (sent * 7919) % slot + 1;
        for (size_t i = 0; i < n; ++i) static_cast<unsigned char*>(p)[i] = pattern(sent, i);
        tx.post(n);
        ++sent;
      }
    }
    size_t n = 0;
    if (const void* p = rx.try_peek(&n)) {
      const size_t want = got % 5 == 4 ? 0 : (got * 7919) % slot + 1;
      if (n != want) ++bad;
      for (size_t i = 0; i < n && i < want; ++i)
        if (static_cast<const unsigned char*>(p)[i] != pattern(got, i)) ++bad;
      rx.release();
      ++got;
    }
  }
  check(got == static_cast<std::uint64_t>(count), fmt::format("{}: {} of {} slots arrived", what, got, count));
  check(bad == 0, fmt::format("{}: {} wrong sizes or bytes", what, bad));
  check(eventually([&] { return tx.try_drain(); }), what + ": drain");
}

TcpJob local_job(const TcpToken& token) { return TcpJob(token, "127.0.0.1", g_rank, std::chrono::seconds(10)); }

// ---- zero-copy calls ----

size_t direct_size(std::uint64_t msg, size_t slot) {
  switch (msg % 5) {
    case 0: return 0;
    case 1: return 1;
    case 2: return slot;
    default: return (msg * 7919) % slot | 1;  // odd
  }
}

constexpr unsigned char kFiller = 0xa5;

// Sends `count` messages through one job's pair of zero-copy ends, one thread playing both ends
// with `depth` caller buffers on each side, as the GPU proxy does: a send buffer is refilled only
// once sent() counts it, a receive buffer is released only after its bytes were checked (and
// filled again with filler, so that bytes written past a message's size show).
// `one_pair`: tx sends to rx (else they belong to different peers, and the bound is not checked).
void direct_transfer(DirectSend& tx, TcpSendChannel& txc, DirectRecv& rx, RecvChannel& rxc, size_t slot, int depth,
                     int count, const std::string& what, bool one_pair = true) {
  const std::uint64_t d = static_cast<std::uint64_t>(depth), total = static_cast<std::uint64_t>(count);
  std::vector<std::vector<unsigned char>> out(d, std::vector<unsigned char>(slot)), in(d, std::vector<unsigned char>(slot, kFiller));
  std::vector<size_t> lengths(d, 0);
  std::uint64_t posted = 0, filled = 0, got = 0, freed = 0;
  long bad = 0, past = 0;
  const auto until = in_ms(30000);
  while ((freed < total || posted < total) && Clock::now() < until) {
    if (posted < total && posted < tx.sent() + d) {  // buffer posted - d has left our memory
      std::vector<unsigned char>& b = out[posted % d];
      if (filled == posted) {  // the whole buffer: only the message's size may travel
        for (size_t i = 0; i < slot; ++i) b[i] = pattern(posted, i);
        ++filled;
      }
      if (tx.try_post_from(b.data(), direct_size(posted, slot))) {
        // The receiver's release() is what returns a credit: never more than depth unreleased.
        if (one_pair && posted - freed >= d) failure("{}: message {} posted with {} unreleased (depth {})", what, posted, posted - freed, depth);
        ++posted;
      }
    }
    size_t n = 0;
    if (got < total && got < freed + d && rx.try_receive_into(in[got % d].data(), slot, &n)) lengths[got++ % d] = n;
    if (freed < got && (got - freed == d || got == total || freed % 3 != 0)) {  // hold some a while
      std::vector<unsigned char>& b = in[freed % d];
      const size_t want = direct_size(freed, slot);
      bad += lengths[freed % d] != want;
      for (size_t i = 0; i < want; ++i) bad += b[i] != pattern(freed, i);
      for (size_t i = want; i < slot; ++i) past += b[i] != kFiller;
      std::fill(b.begin(), b.end(), kFiller);
      rxc.release();
      ++freed;
    }
    txc.try_drain();
  }
  check(freed == total, fmt::format("{}: {} of {} messages arrived", what, freed, count));
  check(bad == 0, fmt::format("{}: {} wrong sizes or bytes", what, bad));
  check(past == 0, fmt::format("{}: {} bytes written past the messages' sizes", what, past));
  check(eventually([&] { return txc.try_drain() && tx.sent() == total; }), what + ": every post sent");
}

void direct_local(const TcpToken& token) {
  // Credits: with depth 2 and nothing released, a third post is refused, even after both arrived;
  // the first release lets one more through.
  {
    TcpJob job = local_job(token);
    TcpRecvChannel rx(job, g_rank, "self", 31, 4096, 2);
    TcpSendChannel tx(job, g_rank, "self", 31, 4096, 2, rx.address(), rx.port(), in_ms(5000));
    rx.accept_peer(in_ms(5000));
    std::vector<unsigned char> a(4096, 1), b(4096, 2), dst(4096, 0);
    check(tx.try_post_from(a.data(), 4096) && tx.try_post_from(b.data(), 7), "direct credits: two posts");
    size_t n = 0;
    check(eventually([&] { return rx.try_receive_into(dst.data(), dst.size(), &n); }) && n == 4096 && dst[0] == 1,
          "direct credits: first message read into the buffer");
    check(eventually([&] { return rx.try_receive_into(dst.data(), dst.size(), &n); }) && n == 7 && dst[0] == 2 &&
              dst[7] == 1, "direct credits: second message, its 7 bytes only");
    check(!eventually([&] { return tx.try_post_from(a.data(), 1); }, 200), "direct credits: no third post unreleased");
    rx.release();
    check(eventually([&] { return tx.try_post_from(a.data(), 1); }), "direct credits: a post after release");
    check(eventually([&] { return tx.try_drain(); }) && tx.sent() == 3, "direct credits: three sent");
    expect_error(ExitCode::runtime, "direct: try_peek() after try_receive_into()", [&] { rx.try_peek(&n); },
                 {"try_peek() after try_receive_into()"});
  }
  // Many messages: small slots (many per write), 1 MiB slots (partial reads and writes), depth 1 and 4.
  for (const auto& [slot, depth, count] : {std::tuple<size_t, int, int>{1024, 4, 4000}, {1 << 20, 1, 40}, {1 << 20, 4, 80},
                                           {4097, 3, 600}}) {
    TcpJob job = local_job(token);
    TcpRecvChannel rx(job, g_rank, "self", 32, slot, depth);
    TcpSendChannel tx(job, g_rank, "self", 32, slot, depth, rx.address(), rx.port(), in_ms(5000));
    rx.accept_peer(in_ms(5000));
    direct_transfer(tx, tx, rx, rx, slot, depth, count, fmt::format("direct {} B x {}", slot, depth));
  }
  // A message begun into one buffer cannot move to another.
  {
    TcpJob job = local_job(token);
    TcpRecvChannel rx(job, g_rank, "self", 33, 1 << 20, 1);
    TcpSocket s = raw_connect(rx.port());
    const TcpHello h = tcp_hello(token, g_rank, 33, 1 << 20, 1);
    raw_send(s, &h, sizeof h);
    rx.accept_peer(in_ms(3000));
    const auto hd = tcp_data_header(33, 0, 1000);
    raw_send(s, hd.data(), hd.size());
    raw_send(s, std::vector<char>(10, 1).data(), 10);
    std::vector<unsigned char> a(1 << 20), b(1 << 20);
    size_t n = 0;
    check(!eventually([&] { return rx.try_receive_into(a.data(), a.size(), &n); }, 200), "direct: half a message");
    expect_error(ExitCode::runtime, "direct: another buffer mid-message",
                 [&] { rx.try_receive_into(b.data(), b.size(), &n); }, {"begun into one buffer"});
  }
}

// ---- one process, both ends ----

void protocol_local() {
  const TcpToken token = tcp_random_token();
  const TcpToken other = tcp_random_token();
  check(token != other, "two tokens from getrandom differ");

  // Flow control: with depth 2 and nothing released, the third acquire finds no slot.
  {
    TcpJob job = local_job(token);
    TcpRecvChannel rx(job, g_rank, "self", 7, 4096, 2);
    TcpSendChannel tx(job, g_rank, "self", 7, 4096, 2, rx.address(), rx.port(), in_ms(5000));
    rx.accept_peer(in_ms(5000));
    for (int i = 0; i < 2; ++i) {
      void* p = tx.try_acquire();
      check(p != nullptr, "flow control: free slot");
      if (p) tx.post(4096);
    }
    check(!eventually([&] { return tx.try_acquire() != nullptr; }, 200), "flow control: no third slot before release");
    size_t n = 0;
    check(eventually([&] { return rx.try_peek(&n) != nullptr; }) && n == 4096, "flow control: first slot arrives");
    rx.release();
    check(eventually([&] { return tx.try_acquire() != nullptr; }), "flow control: a slot frees after release");
  }

  // Many slots: 1 KiB slots (many small messages per write), 1 MiB slots (partial reads and
  // writes through the socket buffers), depth 1 and 3.
  {
    TcpJob job = local_job(token);
    TcpRecvChannel rx(job, g_rank, "self", 1, 1024, 3);
    TcpSendChannel tx(job, g_rank, "self", 1, 1024, 3, rx.address(), rx.port(), in_ms(5000));
    rx.accept_peer(in_ms(5000));
    transfer(tx, rx, 1024, 3, 5000, "1 KiB x 3");
  }
  {
    TcpJob job = local_job(token);
    TcpRecvChannel rx(job, g_rank, "self", 2, 1 << 20, 1);
    TcpSendChannel tx(job, g_rank, "self", 2, 1 << 20, 1, rx.address(), rx.port(), in_ms(5000));
    rx.accept_peer(in_ms(5000));
    transfer(tx, rx, 1 << 20, 1, 60, "1 MiB x 1");
  }

  // A wrong token is refused while the real sender gets in; a silent connection and one that
  // leaves early hold nobody up.
  {
    TcpJob job = local_job(token);
    TcpRecvChannel rx(job, g_rank, "self", 3, 4096, 2);
    TcpSocket silent = raw_connect(rx.port());
    TcpSocket wrong = raw_connect(rx.port());
    const TcpHello bad = tcp_hello(other, g_rank, 3, 4096, 2);
    raw_send(wrong, &bad, sizeof bad);
    {
      TcpSocket early = raw_connect(rx.port());
      raw_send(early, &bad, 10);
    }
    TcpSendChannel tx(job, g_rank, "self", 3, 4096, 2, rx.address(), rx.port(), in_ms(5000));
    try {
      rx.accept_peer(in_ms(5000));
      check(rx.refused() >= 1, fmt::format("wrong token: {} connection(s) refused, expected 1", rx.refused()));
      check(closed_by_peer(wrong, 2000), "wrong token: the connection is closed");
      transfer(tx, rx, 4096, 2, 50, "after a refused connection");
      check(closed_by_peer(silent, 2000), "the silent connection is closed once the peer is in");
    } catch (const Error& e) {
      failure("wrong token: the real sender did not get in: {}", e.what());
    }
  }

  // Only wrong tokens: the accept times out and says so.
  {
    TcpJob job = local_job(token);
    TcpRecvChannel rx(job, 5, "elsewhere", 4, 4096, 2);
    TcpSocket wrong = raw_connect(rx.port());
    const TcpHello bad = tcp_hello(other, 5, 4, 4096, 2);
    raw_send(wrong, &bad, sizeof bad);
    expect_error(ExitCode::timeout, "only a wrong token", [&] { rx.accept_peer(in_ms(300)); },
                 {"rank 5 (host elsewhere)", "1 connection(s) with a wrong job token refused"});
  }

  // The right token but another channel's identity is a set-up error.
  {
    TcpJob job = local_job(token);
    TcpRecvChannel rx(job, 5, "elsewhere", 4, 4096, 2);
    TcpSocket s = raw_connect(rx.port());
    const TcpHello h = tcp_hello(token, 6, 4, 4096, 2);
    raw_send(s, &h, sizeof h);
    expect_error(ExitCode::runtime, "token with another rank", [&] { rx.accept_peer(in_ms(3000)); },
                 {"meant for rank 5", "as rank 6"});
  }

  // A hand-written sender on a real receiver: what it sends decides the outcome.
  auto with_raw_sender = [&](const std::string& what, const std::function<void(TcpSocket&)>& send_bytes,
                             ExitCode code, const std::vector<std::string>& needles, int good_slots = 0,
                             size_t cap = 0) {  // cap > 0: read with try_receive_into(cap)
    TcpJob job = local_job(token);
    TcpRecvChannel rx(job, 9, "hostnine", 11, 4096, 2);
    TcpSocket s = raw_connect(rx.port());
    const TcpHello h = tcp_hello(token, 9, 11, 4096, 2);
    raw_send(s, &h, sizeof h);
    rx.accept_peer(in_ms(3000));
    send_bytes(s);
    std::vector<unsigned char> buf(cap);
    auto arrived = [&](size_t* n) { return cap ? rx.try_receive_into(buf.data(), cap, n) : rx.try_peek(n) != nullptr; };
    expect_error(code, what, [&] {
      for (int i = 0; i < good_slots; ++i) {
        size_t n = 0;
        if (!eventually([&] { return arrived(&n); })) return;
        rx.release();
      }
      const auto until = in_ms(5000);
      size_t n = 0;
      while (Clock::now() < until) {
        if (arrived(&n)) return;  // a slot that should not have arrived
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      }
    }, needles);
  };
  const std::vector<unsigned char> payload(4096, 0x5a);
  with_raw_sender("slot longer than slot_bytes", [&](TcpSocket& s) {
    const auto hd = tcp_data_header(11, 0, 4097);
    raw_send(s, hd.data(), hd.size());
  }, ExitCode::runtime, {"tcp: rank 9 sent a malformed message", "4097 bytes"});
  with_raw_sender("huge length", [&](TcpSocket& s) {
    const auto hd = tcp_data_header(11, 0, ~0ull);
    raw_send(s, hd.data(), hd.size());
  }, ExitCode::runtime, {"tcp: rank 9 sent a malformed message"});
  with_raw_sender("wrong sequence number", [&](TcpSocket& s) {
    const auto hd = tcp_data_header(11, 1, 100);
    raw_send(s, hd.data(), hd.size());
  }, ExitCode::runtime, {"tcp: rank 9 sent a malformed message", "slot number 1 where 0"});
  with_raw_sender("wrong channel tag", [&](TcpSocket& s) {
    const auto hd = tcp_data_header(12, 0, 100);
    raw_send(s, hd.data(), hd.size());
  }, ExitCode::runtime, {"tcp: rank 9 sent a malformed message", "tag 12"});
  with_raw_sender("stream cut in the middle of a slot", [&](TcpSocket& s) {
    const auto hd = tcp_data_header(11, 0, 4096);
    raw_send(s, hd.data(), hd.size());
    raw_send(s, payload.data(), 1000);
    s.reset();
  }, ExitCode::runtime, {"tcp: connection to rank 9 (host hostnine) was reset", "middle of slot 0"});
  with_raw_sender("stream ended after one slot", [&](TcpSocket& s) {
    const auto hd = tcp_data_header(11, 0, 4096);
    raw_send(s, hd.data(), hd.size());
    raw_send(s, payload.data(), payload.size());
    s.reset();
  }, ExitCode::runtime, {"tcp: connection to rank 9 (host hostnine) was reset", "waiting for slot 1"}, 1);
  // The same through the zero-copy receive; its buffer bounds a message as the slot size does.
  auto first_header = [](std::uint64_t length) {
    return [length](TcpSocket& s) {
      const auto hd = tcp_data_header(11, 0, length);
      raw_send(s, hd.data(), hd.size());
    };
  };
  with_raw_sender("direct: slot longer than slot_bytes", first_header(4097), ExitCode::runtime,
                  {"tcp: rank 9 sent a malformed message", "4097 bytes"}, 0, 4096);
  with_raw_sender("direct: slot longer than the buffer", first_header(3001), ExitCode::runtime, {"tcp: rank 9 sent a malformed message", "3001 bytes for a buffer of 3000"}, 0, 3000);
  with_raw_sender("direct: wrong sequence number", [&](TcpSocket& s) {
    const auto hd = tcp_data_header(11, 0, 10);
    raw_send(s, hd.data(), hd.size());
    raw_send(s, payload.data(), 10);
    const auto h2 = tcp_data_header(11, 2, 10);
    raw_send(s, h2.data(), h2.size());
  }, ExitCode::runtime, {"tcp: rank 9 sent a malformed message", "slot number 2 where 1"}, 1, 4096);
  with_raw_sender("direct: stream cut in the middle of a slot", [&](TcpSocket& s) {
    const auto hd = tcp_data_header(11, 0, 4096);
    raw_send(s, hd.data(), hd.size());
    raw_send(s, payload.data(), 1000);
    s.reset();
  }, ExitCode::runtime, {"tcp: connection to rank 9 (host hostnine) was reset", "middle of slot 0"}, 0, 4096);
  with_raw_sender("direct: stream ended after one slot", [&](TcpSocket& s) {
    const auto hd = tcp_data_header(11, 0, 0);
    raw_send(s, hd.data(), hd.size());
    s.reset();
  }, ExitCode::runtime, {"tcp: connection to rank 9 (host hostnine) was reset", "waiting for slot 1"}, 1, 4096);

  // A hand-written receiver for a real sender: bad credits, and a receiver that goes away.
  auto with_raw_receiver = [&](const std::string& what, const std::function<void(TcpSocket&, TcpSendChannel&)>& act,
                               const std::vector<std::string>& needles) {
    TcpJob job = local_job(token);
    TcpSocket l(socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(l.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(l.get(), 4) != 0 ||
        getsockname(l.get(), reinterpret_cast<sockaddr*>(&a), &len) != 0)
      fail(ExitCode::runtime, "test: listen: {}", std::strerror(errno));
    TcpSendChannel tx(job, 8, "hosteight", 21, 4096, 2, "127.0.0.1", ntohs(a.sin_port), in_ms(3000));
    TcpSocket s(accept(l.get(), nullptr, nullptr));
    TcpHello h{};
    if (recv(s.get(), &h, sizeof h, MSG_WAITALL) != static_cast<ssize_t>(sizeof h))
      failure("{}: no hello from the sender", what);
    check(same_bytes(h, tcp_hello(token, g_rank, 21, 4096, 2)), what + ": the sender's hello");
    expect_error(ExitCode::runtime, what, [&] {
      act(s, tx);
      const auto until = in_ms(5000);
      while (Clock::now() < until) {
        if (void* p = tx.try_acquire()) {
          std::memset(p, 1, 4096);
          tx.post(4096);
        }
        tx.try_drain();
      }
    }, needles);
  };
  with_raw_receiver("credit for more than was sent", [&](TcpSocket& s, TcpSendChannel&) {
    const auto c = tcp_credit(21, 5);
    raw_send(s, c.data(), c.size());
  }, {"tcp: rank 8 sent a malformed message", "credit for 5"});
  with_raw_receiver("receiver closes", [&](TcpSocket& s, TcpSendChannel&) { s.reset(); },
                    {"tcp: connection to rank 8 (host hosteight) was reset"});
  const std::vector<char> big(4096, 3);
  with_raw_receiver("direct: receiver closes", [&](TcpSocket& s, TcpSendChannel& tx) {
    s.reset();
    const auto until = in_ms(5000);
    while (Clock::now() < until) tx.try_post_from(big.data(), big.size()), tx.try_drain();
  }, {"tcp: connection to rank 8 (host hosteight) was reset"});
  with_raw_receiver("direct: post longer than a slot", [&](TcpSocket&, TcpSendChannel& tx) {
    tx.try_post_from(big.data(), 4097);
  }, {"tcp: post of 4097 bytes into slots of 4096 toward rank 8"});

  direct_local(token);
}

// ---- across ranks ----

// ---- floods: idle connections to a listener ----

// Opens `n` connections to 127.0.0.1:port that never say anything, without waiting for them to be
// accepted; returns them once all are connected or 3 s have passed (a listener that does not
// accept keeps those past its backlog waiting).
std::vector<TcpSocket> idle_connections(std::uint16_t port, int n) {
  std::vector<TcpSocket> out;
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (int i = 0; i < n; ++i) {
    TcpSocket s(socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (connect(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 && errno != EINPROGRESS)
      fail(ExitCode::runtime, "test: connect to port {}: {}", port, std::strerror(errno));
    out.push_back(std::move(s));
  }
  std::vector<bool> done(out.size(), false);
  eventually([&] {
    size_t connected = 0;
    for (size_t i = 0; i < out.size(); ++i) {
      pollfd p{out[i].get(), POLLOUT, 0};
      done[i] = done[i] || (poll(&p, 1, 0) == 1 && (p.revents & POLLOUT));
      connected += done[i];
    }
    return connected == out.size();
  }, 3000);
  return out;
}

// One process: idle connections fill a listener's backlog before its sender comes; a listener
// with nothing but idle connections names the flood; a silent connection goes after kTcpHelloWait.
void flood_local(const TcpToken& token) {
  {
    TcpJob job = local_job(token);
    TcpRecvChannel rx(job, g_rank, "self", 41, 4096, 2);
    std::vector<TcpSocket> flood = idle_connections(rx.port(), 100);
    const auto t0 = Clock::now();
    try {
      TcpSendChannel tx(job, g_rank, "self", 41, 4096, 2, rx.address(), rx.port(), in_ms(5000));
      rx.accept_peer(in_ms(5000));
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      check(s < 2, fmt::format("flood: the sender got in after {:.1f} s", s));
      // 101 connections, the sender's the last: the oldest idle ones past kTcpMaxPending go.
      check(rx.refusals().silent == 101 - kTcpMaxPending,
            fmt::format("flood: {} idle connections pushed out, expected {}", rx.refusals().silent, 101 - kTcpMaxPending));
      transfer(tx, rx, 4096, 2, 20, "after a flood");
      check(closed_by_peer(flood.back(), 2000), "flood: the idle connections are closed once the peer is in");
    } catch (const Error& e) {
      failure("flood: the real sender did not get in: {}", e.what());
    }
  }
  {
    TcpJob job = local_job(token);
    TcpRecvChannel rx(job, 5, "elsewhere", 42, 4096, 2);
    std::vector<TcpSocket> flood = idle_connections(rx.port(), kTcpMaxPending + 6);
    expect_error(ExitCode::timeout, "a flood and no sender", [&] { rx.accept_peer(in_ms(1000)); },
                 {"rank 5 (host elsewhere)", "6 silent connection(s) dropped", "a flood of connections"});
  }
  if (g_n == 2) {  // once per suite: it takes kTcpHelloWait
    TcpJob job = local_job(token);
    TcpRecvChannel rx(job, 5, "elsewhere", 43, 4096, 2);
    TcpSocket silent = raw_connect(rx.port());
    const auto t0 = Clock::now();
    check(closed_by_peer(silent, 10000), "a silent connection is dropped");
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    check(s > kTcpHelloWait.count() - 0.5 && s < kTcpHelloWait.count() + 2,
          fmt::format("a silent connection dropped after {:.1f} s, expected {} s", s, kTcpHelloWait.count()));
    expect_error(ExitCode::timeout, "a silent connection", [&] { rx.accept_peer(in_ms(10)); },
                 {"1 silent connection(s) dropped"});
  }
}

ChannelOptions tcp_options(size_t slot, int depth) {
  ChannelOptions o;
  o.transport = "tcp";
  o.slot_bytes = slot;
  o.depth = depth;
  o.timeout = std::chrono::seconds(20);
  return o;
}

// Ranks 0 and 1 connect both ways; rank 1 sends two slots, then closes its channels while rank 0
// still expects more: rank 0's receive and then its sends must fail naming rank 1, fast.
void peer_disappears(const RankLayout& layout) {
  std::vector<ChannelRequest> req;
  if (g_rank == 0) req = {{1, 0, true}, {1, 0, false}};
  if (g_rank == 1) req = {{0, 0, true}, {0, 0, false}};
  auto set = connect_channels(MPI_COMM_WORLD, layout, req, tcp_options(64 * 1024, 2));
  check(set->label() == "tcp", "peer gone: label " + set->label());
  if (g_rank == 1) {
    SendChannel& tx = set->send(0);
    for (int i = 0; i < 2; ++i) {
      void* p = nullptr;
      if (!eventually([&] { return (p = tx.try_acquire()) != nullptr; })) failure("peer gone: no slot on rank 1");
      if (p) {
        std::memset(p, i, 64 * 1024);
        tx.post(64 * 1024);
      }
    }
    if (!eventually([&] { return tx.try_drain(); })) failure("peer gone: rank 1 could not drain");
    set.reset();  // the peer disappears mid-transfer: rank 0 expects more
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (g_rank == 0) {
    RecvChannel& rx = set->recv(1);
    SendChannel& tx = set->send(0);
    for (int i = 0; i < 2; ++i) {
      size_t n = 0;
      const void* p = nullptr;
      if (!eventually([&] { return (p = rx.try_peek(&n)) != nullptr; })) failure("peer gone: slot {} missing", i);
      else rx.release();
    }
    const auto t0 = Clock::now();
    expect_error(ExitCode::runtime, "peer gone while receiving", [&] {
      size_t n = 0;
      eventually([&] { return rx.try_peek(&n) != nullptr; }, 10000);
    }, {"tcp: connection to rank 1 (host " + layout.host_of[1] + ") was reset"});
    expect_error(ExitCode::runtime, "peer gone while sending", [&] {
      const auto until = in_ms(10000);
      while (Clock::now() < until) {
        if (void* p = tx.try_acquire()) {
          std::memset(p, 3, 64 * 1024);
          tx.post(64 * 1024);
        }
      }
    }, {"tcp: connection to rank 1", "was reset"});
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    check(s < 5, fmt::format("peer gone: noticed after {:.1f} s", s));
  }
  set.reset();
  MPI_Barrier(MPI_COMM_WORLD);
}

// A ring of zero-copy channels connected by connect_channels: every rank sends to the next and
// receives from the previous, every size from 0 to a whole slot.
void direct_ring(const RankLayout& layout) {
  const std::vector<ChannelRequest> ring = {{(g_rank + 1) % g_n, 6, true}, {(g_rank + g_n - 1) % g_n, 6, false}};
  auto set = connect_channels(MPI_COMM_WORLD, layout, ring, tcp_options(64 * 1024, 3));
  auto* tx = dynamic_cast<TcpSendChannel*>(&set->send(0));
  check(tx && set->send(0).direct() && set->recv(1).direct(), "direct ring: tcp channels have zero-copy ends");
  if (!tx || !set->recv(1).direct()) return;
  // The previous rank's pattern is the one this rank's own transfer checks (same formula).
  direct_transfer(*tx, *tx, *set->recv(1).direct(), set->recv(1), 64 * 1024, 3, 300, "direct ring", false);
  MPI_Barrier(MPI_COMM_WORLD);  // nobody closes while a peer still reads
}

// A flood during set-up, step by step as connect_channels takes it with the tcp entry of the
// transport table: rank 0 creates its receiving end for rank 1, 100 idle connections fill that
// listener's backlog, and only then does rank 1 attach while rank 0 waits for it in MPI (as it
// waits for the other ranks in connect_channels); rank 0 then accepts. The set-up completes at
// once and data flows.
void flood_during_setup(const RankLayout& layout) {
  const TransportOps* tcp = nullptr;
  for (const TransportOps& t : cpu_transports())
    if (t.name == "tcp") tcp = &t;
  ChannelOptions o = tcp_options(4096, 2);
  o.timeout = std::chrono::seconds(10);
  SetupArgs a;
  a.comm = MPI_COMM_WORLD;
  a.layout = &layout;
  a.options = &o;
  a.deadline = Clock::now() + o.timeout;
  std::unique_ptr<TransportJob> job = tcp->prepare(a);  // collective
  a.job = job.get();
  a.tag = 9;
  std::unique_ptr<RecvChannel> rx;
  std::unique_ptr<SendChannel> tx;
  std::vector<TcpSocket> flood;
  ChannelSetup setup;
  const auto t0 = Clock::now();
  try {
    if (g_rank == 0) {
      a.peer = 1;
      rx = tcp->create_recv(a, &setup);
      flood = idle_connections(setup.tcp_port, 100);
      MPI_Send(&setup, sizeof setup, MPI_BYTE, 1, 9, MPI_COMM_WORLD);
    } else if (g_rank == 1) {
      MPI_Recv(&setup, sizeof setup, MPI_BYTE, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      a.peer = 0;
      tx = tcp->attach_send(a, setup);
    }
  } catch (const Error& e) {
    failure("flood during set-up: rank {} could not attach: {}", g_rank, e.what());
  }
  MPI_Barrier(MPI_COMM_WORLD);  // rank 0 serves nothing itself while rank 1 attaches
  try {
    if (g_rank == 0) {
      tcp->connected(a, *rx);
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      check(s < 4, fmt::format("flood during set-up: connected after {:.1f} s", s));
      size_t n = 0;
      const void* q = nullptr;
      check(eventually([&] { return (q = rx->try_peek(&n)) != nullptr; }), "flood during set-up: data");
      if (q) {
        check(n == 64 && static_cast<const unsigned char*>(q)[63] == 7, "flood during set-up: the right bytes");
        rx->release();
      }
    } else if (g_rank == 1 && tx) {
      void* p = nullptr;
      check(eventually([&] { return (p = tx->try_acquire()) != nullptr; }), "flood during set-up: a slot");
      if (p) {
        std::memset(p, 7, 64);
        tx->post(64);
      }
      check(eventually([&] { return tx->try_drain(); }), "flood during set-up: drain");
    }
  } catch (const Error& e) {
    failure("flood during set-up: {}", e.what());
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

void interface_choice(const RankLayout& layout) {
  const std::vector<ChannelRequest> ring = {{(g_rank + 1) % g_n, 5, true}, {(g_rank + g_n - 1) % g_n, 5, false}};
  setenv("CCBENCH_TCP_IF", "nonexistent", 1);
  expect_error(ExitCode::usage, "CCBENCH_TCP_IF=nonexistent",
               [&] { connect_channels(MPI_COMM_WORLD, layout, ring, tcp_options(4096, 2)); },
               {"CCBENCH_TCP_IF='nonexistent'", "interfaces here: ", "lo ("});
  setenv("CCBENCH_TCP_IF", "lo", 1);
  try {
    auto set = connect_channels(MPI_COMM_WORLD, layout, ring, tcp_options(4096, 2));
    check(set->label() == "tcp", "CCBENCH_TCP_IF=lo: label " + set->label());
    // One slot around the ring.
    SendChannel& tx = set->send(0);
    RecvChannel& rx = set->recv(1);
    void* p = nullptr;
    check(eventually([&] { return (p = tx.try_acquire()) != nullptr; }), "CCBENCH_TCP_IF=lo: slot");
    if (p) {
      std::memcpy(p, &g_rank, sizeof g_rank);
      tx.post(sizeof g_rank);
    }
    size_t n = 0;
    const void* q = nullptr;
    check(eventually([&] { return (q = rx.try_peek(&n)) != nullptr; }), "CCBENCH_TCP_IF=lo: data arrives");
    if (q) {
      int from = -1;
      std::memcpy(&from, q, sizeof from);
      check(n == sizeof from && from == (g_rank + g_n - 1) % g_n, "CCBENCH_TCP_IF=lo: right data");
      rx.release();
    }
    check(eventually([&] { return tx.try_drain(); }), "CCBENCH_TCP_IF=lo: drain");
    MPI_Barrier(MPI_COMM_WORLD);
  } catch (const Error& e) {
    failure("CCBENCH_TCP_IF=lo: {}", e.what());
  }
  unsetenv("CCBENCH_TCP_IF");

  // "auto" keeps to shm and mpi.
  ChannelOptions o;
  auto set = connect_channels(MPI_COMM_WORLD, layout, ring, o);
  check(set->label().find("tcp") == std::string::npos, "auto chose " + set->label());
  check(valid_cpu_transports() == "auto, shm, mpi, tcp, ib, ofi", "valid transports: " + valid_cpu_transports());
}

}  // namespace
}  // namespace ccbench

int main(int argc, char** argv) {
  using namespace ccbench;
  using namespace ccbench::mpi_checks;
  start(&argc, &argv);
  const auto t0 = Clock::now();
  try {
    protocol_local();
    MPI_Barrier(MPI_COMM_WORLD);
    flood_local(tcp_random_token());
    MPI_Barrier(MPI_COMM_WORLD);
    const RankLayout layout = real_layout();
    if (g_n >= 2) {
      peer_disappears(layout);
      direct_ring(layout);
      interface_choice(layout);
      flood_during_setup(layout);
    }
  } catch (const Error& e) {
    failure("stopped by an error: {}", e.what());
    MPI_Abort(MPI_COMM_WORLD, static_cast<int>(e.code()));
  }
  return finish(t0);
}
