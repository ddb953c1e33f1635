#pragma once
// The results of a link measurement (`ccbench links`, harness/links/links.h): one cell per ordered
// pair, transport and size; the outliers among them; the matrices, links.csv and links.json that
// report them; and the ceilings a collective row is judged against (its efficiency). Pure: no MPI,
// no devices.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "results/attribution.h"
#include "results/csv_reader.h"
#include "results/record.h"

namespace ccbench {

// The pcie mode of every GPU copying both ways at once.
inline constexpr const char* kPcieAllAtOnce = "d2h+h2d all";

// "rank R (HOST)", or "host memory (HOST)" for rank -1.
std::string link_endpoint(int rank, const std::string& host);

// The name of the link between two ranks, the same whichever way it is used and by whichever
// command measured it: "HOST:R-HOST:R", lower rank first; "HOST:R-host" for a rank and its node's
// pinned host memory (rank -1). Rows of `--groups pairs` and of links.csv carry it in their `link`
// column, so `accept` gives one verdict per link over both.
std::string link_name(int a, const std::string& host_a, int b, const std::string& host_b);

// One measured (or unmeasurable) cell: an ordered pair, a transport, a size.
struct LinkResult {
  std::string transport;
  std::string mode;        // "pair" (one pair at a time), "all" (every pair at once); pcie: "d2h", "h2d", "d2h+h2d"
                           // (one GPU at a time), kPcieAllAtOnce (every GPU both ways at once)
  int src = -1, dst = -1;  // dst -1: pinned host memory of src's node (pcie)
  std::string src_host, dst_host;
  std::uint64_t bytes = 0;
  std::optional<double> oneway_gbps, bidir_gbps, latency_us;
  std::string reason;  // why the cell is empty
};

struct LinkOutlier {
  const LinkResult* result;
  std::string metric;  // "one-way", "bidirectional"
  double value = 0, median = 0;
};

// Pairs whose bandwidth is below `threshold` x the median of the same transport, mode and size
// (pairs without a value are not compared), among the results of size `bytes` (0: every size;
// `ccbench links` flags the largest size, where bandwidth rather than latency decides). Pure;
// pointers into `results`.
std::vector<LinkOutlier> find_link_outliers(const std::vector<LinkResult>& results, double threshold,
                                            std::uint64_t bytes = 0);

// Which endpoint the slow links of each transport are attributed to (results/attribution.h), by
// the one-way bandwidth of the "pair" cells at size `bytes` (the lower of a link's two
// directions), against `threshold` as the outliers are: one attribution per transport.
struct LinkAttribution {
  std::string transport;
  std::uint64_t bytes = 0;
  Attribution attribution;
  std::string subject() const;  // "tcp one-way at 16 MiB"
};
std::vector<LinkAttribution> attribute_links(const std::vector<LinkResult>& results, double threshold,
                                             std::uint64_t bytes);

// The matrix of one transport and size for people: rows src, columns dst, "-" on the diagonal,
// empty where not measured. `metric` picks oneway_gbps, bidir_gbps or latency_us.
enum class LinkMetric { oneway, bidir, latency };
std::string format_link_matrix(const std::vector<LinkResult>& results, const std::string& transport,
                               std::uint64_t bytes, LinkMetric metric, int nranks);

// The whole measurement as JSON (context, options, every result, outliers, the attributions:
// "attribution", results/attribution.h's attribution_json() each); the ceilings a later run reads
// back (--ceilings) are ceilings_from_links().
nlohmann::ordered_json links_to_json(const std::vector<LinkResult>& results, const std::vector<LinkOutlier>& outliers,
                                     const nlohmann::ordered_json& context,
                                     const std::vector<LinkAttribution>& attributions = {});
// links.csv: header, then one line per result; its last column, `culprit`, holds the blame of
// a slow cell's link where an attribution judged it (the culprit endpoint, "link", "ambiguous").
std::string links_to_csv(const std::vector<LinkResult>& results, const std::vector<LinkAttribution>& attributions = {});

// A links.csv as rows `accept` judges: collective "link", impl "links", the transport and mode
// (kLinkModes) as measured, busbw and algbw the one-way bandwidth, time that of one message at
// it (size / bandwidth; the latency stays in links.csv), host the sender's, link its link_name(); cells without a value
// are skipped rows with their reason. The context is links.json's where it lies beside the CSV. Throws Error(usage)
// naming the file and line of a malformed row.
ResultSet read_links_result_set(const std::string& csv_path);
// A results.csv, a links.csv, or a results folder holding one of them (results.csv first).
ResultSet read_results_or_links(const std::string& file_or_folder);
// What a row of links.csv may say in its mode column (`select: {mode: ...}` in rules).
inline const std::vector<std::string> kLinkModes = {"pair", "all", "d2h", "h2d", "d2h+h2d", kPcieAllAtOnce};

// The ceiling of each transport in a links measurement: the median over pairs (pcie: over GPUs,
// the kPcieAllAtOnce rows where measured, as host staging has every GPU copying at once, else the
// "d2h+h2d" rows of one GPU at a time) at the largest size measured, one way and both ways. Throws Error(usage)
// naming `source` for something that is not a links.json.
struct LinkCeiling {
  std::string transport;
  double oneway_gbps = 0, bidir_gbps = 0;
};
std::vector<LinkCeiling> ceilings_from_links(const nlohmann::ordered_json& links, const std::string& source);
std::vector<LinkCeiling> read_link_ceilings(const std::string& path);

// The efficiency of a collective row: busbw over what its path carries per direction when both
// directions are busy (the bidirectional ceiling / 2: in a ring every rank sends and receives at
// once). The path's ceiling is the row's transport's; "a+b" takes the lower of both; GPU rows over
// peer memory (cuda_ipc, p2p, nccl) use the copy-engine ceiling `ce`, host-staged rows (`host`)
// the pinned-copy ceiling `pcie`. nullopt when no ceiling applies.
std::optional<double> row_efficiency(const std::string& transport, const std::string& device, double busbw_gbps,
                                     const std::vector<LinkCeiling>& ceilings);
// That path's ceiling itself, GB/s per direction with both directions busy.
std::optional<double> path_ceiling_gbps(const std::string& transport, const std::string& device,
                                        const std::vector<LinkCeiling>& ceilings);

// A row's ceiling columns (results/record.h): its path's ceiling and busbw / that ceiling, for
// a measured row (status ok) whose path has a ceiling; both empty otherwise.
void set_ceiling_columns(RunRecord& row, const std::vector<LinkCeiling>& ceilings);
// What the ceiling columns were computed from, for the run's context ("link_ceilings"):
// {"source", "efficiency" (the formula), "ceilings": [{"transport", "oneway_GBps", "bidir_GBps"}]}.
nlohmann::ordered_json link_ceilings_context(const std::vector<LinkCeiling>& ceilings, const std::string& source);

// The ceiling of the GPU net transport's path between nodes: its tcp streams (CCBENCH_GPU_NET_CHANNELS
// of them per direction, a thread each), measured by --measure-ceilings on GPU ranks across nodes;
// GPU rows over net/tcp use it.
inline constexpr const char* kNetTcpCeiling = "net/tcp";
// The same tcp streams measured over `streams` connections per direction, where a kernel drives
// another number of them than the ring's (the tree all-reduce: 2 trees x a quarter of the ring's
// channels): "net/tcp:4". A block's share of the 8-stream figure underestimates what 4 streams get
// (2 x H200: 8.5 GB/s busbw of the tree against 7.6 predicted from 8 streams' share,
// h200x2-20261201-r15).
std::string net_tcp_streams_label(int streams);

}  // namespace ccbench
