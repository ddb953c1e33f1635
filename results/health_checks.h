#pragma once
// Health checks acceptance rules call: on one row's RowHealth or on a run's (the sampler's run
// summary). Each says pass, fail or not_available — a figure that was not read is never a pass
// by default; the caller decides what "not available" means for its verdict.
#include <string>
#include <vector>

#include "results/health.h"

namespace ccbench {

enum class HealthState { pass, fail, not_available };

struct HealthCheck {
  std::string name;  // "error counters", "throttling", "temperature"
  HealthState state = HealthState::not_available;
  std::string detail;  // what was seen: "nvlink_errors grew by 3", "hottest GPU 71 C < 85 C"
};

// No error counter grew: NVLink, PCIe replay, ECC (corrected and uncorrected), XID events, NIC
// errors. Fails naming every counter that grew; not_available when none could be read.
HealthCheck check_no_error_growth(const RowHealth& h);
// No thermal or power throttling (kThermalThrottle | kPowerThrottle). Other reasons (sync
// boost, unknown bits) are named in the detail but do not fail this check.
HealthCheck check_no_thermal_or_power_throttling(const RowHealth& h);
// The hottest GPU stayed below `limit_c` degrees Celsius.
HealthCheck check_temperature_below(const RowHealth& h, double limit_c);
// The three checks above, in that order.
std::vector<HealthCheck> check_health(const RowHealth& h, double temp_limit_c);

std::string_view health_state_name(HealthState s);  // "pass", "fail", "not available"

}  // namespace ccbench
