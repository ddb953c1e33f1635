#include "results/links.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "core/size.h"
#include "core/text_file.h"
#include "core/transport_names.h"
#include "results/csv_reader.h"
#include "results/format.h"
#include "results/stats.h"

namespace ccbench {

using Json = nlohmann::ordered_json;

// ------------------------------------------------------------------------------- reports

namespace {

std::optional<double> metric_of(const LinkResult& r, LinkMetric m) {
  switch (m) {
    case LinkMetric::oneway: return r.oneway_gbps;
    case LinkMetric::bidir: return r.bidir_gbps;
    case LinkMetric::latency: return r.latency_us;
  }
  return std::nullopt;
}

Json optional_json(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

}  // namespace

std::string link_endpoint(int rank, const std::string& host) {
  return rank < 0 ? fmt::format("host memory ({})", host) : fmt::format("rank {} ({})", rank, host);
}

std::string link_name(int a, const std::string& host_a, int b, const std::string& host_b) {
  if (b < 0) return fmt::format("{}:{}-host", host_a, a);
  if (a < 0) return fmt::format("{}:{}-host", host_b, b);
  if (b < a) return fmt::format("{}:{}-{}:{}", host_b, b, host_a, a);
  return fmt::format("{}:{}-{}:{}", host_a, a, host_b, b);
}

std::vector<LinkOutlier> find_link_outliers(const std::vector<LinkResult>& results, double threshold,
                                            std::uint64_t bytes) {
  std::vector<LinkOutlier> out;
  const LinkMetric metrics[] = {LinkMetric::oneway, LinkMetric::bidir};
  std::map<std::tuple<std::string, std::string, std::uint64_t>, std::vector<const LinkResult*>> groups;
  for (const LinkResult& r : results)
    if (bytes == 0 || r.bytes == bytes) groups[{r.transport, r.mode, r.bytes}].push_back(&r);
  for (const auto& [key, members] : groups)
    for (LinkMetric m : metrics) {
      std::vector<double> values;
      for (const LinkResult* r : members)
        if (auto v = metric_of(*r, m)) values.push_back(*v);
      if (values.size() < 2) continue;  // one pair has nothing to be compared with
      const double median = median_of(values);
      for (const LinkResult* r : members)
        if (auto v = metric_of(*r, m); v && *v < threshold * median)
          out.push_back({r, m == LinkMetric::oneway ? "one-way" : "bidirectional", *v, median});
    }
  return out;
}

std::string LinkAttribution::subject() const { return fmt::format("{} one-way at {}", transport, human_size(bytes)); }

std::vector<LinkAttribution> attribute_links(const std::vector<LinkResult>& results, double threshold,
                                             std::uint64_t bytes) {
  std::map<std::string, std::vector<LinkSample>> by_transport;
  for (const LinkResult& r : results) {
    if (r.mode != "pair" || r.bytes != bytes || r.dst < 0 || !r.oneway_gbps) continue;
    const std::string link = link_name(r.src, r.src_host, r.dst, r.dst_host);
    const auto ends = link_endpoints(link);
    if (ends) by_transport[r.transport].push_back({link, ends->first, ends->second, *r.oneway_gbps, false});
  }
  std::vector<LinkAttribution> out;
  for (const auto& [transport, samples] : by_transport)
    out.push_back({transport, bytes, attribute_by_value(samples, threshold)});
  return out;
}

namespace {

// The blame of a cell's link in the attribution of its transport and size, "" where none.
std::string blame_of(const LinkResult& r, const std::vector<LinkAttribution>& attributions) {
  for (const LinkAttribution& a : attributions)
    if (a.transport == r.transport && a.bytes == r.bytes && r.mode == "pair")
      return a.attribution.blame_of(link_name(r.src, r.src_host, r.dst, r.dst_host));
  return "";
}

}  // namespace

std::string format_link_matrix(const std::vector<LinkResult>& results, const std::string& transport,
                               std::uint64_t bytes, LinkMetric metric, int nranks) {
  constexpr int kWidth = 9;
  std::string s = fmt::format("{:>8}", "src\\dst");
  for (int d = 0; d < nranks; ++d) s += fmt::format("{:>{}}", d, kWidth);
  s += '\n';
  for (int src = 0; src < nranks; ++src) {
    s += fmt::format("{:>8}", src);
    for (int d = 0; d < nranks; ++d) {
      std::string text = src == d ? "-" : "";
      for (const LinkResult& r : results)
        if (r.transport == transport && r.mode == "pair" && r.bytes == bytes && r.src == src && r.dst == d)
          if (auto v = metric_of(r, metric)) text = fmt::format("{:.2f}", *v);
      s += fmt::format("{:>{}}", text, kWidth);
    }
    s += '\n';
  }
  return s;
}

Json links_to_json(const std::vector<LinkResult>& results, const std::vector<LinkOutlier>& outliers,
                   const Json& context, const std::vector<LinkAttribution>& attributions) {
  Json j;
  j["schema"] = "ccbench-links/1";
  j["context"] = context;
  Json rows = Json::array();
  for (const LinkResult& r : results)
    rows.push_back({{"transport", r.transport},
                    {"mode", r.mode},
                    {"link", link_name(r.src, r.src_host, r.dst, r.dst_host)},
                    {"src", r.src},
                    {"dst", r.dst},
                    {"src_host", r.src_host},
                    {"dst_host", r.dst_host},
                    {"bytes", r.bytes},
                    {"oneway_GBps", optional_json(r.oneway_gbps)},
                    {"bidir_GBps", optional_json(r.bidir_gbps)},
                    {"latency_us", optional_json(r.latency_us)},
                    {"reason", r.reason}});
  j["results"] = rows;
  Json flagged = Json::array();
  for (const LinkOutlier& o : outliers)
    flagged.push_back({{"transport", o.result->transport},
                       {"mode", o.result->mode},
                       {"src", o.result->src},
                       {"dst", o.result->dst},
                       {"src_host", o.result->src_host},
                       {"dst_host", o.result->dst_host},
                       {"bytes", o.result->bytes},
                       {"metric", o.metric},
                       {"GBps", o.value},
                       {"median_GBps", o.median}});
  j["outliers"] = flagged;
  Json judged = Json::array();
  for (const LinkAttribution& a : attributions) {
    Json one = attribution_json(a.attribution, a.subject());
    one["transport"] = a.transport;
    one["bytes"] = a.bytes;
    judged.push_back(std::move(one));
  }
  j["attribution"] = judged;
  return j;
}

std::string links_to_csv(const std::vector<LinkResult>& results, const std::vector<LinkAttribution>& attributions) {
  std::string s = csv_line({"transport", "mode", "link", "src", "dst", "src_host", "dst_host", "bytes", "oneway_GBps",
                            "bidir_GBps", "latency_us", "reason", "culprit"});
  // Six significant digits: small sizes move well under 0.0001 GB/s on a loaded host.
  auto num = [](const std::optional<double>& v) { return v ? fmt::format("{:.6g}", *v) : std::string(); };
  for (const LinkResult& r : results)
    s += csv_line({r.transport, r.mode, link_name(r.src, r.src_host, r.dst, r.dst_host), std::to_string(r.src),
                   r.dst < 0 ? "host" : std::to_string(r.dst), r.src_host, r.dst_host, std::to_string(r.bytes),
                   num(r.oneway_gbps), num(r.bidir_gbps), num(r.latency_us), r.reason, blame_of(r, attributions)});
  return s;
}

namespace {

// links.csv's columns that read_links_result_set needs.
constexpr const char* kLinksCsvColumns[] = {"transport", "mode",        "link",       "src_host",
                                            "bytes",     "oneway_GBps", "latency_us", "reason"};

bool is_links_header(const std::vector<std::string>& header) {
  return std::all_of(std::begin(kLinksCsvColumns), std::end(kLinksCsvColumns),
                     [&](const char* c) { return std::find(header.begin(), header.end(), c) != header.end(); });
}

// A number of links.csv: empty is none; anything else must be a finite value >= 0.
std::optional<double> link_number(const std::string& text, const std::string& where, const char* column) {
  if (text.empty()) return std::nullopt;
  double v = 0;
  size_t used = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !std::isfinite(v) || v < 0)
    fail(ExitCode::usage, "{}: {} '{}' is not a number >= 0", where, column, text);
  return v;
}

RunRecord link_row(const std::map<std::string, std::string>& cell, const std::string& where) {
  RunRecord r;
  r.collective = "link";
  r.impl = "links";
  r.transport = cell.at("transport");
  r.mode = cell.at("mode");
  r.op = "none";
  r.ranks = 2;
  r.host = cell.at("src_host");
  r.link = cell.at("link");
  const auto bytes = link_number(cell.at("bytes"), where, "bytes");
  if (!bytes || *bytes != std::floor(*bytes))
    fail(ExitCode::usage, "{}: bytes '{}' is not a size", where, cell.at("bytes"));
  r.bytes = static_cast<std::uint64_t>(*bytes);
  const auto oneway = link_number(cell.at("oneway_GBps"), where, "oneway_GBps");
  (void)link_number(cell.at("latency_us"), where, "latency_us");  // checked, not judged
  if (!oneway) {
    r.status = RowStatus::skipped;
    r.reason = cell.at("reason").empty() ? "not measured" : cell.at("reason");
    return r;
  }
  if (*oneway <= 0) {
    r.status = RowStatus::failed;
    r.reason = "no data moved (one-way bandwidth 0)";
    return r;
  }
  // The time of one message at that bandwidth, so that size, time and bandwidth agree as in
  // every row (the latency, a ping-pong at the smallest size, stays in links.csv).
  r.algbw_gbps = r.busbw_gbps = r.busbw_median_gbps = *oneway;
  r.time_avg_us = r.time_median_us = r.time_min_us = r.time_p95_us = r.time_max_us =
      static_cast<double>(r.bytes) / (*oneway * 1e9) * 1e6;
  r.iterations = 1;
  return r;
}

}  // namespace

ResultSet read_links_result_set(const std::string& csv_path) {
  const CsvTable t = read_csv_file(csv_path);
  if (!is_links_header(t.header))
    fail(ExitCode::usage, "{}: not a links.csv of `ccbench links` (it needs the columns {})", csv_path,
         fmt::join(std::begin(kLinksCsvColumns), std::end(kLinksCsvColumns), ", "));
  ResultSet set;
  set.csv_path = csv_path;
  for (size_t i = 0; i < t.rows.size(); ++i) {
    std::map<std::string, std::string> cell;
    for (size_t c = 0; c < t.header.size(); ++c) cell[t.header[c]] = t.rows[i][c];
    set.rows.push_back(link_row(cell, fmt::format("{}:{}", csv_path, t.row_lines[i])));
    set.extra.emplace_back();
  }
  const std::filesystem::path json = std::filesystem::path(csv_path).parent_path() / "links.json";
  if (std::filesystem::exists(json)) {
    const Json j = Json::parse(read_text_file(json.string()), nullptr, false);
    if (j.is_object() && j.contains("context")) set.context = j["context"];
  }
  return set;
}

ResultSet read_results_or_links(const std::string& file_or_folder) {
  namespace fs = std::filesystem;
  if (fs::is_directory(file_or_folder)) {
    if (!fs::exists(fs::path(file_or_folder) / "results.csv") && fs::exists(fs::path(file_or_folder) / "links.csv"))
      return read_links_result_set((fs::path(file_or_folder) / "links.csv").string());
    return read_result_set(file_or_folder);
  }
  const CsvTable t = read_csv_file(file_or_folder);
  return is_links_header(t.header) ? read_links_result_set(file_or_folder) : read_result_set(file_or_folder);
}

std::vector<LinkCeiling> ceilings_from_links(const Json& links, const std::string& source) {
  if (!links.is_object() || links.value("schema", "") != "ccbench-links/1" || !links.contains("results") ||
      !links["results"].is_array())
    fail(ExitCode::usage, "--ceilings: {} is not a links.json of `ccbench links` (schema ccbench-links/1)", source);
  // Per transport: the largest size, and the values measured at it.
  std::map<std::string, std::uint64_t> largest;
  std::map<std::string, std::vector<double>> oneway, bidir;
  for (const Json& r : links["results"])
    if (!r.is_object() || !r.contains("transport") || !r["transport"].is_string() || !r.contains("bytes") ||
        !r["bytes"].is_number_unsigned())
      fail(ExitCode::usage, "--ceilings: {}: a result without a transport name or size", source);
  bool all_at_once = false;
  for (const Json& r : links["results"]) all_at_once = all_at_once || r.value("mode", "") == kPcieAllAtOnce;
  auto counts = [all_at_once](const Json& r) {
    const std::string mode = r.value("mode", "");
    return mode == "pair" || mode == (all_at_once ? kPcieAllAtOnce : "d2h+h2d");
  };
  for (const Json& r : links["results"])
    if (counts(r)) {
      auto& b = largest[r["transport"].get<std::string>()];
      b = std::max(b, r["bytes"].get<std::uint64_t>());
    }
  for (const Json& r : links["results"]) {
    const std::string t = r["transport"].get<std::string>();
    if (!counts(r) || r["bytes"].get<std::uint64_t>() != largest[t]) continue;
    if (r.contains("oneway_GBps") && r["oneway_GBps"].is_number()) oneway[t].push_back(r["oneway_GBps"].get<double>());
    if (r.contains("bidir_GBps") && r["bidir_GBps"].is_number()) bidir[t].push_back(r["bidir_GBps"].get<double>());
  }
  std::vector<LinkCeiling> out;
  for (const auto& [t, bytes] : largest) {
    if (bidir[t].empty()) continue;  // nothing measured on this transport
    out.push_back({t, oneway[t].empty() ? 0 : median_of(oneway[t]), median_of(bidir[t])});
  }
  return out;
}

std::string net_tcp_streams_label(int streams) { return fmt::format("{}:{}", kNetTcpCeiling, streams); }

std::optional<double> path_ceiling_gbps(const std::string& transport, const std::string& device,
                                        const std::vector<LinkCeiling>& ceilings) {
  auto ceiling_of = [&](const std::string& t) -> std::optional<double> {
    // On GPU ranks a row over p2p (or NCCL's own path) is bounded by the copy engines' ceiling,
    // one over host memory by the PCIe one.
    std::string name = t;
    const auto id = parse_transport(t);
    if (device == "gpu" && (id == Transport::p2p || t == kNcclLabel)) name = ccbench::name(Transport::ce);
    if (device == "gpu" && id == Transport::host) name = ccbench::name(Transport::pcie);
    // net/tcp: measured under that name (kNetTcpCeiling) on GPU ranks across nodes.
    for (const LinkCeiling& c : ceilings)
      if (c.transport == name && c.bidir_gbps > 0) return c.bidir_gbps / 2;
    return std::nullopt;
  };
  std::optional<double> lowest;
  std::istringstream parts(transport);
  for (std::string part; std::getline(parts, part, '+');) {
    const auto c = ceiling_of(part);
    if (!c) return std::nullopt;  // a part of the path was not measured
    lowest = lowest ? std::min(*lowest, *c) : *c;
  }
  return lowest;
}

std::optional<double> row_efficiency(const std::string& transport, const std::string& device, double busbw_gbps,
                                     const std::vector<LinkCeiling>& ceilings) {
  const std::optional<double> ceiling = path_ceiling_gbps(transport, device, ceilings);
  if (!ceiling) return std::nullopt;
  return busbw_gbps / *ceiling;
}

void set_ceiling_columns(RunRecord& row, const std::vector<LinkCeiling>& ceilings) {
  row.link_ceiling_gbps.reset();
  row.efficiency.reset();
  if (row.status != RowStatus::ok) return;
  row.link_ceiling_gbps = path_ceiling_gbps(row.transport, row.device, ceilings);
  if (row.link_ceiling_gbps) row.efficiency = row.busbw_gbps / *row.link_ceiling_gbps;
}

Json link_ceilings_context(const std::vector<LinkCeiling>& ceilings, const std::string& source) {
  Json used = Json::array();
  for (const LinkCeiling& c : ceilings)
    used.push_back({{"transport", c.transport}, {"oneway_GBps", c.oneway_gbps}, {"bidir_GBps", c.bidir_gbps}});
  return {
      {"source", source}, {"efficiency", "busbw / (bidirectional ceiling of the row's path / 2)"}, {"ceilings", used}};
}

std::vector<LinkCeiling> read_link_ceilings(const std::string& path) {
  Json j = Json::parse(read_text_file(path), nullptr, false);
  if (j.is_discarded()) fail(ExitCode::usage, "--ceilings: {} is not valid JSON", path);
  return ceilings_from_links(j, path);
}

}  // namespace ccbench
