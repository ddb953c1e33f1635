#pragma once
// The health sampler of a run. The first rank on each host samples its node: a background
// thread reads every GPU's temperature, power and limit, SM and memory clocks, clock-throttle
// reasons and utilisation every interval, sleeping in between, besides one read at the start and
// one at the end of the run (so the series brackets every run); a second one reads the counters
// that only grow (NVLink, PCIe, ECC, XID, NIC ports) at the start, every counter interval and
// at the end of the run (counter_watch.h). The other ranks only take part in the gathers below.
//
// Overhead by design: two threads per node, asleep between reads; the timed loop touches
// nothing of the sampler (no call, no lock); begin_row/end_row take a timestamp and the latest
// counter read (a pointer copy) and never wait for NVML; a row's figures travel to rank 0 in the
// gather the runner already does between sizes.
//
// A row's counter growth is the growth between the last counter read before the size began and
// the last one that ended before it ended (none when no read ended in between). Warnings: each
// error counter once per run at its first growth, with the run's totals at the end; each
// throttle reason and the temperature limit once per run and GPU.
//
// Thread: every member is called from the main thread. begin_row/end_row/finish bracket the
// measurement of one size; end_row and finish are collective (every rank calls them, in the
// same order), begin_row is not.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "results/health_checks.h"
#include "results/record.h"
#include "telemetry/gpu_source.h"
#include "telemetry/options.h"

namespace ccbench::telemetry {

// Every rank's text on rank 0, in rank order (other ranks get an empty vector). Collective.
using Gather = std::function<std::vector<std::string>(const std::string&)>;

struct Sources {
  std::unique_ptr<GpuSource> gpu;
  std::string nic_dir;
};
// The sources of a sampling rank: NVML (or the answers in CCBENCH_TELEMETRY_NVML_REPLAY),
// recorded to `record_path` when given; NIC counters under CCBENCH_TELEMETRY_IB_DIR or
// /sys/class/infiniband. Throws Error(usage) for a replay file that cannot be read.
Sources open_sources(const std::string& record_path);
// The GPU source alone: NVML, or the answers in CCBENCH_TELEMETRY_NVML_REPLAY (the energy
// counter reads it too). Throws Error(usage) for a replay file that cannot be read.
std::unique_ptr<GpuSource> open_gpu_source();

struct Role {
  bool samples = false;  // this rank samples its node
  bool root = false;     // rank 0: merges, warns, writes the series
  std::string host;
};
// The first rank of every host samples it.
bool samples_its_host(int rank, const std::vector<std::string>& host_of);

class Sampler {
 public:
  // Collective (gathers each node's description for the context). `sources` are used only
  // where role.samples; `series_path` (root) is the time-series file, "" for none.
  Sampler(const Options& options, Role role, Sources sources, Gather gather, std::string series_path);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Root: the context block's "telemetry" part (what is sampled where, what is not available
  // and why, the series file).
  const Json& context() const;
  // Root: whether the series file is written (not when no node can read a GPU or a NIC).
  bool writes_series() const;
  // Before a size is measured: marks its start (sampling ranks); reads nothing.
  void begin_row();
  // After it: collective. Rank 0 returns the figures of every node merged, prints a warning
  // naming host, GPU and link for each new throttle reason, temperature at or over the limit
  // and first growth of an error counter, and appends the samples to the series; other ranks
  // return {}.
  // `label` names the row in warnings ("allreduce/nccl float sum 64 MiB out-of-place").
  RowHealth end_row(const std::string& label);
  // At the end of the sweep: collective; stops sampling, reads the counters a last time, writes
  // the last samples and the run summary (root), warns once about the run's total counter
  // growth, prints the summary with the checks.
  void finish();
  // Root, after finish(): the whole run's figures, and the checks on them.
  const RowHealth& run_health() const;
  std::vector<HealthCheck> run_checks() const;
  // Root, after finish(): {"figures": {...health columns, power_sum_w, power_samples},
  // "checks": [{"check", "state", "detail"}], "warnings": N, "counters_grown": [{"host",
  // "where", "what", "growth"}]}; null elsewhere or when off.
  Json summary() const;
  // Root, after finish(): whether --fail-on-health turns this run into exit code 4.
  bool fails_health() const;

 private:
  struct Node;
  struct Root;
  void print_health() const;
  Options options_;
  Role role_;
  Gather gather_;
  std::unique_ptr<Node> node_;  // sampling ranks
  std::unique_ptr<Root> root_;  // rank 0
  bool finished_ = false;
};

}  // namespace ccbench::telemetry
