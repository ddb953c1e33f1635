#include "topologies/expect.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "core/error.h"

namespace ccbench {

namespace {

using Json = nlohmann::ordered_json;

const std::set<std::string> kIntKeys = {
    "hosts",    "cores_per_host", "numa_nodes",    "gpus_per_host",        "nvlinks_per_gpu",
    "pcie_gen", "pcie_width",     "nics_per_host", "min_tcp_rmem_default", "min_tcp_wmem_default"};
const std::set<std::string> kTextKeys = {"gpu_name", "gpu_paths", "nic_state", "nic_rate"};

std::optional<int>& int_field(TopologyExpectation& e, const std::string& k) {
  if (k == "hosts") return e.hosts;
  if (k == "cores_per_host") return e.cores_per_host;
  if (k == "numa_nodes") return e.numa_nodes;
  if (k == "gpus_per_host") return e.gpus_per_host;
  if (k == "nvlinks_per_gpu") return e.nvlinks_per_gpu;
  if (k == "pcie_gen") return e.pcie_gen;
  if (k == "pcie_width") return e.pcie_width;
  if (k == "min_tcp_rmem_default") return e.min_tcp_rmem_default;
  if (k == "min_tcp_wmem_default") return e.min_tcp_wmem_default;
  return e.nics_per_host;
}

std::optional<std::string>& text_field(TopologyExpectation& e, const std::string& k) {
  if (k == "gpu_name") return e.gpu_name;
  if (k == "gpu_paths") return e.gpu_paths;
  if (k == "nic_state") return e.nic_state;
  return e.nic_rate;
}

void check_gpus(const TopologyExpectation& e, const std::string& host, const Json& gpus,
                std::vector<std::string>& out) {
  if (!gpus.value("available", false)) {
    if (e.gpus_per_host.value_or(0) > 0)
      out.push_back(
          fmt::format("host {}: no GPUs found ({}), expected {}", host, gpus.value("reason", "?"), *e.gpus_per_host));
    return;
  }
  const Json& list = gpus["gpus"];
  if (e.gpus_per_host && static_cast<int>(list.size()) != *e.gpus_per_host)
    out.push_back(fmt::format("host {}: {} GPUs, expected {}", host, list.size(), *e.gpus_per_host));
  for (const auto& g : list) {
    const std::string who =
        fmt::format("host {}: GPU {} ({})", host, g.value("index", -1), g.value("pci", std::string("?")));
    if (e.gpu_name && g.value("name", std::string()).find(*e.gpu_name) == std::string::npos)
      out.push_back(fmt::format("{}: is '{}', expected a '{}'", who, g.value("name", std::string("?")), *e.gpu_name));
    if (e.nvlinks_per_gpu && g.value("nvlinks_active", -1) != *e.nvlinks_per_gpu)
      out.push_back(
          fmt::format("{}: {} NVLink links up, expected {}", who, g.value("nvlinks_active", -1), *e.nvlinks_per_gpu));
    const Json pcie = g.value("pcie", Json::object());
    if (e.pcie_gen && pcie.value("gen", -1) != *e.pcie_gen)
      out.push_back(fmt::format("{}: PCIe link Gen{} (max Gen{}), expected Gen{}", who, pcie.value("gen", -1),
                                pcie.value("gen_max", -1), *e.pcie_gen));
    if (e.pcie_width && pcie.value("width", -1) != *e.pcie_width)
      out.push_back(fmt::format("{}: PCIe link x{} (max x{}), expected x{}", who, pcie.value("width", -1),
                                pcie.value("width_max", -1), *e.pcie_width));
  }
  if (!e.gpu_paths) return;
  const Json& paths = gpus.value("paths", Json::array());
  for (size_t i = 0; i < paths.size(); ++i)
    for (size_t j = 0; j < paths[i].size(); ++j)
      if (i != j && paths[i][j].get<std::string>() != *e.gpu_paths)
        out.push_back(fmt::format("host {}: GPU {} to GPU {}: {}, expected {}", host, i, j,
                                  paths[i][j].get<std::string>(), *e.gpu_paths));
}

void check_nics(const TopologyExpectation& e, const std::string& host, const Json& rdma,
                std::vector<std::string>& out) {
  const Json devices = rdma.value("available", false) ? rdma["devices"] : Json::array();
  if (e.nics_per_host && static_cast<int>(devices.size()) != *e.nics_per_host)
    out.push_back(fmt::format("host {}: {} RDMA devices{}, expected {}", host, devices.size(),
                              rdma.value("available", false) ? "" : fmt::format(" ({})", rdma.value("reason", "?")),
                              *e.nics_per_host));
  for (const auto& d : devices)
    for (const auto& p : d.value("ports", Json::array())) {
      const std::string who =
          fmt::format("host {}: {} port {}", host, d.value("name", std::string("?")), p.value("port", 0));
      if (e.nic_state && p.value("state", std::string()) != *e.nic_state)
        out.push_back(fmt::format("{}: {}, expected {}", who, p.value("state", std::string("?")), *e.nic_state));
      if (e.nic_rate && p.value("rate", std::string()).find(*e.nic_rate) == std::string::npos)
        out.push_back(
            fmt::format("{}: rate '{}', expected '{}'", who, p.value("rate", std::string("unknown")), *e.nic_rate));
    }
}

// The default of net.ipv4.tcp_rmem / tcp_wmem (min default max) against a least: transports that
// leave their socket buffers to the kernel start there (docs/guides/tuning.md, "Kernel TCP buffers").
void check_tcp(const TopologyExpectation& e, const std::string& host, const Json& tcp, std::vector<std::string>& out) {
  for (const auto& [key, least] :
       {std::pair{"tcp_rmem", e.min_tcp_rmem_default}, {"tcp_wmem", e.min_tcp_wmem_default}}) {
    if (!least) continue;
    const Json values = tcp.value(key, Json());
    if (!values.is_array() || values.size() != 3)
      out.push_back(
          fmt::format("host {}: net.ipv4.{} unknown (not in its context or not readable there), expected a "
                      "default of at least {} bytes",
                      host, key, *least));
    else if (const long long found = values[1].get<long long>(); found < *least)
      out.push_back(
          fmt::format("host {}: net.ipv4.{} default {} bytes, expected at least {}", host, key, found, *least));
  }
}

}  // namespace

TopologyExpectation parse_expectation(const std::string& text, const std::string& origin) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    fail(ExitCode::usage, "{}:{}: not valid YAML: {}", origin, e.mark.line + 1, e.msg);
  }
  if (!root.IsMap()) fail(ExitCode::usage, "{}: expected a mapping of keys (hosts, gpus_per_host, ...)", origin);
  TopologyExpectation e;
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>();
    const int line = kv.first.Mark().line + 1;
    if (kIntKeys.count(key)) {
      try {
        int_field(e, key) = kv.second.as<int>();
      } catch (const YAML::Exception&) {
        fail(ExitCode::usage, "{}:{}: '{}' is '{}'; expected a whole number", origin, line, key, kv.second.Scalar());
      }
    } else if (kTextKeys.count(key)) {
      if (!kv.second.IsScalar()) fail(ExitCode::usage, "{}:{}: '{}' must be a text", origin, line, key);
      text_field(e, key) = kv.second.Scalar();
    } else {
      std::set<std::string> all(kIntKeys);
      all.insert(kTextKeys.begin(), kTextKeys.end());
      fail(ExitCode::usage, "{}:{}: unknown key '{}'; expected one of: {}", origin, line, key, fmt::join(all, ", "));
    }
  }
  return e;
}

