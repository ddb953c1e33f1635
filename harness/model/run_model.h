#pragma once
// `ccbench run --model TOPOLOGY`: each measured row next to what the performance model
// (harness/model/model.h) predicts for it. The topology file (or preset) describes one kind of
// node and its links; every row is predicted on that node kind scaled to the row's own shape
// (its nodes x ranks per node, so sub-group rows and emulated nodes are predicted as they ran).
//
// The row's model columns (results/record.h): predicted_time_us, predicted_busbw_gbps and
// model_efficiency (measured busbw / predicted busbw), empty with model_reason where the row has
// no prediction (an implementation or collective the model does not know, uneven nodes, nodes
// without NICs). Implementations map to the model's schedules as the registry's support matrix
// says (collectives/implementations.def, `ccbench list --json`): by name for most; CPU hier,
// whose scheme is the leader one, maps to hier-leader; nccl is predicted as the faster of
// nccl-ring and nccl-tree, as NCCL's own tuner picks.
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
// The prediction for one row (its collective, impl, transport, algorithm, device, bytes,
// in_place, nodes, ranks_per_node, ranks), whatever its status.
RowPrediction predict_row(const RunModel& model, const RunRecord& row, const std::vector<LinkCeiling>& ceilings);

// Why no GPU row of a run can be predicted, from its context's ranks_detail: two ranks share a
// GPU (--share-gpus), their kernels time-slice it, which the model does not describe; "" when
// every rank has its own.
std::string shared_gpu_reason(const Json& context);

// A row's model columns: the prediction of a measured row (status ok), else empty with the
// reason ("not measured"; `shared_gpu` for GPU rows when not "").
void set_model_columns(RunRecord& row, const RunModel& model, const std::vector<LinkCeiling>& ceilings,
                       const std::string& shared_gpu);

// What the model columns were computed with, for the run's context ("model"): the topology, its
// file, how rows were scaled, whether the links were calibrated by measured ceilings, the kernels.
Json model_context(const RunModel& model, bool calibrated);

// The report printed after the table: per collective and implementation (in the rows' order),
// the median of model_efficiency and its range over the rows, or why there is no prediction.
std::string model_report(const RunModel& model, const std::vector<RunRecord>& rows);

}  // namespace ccbench
