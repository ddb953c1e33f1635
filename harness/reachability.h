#pragma once
// Which hosts of a job still answer: what a job that timed out says about the hosts it can no
// longer reach (a cut link, a host that went down). From inside MPI a rank stuck on a live host
// and a host cut off look the same; a TCP handshake tells them apart.
//
// At start-up, where the ranks span hosts, every rank listens on a TCP port of the address its
// tcp channels would use (transports/connect.h tcp_choose_address) and the ranks exchange address
// and port. The kernel completes a handshake with a listening socket without its process, so a
// rank stuck anywhere still answers; a port whose process ended answers with a reset; a host that
// is down or cut off does not answer at all. describe() connects to the first rank of every other
// host at once and waits at most its budget.
//
// Threads: construct and destroy on the main thread; describe() from any thread (the watchdog's
// or the signal thread's ending the job), concurrently with nothing else of this object.
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <mpi.h>

#include "topologies/layout.h"

namespace ccbench {

class Reachability {
 public:
  // Collective over `world` (described by `layout`); its waits are bounded by `timeout`. Never
  // throws for a rank that cannot listen (no usable address): describe() then says why.
  // Throws Error(timeout) when the exchange itself outlives `timeout`.
  Reachability(MPI_Comm world, const RankLayout& layout, std::chrono::milliseconds timeout);
  ~Reachability();
  Reachability(const Reachability&) = delete;
  Reachability& operator=(const Reachability&) = delete;

  // What the other hosts answered within `budget`: `text` is "" when every one answered (or the
  // ranks share one host); otherwise "host h3 (rank 2, 198.18.0.3) did not answer within 1.5 s (a
  // link or the host is down)", "rank 4 (host h5, 198.18.0.5) did not accept: Connection refused"
  // (its process is gone), joined by "; ", and why hosts could not be probed. `silent`: the hosts
  // that did not answer at all.
  struct Report {
    std::string text;
    int silent = 0;
  };
  Report describe(std::chrono::milliseconds budget) const;

 private:
  struct Peer {
    int rank = -1;
    std::string host, address;
    std::uint16_t port = 0;
  };
  std::vector<Peer> peers_;  // the first rank of every other host that could listen
  std::string unprobed_;     // the hosts that could not listen, and why this rank cannot probe
  int listener_ = -1;
};

}  // namespace ccbench
