#include "harness/links.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "core/checks.h"
#include "harness/app.h"
#include "harness/backend.h"
#include "harness/bootstrap.h"
#include "harness/context.h"
#include "harness/links_measure.h"
#include "harness/sizes.h"
#include "results/csv_reader.h"
#include "results/format.h"
#include "core/error.h"
#include "transports/ib/ib_transport.h"

namespace ccbench {

using Json = nlohmann::ordered_json;

// Messages per pair when a run measures its own ceilings: a few large copies settle the rate.
constexpr int kCeilingIterations = 5;
// tcp streams over loopback do not: the same 256 MiB measurement of 8 streams gave 24 and 31 GB/s
// both ways in two launches on 2 x H200, and a ring then moved 15 GB/s per direction above a
// ceiling of 12 (transports/r16). A ceiling is what the path can do: the best of a few repeats.
constexpr int kTcpCeilingRepeats = 3;

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

std::string endpoint(int rank, const std::string& host) {
  return rank < 0 ? fmt::format("host memory ({})", host) : fmt::format("rank {} ({})", rank, host);
}

Json optional_json(const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); }

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  if (!f) fail(ExitCode::runtime, "cannot write {}", path);
}

}  // namespace

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

void add_efficiency_to_run_json(const std::string& path, const std::vector<LinkCeiling>& ceilings,
                                const std::string& source) {
  std::ifstream in(path);
  Json doc = in ? Json::parse(in, nullptr, false) : Json();
  if (!doc.is_object() || !doc.contains("rows"))
    fail(ExitCode::runtime, "efficiency: cannot read the rows of {}", path);
  Json used = Json::array();
  for (const LinkCeiling& c : ceilings)
    used.push_back({{"transport", c.transport}, {"oneway_GBps", c.oneway_gbps}, {"bidir_GBps", c.bidir_gbps}});
  doc["link_ceilings"] = {{"source", source},
                          {"efficiency", "busbw / (bidirectional ceiling of the row's path / 2)"},
                          {"ceilings", used}};
  for (Json& row : doc["rows"]) {
    std::optional<double> e;
    if (row.value("status", "") == "ok")
      e = row_efficiency(row.value("transport", ""), row.value("device", ""), row.value("busbw_gbps", 0.0), ceilings);
    row["efficiency"] = e ? Json(*e) : Json(nullptr);
  }
  write_file(path, doc.dump(2) + "\n");
}

std::vector<LinkCeiling> read_link_ceilings(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(ExitCode::usage, "--ceilings: cannot read {}", path);
  Json j = Json::parse(in, nullptr, false);
  if (j.is_discarded()) fail(ExitCode::usage, "--ceilings: {} is not valid JSON", path);
  return ceilings_from_links(j, path);
}

// ----------------------------------------------------------------------------- the command

