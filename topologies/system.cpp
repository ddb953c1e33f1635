#include "topologies/system.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include "core/data_dir.h"
#include "core/error.h"

namespace ccbench {

namespace {

constexpr IntraFabric kFabrics[] = {IntraFabric::nvswitch, IntraFabric::nvlink_mesh, IntraFabric::pcie,
                                    IntraFabric::host};
// Beyond these a description is surely a typo (a 64 Ki-rank node, a 100 Tb/s link).
constexpr int kMaxRanksPerNode = 1024;
constexpr int kMaxNodes = 1 << 20;
constexpr double kMaxBandwidthGbps = 1e5;
constexpr double kMaxLatencyUs = 1e6;

// Reads YAML with messages that say where: "FILE:LINE: what is wrong; expected ...".
class Reader {
 public:
  explicit Reader(std::string origin) : origin_(std::move(origin)) {}

  [[noreturn]] void error(const YAML::Node& at, const std::string& what) const {
    const YAML::Mark m = at.Mark();
    if (m.is_null()) fail(ExitCode::usage, "{}: {}", origin_, what);
    fail(ExitCode::usage, "{}:{}: {}", origin_, m.line + 1, what);
  }

  // Every key of `map` must be one of `known`.
  void only_keys(const YAML::Node& map, const std::string& where, std::initializer_list<const char*> known) const {
    if (!map.IsMap()) error(map, fmt::format("'{}' must be a mapping of keys to values", where));
    std::set<std::string> ok(known.begin(), known.end());
    for (const auto& kv : map) {
      const std::string key = kv.first.as<std::string>();
      if (!ok.count(key))
        error(kv.first, fmt::format("unknown key '{}' in '{}'; expected one of: {}", key, where, fmt::join(ok, ", ")));
    }
  }

  template <typename T>
  T number(const YAML::Node& map, const char* key, const std::string& where, T lo, T hi,
           std::optional<T> fallback) const {
    const YAML::Node v = map[key];
    if (!v) {
      if (fallback) return *fallback;
      error(map, fmt::format("'{}' needs '{}' (a number from {} to {})", where, key, lo, hi));
    }
    T x{};
    try {
      x = v.as<T>();
    } catch (const YAML::Exception&) {
      error(v, fmt::format("'{}.{}' is '{}'; expected a number from {} to {}", where, key, v.Scalar(), lo, hi));
    }
    if (!(x >= lo && x <= hi))
      error(v, fmt::format("'{}.{}' is {}; expected a number from {} to {}", where, key, x, lo, hi));
    return x;
  }

  LinkSpec link(const YAML::Node& map, const char* key, const std::string& where, bool required) const {
    const YAML::Node v = map[key];
    const std::string here = where + "." + key;
    if (!v) {
      if (required) error(map, fmt::format("'{}' needs '{}' ({{bandwidth_gbps: N, latency_us: N}})", where, key));
      return {};
    }
    only_keys(v, here, {"bandwidth_gbps", "latency_us"});
    return {number<double>(v, "bandwidth_gbps", here, 1e-6, kMaxBandwidthGbps, std::nullopt),
            number<double>(v, "latency_us", here, 0, kMaxLatencyUs, 0.0)};
  }

  IntraFabric fabric(const YAML::Node& map, const std::string& where) const {
    const YAML::Node v = map["fabric"];
    std::string names;
    for (IntraFabric f : kFabrics) names += (names.empty() ? "" : ", ") + std::string(name(f));
    if (!v) error(map, fmt::format("'{}' needs 'fabric' (one of: {})", where, names));
    for (IntraFabric f : kFabrics)
      if (v.Scalar() == name(f)) return f;
    error(v, fmt::format("'{}.fabric' is '{}'; expected one of: {}", where, v.Scalar(), names));
  }

