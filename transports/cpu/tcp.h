#pragma once
// Channels over TCP sockets between CPU ranks: ranks of one host over loopback, or ranks on
// different hosts over the network (--transport tcp).
//
// One TCP connection per directed channel. Both ends own `depth` slots of slot_bytes:
//   sender    post() queues header + payload of its slot and writes what the socket takes;
//             the rest goes out on later calls. A slot can be filled again once the receiver
//             has released it, which it learns from credits.
//   receiver  reads the stream into its free slots as bytes arrive (partial reads resume where
//             they stopped); release() sends a credit back on the same connection.
// The sender never has more than `depth` slots unreleased at the receiver, so the receiver
// always has room for every byte that was sent and never stops reading the stream.
//
// Zero-copy ends (channel.h's DirectSend / DirectRecv, used by the GPU proxy): try_post_from()
// queues a header and the caller's own bytes, which sendmsg() copies into the socket buffer
// straight from there; try_receive_into() reads a message's payload with recv() straight into the
// caller's buffer, and only once the caller has given one, so until then the bytes wait in the
// socket buffer. Same wire format, checks, credits and errors as slot posts; the credit goes back
// on release(), when the caller is done with the buffer. These two calls move only their own
// channel (their caller polls each of its channels in turn): fewer system calls per idle pass.
//
// Wire format: transports/cpu/tcp_wire.h, the protocol without its sockets.
// Every header is checked: a wrong tag or sequence number, or a length over slot_bytes, ends the
// run with Error(runtime, "tcp: rank R sent a malformed message ...").
//
// Progress: calls never block. Every call moves its own channel's bytes; a call that finds nothing
// to return also moves every other channel of its TcpJob, so a half-written slot toward one peer
// goes out while the executor waits on another.
//
// Failures: a connection that ends (reset, EOF) while its peer still owes data or credits, or while
// data is left to write, is Error(runtime, "tcp: connection to rank R (host H) was reset: ...").
// An end at a message boundary when nothing more is needed is not an error (a peer that finished
// first may close its end).
//
// Set-up (transports/connect.cpp): rank 0 draws the token and broadcasts it; each receiver listens
// on an ephemeral port of the address from tcp_local_address() (never the wildcard address) and
// sends (address, port, token) to its sender over MPI; the sender connects and introduces itself;
// the receiver takes the first connection that presents the token and the expected rank and tag,
// closing the others, bounded by the set-up deadline.
//
// Listeners keep accepting while this rank does anything else (attaching its own senders,
// waiting for the other ranks): from its first listener until the last is claimed, a TcpJob runs
// an accepting thread, so that connections filling a listener's backlog (a port scan, a flood of
// idle connections) cannot keep the real sender out. A connection is dropped when it presents
// another token, when it ends before introducing itself, when it has not introduced itself within
// kTcpHelloWait, and, the oldest first, when a listener holds kTcpMaxPending unintroduced ones; a
// set-up that still times out names the connections dropped as a flood.
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "topologies/layout.h"
#include "transports/channel.h"
#include "transports/connect.h"
#include "transports/cpu/tcp_wire.h"
#include "transports/slot_memory.h"

namespace ccbench {

using TcpDeadline = std::chrono::steady_clock::time_point;

// 128 bits from getrandom(). Throws Error(runtime) if getrandom() fails.
TcpToken tcp_random_token();

// This host's IPv4 interface addresses other than loopback ones, in getifaddrs() order.
std::vector<TcpInterfaceAddress> tcp_host_addresses();
// The numeric address this rank's TCP channels listen on and connect from:
//   CCBENCH_TCP_IF set    an IPv4 address of that interface (else a global IPv6, else a
//                         link-local one), found with getifaddrs();
//   unset, one host       127.0.0.1;
//   unset, several hosts  the first non-loopback address the host name resolves to; where the
//                         name resolves to loopback only (Debian's "127.0.1.1 host" line) or
//                         not at all, the interface on the route to the peers
//                         (tcp_route_address over `addresses_of`).
// `addresses_of`: every rank's tcp_format_addresses() (rank order), gathered by the caller
// (tcp_choose_address in transports/connect.h); may be empty on one host.
// Throws Error(usage) when CCBENCH_TCP_IF names no interface with an address, or a loopback one
// while ranks span hosts (the message lists the interfaces that exist and their addresses);
// Error(precondition) when neither the host name nor a shared subnet gives an address.
std::string tcp_local_address(const RankLayout& layout, const std::vector<std::string>& addresses_of);

// "lo (127.0.0.1, ::1), eth0 (10.0.0.2)": this host's interfaces, for messages.
std::string tcp_interfaces();

// How long a connection to a listener may stay without introducing itself before it is dropped.
// The sender writes its 48-byte hello in the call that connects; 5 s is beyond any scheduling
// delay of a loaded host (8 ranks on the 2-core build machine under ASan), and well within the
// default set-up deadline.
inline constexpr std::chrono::seconds kTcpHelloWait{5};
// Unintroduced connections a listener holds at once (also its listen() backlog).
inline constexpr int kTcpMaxPending = 64;

// What a listener saw of connections that were not its peer (messages, tests).
struct TcpRefusals {
  int wrong_token = 0;   // presented another job token
  int closed_early = 0;  // ended before introducing themselves
  int silent = 0;        // did not introduce themselves within kTcpHelloWait, or were pushed out
                         // by newer ones past kTcpMaxPending
};

class TcpAcceptor;  // tcp.cpp: the accepting thread of a TcpJob

// A socket descriptor, closed on destruction.
class TcpSocket {
 public:
  TcpSocket() = default;
  explicit TcpSocket(int fd) : fd_(fd) {}
  TcpSocket(TcpSocket&& o) noexcept : fd_(o.release()) {}
  TcpSocket& operator=(TcpSocket&& o) noexcept;
  ~TcpSocket() { reset(); }
  int get() const { return fd_; }
  int release() {
    const int f = fd_;
    fd_ = -1;
    return f;
  }
  void reset();

