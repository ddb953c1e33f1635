#pragma once
// `ccbench links`: the link matrix. Every ordered pair of ranks, in rounds of pairs on disjoint
// nodes (topologies/pair_rounds.h; the ranks outside a round's pairs wait at a barrier, so pairs
// measured together share no node; --serial: one pair at a time, as on one node), measures
//   one-way bandwidth      src streams -n messages of each size to dst (GB/s = 1e9 B/s);
//   bidirectional          both stream to each other at once (GB/s, both directions summed);
//   latency                ping-pong of the smallest size, half the round trip (us);
// and optionally every rank to every other at once (--all-at-once). CPU ranks measure over the
// CPU channels (transports/connect.h: shm, mpi, tcp, ib); GPU ranks measure peer copies with copy
// engines (`ce`) and SM stores (`sm`) and, per GPU, pinned host copies D2H/H2D (`pcie`): the
// names of core/transport_names.h. The sweep ends at -e itself, even where the factor steps over it.
// Rank 0 prints the matrices, flags outliers (below --outlier-threshold of the median of their
// transport) naming ranks and hosts, attributes slow links to the endpoint they share
// (results/attribution.h: the culprit host), and writes links.csv and links.json to the results
// folder.
// A pair that cannot be measured (no peer access, transport unavailable) is an empty cell with
// its reason, never 0.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <mpi.h>

#include "harness/engine/fault.h"
#include "harness/engine/options.h"
#include "topologies/layout.h"
#include "results/links.h"
#include "transports/ib/ib_logic.h"
#include "core/transport_names.h"

namespace ccbench {

struct LinksOptions {
  std::vector<Transport> transports{Transport::auto_select};  // CPU: auto, shm, mpi, tcp, ib; GPU: auto, ce, sm, pcie
  std::uint64_t min_bytes = 8;                                // latency size, and the sweep's first size
  std::uint64_t max_bytes = 0;                                // 0: 64 MiB on CPU ranks, 256 MiB on GPU ranks
  double factor = 8;                                          // sweep step
  int iterations = 20;
  int warmup = 3;
  double outlier_threshold = 0.9;  // a pair below this fraction of the median is flagged
  bool all_at_once = false;
  bool serial = false;             // --serial: one pair at a time even across nodes
  std::optional<FaultSpec> fault;  // CCBENCH_FAULT (tests): `slow` makes a rank late with every message
  DeviceChoice device = DeviceChoice::auto_detect;
  IbOptions ib;
  OfiOptions ofi;
  std::string out_dir;  // empty: ./ccbench-results/<UTC time>-<host>
  bool no_files = false;
  bool overwrite = false;  // --overwrite: replace an earlier run's links files
  std::chrono::milliseconds timeout{std::chrono::seconds(120)};
  std::string command_line;
};

// Measures the ceilings inside a `ccbench run` (--measure-ceilings): one pair at a time at
// `bytes`, over `transport` on CPU ranks (auto: shm/mpi), ce and pcie on GPU ranks, and on GPU
// ranks across (emulated) nodes also kNetTcpCeiling between the nodes (and, where the tree drives
// another number of streams, net_tcp_streams_label() of it). Collective;
// the result is complete on rank 0; `links_json` (rank 0, if not empty) gets the measurement.
std::vector<LinkCeiling> measure_link_ceilings(bool gpu, const std::string& transport, const RankLayout& layout,
                                               MPI_Comm comm, int cuda_device, std::chrono::milliseconds timeout,
                                               std::uint64_t bytes, const std::string& links_json);

// `ccbench links`: MPI start-up, the measurement, the reports; the agreed exit code.
int run_links(const LinksOptions& options, int* argc, char*** argv);

}  // namespace ccbench
