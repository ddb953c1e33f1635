#include "topologies/pci_paths.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <vector>

namespace ccbench {

namespace {

namespace fs = std::filesystem;

// Length of a sysfs PCI device name "dddd:bb:dd.f".
constexpr size_t kPciNameLength = 12;

std::vector<std::string> components(const std::string& path) {
  std::vector<std::string> out;
  for (const auto& part : fs::path(path)) {
    const std::string s = part.string();
    if (!s.empty() && s != "/") out.push_back(s);
  }
  return out;
}

bool is_root_complex(const std::string& c) { return c.rfind("pci", 0) == 0; }

}  // namespace

std::string sysfs_pci_name(const std::string& bus_id) {
  std::string s = bus_id.size() > kPciNameLength ? bus_id.substr(bus_id.size() - kPciNameLength) : bus_id;
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string pci_device_path(const std::string& sysfs_device_link, const std::string& sysfs) {
  std::error_code ec;
  const fs::path p = fs::canonical(fs::path(sysfs) / sysfs_device_link, ec);
  return ec ? std::string() : p.string();
}

int pci_numa_node(const std::string& name, const std::string& sysfs) {
  std::ifstream in(fs::path(sysfs) / "bus/pci/devices" / name / "numa_node");
  int node = -1;
  if (!(in >> node)) return -1;
  return node;
}

std::string pci_path_class(const std::string& path_a, int numa_a, const std::string& path_b, int numa_b) {
  const auto a = components(path_a), b = components(path_b);
  auto root = [](const std::vector<std::string>& v) {
    auto it = std::find_if(v.begin(), v.end(), is_root_complex);
    return it == v.end() ? std::string() : *it;
  };
  const std::string ra = root(a), rb = root(b);
  if (ra.empty() || rb.empty()) return "";
  if (ra != rb) return numa_a >= 0 && numa_a == numa_b ? "NODE" : "SYS";
  size_t common = 0;
  while (common < a.size() && common < b.size() && a[common] == b[common]) ++common;
  const size_t root_at = static_cast<size_t>(std::find(a.begin(), a.end(), ra) - a.begin());
  if (common <= root_at + 1) return "PHB";  // they meet at the root complex
  // Components from the common bridge down to each device: one switch port, then the device.
  const size_t below = std::max(a.size(), b.size()) - common;
  return below <= 2 ? "PIX" : "PXB";
}

}  // namespace ccbench
