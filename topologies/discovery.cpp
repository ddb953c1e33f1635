#include "topologies/discovery.h"
#include "core/build_config.h"

#include <dlfcn.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "topologies/gpu_discovery.h"
#include "topologies/pci_paths.h"

#if CCBENCH_HAVE_HWLOC
#include <hwloc.h>
#endif
#if CCBENCH_HAVE_IBVERBS
#include <infiniband/verbs.h>
#endif

namespace ccbench {

namespace {

using Json = nlohmann::ordered_json;

Json cpu_part() {
#if CCBENCH_HAVE_HWLOC
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return {{"available", false}, {"reason", "hwloc_topology_init failed"}};
  if (hwloc_topology_load(topo) != 0) {
    hwloc_topology_destroy(topo);
    return {{"available", false}, {"reason", "hwloc_topology_load failed"}};
  }
  auto count = [&](hwloc_obj_type_t t) { return hwloc_get_nbobjs_by_type(topo, t); };
  Json j = {{"available", true},
            {"packages", count(HWLOC_OBJ_PACKAGE)},
            {"cores", count(HWLOC_OBJ_CORE)},
            {"hardware_threads", count(HWLOC_OBJ_PU)},
            {"numa_nodes", count(HWLOC_OBJ_NUMANODE)}};
  if (hwloc_obj_t l3 = hwloc_get_obj_by_type(topo, HWLOC_OBJ_L3CACHE, 0); l3 && l3->attr)
    j["l3_bytes_each"] = l3->attr->cache.size;
  j["l3_caches"] = count(HWLOC_OBJ_L3CACHE);
  hwloc_topology_destroy(topo);
  return j;
#else
  return {{"available", false}, {"reason", "this ccbench was built without hwloc"}};
#endif
}

// What sysfs adds to an RDMA device: its PCI id and NUMA node, and each port's rate
// ("400 Gb/sec (4X NDR)").
void add_sysfs_facts(Json& d) {
  const std::string dev = d["name"].get<std::string>();
  const std::string path = pci_device_path("class/infiniband/" + dev + "/device");
  if (!path.empty()) {
    d["pci"] = path.substr(path.find_last_of('/') + 1);
    d["numa_node"] = pci_numa_node(d["pci"].get<std::string>());
  }
  if (!d.contains("ports")) return;
  for (auto& p : d["ports"]) {
    std::ifstream in(fmt::format("/sys/class/infiniband/{}/ports/{}/rate", dev, p["port"].get<int>()));
    std::string rate;
    if (std::getline(in, rate)) p["rate"] = rate;
  }
}

// The PCI path class between every GPU and every RDMA device of the node (nvidia-smi topo -m).
Json gpu_nic_paths(const Json& gpus, const Json& rdma) {
  Json m = Json::array();
  if (!gpus.value("available", false) || !rdma.value("available", false)) return m;
  for (const auto& g : gpus["gpus"]) {
    Json row = Json::array();
    const std::string gp = pci_device_path("bus/pci/devices/" + g.value("pci", std::string("?")));
    for (const auto& d : rdma["devices"]) {
      const std::string np = pci_device_path("class/infiniband/" + d["name"].get<std::string>() + "/device");
      const std::string c = pci_path_class(gp, g.value("numa_node", -1), np, d.value("numa_node", -1));
      row.push_back(c.empty() ? "?" : c);
    }
    m.push_back(row);
  }
  return m;
}

Json rdma_part() {
#if CCBENCH_HAVE_IBVERBS
  Json devices = Json::array();
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  if (!list) return {{"available", false}, {"reason", "ibv_get_device_list failed (no RDMA driver loaded)"}};
  for (int i = 0; i < n; ++i) {
    Json d = {{"name", ibv_get_device_name(list[i])}};
    if (ibv_context* ctx = ibv_open_device(list[i])) {
      ibv_device_attr attr{};
      if (ibv_query_device(ctx, &attr) == 0) {
        Json ports = Json::array();
        for (int p = 1; p <= attr.phys_port_cnt; ++p) {
          ibv_port_attr pa{};
          if (ibv_query_port(ctx, static_cast<uint8_t>(p), &pa) != 0) continue;
          ports.push_back({{"port", p},
                           {"state", ibv_port_state_str(pa.state)},
                           {"link_layer", pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand"},
                           {"active_width_code", pa.active_width},
                           {"active_speed_code", pa.active_speed}});
        }
        d["ports"] = ports;
      }
      ibv_close_device(ctx);
    }
    add_sysfs_facts(d);
    devices.push_back(d);
  }
  ibv_free_device_list(list);
  return {{"available", true}, {"devices", devices}};
#else
  return {{"available", false}, {"reason", "this ccbench was built without ibverbs"}};
#endif
}

// One /proc/sys setting of whitespace-separated integers: a number, or an array of them (tcp_rmem's
// min, default and max); null if unreadable (another OS, a locked-down /proc).
Json proc_sys_numbers(const std::string& name) {
  std::ifstream in("/proc/sys/" + name);
  Json values = Json::array();
  for (long long v = 0; in >> v;) values.push_back(v);
  if (values.empty()) return nullptr;
  return values.size() == 1 ? values[0] : values;
}

// The kernel's TCP socket buffers in this network namespace, in bytes: what every socket that
// leaves its buffers to the kernel's autotuning starts from and may grow to (tcp_rmem, tcp_wmem:
// min, default, max) and the most a program may ask for (rmem_max, wmem_max). ccbench's tcp
// transport asks for its own (transports/cpu/tcp.cpp, up to those maxima); libfabric's tcp
// provider, Open MPI's tcp BTL and NCCL's sockets take the defaults. Over loopback, ofi over
// tcp;ofi_rxm kept 0.64-0.84 of our tcp's ring all-reduce with tcp_rmem's default of 128 KiB and
// 0.91-0.94 with 4 MiB (evidence cpu2core-20261205-ofi-tcp-buffers): two hosts that differ here
// differ in such rows.
Json tcp_part() {
  return {{"tcp_rmem", proc_sys_numbers("net/ipv4/tcp_rmem")},
          {"tcp_wmem", proc_sys_numbers("net/ipv4/tcp_wmem")},
          {"rmem_max", proc_sys_numbers("net/core/rmem_max")},
          {"wmem_max", proc_sys_numbers("net/core/wmem_max")}};
}

}  // namespace

nlohmann::ordered_json discover_node() {
  Json node = {{"cpu", cpu_part()}, {"rdma", rdma_part()}, {"gpus", discover_gpus()}, {"tcp", tcp_part()}};
  node["gpu_nic_paths"] = gpu_nic_paths(node["gpus"], node["rdma"]);
  return node;
}

namespace {

// "  GPU0 NVIDIA H200  0000:19:00.0  NUMA 0  PCIe Gen5 x16  18 NVLinks up, 26.6 GB/s each way per
// link"; a PCIe link trained below its maximum is marked, as it is a classic acceptance failure.
std::string gpu_line(const nlohmann::ordered_json& x) {
  const int numa = x.value("numa_node", -1);
  std::string s = fmt::format("  GPU{} {}  {}  NUMA {}", x.value("index", 0u), x.value("name", std::string("?")),
                              x.value("pci", std::string("?")), numa < 0 ? "unknown" : std::to_string(numa));
  if (x.contains("pcie")) {
    const auto& p = x["pcie"];
    s += fmt::format("  PCIe Gen{} x{}", p.value("gen", 0u), p.value("width", 0u));
    if (p.value("gen", 0u) < p.value("gen_max", 0u) || p.value("width", 0u) < p.value("width_max", 0u))
      s += fmt::format(" (BELOW its maximum Gen{} x{})", p.value("gen_max", 0u), p.value("width_max", 0u));
  }
  const int links = x.value("nvlinks_active", 0);
  s += fmt::format("  {} NVLinks up", links);
  if (links > 0 && x.contains("nvlink_speed_mbps")) {  // MB/s per link and direction, as NVML reports it
    const double slowest = x["nvlink_speed_mbps"].get<double>() / 1e3;
    if (x.contains("nvlink_speed_max_mbps"))  // links trained at different speeds
      s += fmt::format(", {:.1f}-{:.1f} GB/s each way per link (NOT all at one speed)", slowest,
                       x["nvlink_speed_max_mbps"].get<double>() / 1e3);
    else s += fmt::format(", {:.1f} GB/s each way per link", slowest);
  }
  return s + "\n";
}

// The GPU-GPU and GPU-NIC path matrix, as nvidia-smi topo -m prints it.
std::string describe_paths(const nlohmann::ordered_json& node) {
  const auto& gpus = node["gpus"]["gpus"];
  const auto& paths = node["gpus"].value("paths", nlohmann::ordered_json::array());
  const auto& nic_paths = node.value("gpu_nic_paths", nlohmann::ordered_json::array());
  std::vector<std::string> cols;
  for (size_t i = 0; i < gpus.size(); ++i) cols.push_back(fmt::format("GPU{}", i));
  const auto& rdma = node["rdma"];
  if (rdma.value("available", false))
    for (const auto& d : rdma["devices"]) cols.push_back(d["name"].get<std::string>());
  if (gpus.empty()) return "";
  std::string s = fmt::format("  {:<8}", "");
  for (const auto& c : cols) s += fmt::format("{:>8}", c);
  s += "\n";
  for (size_t i = 0; i < gpus.size(); ++i) {
    s += fmt::format("  {:<8}", cols[i]);
    for (size_t j = 0; j < gpus.size(); ++j)
      s += fmt::format("{:>8}", i < paths.size() && j < paths[i].size() ? paths[i][j].get<std::string>() : "?");
    for (size_t k = 0; i < nic_paths.size() && k < nic_paths[i].size(); ++k)
      s += fmt::format("{:>8}", nic_paths[i][k].get<std::string>());
    s += "\n";
  }
  return s;
}

// "tcp buffers (min default max): receive 4096 131072 33554432, send 4096 16384 4194304; asked for
// at most 4194304 / 4194304", a value /proc did not give as "?".
std::string describe_tcp(const nlohmann::ordered_json& tcp) {
  auto value = [&](const char* key) {
    const auto& v = tcp.value(key, nlohmann::ordered_json());
    if (v.is_number()) return std::to_string(v.get<long long>());
    return v.is_array() ? fmt::format("{}", fmt::join(v.get<std::vector<long long>>(), " ")) : std::string("?");
  };
  return fmt::format("tcp buffers (min default max): receive {}, send {}; asked for at most {} / {}\n",
                     value("tcp_rmem"), value("tcp_wmem"), value("rmem_max"), value("wmem_max"));
}

// "ofi: libfabric 1.17", then one line per provider: its domains, protocol and the memory
// registration it demands (`ccbench topo` adds node["ofi"], transports/ofi/ofi_transport.h).
std::string describe_ofi(const nlohmann::ordered_json& ofi) {
  if (!ofi.value("available", false)) return fmt::format("ofi: not available ({})\n", ofi.value("reason", "?"));
  std::string s = fmt::format("ofi: libfabric {}\n", ofi.value("library", "?"));
  std::vector<std::string> seen;
  for (const auto& e : ofi["endpoints"]) {
    const std::string provider = e.value("provider", "?");
    if (std::find(seen.begin(), seen.end(), provider) != seen.end()) continue;
    seen.push_back(provider);
    std::vector<std::string> domains;
    for (const auto& d : ofi["endpoints"])
      if (d.value("provider", "") == provider &&
          std::find(domains.begin(), domains.end(), d.value("domain", "?")) == domains.end())
        domains.push_back(d.value("domain", "?"));
    s += fmt::format("  {:<14} {:<7} domains {}  mr_mode {}\n", provider, e.value("protocol", "?"),
                     fmt::join(domains, ", "), e.value("mr_mode", "?"));
  }
  if (seen.empty()) s += "  no provider offers a reliable-datagram endpoint here\n";
  return s;
}

}  // namespace

std::string describe_node(const nlohmann::ordered_json& node) {
  std::string s;
  const auto& c = node["cpu"];
  if (c.value("available", false))
    s += fmt::format("cpu: {} package(s), {} cores, {} hardware threads, {} NUMA node(s)\n", c.value("packages", 0),
                     c.value("cores", 0), c.value("hardware_threads", 0), c.value("numa_nodes", 0));
  else s += fmt::format("cpu: not available ({})\n", c.value("reason", "?"));
  if (c.contains("reduce_vector_set"))
    s += fmt::format("cpu reductions: {}\n", c["reduce_vector_set"].get<std::string>());
  const auto& r = node["rdma"];
  if (!r.value("available", false)) {
    s += fmt::format("rdma: not available ({})\n", r.value("reason", "?"));
  } else if (r["devices"].empty()) {
    s += "rdma: no RDMA devices\n";
  } else {
    for (const auto& d : r["devices"]) {
      s += fmt::format("rdma: {}", d["name"].get<std::string>());
      if (d.contains("ports"))
        for (const auto& p : d["ports"])
          s += fmt::format("  port {} {} {} {}", p["port"].get<int>(), p["state"].get<std::string>(),
                           p["link_layer"].get<std::string>(), p.value("rate", std::string()));
      s += "\n";
    }
  }
  if (node.contains("tcp")) s += describe_tcp(node["tcp"]);
  if (node.contains("ofi")) s += describe_ofi(node["ofi"]);
  const auto& g = node["gpus"];
  if (!g.value("available", false)) {
    s += fmt::format("gpus: not available ({})\n", g.value("reason", "?"));
    return s;
  }
  s += fmt::format("gpus: driver {}\n", g.value("driver", "?"));
  for (const auto& x : g["gpus"]) s += gpu_line(x);
  s += describe_paths(node);
  return s;
}

}  // namespace ccbench
