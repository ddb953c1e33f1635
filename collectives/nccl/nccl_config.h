#pragma once
// Per-communicator NCCL settings swept in one launch (`ccbench run --nccl-config KEY=V1,V2,...`):
// every combination of the given values is one NCCL communicator, whose rows carry the
// combination in their `nccl_config` column. Pure (no NCCL needed to parse).
//
// Which settings can change inside one process (checked in NCCL's source, master of 2026-11):
//   - ncclConfig_t fields, per communicator by API (src/nccl.h.in): minCTAs, maxCTAs,
//     cgaClusterSize, CTAPolicy, netName, trafficClass. Their environment variables override
//     them (src/init.cc, parseCommConfig: NCCL_MIN_CTAS, NCCL_MAX_CTAS and NCCL_CGA_CLUSTER_SIZE
//     are NCCL_PARAMs, cached per process; NCCL_CTA_POLICY is read once; NCCL_NET replaces
//     netName), so a key whose variable is set is refused with that reason;
//   - NCCL_ALGO and NCCL_PROTO, read at each communicator's tuning (src/graph/tuning.cc,
//     ncclTopoTuneModel: ncclGetEnv into its algoEnable/protoEnable tables; enqueue.cc reads them
//     again only for an error message and the CTA-efficiency policy), so ccbench sets them
//     around that communicator's creation alone.
// Settings NCCL reads once per process (NCCL_PARAM's static cache, src/include/param.h, such as
// NCCL_SHM_DISABLE; NCCL_P2P_DISABLE / NCCL_P2P_LEVEL in src/graph/paths.cc; NCCL_NET in
// src/init.cc; NCCL_HOSTID in src/misc/utils.cc) need a launch each: scripts/tune.py does that.
#include <optional>
#include <string>
#include <vector>

namespace ccbench {

// The value that leaves a key as NCCL has it (unset), so that a sweep can hold the default too.
inline constexpr const char* kNcclDefault = "default";

struct NcclSetting {
  std::string key;    // a name of nccl_config_keys()
  std::string value;  // as typed (CTAPolicy: a name or its number), or kNcclDefault
  bool is_default() const { return value == kNcclDefault; }
};

// One combination: what one communicator is created with.
struct NcclConfig {
  std::vector<NcclSetting> settings;  // in the order the keys were given
  // "maxCTAs=4;NCCL_ALGO=Ring" (';' between settings, so that the CSV cell needs no quotes): the
  // rows' nccl_config column.
  std::string label() const;
};

// The keys --nccl-config takes, and whether each is an environment variable set around the
// communicator's creation (NCCL_ALGO, NCCL_PROTO) rather than an ncclConfig_t field.
struct NcclConfigKey {
  const char* name;
  bool environment;
  const char* meaning;        // for messages: what a value is
  const char* overridden_by;  // the variable NCCL lets override the field, or nullptr
  // Whole-number keys: the values NCCL takes without clamping them (with a warning) or refusing
  // the communicator; lo > hi for the others.
  int lo = 1, hi = 0;
};
const std::vector<NcclConfigKey>& nccl_config_keys();
// What --nccl-config takes, for its help and the reference: "KEY=V1,V2,... with KEY one of ...".
std::string nccl_config_valid();

// The combinations of `axes` (each "KEY=V1,V2,..."): the cartesian product, in the order given
// (the last key varies fastest). Throws Error(usage) naming the axis for an unknown key (with
// the valid ones), a key given twice, an empty or bad value (the whole-number keys within their
// range; CTAPolicy: default, efficiency, zero or 0-2; any key: default), or more than
// kMaxNcclConfigs combinations.
std::vector<NcclConfig> nccl_config_combinations(const std::vector<std::string>& axes);
inline constexpr std::size_t kMaxNcclConfigs = 64;  // communicators in one launch: each holds GPU memory

// Why NCCL would not run combination `c` as labelled (minCTAs above maxCTAs: NCCL changes one
// of them), or nullopt. Such a combination's rows are skipped with this reason rather than the
// whole sweep refused: a sweep of both keys holds such pairs naturally.
std::optional<std::string> nccl_config_conflict(const NcclConfig& c);

// CTAPolicy's number for a value nccl_config_combinations accepted.
int nccl_cta_policy(const std::string& value);

}  // namespace ccbench
