#pragma once
// Everything the command line of `ccbench run` sets, validated (harness/app/cli.h).
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collectives/implementation.h"
#include "collectives/types.h"
#include "harness/engine/fault.h"
#include "harness/engine/overlap_spec.h"
#include "harness/engine/sizes.h"
#include "results/accept.h"
#include "telemetry/options.h"
#include "transports/ib/ib_logic.h"
#include "transports/ofi/ofi_logic.h"

namespace ccbench {

enum class DeviceChoice { auto_detect, cpu, gpu };
enum class InPlaceChoice { no, yes, both };
// Which rank's time a measurement reports (-a, numbered as in nccl-tests): rank 0's, the mean,
// the fastest or the slowest rank's. ccbench reports the slowest rank by default: a collective
// is done when its last rank is.
enum class RankTime { rank0 = 0, average = 1, min = 2, max = 3 };

// -m: at most this many collectives per iteration. nccl-tests has no bound; this one keeps a slip
// of the finger (-m 100000) from multiplying a run's length and a CUDA graph's size (-G captures
// -n x -m collectives) by that much.
constexpr int kMaxAggIters = 1024;

struct RunOptions {
  SweepSpec sweep{8, 0, 2.0, 0};  // max_bytes 0: chosen from memory and device (see runner)
  bool max_given = false;
  int iterations = 20;                 // -n
  int warmup = 5;                      // -w
  int agg_iters = 1;                   // -m: collectives issued back to back per iteration (times are per collective)
  bool check = true;                   // -c
  RankTime rank_time = RankTime::max;  // -a
  int misalign = 0;                    // -u: send and receive buffers start this many elements late
  int graph_launches = 0;              // -G: 0 = eager only
  int root = 0;                        // -r
  std::vector<Collective> collectives{Collective::allreduce, Collective::allgather};
  std::vector<DataType> dtypes{DataType::float32};
  std::vector<ReduceOp> ops{ReduceOp::sum};
  std::vector<std::string> impls{"default"};  // default: GPU nccl,ring,tree,best; CPU mpi,ring,tree
  DeviceChoice device = DeviceChoice::auto_detect;
  std::string transport = "auto";
  IbOptions ib;    // --ib-*, --gpudirect: the ib transport of CPU and GPU ranks
  OfiOptions ofi;  // --ofi-*: the ofi transport of CPU and GPU ranks
  InPlaceChoice in_place = InPlaceChoice::both;
  bool share_gpus = false;                                        // allow several ranks on one GPU
  RingOrderChoice ring_order;                                     // --ring-order (topologies/ring_order.h)
  schedule::TreeShape tree = schedule::TreeShape::double_binary;  // --tree
  int emulate_nodes = 1;   // --emulate-nodes: emulated nodes per node (topologies/layout.h)
  std::string out_dir;     // empty: ./ccbench-results/<UTC time>-<host>
  bool no_files = false;   // --out none: table only
  bool overwrite = false;  // --overwrite: replace an earlier run's files in --out
  std::vector<std::string> formats{"table", "csv", "json", "md"};
  std::uint64_t seed = 0x5eed;
  InputPattern pattern = InputPattern::integer;  // --pattern (collectives/verifiable.h)
  std::chrono::milliseconds timeout{std::chrono::seconds(120)};
  int cycles = 1;                  // 0 = until stopped
  std::string baseline;            // impl the summary compares against (default nccl or mpi)
  std::string command_line;        // as typed, for the context block
  std::optional<FaultSpec> fault;  // CCBENCH_FAULT (tests only)
  bool nccl_symmetric = false;     // -R 2: nccl-symm stands in for nccl (default list, baseline)
  std::string json_file;           // -J: run.json also written here ("" = not)
  double min_busbw_gbps = 0;       // NCCL_TESTS_MIN_BW (0 = no threshold)
  bool quiet = false;              // --quiet: no progress line
  double progress_interval_s = 5;  // --progress-interval: seconds between lines when not a terminal
  // What nccl-tests flags given on the command line do here, and options that change nothing in
  // this run: for the start-up block and run.json's context.notes.
  std::vector<std::string> notes;
  // The options given that act on GPU ranks only ("-G 5", "--share-gpus"): refused with --device
  // cpu; where --device auto finds CPU ranks, a note says they change nothing.
  std::vector<std::string> gpu_only;
  // Found at start-up (harness/engine/startup.h gather_oversubscription): "4 ranks on 2 hardware threads
  // (host vm)", or "" where no host has more ranks than threads.
  std::string oversubscribed;
  std::vector<Rule> accept_rules;        // --accept FILE and --min-busbw: checked on the rows at the end
  std::string history_db;                // --db FILE or CCBENCH_DB: the run is appended there at the end
  std::string metrics_file;              // --metrics FILE.prom: the run as Prometheus metrics (results/metrics.h)
  std::string ceilings_file;             // --ceilings: a links.json whose ceilings give run.json its efficiency
  std::string model_topology;            // --model: a topology file or preset; run.json rows get predictions
  bool measure_ceilings = false;         // --measure-ceilings: measure them first (harness/links/links.h)
  double straggler_threshold = 0.2;      // --straggler-threshold: name a rank this much behind the median rank
  std::string groups = "world";          // --groups: world, node, pairs, rails or a file (harness/groups/groups.h)
  bool serial = false;                   // --serial: one group at a time
  double group_outlier_threshold = 0.9;  // --group-outlier-threshold: flag groups below this of the median
  telemetry::Options telemetry;  // --telemetry, --telemetry-interval, --temp-limit, --fail-on-health, --energy ...
  // Training workloads: a compute load beside the collectives (--overlap, harness/overlap/overlap.h), and
  // one NCCL communicator per combination of per-communicator settings (--nccl-config,
  // collectives/nccl/nccl_config.h).
  OverlapSpec overlap;
  std::vector<NcclConfig> nccl_configs;
};

}  // namespace ccbench
