#pragma once
// Health of the hardware while a row (or a whole run) was measured: what the telemetry sampler
// (telemetry/) saw on every node, reduced to a few figures. Lives in results/ because it is part
// of the run record and of the checks acceptance rules call (results/health_checks.h).
//
// Unknown is not zero: every figure is optional and stays empty where it could not be read (no
// NVML, no NIC, a counter the driver does not expose, telemetry off). Counter figures are sums
// of the growth of every counter that could be read, over all GPUs, links, ports and nodes.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace ccbench {

using Json = nlohmann::ordered_json;

struct RowHealth {
  std::optional<double> temp_max_c;        // hottest GPU temperature seen, degrees Celsius
  std::optional<double> power_mean_w;      // mean power draw over GPUs and samples, watts
  std::optional<double> sm_clock_min_mhz;  // lowest SM clock seen, MHz
  // Clock-throttle reasons seen on any GPU, as NVML bits, benign ones removed (kBenignThrottle);
  // 0 = none, empty = not read.
  std::optional<std::uint64_t> throttle;
  std::optional<std::uint64_t> nvlink_errors;    // NVLink CRC flit + CRC data + replay + recovery
  std::optional<std::uint64_t> pcie_replays;     // PCIe replay counter
  std::optional<std::uint64_t> ecc_corrected;    // volatile corrected ECC errors
  std::optional<std::uint64_t> ecc_uncorrected;  // volatile uncorrected ECC errors
  std::optional<std::uint64_t> xid_events;       // critical XID events (NVML event set)
  std::optional<std::uint64_t> nic_errors;       // NIC symbol_error + link_downed + port_rcv_errors
  // Energy (--energy; telemetry/energy.h): every GPU of the job over a window of the row's
  // collective repeated, per collective, and the row's algbw size (GB) per joule; and how long
  // the window lasted (the shortest rank's wall clock), which the figures are good to one
  // counter step over.
  std::optional<double> energy_per_coll_j;
  std::optional<double> gb_per_joule;
  std::optional<double> energy_window_s;

  bool operator==(const RowHealth&) const = default;
};

// ---- Clock-throttle reasons (NVML's nvmlClocksEventReason* / nvmlClocksThrottleReason* bits) ----

inline constexpr std::uint64_t kThrottleGpuIdle = 0x1;
inline constexpr std::uint64_t kThrottleApplicationsClocks = 0x2;
inline constexpr std::uint64_t kThrottleSwPowerCap = 0x4;
inline constexpr std::uint64_t kThrottleHwSlowdown = 0x8;
inline constexpr std::uint64_t kThrottleSyncBoost = 0x10;
inline constexpr std::uint64_t kThrottleSwThermal = 0x20;
inline constexpr std::uint64_t kThrottleHwThermal = 0x40;
inline constexpr std::uint64_t kThrottleHwPowerBrake = 0x80;
inline constexpr std::uint64_t kThrottleDisplayClocks = 0x100;

// Reasons that say nothing about the hardware's health: the GPU had nothing to do (idle), or
// its clocks follow a setting someone chose (applications clocks, display clock). Every other
// bit, unknown ones included, counts as throttling.
inline constexpr std::uint64_t kBenignThrottle =
    kThrottleGpuIdle | kThrottleApplicationsClocks | kThrottleDisplayClocks;
// Thermal or power: the check acceptance uses. HW slowdown is engaged by temperature or by the
// power brake, so it belongs to both.
inline constexpr std::uint64_t kThermalThrottle = kThrottleSwThermal | kThrottleHwThermal | kThrottleHwSlowdown;
inline constexpr std::uint64_t kPowerThrottle = kThrottleSwPowerCap | kThrottleHwPowerBrake | kThrottleHwSlowdown;

// The bits of `mask` that are throttling (benign ones removed).
constexpr std::uint64_t health_relevant_throttle(std::uint64_t mask) { return mask & ~kBenignThrottle; }
// Names of the set bits, joined by '+' ("sw_power_cap+hw_thermal_slowdown"); unknown bits as
// hex ("0x200"); "none" for 0.
std::string throttle_names(std::uint64_t mask);
// The inverse of throttle_names; throws Error(usage) naming an unknown word.
std::uint64_t parse_throttle_names(std::string_view text);

// ---- The record's columns ----

// The energy columns' CSV headers, which acceptance rules read (results/accept.h).
inline constexpr const char* kEnergyHeader = "energy[J/coll]";
inline constexpr const char* kEnergyEfficiencyHeader = "energy_efficiency[GB/J]";
inline constexpr const char* kEnergyWindowHeader = "energy_window[s]";

// One health column: its JSON key and CSV header (units in brackets). In JSON a value is a
// number (gpu_throttle: a string of names) or null where not available; in CSV it is empty then.
struct HealthColumn {
  const char* key;
  const char* csv_header;
};
const std::vector<HealthColumn>& health_columns();
// Column `i` of health_columns() as JSON (number, string or null) and back; setting throws
// Error(usage) naming the column on a value of the wrong kind.
Json health_value(const RowHealth& h, size_t i);
void set_health_value(RowHealth& h, size_t i, const Json& v);
// A column's JSON value as CSV text ("" for null), and the JSON value of the CSV cell of the
// column with JSON key `key` (throws Error(usage) naming the column when the text is not valid).
std::string health_cell(const Json& value);
Json health_value_from_cell(std::string_view key, const std::string& text);

}  // namespace ccbench
