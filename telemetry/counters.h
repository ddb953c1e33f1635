#pragma once
// The counters that only grow, read every counter interval on a node: NVLink errors per link,
// PCIe replays, ECC, XID events (from a GpuSource), and NIC port counters from sysfs
// (<dir>/<device>/ports/<port>/counters/<name>, dir = /sys/class/infiniband on a real node).
// A snapshot is a list of readings; the delta of two snapshots is computed reading by reading,
// and a reading missing on either side, or one that went backwards (a driver reload, a counter
// that wrapped), has no delta and says why.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "results/health.h"
#include "telemetry/gpu_source.h"

namespace ccbench::telemetry {

// Which RowHealth figure a counter adds to; traffic counters (NIC data) add to none.
enum class CounterKind { nvlink, pcie_replay, ecc_corrected, ecc_uncorrected, xid, nic_error, nic_traffic };

struct Reading {
  std::string where;  // "GPU 0 (NVIDIA H200) NVLink 3", "NIC mlx5_0 port 1"
  std::string what;   // "replay errors", "symbol_error", "port_xmit_data"
  CounterKind kind = CounterKind::nvlink;
  std::optional<std::uint64_t> value;
  std::string why_not;
  std::string device;  // the GPU or NIC port: `where` without the link ("GPU 0 (NVIDIA H200)")
};
using Snapshot = std::vector<Reading>;

struct Delta {
  std::string where, what;
  CounterKind kind = CounterKind::nvlink;
  std::optional<std::uint64_t> growth;
  std::string why_not;
  std::string device;  // as in Reading
};

// The NIC port counters read (the names of the sysfs files).
inline constexpr const char* kNicErrorCounters[] = {"symbol_error", "link_downed", "port_rcv_errors"};
inline constexpr const char* kNicTrafficCounters[] = {"port_xmit_data", "port_rcv_data"};  // in units of 4 bytes

// What is read on this node: the GPUs' active NVLink links (found once) and the NIC ports.
struct CounterPlan {
  struct Gpu {
    unsigned position = 0;  // in GpuSource::gpus()
    std::string label;      // "GPU 0 (NVIDIA H200)"
    std::vector<unsigned> links;
  };
  std::vector<Gpu> gpus;
  std::string nic_dir;
  std::vector<std::string> nic_ports;  // "mlx5_0/1": <dir>/mlx5_0/ports/1
  std::string nic_unavailable;         // why no NIC port is read ("" if some are)
};
// Finds the active links of every GPU of `source` and the ports under `nic_dir`.
CounterPlan plan_counters(GpuSource& source, const std::string& nic_dir);

// Reads every counter of `plan`.
Snapshot read_counters(GpuSource& source, const CounterPlan& plan);

// after - before, reading by reading (matched by where and what).
std::vector<Delta> counter_deltas(const Snapshot& before, const Snapshot& after);

// Adds the deltas to the counter figures of `h`: a figure is set when at least one of its
// counters has a delta, and then holds their sum.
void add_deltas(RowHealth& h, const std::vector<Delta>& deltas);

}  // namespace ccbench::telemetry
