#pragma once
// `ccbench run --model TOPOLOGY`: each measured row next to what the performance model
// (harness/model/model.h) predicts for it. The topology file (or preset) describes one kind of
// node and its links; every row is predicted on that node kind scaled to the row's own shape
// (its nodes x ranks per node, so sub-group rows and emulated nodes are predicted as they ran).
//
// Per row, in run.json: predicted_time_us, predicted_busbw_gbps and model_efficiency (measured
// busbw / predicted busbw), null with model_reason where the row has no prediction (an
// implementation or collective the model does not know, uneven nodes, nodes without NICs).
// Implementations map to the model's algorithms by name (ring, tree, hier, oneshot, twoshot): GPU
// hier is the model's two-level hier, CPU hier, whose scheme is the leader one, maps to hier-leader;
// nccl is predicted as the faster of nccl-ring and nccl-tree, as NCCL's own tuner picks.
//
// Calibration: with link ceilings (--ceilings links.json or --measure-ceilings), a row inside one
// node is predicted with its own path's measured ceiling (harness/links/links.h) as the ranks' link
// instead of the file's figure, and a row across nodes with it as one NIC per node (emulated nodes
// on one host, joined by tcp or the GPU net transport, get their NIC this way);
// model_link_gbps says which figure the row was predicted with (across nodes: the NIC's).
#include <optional>
#include <string>

#include "results/links.h"
#include "results/record.h"  // Json
#include "topologies/system.h"

namespace ccbench {

struct RunModel {
  SystemTopology system;
  std::string source;  // the file read (a preset resolves to its path)
};

// Reads the topology before MPI starts. Throws Error(usage) for no such file or preset, or a
// malformed file (file, line and what is expected).
RunModel load_run_model(const std::string& name_or_path);

struct RowPrediction {
  std::optional<double> time_us, busbw_gbps;
  std::optional<double> link_gbps;  // the ranks' link (across nodes: the NIC) it was predicted with
  bool calibrated = false;          // that figure is a measured ceiling
  std::string reason;               // why there is none
};
// The prediction for one run.json row (collective, impl, transport, device, bytes, nodes,
// ranks_per_node, ranks).
RowPrediction predict_row(const RunModel& model, const Json& row, const std::vector<LinkCeiling>& ceilings);

// Rank 0, after the run: adds the prediction columns to every row of run.json and a "model"
// block naming the topology; returns the report printed after the table (one line per
// collective and implementation: median efficiency and its range over the rows). GPU rows of a
// run where two ranks share a GPU (its context's ranks_detail) get no prediction, with that reason.
std::string add_model_to_run_json(const std::string& path, const RunModel& model,
                                  const std::vector<LinkCeiling>& ceilings);

}  // namespace ccbench
