#include "collectives/nccl/nccl_config.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"

namespace ccbench {

namespace {

constexpr const char* kWhole = "a whole number >= 0";
// NCCL_CTA_POLICY_DEFAULT, _EFFICIENCY, _ZERO (nccl.h) by name.
const std::vector<std::string> kCtaPolicies = {"default", "efficiency", "zero"};

bool is_whole(const std::string& v) {
  long long x = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  return ec == std::errc() && end == v.data() + v.size() && x >= 0 && x <= 1 << 20;
}

// Error(usage) for a bad value of `key`, else nothing.
void check_value(const NcclConfigKey& key, const std::string& value, const std::string& axis) {
  if (value.empty())
    fail(ExitCode::usage, "--nccl-config {}: an empty value (valid: {}, or default)", axis, key.meaning);
  if (value == kNcclDefault) return;
  const std::string k = key.name;
  bool ok = true;
  if (k == "minCTAs" || k == "maxCTAs" || k == "cgaClusterSize" || k == "trafficClass") ok = is_whole(value);
  if (k == "CTAPolicy")
    ok = std::find(kCtaPolicies.begin(), kCtaPolicies.end(), value) != kCtaPolicies.end() ||
         (is_whole(value) && std::stoi(value) <= 2);
  if (!ok)
    fail(ExitCode::usage, "--nccl-config {}: '{}' is not valid for {} (valid: {}, or default)", axis, value, k, key.meaning);
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = text.find(sep, start);
    out.push_back(text.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

}  // namespace

const std::vector<NcclConfigKey>& nccl_config_keys() {
  static const std::vector<NcclConfigKey> keys = {
      {"minCTAs", false, kWhole, "NCCL_MIN_CTAS"},
      {"maxCTAs", false, kWhole, "NCCL_MAX_CTAS"},
      {"cgaClusterSize", false, kWhole, "NCCL_CGA_CLUSTER_SIZE"},
      {"CTAPolicy", false, "default, efficiency, zero, or 0 to 2", "NCCL_CTA_POLICY"},
      {"netName", false, "a network plugin's name, e.g. Socket or IB", "NCCL_NET"},
      {"trafficClass", false, kWhole, nullptr},
      {"NCCL_ALGO", true, "NCCL_ALGO's syntax, e.g. Ring, Tree or ^NVLS", nullptr},
      {"NCCL_PROTO", true, "NCCL_PROTO's syntax, e.g. Simple, LL, LL128 or ^LL128", nullptr},
  };
  return keys;
}

std::string NcclConfig::label() const {
  std::string s;
  for (const NcclSetting& x : settings) s += fmt::format("{}{}={}", s.empty() ? "" : ";", x.key, x.value);
  return s;
}

std::vector<NcclConfig> nccl_config_combinations(const std::vector<std::string>& axes) {
  std::vector<std::pair<std::string, std::vector<std::string>>> parsed;
  for (const std::string& axis : axes) {
    const std::size_t eq = axis.find('=');
    const std::string key = axis.substr(0, eq);
    const auto& keys = nccl_config_keys();
    const auto k = std::find_if(keys.begin(), keys.end(), [&](const NcclConfigKey& x) { return key == x.name; });
    if (eq == std::string::npos || k == keys.end()) {
      std::vector<std::string> names;
      for (const NcclConfigKey& x : keys) names.push_back(x.name);
      fail(ExitCode::usage, "--nccl-config {}: expected KEY=V1,V2,... with KEY one of {}", axis, fmt::join(names, ", "));
    }
    for (const auto& [seen, values] : parsed)
      if (seen == key) fail(ExitCode::usage, "--nccl-config: {} given twice (list its values in one KEY=V1,V2,...)", key);
    std::vector<std::string> values = split(axis.substr(eq + 1), ',');
    for (const std::string& v : values) check_value(*k, v, axis);
    parsed.emplace_back(key, std::move(values));
  }
  std::vector<NcclConfig> out{NcclConfig{}};
  for (const auto& [key, values] : parsed) {
    std::vector<NcclConfig> next;
    for (const NcclConfig& c : out)
      for (const std::string& v : values) {
        NcclConfig d = c;
        d.settings.push_back({key, v});
        next.push_back(std::move(d));
      }
    out = std::move(next);
    if (out.size() > kMaxNcclConfigs)
      fail(ExitCode::usage, "--nccl-config: more than {} combinations (one NCCL communicator each); sweep fewer values",
           kMaxNcclConfigs);
  }
  if (parsed.empty()) return {};
  return out;
}

int nccl_cta_policy(const std::string& value) {
  const auto it = std::find(kCtaPolicies.begin(), kCtaPolicies.end(), value);
  if (it != kCtaPolicies.end()) {
    static constexpr int kValues[] = {0x00, 0x01, 0x02};  // NCCL_CTA_POLICY_DEFAULT, _EFFICIENCY, _ZERO
    return kValues[it - kCtaPolicies.begin()];
  }
  return std::stoi(value);
}

}  // namespace ccbench
