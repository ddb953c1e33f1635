#pragma once
// Everything the command line of `ccbench run` sets, validated (harness/cli.h).
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collectives/implementation.h"
#include "collectives/types.h"
#include "harness/fault.h"
#include "harness/sizes.h"
#include "telemetry/options.h"

namespace ccbench {

enum class DeviceChoice { auto_detect, cpu, gpu };
enum class InPlaceChoice { no, yes, both };

struct RunOptions {
  SweepSpec sweep{8, 0, 2.0, 0};  // max_bytes 0: chosen from memory and device (see runner)
  bool max_given = false;
  int iterations = 20;             // -n
  int warmup = 5;                  // -w
  bool check = true;               // -c
  int graph_launches = 0;          // -G: 0 = eager only
  int root = 0;                    // -r
  std::vector<Collective> collectives{Collective::allreduce, Collective::allgather};
  std::vector<DataType> dtypes{DataType::float32};
  std::vector<ReduceOp> ops{ReduceOp::sum};
  std::vector<std::string> impls{"default"};  // default: GPU nccl,ring,tree,best; CPU mpi,ring,tree
  DeviceChoice device = DeviceChoice::auto_detect;
  std::string transport = "auto";
  InPlaceChoice in_place = InPlaceChoice::both;
  bool share_gpus = false;         // allow several ranks on one GPU
  std::string out_dir;             // empty: ./ccbench-results/<UTC time>-<host>
  bool no_files = false;           // --out none: table only
  std::vector<std::string> formats{"table", "csv", "json", "md"};
  std::uint64_t seed = 0x5eed;
  std::chrono::milliseconds timeout{std::chrono::seconds(120)};
  int cycles = 1;                  // 0 = until stopped
  std::string baseline;            // impl the summary compares against (default nccl or mpi)
  std::string command_line;        // as typed, for the context block
  std::optional<FaultSpec> fault;  // CCBENCH_FAULT (tests only)
  telemetry::Options telemetry;    // --telemetry, --telemetry-interval, --temp-limit, --fail-on-health, ...
};

}  // namespace ccbench