namespace {

Json links_context(const LinksOptions& o, const RankLayout& layout, const std::string& device) {
  std::time_t t = std::time(nullptr);
  char stamp[32];
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
  Json hosts = Json::array();
  for (const std::string& h : layout.host_of) hosts.push_back(h);
  return {{"ccbench", version_text()},
          {"date", stamp},
          {"command_line", o.command_line},
          {"device", device},
          {"ranks", layout.nranks},
          {"hosts", hosts},
          {"iterations", o.iterations},
          {"warmup", o.warmup},
          {"outlier_threshold", o.outlier_threshold},
          {"timing", "one-way: until the receiver acknowledges the last of -n messages; bidirectional: both "
                     "directions at once, the slower side's time, bytes of both directions; latency: half a "
                     "ping-pong round trip at the smallest size; GB/s = 1e9 bytes/s"},
          {"libraries", library_versions()}};
}

// The transports to measure: GPU ranks expand auto to ce,sm,pcie; CPU ranks measure auto (shm
// within a node, mpi across) and, under auto, ib too where it can run (else a note with the reason).
// `ib_reason`: why ib cannot run on some rank (agreed), or empty.
std::vector<std::string> plan_transports(const LinksOptions& o, Device device, const std::string& ib_reason,
                                         std::vector<std::string>* notes) {
  const std::vector<std::string> cpu_only = {"shm", "mpi", "tcp", "ib"}, gpu_only = {"ce", "sm", "pcie"};
  std::vector<std::string> out;
  if (o.all_at_once && device == Device::gpu)
    fail(ExitCode::usage, "--all-at-once is measured on CPU ranks only; on GPU ranks leave it out (pairs are measured "
         "one at a time)");
  for (const std::string& t : o.transports) {
    const auto& wrong = device == Device::gpu ? cpu_only : gpu_only;
    if (std::find(wrong.begin(), wrong.end(), t) != wrong.end())
      fail(ExitCode::usage, "--transport {} measures {} ranks and these are {} ranks (valid here: auto, {}; --device)",
           t, device == Device::gpu ? "CPU" : "GPU", name(device), device == Device::gpu ? "ce, sm, pcie" : "shm, mpi, tcp, ib");
    if (t == "auto" && device == Device::gpu) {
      out.insert(out.end(), gpu_only.begin(), gpu_only.end());
    } else if (t == "auto") {
      out.push_back("auto");
      if (!ib_reason.empty()) notes->push_back("ib skipped: " + ib_reason);
      else out.push_back("ib");
    } else {
      if (t == "ib" && !ib_reason.empty()) fail(ExitCode::precondition, "--transport ib: {}", ib_reason);
      out.push_back(t);
    }
  }
  std::vector<std::string> unique;
  for (const std::string& t : out)
    if (std::find(unique.begin(), unique.end(), t) == unique.end()) unique.push_back(t);
  return unique;
}

void print_report(const std::vector<LinkResult>& results, const std::vector<LinkOutlier>& outliers,
                  const std::vector<std::uint64_t>& sizes, int nranks, double threshold) {
  std::vector<std::string> transports;
  for (const LinkResult& r : results)
    if (r.mode == "pair" && std::find(transports.begin(), transports.end(), r.transport) == transports.end())
      transports.push_back(r.transport);
  for (const std::string& t : transports) {
    fmt::print("#\n# {}: one-way bandwidth at {} (GB/s), rows send, columns receive\n{}", t, human_size(sizes.back()),
               format_link_matrix(results, t, sizes.back(), LinkMetric::oneway, nranks));
    fmt::print("# {}: bidirectional bandwidth at {} (GB/s, both directions)\n{}", t, human_size(sizes.back()),
               format_link_matrix(results, t, sizes.back(), LinkMetric::bidir, nranks));
    fmt::print("# {}: latency at {} (us, half a round trip)\n{}", t, human_size(sizes.front()),
               format_link_matrix(results, t, sizes.front(), LinkMetric::latency, nranks));
  }
  for (const LinkResult& r : results) {
    if (r.dst < 0 && r.bytes == sizes.back())
      fmt::print("# {} {} {}: {:.2f} GB/s\n", r.transport, endpoint(r.src, r.src_host), r.mode,
                 r.oneway_gbps ? *r.oneway_gbps : r.bidir_gbps.value_or(0));
    if (r.mode == "all" && r.bytes == sizes.back())
      fmt::print("# {} all pairs at once: {} -> {}: {:.2f} GB/s\n", r.transport, endpoint(r.src, r.src_host),
                 endpoint(r.dst, r.dst_host), r.oneway_gbps.value_or(0));
    if (!r.reason.empty() && r.bytes == sizes.back())
      fmt::print("# {} {} -> {}: not measured: {}\n", r.transport, endpoint(r.src, r.src_host),
                 endpoint(r.dst, r.dst_host), r.reason);
  }
  if (outliers.empty()) {
    fmt::print("# outliers at {} (below {:.0f}% of the median): none\n", human_size(sizes.back()), threshold * 100);
    return;
  }
  for (const LinkOutlier& o : outliers)
    fmt::print("# OUTLIER {} {} {} -> {} at {}: {:.2f} GB/s {}, {:.0f}% of the median {:.2f}\n", o.result->transport,
               o.result->mode, endpoint(o.result->src, o.result->src_host),
               endpoint(o.result->dst, o.result->dst_host), human_size(o.result->bytes), o.value, o.metric,
               100 * o.value / o.median, o.median);
}

// measure_tcp_streams() kTcpCeilingRepeats times; every cell keeps its best figures (the cells
// come back in the same order each time, on rank 0).
std::vector<LinkResult> best_tcp_streams(const LinksOptions& o, const TcpStreams& streams, const std::string& label,
                                         const RankLayout& layout, MPI_Comm comm, std::uint64_t bytes) {
  std::vector<LinkResult> best = measure_tcp_streams(o, streams, label, layout, comm, bytes);
  auto keep_max = [](std::optional<double>& a, const std::optional<double>& b) {
    if (b && (!a || *b > *a)) a = b;
  };
  for (int k = 1; k < kTcpCeilingRepeats; ++k) {
    const std::vector<LinkResult> again = measure_tcp_streams(o, streams, label, layout, comm, bytes);
    for (std::size_t i = 0; i < std::min(best.size(), again.size()); ++i) {
      keep_max(best[i].oneway_gbps, again[i].oneway_gbps);
      keep_max(best[i].bidir_gbps, again[i].bidir_gbps);
    }
  }
  return best;
}

}  // namespace

