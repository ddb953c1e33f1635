#include "results/health_checks.h"

#include <fmt/format.h>

namespace ccbench {

std::string_view health_state_name(HealthState s) {
  switch (s) {
    case HealthState::pass: return "pass";
    case HealthState::fail: return "fail";
    case HealthState::not_available: return "not available";
  }
  return "not available";
}

HealthCheck check_no_error_growth(const RowHealth& h) {
  HealthCheck c{"error counters", HealthState::not_available, "no error counter could be read"};
  const std::pair<const char*, const std::optional<std::uint64_t>*> counters[] = {
      {"nvlink_errors", &h.nvlink_errors},     {"pcie_replays", &h.pcie_replays}, {"ecc_corrected", &h.ecc_corrected},
      {"ecc_uncorrected", &h.ecc_uncorrected}, {"xid_events", &h.xid_events},     {"nic_errors", &h.nic_errors}};
  std::string grew, read;
  for (const auto& [name, value] : counters) {
    if (!*value) continue;
    read += fmt::format("{}{}", read.empty() ? "" : ", ", name);
    if (**value > 0) grew += fmt::format("{}{} grew by {}", grew.empty() ? "" : ", ", name, **value);
  }
  if (read.empty()) return c;
  c.state = grew.empty() ? HealthState::pass : HealthState::fail;
  c.detail = grew.empty() ? fmt::format("no growth ({})", read) : grew;
  return c;
}

HealthCheck check_no_thermal_or_power_throttling(const RowHealth& h) {
  if (!h.throttle) return {"throttling", HealthState::not_available, "clock-throttle reasons could not be read"};
  const std::uint64_t bad = *h.throttle & (kThermalThrottle | kPowerThrottle);
  const std::uint64_t other = health_relevant_throttle(*h.throttle) & ~bad;
  std::string detail =
      bad ? fmt::format("thermal or power throttling: {}", throttle_names(bad)) : "no thermal or power throttling";
  if (other) detail += fmt::format(" (also: {})", throttle_names(other));
  return {"throttling", bad ? HealthState::fail : HealthState::pass, detail};
}

HealthCheck check_temperature_below(const RowHealth& h, double limit_c) {
  if (!h.temp_max_c) return {"temperature", HealthState::not_available, "GPU temperature could not be read"};
  const bool below = *h.temp_max_c < limit_c;
  return {
      "temperature", below ? HealthState::pass : HealthState::fail,
      fmt::format("hottest GPU {:g} C {} the limit of {:g} C", *h.temp_max_c, below ? "below" : "reached", limit_c)};
}

std::vector<HealthCheck> check_health(const RowHealth& h, double temp_limit_c) {
  return {check_no_error_growth(h), check_no_thermal_or_power_throttling(h), check_temperature_below(h, temp_limit_c)};
}

}  // namespace ccbench
