#pragma once
// Where GPU telemetry comes from: one small interface, answered by NVML (nvml_source.h) on a
// real node, or by answers recorded earlier and played back (recorded_source.h) in tests and
// on machines without a GPU. Every query answers a value or says why there is none, so a
// missing function in an older driver, a GPU that does not support a query, or a machine with
// no driver are "not available" with a reason, never a failure.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ccbench::telemetry {

// One NVML question each (nvml_source.cpp names the call). Units as in NVML.
enum class Query {
  temperature_c,     // nvmlDeviceGetTemperature (GPU sensor), degrees C
  power_mw,          // nvmlDeviceGetPowerUsage, milliwatts
  power_limit_mw,    // nvmlDeviceGetEnforcedPowerLimit, milliwatts
  sm_clock_mhz,      // nvmlDeviceGetClockInfo(SM)
  mem_clock_mhz,     // nvmlDeviceGetClockInfo(MEM)
  throttle_reasons,  // nvmlDeviceGetCurrentClocksEventReasons (or ...ThrottleReasons), bit mask
  gpu_util_pct,      // nvmlDeviceGetUtilizationRates .gpu
  mem_util_pct,      // nvmlDeviceGetUtilizationRates .memory
  nvlink_active,     // nvmlDeviceGetNvLinkState(link): 1 active, 0 not
  nvlink_replay,     // nvmlDeviceGetNvLinkErrorCounter(link, DL_REPLAY); counters only grow
  nvlink_recovery,   // ... DL_RECOVERY
  nvlink_crc_flit,   // ... DL_CRC_FLIT
  nvlink_crc_data,   // ... DL_CRC_DATA
  pcie_replays,      // nvmlDeviceGetPcieReplayCounter
  ecc_corrected,     // nvmlDeviceGetTotalEccErrors(CORRECTED, VOLATILE)
  ecc_uncorrected,   // nvmlDeviceGetTotalEccErrors(UNCORRECTED, VOLATILE)
  xid_events,        // critical XID events seen since the source opened (nvmlEventSet...)
  energy_mj,         // nvmlDeviceGetTotalEnergyConsumption: millijoules since the driver loaded (Volta on)
};
inline constexpr Query kAllQueries[] = {
    Query::temperature_c,    Query::power_mw,        Query::power_limit_mw,  Query::sm_clock_mhz,  Query::mem_clock_mhz,
    Query::throttle_reasons, Query::gpu_util_pct,    Query::mem_util_pct,    Query::nvlink_active, Query::nvlink_replay,
    Query::nvlink_recovery,  Query::nvlink_crc_flit, Query::nvlink_crc_data, Query::pcie_replays,  Query::ecc_corrected,
    Query::ecc_uncorrected,  Query::xid_events,      Query::energy_mj};
std::string_view query_name(Query q);                     // "temperature_c", ...
std::optional<Query> parse_query(std::string_view name);  // nullopt for an unknown name
bool is_nvlink_query(Query q);                            // takes a link number

// NVML_NVLINK_MAX_LINKS of current drivers (18 on Hopper and Blackwell).
inline constexpr unsigned kMaxNvLinks = 18;

// A value, or why there is none.
struct Answer {
  std::optional<std::uint64_t> value;
  std::string why_not;  // empty when value is set
};

struct GpuInfo {
  unsigned index = 0;  // NVML's index
  std::string name;    // "NVIDIA H200"
  std::string uuid;    // "GPU-..." ("" if not read)
};

class GpuSource {
 public:
  virtual ~GpuSource() = default;
  // Why no GPU can be read at all ("libnvidia-ml.so.1 not found (no NVIDIA driver)"), or "".
  virtual std::string unavailable() const = 0;
  virtual std::string driver_version() const = 0;  // "" if not known
  virtual std::vector<GpuInfo> gpus() const = 0;   // empty when unavailable
  // One query of GPU `gpu` (a position in gpus()); `link` for the NVLink queries. Safe to call
  // from the sampling thread and the main thread at once. Never throws.
  virtual Answer read(unsigned gpu, Query q, unsigned link = 0) = 0;
};

}  // namespace ccbench::telemetry