 private:
  int fd_ = -1;
};

// Internal: an end of a channel that TcpJob::progress() moves.
class TcpEndpoint {
 public:
  virtual ~TcpEndpoint() = default;
  // Moves what can move without blocking; throws Error as the channel calls do.
  virtual void progress_io() = 0;
};

// What the TCP channels of one connect_channels() call on one rank share: the job token, the
// local address and the list of channels to progress. Must outlive its channels (the ChannelSet
// destroys its channels first). Its calls come from one thread, as the channels'; while a
// listener of its channels waits for its peer it runs an accepting thread of its own.
class TcpJob final : public TransportJob {
 public:
  // `timeout` bounds unacknowledged data on the wire (TCP_USER_TIMEOUT) of every connection.
  TcpJob(const TcpToken& token, std::string local_address, int rank, std::chrono::milliseconds timeout);
  ~TcpJob() override;  // stops the accepting thread
  TcpJob(TcpJob&&) noexcept;
  TcpJob& operator=(TcpJob&&) = delete;

  const TcpToken& token() const { return token_; }
  const std::string& local_address() const { return local_address_; }
  int rank() const { return rank_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

  // Moves bytes on every channel of this job (pending writes, arrived data, credits) but
  // `moved`, a channel that has just moved its own. Throws Error(runtime) on protocol violations
  // and on connections reset while needed.
  void progress(const TcpEndpoint* moved = nullptr);

  // Channels register themselves on construction and leave on destruction.
  void add(TcpEndpoint* e) { endpoints_.push_back(e); }
  void remove(TcpEndpoint* e);

  // Set-up, for TcpRecvChannel: the accepting thread takes `listener` and serves it until a
  // connection presents the job token as rank `peer` on channel `tag` with this geometry; returns
  // its id. claim() waits until `deadline` for that connection and hands it over (the listener is
  // then closed); it throws Error(runtime) when a connection with the job token named another
  // channel or geometry, and returns an empty socket at the deadline; `seen` gets what the
  // listener dropped so far. forget() gives a listener up unclaimed. All from the channels' thread.
  int listen(TcpSocket listener, int peer, int tag, size_t slot_bytes, std::uint64_t depth);
  TcpSocket claim(int id, TcpDeadline deadline, TcpRefusals* seen);
  void forget(int id);

 private:
  void stop_accepting_when_idle();
  TcpToken token_;
  std::string local_address_;
  int rank_;
  std::chrono::milliseconds timeout_;
  std::vector<TcpEndpoint*> endpoints_;
  std::unique_ptr<TcpAcceptor> acceptor_;  // while a listener is unclaimed
  int unclaimed_ = 0;
};

// Receiving end. All calls from one thread.
class TcpRecvChannel final : public RecvChannel, public DirectRecv, private TcpEndpoint {
 public:
  // Listens on job.local_address() at an ephemeral port. `peer` is the sending rank, `peer_host`
  // its host name (both for messages). slot_bytes > 0, depth >= 1. Throws Error(runtime) naming
  // the failing socket call, Error(usage) for an invalid geometry.
  TcpRecvChannel(TcpJob& job, int peer, std::string peer_host, int tag, size_t slot_bytes, int depth);
  ~TcpRecvChannel() override;  // closes the sockets

  const std::string& address() const { return address_; }
  std::uint16_t port() const { return port_; }

