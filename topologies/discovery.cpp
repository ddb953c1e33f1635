#include "topologies/discovery.h"

#include <dlfcn.h>

#include <fmt/format.h>

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
    devices.push_back(d);
  }
  ibv_free_device_list(list);
  return {{"available", true}, {"devices", devices}};
#else
  return {{"available", false}, {"reason", "this ccbench was built without ibverbs"}};
#endif
}

// NVML through dlopen: the driver's library, present wherever a GPU driver is installed.
Json gpu_part() {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return {{"available", false}, {"reason", "libnvidia-ml.so.1 not found (no NVIDIA driver)"}};
  using Init = int (*)();
  using Count = int (*)(unsigned*);
  using Handle = int (*)(unsigned, void**);
  using Name = int (*)(void*, char*, unsigned);
  using Driver = int (*)(char*, unsigned);
  using Link = int (*)(void*, unsigned, int*);
  auto sym = [&](const char* s) { return dlsym(lib, s); };
  auto init = reinterpret_cast<Init>(sym("nvmlInit_v2"));
  auto count = reinterpret_cast<Count>(sym("nvmlDeviceGetCount_v2"));
  auto handle = reinterpret_cast<Handle>(sym("nvmlDeviceGetHandleByIndex_v2"));
  auto name = reinterpret_cast<Name>(sym("nvmlDeviceGetName"));
  auto driver = reinterpret_cast<Driver>(sym("nvmlSystemGetDriverVersion"));
  auto link = reinterpret_cast<Link>(sym("nvmlDeviceGetNvLinkState"));
  auto shutdown = reinterpret_cast<Init>(sym("nvmlShutdown"));
  Json j;
  if (!init || !count || !handle || init() != 0) {
    dlclose(lib);
    return {{"available", false}, {"reason", "nvmlInit failed"}};
  }
  j["available"] = true;
  char buf[96] = {};
  if (driver && driver(buf, sizeof buf) == 0) j["driver"] = buf;
  unsigned n = 0;
  count(&n);
  Json gpus = Json::array();
  for (unsigned i = 0; i < n; ++i) {
    void* h = nullptr;
    if (handle(i, &h) != 0) continue;
    Json g = {{"index", i}};
    if (name && name(h, buf, sizeof buf) == 0) g["name"] = buf;
    int active = 0;
    for (unsigned l = 0; link && l < 18 * 2; ++l) {  // NVML_NVLINK_MAX_LINKS is 18 on Hopper
      int state = 0;
      if (link(h, l, &state) == 0 && state == 1) ++active;
    }
    g["nvlinks_active"] = active;
    gpus.push_back(g);
  }
  j["gpus"] = gpus;
  if (shutdown) shutdown();
  dlclose(lib);
  return j;
}

}  // namespace

nlohmann::ordered_json discover_node() {
  return {{"cpu", cpu_part()}, {"rdma", rdma_part()}, {"gpus", gpu_part()}};
}

std::string describe_node(const nlohmann::ordered_json& node) {
  std::string s;
  const auto& c = node["cpu"];
  if (c.value("available", false))
    s += fmt::format("cpu: {} package(s), {} cores, {} hardware threads, {} NUMA node(s)\n", c["packages"].get<int>(),
                     c["cores"].get<int>(), c["hardware_threads"].get<int>(), c["numa_nodes"].get<int>());
  else
    s += fmt::format("cpu: not available ({})\n", c.value("reason", "?"));
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
          s += fmt::format("  port {} {} {}", p["port"].get<int>(), p["state"].get<std::string>(),
                           p["link_layer"].get<std::string>());
      s += "\n";
    }
  }
  const auto& g = node["gpus"];
  if (!g.value("available", false)) {
    s += fmt::format("gpus: not available ({})\n", g.value("reason", "?"));
  } else {
    s += fmt::format("gpus: driver {}\n", g.value("driver", "?"));
    for (const auto& x : g["gpus"])
      s += fmt::format("  gpu {}: {}, {} NVLink links active\n", x["index"].get<unsigned>(), x.value("name", "?"),
                       x["nvlinks_active"].get<int>());
  }
  return s;
}

}  // namespace ccbench
