#include "results/links.h"

#include <algorithm>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "core/error.h"
#include "core/text_file.h"
#include "results/csv_reader.h"
#include "results/format.h"

namespace ccbench {

using Json = nlohmann::ordered_json;

// ------------------------------------------------------------------------------- reports

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

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
                   const Json& context) {
  Json j;
  j["schema"] = "ccbench-links/1";
  j["context"] = context;
  Json rows = Json::array();
  for (const LinkResult& r : results)
    rows.push_back({{"transport", r.transport}, {"mode", r.mode}, {"src", r.src}, {"dst", r.dst},
                    {"src_host", r.src_host}, {"dst_host", r.dst_host}, {"bytes", r.bytes},
                    {"oneway_GBps", optional_json(r.oneway_gbps)}, {"bidir_GBps", optional_json(r.bidir_gbps)},
                    {"latency_us", optional_json(r.latency_us)}, {"reason", r.reason}});
  j["results"] = rows;
  Json flagged = Json::array();
  for (const LinkOutlier& o : outliers)
    flagged.push_back({{"transport", o.result->transport}, {"mode", o.result->mode}, {"src", o.result->src},
                       {"dst", o.result->dst}, {"src_host", o.result->src_host}, {"dst_host", o.result->dst_host},
                       {"bytes", o.result->bytes}, {"metric", o.metric}, {"GBps", o.value}, {"median_GBps", o.median}});
  j["outliers"] = flagged;
  return j;
}

std::string links_to_csv(const std::vector<LinkResult>& results) {
  std::string s = csv_line({"transport", "mode", "src", "dst", "src_host", "dst_host", "bytes", "oneway_GBps",
                            "bidir_GBps", "latency_us", "reason"});
  // Six significant digits: small sizes move well under 0.0001 GB/s on a loaded host.
  auto num = [](const std::optional<double>& v) { return v ? fmt::format("{:.6g}", *v) : std::string(); };
  for (const LinkResult& r : results)
    s += csv_line({r.transport, r.mode, std::to_string(r.src), r.dst < 0 ? "host" : std::to_string(r.dst), r.src_host,
                   r.dst_host, std::to_string(r.bytes), num(r.oneway_gbps), num(r.bidir_gbps), num(r.latency_us),
                   r.reason});
  return s;
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
    std::string name = t;
    if (device == "gpu" && (t == "cuda_ipc" || t == "p2p" || t == "nccl")) name = "ce";
    if (device == "gpu" && t == "host") name = "pcie";
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
  return {{"source", source}, {"efficiency", "busbw / (bidirectional ceiling of the row's path / 2)"}, {"ceilings", used}};
}

std::vector<LinkCeiling> read_link_ceilings(const std::string& path) {
  Json j = Json::parse(read_text_file(path), nullptr, false);
  if (j.is_discarded()) fail(ExitCode::usage, "--ceilings: {} is not valid JSON", path);
  return ceilings_from_links(j, path);
}

}  // namespace ccbench
