#include "results/health.h"

#include <charconv>
#include <variant>

#include <fmt/format.h>

#include "core/error.h"

namespace ccbench {

namespace {

struct ThrottleName {
  std::uint64_t bit;
  const char* name;
};
// NVML's names, in bit order (nvml.h: nvmlClocksEventReason*).
constexpr ThrottleName kThrottleNames[] = {
    {kThrottleGpuIdle, "gpu_idle"},
    {kThrottleApplicationsClocks, "applications_clocks_setting"},
    {kThrottleSwPowerCap, "sw_power_cap"},
    {kThrottleHwSlowdown, "hw_slowdown"},
    {kThrottleSyncBoost, "sync_boost"},
    {kThrottleSwThermal, "sw_thermal_slowdown"},
    {kThrottleHwThermal, "hw_thermal_slowdown"},
    {kThrottleHwPowerBrake, "hw_power_brake_slowdown"},
    {kThrottleDisplayClocks, "display_clock_setting"},
};

// What a column reads from RowHealth: a real figure, a counter, or the throttle mask (text).
struct Real {
  std::optional<double> RowHealth::*member;
};
struct Counter {
  std::optional<std::uint64_t> RowHealth::*member;
};
struct Throttle {};
using Access = std::variant<Real, Counter, Throttle>;

struct HealthEntry {
  HealthColumn column;
  Access access;
};

const std::vector<HealthEntry>& entries() {
  static const std::vector<HealthEntry> e = {
      {{"gpu_temp_max_c", "gpu_temp_max[C]"}, Real{&RowHealth::temp_max_c}},
      {{"gpu_power_mean_w", "gpu_power_mean[W]"}, Real{&RowHealth::power_mean_w}},
      {{"gpu_sm_clock_min_mhz", "gpu_sm_clock_min[MHz]"}, Real{&RowHealth::sm_clock_min_mhz}},
      {{"gpu_throttle", "gpu_throttle"}, Throttle{}},
      {{"nvlink_errors", "nvlink_errors"}, Counter{&RowHealth::nvlink_errors}},
      {{"pcie_replays", "pcie_replays"}, Counter{&RowHealth::pcie_replays}},
      {{"ecc_corrected", "ecc_corrected"}, Counter{&RowHealth::ecc_corrected}},
      {{"ecc_uncorrected", "ecc_uncorrected"}, Counter{&RowHealth::ecc_uncorrected}},
      {{"xid_events", "xid_events"}, Counter{&RowHealth::xid_events}},
      {{"nic_errors", "nic_errors"}, Counter{&RowHealth::nic_errors}},
      {{"energy_per_coll_j", kEnergyHeader}, Real{&RowHealth::energy_per_coll_j}},
      {{"gb_per_joule", kEnergyEfficiencyHeader}, Real{&RowHealth::gb_per_joule}},
      {{"energy_window_s", kEnergyWindowHeader}, Real{&RowHealth::energy_window_s}},
  };
  return e;
}

const HealthEntry& entry(size_t i) {
  if (i >= entries().size()) fail(ExitCode::usage, "health column {} does not exist", i);
  return entries()[i];
}

template <typename T>
T parse_cell(const std::string& s, const char* column) {
  T value{};
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end != s.data() + s.size())
    fail(ExitCode::usage, "column '{}': '{}' is not a valid number (or empty where not available)", column, s);
  return value;
}

}  // namespace

std::string throttle_names(std::uint64_t mask) {
  if (mask == 0) return "none";
  std::string s;
  for (const ThrottleName& t : kThrottleNames) {
    if (!(mask & t.bit)) continue;
    if (!s.empty()) s += '+';
    s += t.name;
    mask &= ~t.bit;
  }
  for (std::uint64_t bit = 1; mask; bit <<= 1) {
    if (!(mask & bit)) continue;
    if (!s.empty()) s += '+';
    s += fmt::format("{:#x}", bit);
    mask &= ~bit;
  }
  return s;
}

std::uint64_t parse_throttle_names(std::string_view text) {
  if (text == "none") return 0;
  std::uint64_t mask = 0;
  while (!text.empty()) {
    const size_t plus = text.find('+');
    const std::string_view word = text.substr(0, plus);
    std::uint64_t bit = 0;
    for (const ThrottleName& t : kThrottleNames)
      if (word == t.name) bit = t.bit;
    if (!bit && word.starts_with("0x")) {
      auto [end, ec] = std::from_chars(word.data() + 2, word.data() + word.size(), bit, 16);
      if (ec != std::errc() || end != word.data() + word.size()) bit = 0;
    }
    if (!bit)
      fail(ExitCode::usage,
           "gpu_throttle: unknown reason '{}' (valid: none, or names such as sw_power_cap, "
           "hw_slowdown, sw_thermal_slowdown, hw_thermal_slowdown, hw_power_brake_slowdown, sync_boost, "
           "0x... joined by '+')",
           word);
    mask |= bit;
    text = plus == std::string_view::npos ? std::string_view() : text.substr(plus + 1);
  }
  return mask;
}

const std::vector<HealthColumn>& health_columns() {
  static const std::vector<HealthColumn> cols = [] {
    std::vector<HealthColumn> c;
    for (const HealthEntry& e : entries()) c.push_back(e.column);
    return c;
  }();
  return cols;
}

Json health_value(const RowHealth& h, size_t i) {
  const Access& a = entry(i).access;
  if (auto* r = std::get_if<Real>(&a)) return (h.*(r->member)) ? Json(*(h.*(r->member))) : Json(nullptr);
  if (auto* c = std::get_if<Counter>(&a)) return (h.*(c->member)) ? Json(*(h.*(c->member))) : Json(nullptr);
  return h.throttle ? Json(throttle_names(*h.throttle)) : Json(nullptr);
}

void set_health_value(RowHealth& h, size_t i, const Json& v) {
  const HealthEntry& e = entry(i);
  const bool ok = v.is_null() || (std::holds_alternative<Throttle>(e.access)  ? v.is_string()
                                  : std::holds_alternative<Counter>(e.access) ? v.is_number_unsigned()
                                                                              : v.is_number());
  if (!ok)
    fail(ExitCode::usage, "result field '{}': {} is not valid (a {} or null)", e.column.key, v.dump(),
         std::holds_alternative<Throttle>(e.access)  ? "string of reasons"
         : std::holds_alternative<Counter>(e.access) ? "whole number >= 0"
                                                     : "number");
  if (auto* r = std::get_if<Real>(&e.access))
    h.*(r->member) = v.is_null() ? std::nullopt : std::optional<double>(v.get<double>());
  else if (auto* c = std::get_if<Counter>(&e.access))
    h.*(c->member) = v.is_null() ? std::nullopt : std::optional<std::uint64_t>(v.get<std::uint64_t>());
  else
    h.throttle = v.is_null() ? std::nullopt : std::optional<std::uint64_t>(parse_throttle_names(v.get<std::string>()));
}

std::string health_cell(const Json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) return fmt::format("{:.6g}", v.get<double>());
  return v.dump();
}

Json health_value_from_cell(std::string_view key, const std::string& text) {
  size_t i = 0;
  while (i < entries().size() && entries()[i].column.key != key) ++i;
  const HealthEntry& e = entry(i);
  if (text.empty()) return nullptr;
  if (std::holds_alternative<Throttle>(e.access)) {
    parse_throttle_names(text);  // rejects unknown names here, with the column's name
    return text;
  }
  if (std::holds_alternative<Counter>(e.access)) return parse_cell<std::uint64_t>(text, e.column.csv_header);
  return parse_cell<double>(text, e.column.csv_header);
}

}  // namespace ccbench
