#include "telemetry/gpu_source.h"

namespace ccbench::telemetry {

std::string_view query_name(Query q) {
  switch (q) {
    case Query::temperature_c: return "temperature_c";
    case Query::power_mw: return "power_mw";
    case Query::power_limit_mw: return "power_limit_mw";
    case Query::sm_clock_mhz: return "sm_clock_mhz";
    case Query::mem_clock_mhz: return "mem_clock_mhz";
    case Query::throttle_reasons: return "throttle_reasons";
    case Query::gpu_util_pct: return "gpu_util_pct";
    case Query::mem_util_pct: return "mem_util_pct";
    case Query::nvlink_active: return "nvlink_active";
    case Query::nvlink_replay: return "nvlink_replay";
    case Query::nvlink_recovery: return "nvlink_recovery";
    case Query::nvlink_crc_flit: return "nvlink_crc_flit";
    case Query::nvlink_crc_data: return "nvlink_crc_data";
    case Query::pcie_replays: return "pcie_replays";
    case Query::ecc_corrected: return "ecc_corrected";
    case Query::ecc_uncorrected: return "ecc_uncorrected";
    case Query::xid_events: return "xid_events";
    case Query::energy_mj: return "energy_mj";
  }
  return "?";
}

std::optional<Query> parse_query(std::string_view name) {
  for (Query q : kAllQueries)
    if (query_name(q) == name) return q;
  return std::nullopt;
}

bool is_nvlink_query(Query q) {
  return q == Query::nvlink_active || q == Query::nvlink_replay || q == Query::nvlink_recovery ||
         q == Query::nvlink_crc_flit || q == Query::nvlink_crc_data;
}

}  // namespace ccbench::telemetry
