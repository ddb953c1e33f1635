#include "topologies/gpu_discovery.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/nvml_library.h"
#include "topologies/layout.h"
#include "topologies/pci_paths.h"

namespace ccbench {

namespace {

using Json = nlohmann::ordered_json;

// NVML's nvmlPciInfo_t (nvml.h, NVML API version 11+), mirrored so that no NVML header is needed.
struct NvmlPciInfo {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};
// NVML_NVLINK_MAX_LINKS on Hopper; asking beyond a GPU's links just returns an error.
constexpr unsigned kMaxNvlinks = 18;
// NVML's nvmlFieldValue_t (nvml.h), mirrored, and the fields giving the speed of NVLink links in
// MB/s per link and direction: one link's (NVML_FI_DEV_NVLINK_GET_SPEED, the link in scopeId;
// answered for H200 on driver 580: 26562), or the active links' common one on older GPUs
// (NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON; "not supported" there).
struct NvmlFieldValue {
  unsigned field_id, scope_id;
  long long timestamp, latency_us;
  int value_type, nvml_return;
  union {
    double d;
    unsigned ui;
    unsigned long ul;
    unsigned long long ull;
    long long sll;
    int si;
    unsigned short us;
  } value;
};
constexpr unsigned kFieldNvlinkLinkSpeedMBps = 164;
constexpr unsigned kFieldNvlinkCommonSpeedMBps = 90;
constexpr int kNvmlFeatureEnabled = 1;
// nvmlGpuTopologyLevel_t values and nvidia-smi's words for them.
const std::map<int, const char*> kTopologyLevels = {{0, "X"},    {10, "PIX"},  {20, "PXB"},
                                                    {30, "PHB"}, {40, "NODE"}, {50, "SYS"}};

// The NVML entry points used, each looked up on its own: a missing one leaves its field out.
struct Nvml {
  explicit Nvml(const NvmlLibrary& lib)
      : count(lib.fn<decltype(count)>("nvmlDeviceGetCount_v2")),
        handle(lib.fn<decltype(handle)>("nvmlDeviceGetHandleByIndex_v2")),
        name(lib.fn<decltype(name)>("nvmlDeviceGetName")), uuid(lib.fn<decltype(uuid)>("nvmlDeviceGetUUID")),
        pci(lib.fn<decltype(pci)>("nvmlDeviceGetPciInfo_v3")),
        gen_now(lib.fn<decltype(gen_now)>("nvmlDeviceGetCurrPcieLinkGeneration")),
        gen_max(lib.fn<decltype(gen_max)>("nvmlDeviceGetMaxPcieLinkGeneration")),
        width_now(lib.fn<decltype(width_now)>("nvmlDeviceGetCurrPcieLinkWidth")),
        width_max(lib.fn<decltype(width_max)>("nvmlDeviceGetMaxPcieLinkWidth")),
        link_state(lib.fn<decltype(link_state)>("nvmlDeviceGetNvLinkState")),
        link_remote(lib.fn<decltype(link_remote)>("nvmlDeviceGetNvLinkRemotePciInfo_v2")),
        ancestor(lib.fn<decltype(ancestor)>("nvmlDeviceGetTopologyCommonAncestor")),
        fields(lib.fn<decltype(fields)>("nvmlDeviceGetFieldValues")) {}
  int (*count)(unsigned*);
  int (*handle)(unsigned, void**);
  int (*name)(void*, char*, unsigned);
  int (*uuid)(void*, char*, unsigned);
  int (*pci)(void*, NvmlPciInfo*);
  int (*gen_now)(void*, unsigned*);
  int (*gen_max)(void*, unsigned*);
  int (*width_now)(void*, unsigned*);
  int (*width_max)(void*, unsigned*);
  int (*link_state)(void*, unsigned, int*);
  int (*link_remote)(void*, unsigned, NvmlPciInfo*);
  int (*ancestor)(void*, void*, int*);
  int (*fields)(void*, int, NvmlFieldValue*);
};

// An unsigned answer of NVML, or nothing.
template <typename F>
void put_unsigned(Json& j, const char* key, F f, void* h) {
  unsigned v = 0;
  if (f && f(h, &v) == kNvmlSuccess) j[key] = v;
}

// One NVML field of a GPU as an unsigned number, or 0 where NVML does not answer it.
unsigned long long field_value(const Nvml& n, void* h, NvmlFieldValue& f) {
  if (!n.fields || n.fields(h, 1, &f) != kNvmlSuccess || f.nvml_return != kNvmlSuccess) return 0;
  switch (f.value_type) {  // nvmlValueType_t
    case 1: return f.value.ui;
    case 2: return f.value.ul;
    case 3: return f.value.ull;
    case 4: return f.value.sll > 0 ? static_cast<unsigned long long>(f.value.sll) : 0;
    case 5: return f.value.si > 0 ? static_cast<unsigned long long>(f.value.si) : 0;
    default: return 0;
  }
}

// The speed NVML reports for NVLink `link` of a GPU (MB/s per link and direction), or 0.
unsigned long long nvlink_speed_mbps(const Nvml& n, void* h, unsigned link) {
  for (const unsigned field : {kFieldNvlinkLinkSpeedMBps, kFieldNvlinkCommonSpeedMBps}) {
    NvmlFieldValue f{};
    f.field_id = field;
    f.scope_id = link;
    if (const auto v = field_value(n, h, f)) return v;
  }
  return 0;
}

// One GPU; `peers` counts its NVLink links up per remote PCI device.
Json describe_gpu(const Nvml& n, unsigned index, void* h, std::map<std::string, int>& peers) {
  Json g = {{"index", index}};
  char buf[96] = {};
  if (n.name && n.name(h, buf, sizeof buf) == kNvmlSuccess) g["name"] = buf;
  if (n.uuid && n.uuid(h, buf, sizeof buf) == kNvmlSuccess) g["uuid"] = buf;
  NvmlPciInfo pci{};
  if (n.pci && n.pci(h, &pci) == kNvmlSuccess) {
    const std::string id = sysfs_pci_name(pci.bus_id);
    g["pci"] = id;
    g["numa_node"] = pci_numa_node(id);
  }
  Json pcie = Json::object();
  put_unsigned(pcie, "gen", n.gen_now, h);
  put_unsigned(pcie, "gen_max", n.gen_max, h);
  put_unsigned(pcie, "width", n.width_now, h);
  put_unsigned(pcie, "width_max", n.width_max, h);
  if (!pcie.empty()) g["pcie"] = pcie;
  int active = 0;
  unsigned long long slowest = 0, fastest = 0;  // MB/s per link and direction, over the links up
  for (unsigned l = 0; n.link_state && l < kMaxNvlinks; ++l) {
    int state = 0;
    if (n.link_state(h, l, &state) != kNvmlSuccess || state != kNvmlFeatureEnabled) continue;
    ++active;
    if (const auto speed = nvlink_speed_mbps(n, h, l)) {
      slowest = slowest ? std::min(slowest, speed) : speed;
      fastest = std::max(fastest, speed);
    }
    NvmlPciInfo remote{};
    if (n.link_remote && n.link_remote(h, l, &remote) == kNvmlSuccess) ++peers[sysfs_pci_name(remote.bus_id)];
  }
  g["nvlinks_active"] = active;
  if (slowest > 0) g["nvlink_speed_mbps"] = slowest;  // a link trained slower than the others shows
  if (fastest > slowest) g["nvlink_speed_max_mbps"] = fastest;
  return g;
}

// NVLink links of a GPU that end at a device other than a GPU of this node: NVSwitch ports.
int switch_links(const std::map<std::string, int>& peers, const Json& gpus) {
  int links = 0;
  for (const auto& [remote, count] : peers) {
    bool is_gpu = false;
    for (const auto& g : gpus) is_gpu = is_gpu || g.value("pci", std::string()) == remote;
    if (!is_gpu) links += count;
  }
  return links;
}

// The path between every GPU pair: NV# where NVLink joins them (directly, or both through
// NVSwitches), else NVML's PCI level.
Json gpu_matrix(const Nvml& n, const std::vector<void*>& handles, const Json& gpus,
                const std::vector<std::map<std::string, int>>& peers) {
  std::vector<int> via_switch;
  for (const auto& p : peers) via_switch.push_back(switch_links(p, gpus));
  Json m = Json::array();
  for (size_t i = 0; i < handles.size(); ++i) {
    Json row = Json::array();
    for (size_t j = 0; j < handles.size(); ++j) {
      std::string cell = i == j ? "X" : "";
      auto nv = peers[i].find(gpus[j].value("pci", std::string()));
      if (i != j && nv != peers[i].end()) cell = fmt::format("NV{}", nv->second);
      else if (i != j && via_switch[i] > 0 && via_switch[j] > 0)
        cell = fmt::format("NV{}", std::min(via_switch[i], via_switch[j]));
      int level = -1;
      if (cell.empty() && n.ancestor && n.ancestor(handles[i], handles[j], &level) == kNvmlSuccess)
        if (auto it = kTopologyLevels.find(level); it != kTopologyLevels.end()) cell = it->second;
      row.push_back(cell.empty() ? "?" : cell);
    }
    m.push_back(row);
  }
  return m;
}

}  // namespace

std::vector<int> nvlink_row(const Json& gpus, const std::string& mine, const std::vector<std::string>& peers) {
  std::vector<int> row(peers.size(), kUnknownLinks);
  const Json list = gpus.value("gpus", Json::array()), paths = gpus.value("paths", Json::array());
  const auto index_of = [&](const std::string& pci) {  // the GPU's row of `paths`, or -1
    if (pci.empty()) return -1;
    for (size_t i = 0; i < list.size(); ++i)
      if (list[i].value("pci", std::string()) == sysfs_pci_name(pci)) return static_cast<int>(i);
    return -1;
  };
  const int a = index_of(mine);
  if (a < 0 || static_cast<size_t>(a) >= paths.size()) return row;
  for (size_t p = 0; p < peers.size(); ++p) {
    const int b = index_of(peers[p]);
    if (b < 0 || static_cast<size_t>(b) >= paths[static_cast<size_t>(a)].size()) continue;
    const Json& c = paths[static_cast<size_t>(a)][static_cast<size_t>(b)];
    const std::string cell = c.is_string() ? c.get<std::string>() : "?";
    if (a == b) row[p] = kSameGpuLinks;
    else if (cell.rfind("NV", 0) == 0) row[p] = std::atoi(cell.c_str() + 2);
    else if (cell != "?") row[p] = 0;
  }
  return row;
}

Json discover_gpus() {
  const NvmlLibrary lib;
  if (!lib.unavailable().empty()) return {{"available", false}, {"reason", lib.unavailable()}};
  const Nvml n(lib);
  if (!n.count || !n.handle)
    return {{"available", false},
            {"reason",
             "NVML cannot count or open the GPUs (nvmlDeviceGetCount_v2 / "
             "nvmlDeviceGetHandleByIndex_v2)"}};
  Json j = {{"available", true}};
  if (const std::string driver = lib.driver_version(); !driver.empty()) j["driver"] = driver;
  unsigned count = 0;
  n.count(&count);
  Json gpus = Json::array();
  std::vector<void*> handles;
  std::vector<std::map<std::string, int>> peers;
  for (unsigned i = 0; i < count; ++i) {
    void* h = nullptr;
    if (n.handle(i, &h) != kNvmlSuccess) continue;
    peers.emplace_back();
    gpus.push_back(describe_gpu(n, i, h, peers.back()));
    handles.push_back(h);
  }
  j["gpus"] = gpus;
  j["paths"] = gpu_matrix(n, handles, gpus, peers);
  return j;
}

}  // namespace ccbench
