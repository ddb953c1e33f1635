#include "collectives/nccl/nccl_config.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>

#include <fmt/format.h>

#include "core/cli_options.h"
#include "core/error.h"
#include "core/suggest.h"

namespace ccbench {

namespace {

// NCCL_CTA_POLICY_DEFAULT, _EFFICIENCY, _ZERO (nccl.h) by name.
const std::vector<std::string> kCtaPolicies = {"default", "efficiency", "zero"};

std::optional<int> whole(const std::string& v) {
  int x = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || end != v.data() + v.size()) return std::nullopt;
  return x;
}

// Error(usage) for a bad value of `key`, else nothing.
void check_value(const NcclConfigKey& key, const std::string& value, const std::string& axis) {
  if (value.empty())
    fail(ExitCode::usage, "--nccl-config {}: an empty value (valid: {}, or default)", axis, key.meaning);
  if (value == kNcclDefault) return;
  bool ok = true;
  if (key.lo <= key.hi) {
    const auto x = whole(value);
    ok = x && *x >= key.lo && *x <= key.hi;
  } else if (std::string_view(key.name) == "CTAPolicy") {
    const auto x = whole(value);
    ok = std::find(kCtaPolicies.begin(), kCtaPolicies.end(), value) != kCtaPolicies.end() || (x && *x >= 0 && *x <= 2);
  }
  if (!ok)
    fail(ExitCode::usage, "--nccl-config {}: '{}' is not valid for {} (valid: {}, or default)", axis, value, key.name,
         key.meaning);
}

// The value of `key` in `c` as a number, when given and not default.
std::optional<int> number_of(const NcclConfig& c, const char* key) {
  for (const NcclSetting& s : c.settings)
    if (s.key == key && !s.is_default()) return whole(s.value);
  return std::nullopt;
}

std::vector<std::string> key_list() {
  std::vector<std::string> names;
  for (const NcclConfigKey& x : nccl_config_keys()) names.push_back(x.name);
  return names;
}

std::string key_names() { return cli::joined(key_list()); }

}  // namespace

const std::vector<NcclConfigKey>& nccl_config_keys() {
  static const std::vector<NcclConfigKey> keys = {
      // NCCL takes CTA counts from 1 to MAXCHANNELS (64) and cluster sizes up to
      // NCCL_MAX_CGA_CLUSTER_SIZE (8), clamping others with a warning (src/init.cc); an IB
      // traffic class is 8 bits.
      {"minCTAs", false, "a whole number from 1 to 64", "NCCL_MIN_CTAS", 1, 64},
      {"maxCTAs", false, "a whole number from 1 to 64", "NCCL_MAX_CTAS", 1, 64},
      {"cgaClusterSize", false, "a whole number from 0 to 8", "NCCL_CGA_CLUSTER_SIZE", 0, 8},
      {"CTAPolicy", false, "efficiency, zero, or 0 to 2", "NCCL_CTA_POLICY"},
      {"netName", false, "a network plugin's name, e.g. Socket or IB", "NCCL_NET"},
      {"trafficClass", false, "a whole number from 0 to 255", nullptr, 0, 255},
      {"NCCL_ALGO", true, "NCCL_ALGO's syntax, e.g. Ring, Tree or ^NVLS", nullptr},
      {"NCCL_PROTO", true, "NCCL_PROTO's syntax, e.g. Simple, LL, LL128 or ^LL128", nullptr},
  };
  return keys;
}

std::string nccl_config_valid() {
  return fmt::format("KEY=V1,V2,... with KEY one of {}; at most {} combinations", key_names(), kMaxNcclConfigs);
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
    if (eq == std::string::npos || k == keys.end())
      fail(ExitCode::usage, "--nccl-config {}: expected KEY=V1,V2,... with KEY one of {}{}", axis, key_names(),
           eq == std::string::npos ? "" : did_you_mean(key, key_list()));
    for (const auto& [seen, values] : parsed)
      if (seen == key)
        fail(ExitCode::usage, "--nccl-config: {} given twice (list its values in one KEY=V1,V2,...)", key);
    std::vector<std::string> values = cli::split_list(axis.substr(eq + 1));
    if (values.empty()) values.push_back("");  // "KEY=": check_value names the empty value
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

std::optional<std::string> nccl_config_conflict(const NcclConfig& c) {
  const auto lo = number_of(c, "minCTAs"), hi = number_of(c, "maxCTAs");
  if (lo && hi && *lo > *hi)
    return fmt::format(
        "--nccl-config minCTAs={} is above maxCTAs={}: NCCL would change one of them, so this "
        "combination is not measured",
        *lo, *hi);
  return std::nullopt;
}

int nccl_cta_policy(const std::string& value) {
  const auto it = std::find(kCtaPolicies.begin(), kCtaPolicies.end(), value);
  if (it != kCtaPolicies.end()) {
    static constexpr int kValues[] = {0x00, 0x01, 0x02};  // NCCL_CTA_POLICY_DEFAULT, _EFFICIENCY, _ZERO
    return kValues[it - kCtaPolicies.begin()];
  }
  return *whole(value);
}

}  // namespace ccbench