 private:
  std::string origin_;
};

NodeSpec read_node(const Reader& rd, const YAML::Node& n) {
  rd.only_keys(n, "node",
               {"ranks", "fabric", "gpu_link", "gpus_per_switch", "switch_uplink", "nics", "nic", "kernels"});
  NodeSpec s;
  s.ranks = rd.number<int>(n, "ranks", "node", 1, kMaxRanksPerNode, std::nullopt);
  s.fabric = rd.fabric(n, "node");
  s.gpu_link = rd.link(n, "gpu_link", "node", true);
  if (s.fabric == IntraFabric::pcie) {
    s.gpus_per_switch = rd.number<int>(n, "gpus_per_switch", "node", 1, s.ranks, s.ranks);
    s.switch_uplink = rd.link(n, "switch_uplink", "node", s.gpus_per_switch < s.ranks);
  } else if (n["gpus_per_switch"] || n["switch_uplink"]) {
    rd.error(n, "'gpus_per_switch' and 'switch_uplink' apply only to 'fabric: pcie'");
  }
  s.nics = rd.number<int>(n, "nics", "node", 0, kMaxRanksPerNode, 0);
  s.nic = rd.link(n, "nic", "node", s.nics > 0);
  if (const YAML::Node k = n["kernels"]) {
    rd.only_keys(k, "node.kernels", {"block_gbps", "local_copy_gbps"});
    s.kernels = {rd.number<double>(k, "block_gbps", "node.kernels", 1e-6, kMaxBandwidthGbps, std::nullopt),
                 rd.number<double>(k, "local_copy_gbps", "node.kernels", 1e-6, kMaxBandwidthGbps, std::nullopt)};
  }
  return s;
}

}  // namespace

std::string_view name(IntraFabric f) {
  switch (f) {
    case IntraFabric::nvswitch: return "nvswitch";
    case IntraFabric::nvlink_mesh: return "nvlink_mesh";
    case IntraFabric::pcie: return "pcie";
    case IntraFabric::host: return "host";
  }
  return "?";
}

SystemTopology parse_topology(const std::string& text, const std::string& origin) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    fail(ExitCode::usage, "{}:{}: not valid YAML: {}", origin, e.mark.line + 1, e.msg);
  }
  Reader rd(origin);
  if (!root || !root.IsMap()) fail(ExitCode::usage, "{}: expected a mapping with 'name', 'nodes', 'node'", origin);
  rd.only_keys(root, "topology", {"name", "description", "nodes", "node", "fabric"});
  SystemTopology t;
  if (!root["name"]) rd.error(root, "the topology needs a 'name'");
  t.name = root["name"].as<std::string>();
  if (root["description"]) t.description = root["description"].as<std::string>();
  t.nodes = rd.number<int>(root, "nodes", "topology", 1, kMaxNodes, 1);
  if (!root["node"]) rd.error(root, "the topology needs a 'node' mapping (ranks, fabric, gpu_link, ...)");
  t.node = read_node(rd, root["node"]);
  if (const YAML::Node f = root["fabric"]) {
    rd.only_keys(f, "fabric", {"latency_us", "oversubscription"});
    t.fabric_latency_us = rd.number<double>(f, "latency_us", "fabric", 0, kMaxLatencyUs, 0.0);
    t.oversubscription = rd.number<double>(f, "oversubscription", "fabric", 1, 1024, 1.0);
  }
  if (t.nodes > 1 && t.node.nics == 0)
    rd.error(root["node"], fmt::format("{} nodes need NICs: set 'nics' and 'nic' in 'node'", t.nodes));
  return t;
}

SystemTopology load_topology(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(ExitCode::usage, "topology file {}: cannot be read ({})", path, std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  return parse_topology(text.str(), path);
}

std::string dump_topology(const SystemTopology& t) {
  auto link = [](YAML::Emitter& e, const char* key, const LinkSpec& l) {
    e << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "bandwidth_gbps" << YAML::Value
      << l.bandwidth_gbps << YAML::Key << "latency_us" << YAML::Value << l.latency_us << YAML::EndMap;
  };
  YAML::Emitter e;
  e << YAML::BeginMap << YAML::Key << "name" << YAML::Value << t.name;
  if (!t.description.empty()) e << YAML::Key << "description" << YAML::Value << t.description;
  e << YAML::Key << "nodes" << YAML::Value << t.nodes;
  e << YAML::Key << "node" << YAML::Value << YAML::BeginMap;
  e << YAML::Key << "ranks" << YAML::Value << t.node.ranks;
  e << YAML::Key << "fabric" << YAML::Value << std::string(name(t.node.fabric));
  link(e, "gpu_link", t.node.gpu_link);
  if (t.node.fabric == IntraFabric::pcie) {
    e << YAML::Key << "gpus_per_switch" << YAML::Value << t.node.gpus_per_switch;
    if (t.node.switch_uplink.bandwidth_gbps > 0) link(e, "switch_uplink", t.node.switch_uplink);
  }
  if (t.node.nics > 0) {
    e << YAML::Key << "nics" << YAML::Value << t.node.nics;
    link(e, "nic", t.node.nic);
  }
  if (t.node.kernels.described())
    e << YAML::Key << "kernels" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "block_gbps"
      << YAML::Value << t.node.kernels.block_gbps << YAML::Key << "local_copy_gbps" << YAML::Value
      << t.node.kernels.local_copy_gbps << YAML::EndMap;
  e << YAML::EndMap;
  e << YAML::Key << "fabric" << YAML::Value << YAML::BeginMap << YAML::Key << "latency_us" << YAML::Value
    << t.fabric_latency_us << YAML::Key << "oversubscription" << YAML::Value << t.oversubscription << YAML::EndMap;
  e << YAML::EndMap;
  return std::string(e.c_str()) + "\n";
}

namespace fs = std::filesystem;

std::string resolve_topology_path(const std::string& name_or_path, const std::string& option) {
  if (fs::exists(name_or_path)) return name_or_path;
  const std::string file = name_or_path + ".yaml";
  const std::vector<fs::path> dirs = data_dirs("presets");
  for (const fs::path& d : dirs)
    if (fs::exists(d / file)) return (d / file).string();
  std::vector<std::string> presets;
  for (const fs::path& d : dirs)
    if (fs::is_directory(d))
      for (const auto& e : fs::directory_iterator(d))
        if (e.path().extension() == ".yaml") presets.push_back(e.path().stem().string());
  std::sort(presets.begin(), presets.end());
  presets.erase(std::unique(presets.begin(), presets.end()), presets.end());
  fail(ExitCode::usage, "{} {}: no such file and no such preset; presets: {}", option, name_or_path,
       presets.empty() ? "none found" : fmt::format("{}", fmt::join(presets, ", ")));
}

}  // namespace ccbench