  // Waits until `deadline` for the connection of rank `peer` presenting the job token, its rank
  // and this channel's tag and geometry, which the job's accepting thread has been waiting for
  // since construction. Connections that present another token (or close before introducing
  // themselves, or stay silent) are closed and ignored; refused() counts those with another
  // token. The listening socket is closed once the peer is in. Throws Error(timeout) when the
  // deadline passes first, naming what was dropped (a flood of silent connections as such),
  // Error(runtime) for a connection with the job token that names another channel or geometry.
  void accept_peer(TcpDeadline deadline);
  int refused() const { return refusals_.wrong_token; }
  const TcpRefusals& refusals() const { return refusals_; }

  const void* try_peek(size_t* bytes) override;  // Error(runtime) once try_receive_into() was used
  // Error(runtime) when no message is held.
  void release() override;
  size_t slot_bytes() const override { return slot_bytes_; }
  DirectRecv* direct() override { return this; }
  bool try_receive_into(void* dst, size_t cap, size_t* bytes) override;

 private:
  void progress_io() override;
  void read_stream();
  bool reading() const;
  unsigned char* payload_at(size_t off) const;
  void flush_credit();
  [[noreturn]] void fail_reset(const std::string& why) const;
  [[noreturn]] void fail_malformed(const std::string& what) const;

  TcpJob& job_;
  int peer_, tag_;
  std::string peer_host_, address_;
  std::uint16_t port_ = 0;
  size_t slot_bytes_;
  std::uint64_t depth_;
  int listener_ = -1;  // the job's id of this channel's listener until the peer is in
  TcpSocket sock_;
  TcpRefusals refusals_;
  SlotMemory mem_;
  std::vector<size_t> lengths_;
  std::uint64_t received_ = 0;     // complete slots read
  std::uint64_t released_ = 0;     // slots given back
  bool direct_ = false;            // read into the caller's buffers (try_receive_into)
  unsigned char* into_ = nullptr;  // direct: the caller's buffer for the message being read
  size_t into_cap_ = 0;
  std::uint64_t returned_ = 0;  // direct: messages returned to the caller
  unsigned char header_[kTcpHeaderBytes] = {};
  size_t header_got_ = 0;  // bytes of the current header read
  size_t payload_len_ = 0, payload_got_ = 0;
  unsigned char credit_[kTcpCreditBytes] = {};
  size_t credit_sent_ = kTcpCreditBytes;  // bytes of credit_ written (16: none pending)
  std::uint64_t credited_ = 0;            // released count in the last credit started
  bool credit_dead_ = false;              // a credit could not be written: the sender is gone
  std::optional<std::string> closed_;     // why the stream ended at a message boundary
};

// Sending end. All calls from one thread.
class TcpSendChannel final : public SendChannel, public DirectSend, private TcpEndpoint {
 public:
  // Connects from job.local_address() to the receiver at address:port and introduces itself
  // (job token, job.rank(), tag, geometry), all before `deadline`. Throws Error(timeout) when the
  // deadline passes, Error(runtime) when the connection is refused or a socket call fails.
  TcpSendChannel(TcpJob& job, int peer, std::string peer_host, int tag, size_t slot_bytes, int depth,
                 const std::string& address, std::uint16_t port, TcpDeadline deadline);
  ~TcpSendChannel() override;  // closes the socket; unsent bytes are dropped

  void* try_acquire() override;
  // bytes <= slot_bytes() (else Error(runtime)). Writes what the socket takes now.
  void post(size_t bytes) override;
  size_t slot_bytes() const override { return slot_bytes_; }
  // True once every posted byte is in the kernel's send buffer.
  bool try_drain() override;
  DirectSend* direct() override { return this; }
  bool try_post_from(const void* data, size_t bytes) override;
  std::uint64_t sent() const override { return written_; }

 private:
  void progress_io() override;
  bool has_credit(bool whole_job);
  void queue(const char* payload, size_t bytes);
  void flush();
  void read_credits();
  [[noreturn]] void fail_reset(const std::string& why) const;
  [[noreturn]] void fail_malformed(const std::string& what) const;

  TcpJob& job_;
  int peer_, tag_;
  std::string peer_host_;
  size_t slot_bytes_;
  std::uint64_t depth_;
  TcpSocket sock_;
  SlotMemory mem_;
  std::vector<std::array<unsigned char, kTcpHeaderBytes>> headers_;
  std::vector<size_t> lengths_;
  std::vector<const char*> payloads_;  // where each posted message's bytes are (a slot or the caller's)
  std::uint64_t posted_ = 0;           // slots posted
  std::uint64_t written_ = 0;          // slots wholly written to the socket
  size_t write_off_ = 0;               // bytes of slot `written_` (header included) written
  std::uint64_t credit_ = 0;           // slots the receiver has released
  unsigned char credit_buf_[kTcpCreditBytes] = {};
  size_t credit_got_ = 0;
  std::optional<std::string> closed_;  // why the receiver's direction ended
};

}  // namespace ccbench