TopologyExpectation load_expectation(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail(ExitCode::usage, "--expect {}: cannot be read ({})", path, std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  return parse_expectation(text.str(), path);
}

std::vector<std::string> topology_differences(const TopologyExpectation& e, const Json& cluster) {
  std::vector<std::string> out;
  const Json& hosts = cluster["hosts"];
  if (e.hosts && static_cast<int>(hosts.size()) != *e.hosts)
    out.push_back(fmt::format("{} hosts in the job, expected {}", hosts.size(), *e.hosts));
  for (const auto& h : hosts) {
    const std::string host = h.value("host", std::string("?"));
    const Json& node = h["node"];
    const Json& cpu = node["cpu"];
    if (e.cores_per_host && cpu.value("cores", -1) != *e.cores_per_host)
      out.push_back(fmt::format("host {}: {} CPU cores, expected {}", host, cpu.value("cores", -1), *e.cores_per_host));
    if (e.numa_nodes && cpu.value("numa_nodes", -1) != *e.numa_nodes)
      out.push_back(
          fmt::format("host {}: {} NUMA nodes, expected {}", host, cpu.value("numa_nodes", -1), *e.numa_nodes));
    check_gpus(e, host, node["gpus"], out);
    check_nics(e, host, node["rdma"], out);
    check_tcp(e, host, node.value("tcp", Json::object()), out);
  }
  return out;
}

}  // namespace ccbench