std::vector<LinkCeiling> measure_link_ceilings(bool gpu, const std::string& transport, const RankLayout& layout,
                                               MPI_Comm comm, int cuda_device, std::chrono::milliseconds timeout,
                                               std::uint64_t bytes, const std::string& links_json) {
  LinksOptions o;
  o.min_bytes = o.max_bytes = bytes;
  o.iterations = kCeilingIterations;
  o.warmup = 1;
  o.timeout = timeout;
  const std::vector<std::uint64_t> sizes{bytes};
  std::vector<LinkResult> results;
  for (const std::string& t : gpu ? std::vector<std::string>{"ce", "pcie"} : std::vector<std::string>{transport}) {
    auto part = gpu ? measure_gpu_links(o, t, layout, comm, cuda_device, sizes) : measure_cpu_links(o, t, layout, comm, sizes);
    results.insert(results.end(), part.begin(), part.end());
  }
  if (gpu && layout.nodes > 1) {  // between nodes GPU rows go over net: its tcp streams
    TcpStreams streams = gpu_net_streams();
    auto part = best_tcp_streams(o, streams, kNetTcpCeiling, layout, comm, bytes);
    results.insert(results.end(), part.begin(), part.end());
    if (streams.tree_count != streams.count) {
      streams.count = streams.tree_count;
      part = best_tcp_streams(o, streams, net_tcp_streams_label(streams.count), layout, comm, bytes);
      results.insert(results.end(), part.begin(), part.end());
    }
  }
  if (layout.rank != 0) return {};
  Json context = links_context(o, layout, gpu ? "gpu" : "cpu");
  context["measured_for"] = "the efficiency column of a ccbench run (--measure-ceilings)";
  const Json j = links_to_json(results, find_link_outliers(results, o.outlier_threshold), context);
  if (!links_json.empty()) write_file(links_json, j.dump(2) + "\n");
  return ceilings_from_links(j, "the ceilings measured in this run");
}

int run_links(const LinksOptions& o, int* argc, char*** argv) {
  const int lrank = launcher_rank();
  std::string out_dir;
  if (lrank == 0 && !o.no_files) out_dir = prepare_output_dir(o.out_dir);
  set_ib_options(o.ib);
  mpi_start(argc, argv);
  MPI_Comm world = MPI_COMM_WORLD;
  ExitCode code = ExitCode::ok;
  RankLayout layout = discover_layout(world);
  try {
    std::string why_no_gpu;
    const int gpus = gpu_count(&why_no_gpu);
    std::uint64_t mine = static_cast<std::uint64_t>(gpus), min_gpus = 0;
    check_mpi(MPI_Allreduce(&mine, &min_gpus, 1, MPI_UINT64_T, MPI_MIN, world), "MPI_Allreduce");
    Device device = Device::cpu;
    if (o.device == DeviceChoice::gpu || (o.device == DeviceChoice::auto_detect && min_gpus > 0)) {
      if (min_gpus == 0) fail(ExitCode::precondition, "--device gpu: a host has no usable GPU ({})", why_no_gpu);
      device = Device::gpu;
    }
    SweepSpec spec{o.min_bytes, o.max_bytes ? o.max_bytes : (device == Device::gpu ? 256ull << 20 : 64ull << 20),
                   o.factor, 0};
    spec.max_bytes = std::max(spec.max_bytes, spec.min_bytes);
    const std::vector<std::uint64_t> sizes = sweep_sizes(spec);
    std::vector<std::string> notes;
    const std::vector<std::string> transports = plan_transports(o, device, agreed_ib_unavailable_reason(world, layout).value_or(""), &notes);
    if (layout.rank == 0) {
      fmt::print("# ccbench links: {} ranks ({} ranks), sizes {} to {}, {} messages per size and pair, one pair at a "
                 "time{}\n", layout.nranks, name(device), format_size(sizes.front()), format_size(sizes.back()),
                 o.iterations, o.all_at_once ? ", then all at once" : "");
      for (int r = 0; r < layout.nranks; ++r) fmt::print("#   rank {}: {}\n", r, layout.host_of[static_cast<size_t>(r)]);
      for (const std::string& n : notes) fmt::print("# {}\n", n);
    }
    std::vector<LinkResult> results;
    for (const std::string& t : transports) {
      const Outcome got = agree_outcome(world, run_catching([&] {
        auto part = device == Device::gpu
                        ? measure_gpu_links(o, t, layout, world, layout.local_rank() % std::max(gpus, 1), sizes)
                        : measure_cpu_links(o, t, layout, world, sizes);
        results.insert(results.end(), part.begin(), part.end());
      }));
      if (got.code != ExitCode::ok) {
        // Rows already measured survive: report them, then end with the failure's code.
        code = more_severe(code, got.code);
        if (layout.rank == 0) fmt::print(stderr, "ccbench: error: links over {}: {}\n", t, got.message);
        break;
      }
    }
    if (layout.rank == 0) {
      const auto outliers = find_link_outliers(results, o.outlier_threshold, sizes.back());
      print_report(results, outliers, sizes, layout.nranks, o.outlier_threshold);
      if (!o.no_files) {
        write_file(out_dir + "/links.csv", links_to_csv(results));
        write_file(out_dir + "/links.json",
                   links_to_json(results, outliers, links_context(o, layout, std::string(name(device)))).dump(2) + "\n");
        fmt::print("# results: {}/ (links.csv, links.json)\n", out_dir);
      }
      std::fflush(stdout);
    }
  } catch (const Error& e) {
    code = e.code();
    if (layout.rank == 0 || e.code() != ExitCode::precondition) fmt::print(stderr, "ccbench: error: {}\n", e.what());
  }
  code = agree_exit_code(world, code);
  mpi_stop();
  return static_cast<int>(code);
}

}  // namespace ccbench
