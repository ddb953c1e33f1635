#include "harness/model/run_model.h"

#include <map>
#include <regex>
#include <tuple>

#include <fmt/format.h>

#include "collectives/gpu/knobs.h"
#include "collectives/implementation.h"
#include "core/error.h"
#include "core/transport_names.h"
#include "topologies/system.h"
#include "results/stats.h"
#include "harness/model/model.h"

namespace ccbench {

namespace {

// How our GPU ring or tree ran a row, from its algorithm column ("ring 128ch", "double tree
// 2x32ch", "bruck 32blk": the blocks per ring, per tree, of Bruck), the FIFO slot of its
// transport (the defaults of collectives/gpu/knobs.h: CCBENCH_GPU_*SLOT_BYTES are not seen here)
// and the node's kernel figures (`kernels` of the topology file). Over net every block's FIFO is
// one tcp connection: a block moves at most its share of the tcp streams' ceiling measured over
// as many connections as the row drives (net_tcp_streams_label(); the ring's count is
// kNetTcpCeiling itself), else of the ring's. No kernel (the schedule alone) for other rows, or
// where the file describes no kernels.
KernelPipeline kernel_of(const RunRecord& row, const GpuKernelSpec& gpu, const std::vector<LinkCeiling>& ceilings) {
  KernelPipeline k;
  const auto impl = parse_impl_id(row.impl);
  if (row.device != name(Device::gpu) || (impl != ImplId::ring && impl != ImplId::tree) || !gpu.described()) return k;
  static const std::regex blocks(R"((?:^ring |^double (tree) 2x)(\d+)ch|^bruck (\d+)blk)");
  std::smatch m;
  if (!std::regex_search(row.algorithm, m, blocks)) return k;
  const bool bruck = m[3].matched, tree = m[1].matched;
  k.channels = std::stoi(bruck ? m[3].str() : m[2].str());
  const bool net = row.transport.rfind(name(Transport::net), 0) == 0;
  k.slot_bytes = bruck ? 0 : knob_default<double>(net ? Knob::gpu_net_slot_bytes : Knob::gpu_slot_bytes);
  k.block_gbps = gpu.block_gbps;
  if (net) {
    const int streams = tree ? 2 * k.channels : k.channels, ring_streams = gpu::net_streams().count;
    const auto own = path_ceiling_gbps(net_tcp_streams_label(streams), "gpu", ceilings);
    const auto ring = path_ceiling_gbps(kNetTcpCeiling, "gpu", ceilings);
    if (streams != ring_streams && own) k.block_gbps = std::min(k.block_gbps, *own / streams);
    else if (ring) k.block_gbps = std::min(k.block_gbps, *ring / ring_streams);
  }
  k.local_copy_gbps = gpu.local_copy_gbps;
  k.in_place = row.in_place;
  return k;
}

// The model's schedules the row's implementation on its device is predicted by (the registry's
// support matrix, collectives/implementations.def); empty: none.
std::vector<ModelSchedule> algorithms_of(const RunRecord& row) {
  const auto id = parse_impl_id(row.impl);
  if (!id) return {};
  for (Device d : {Device::cpu, Device::gpu})
    if (row.device == name(d))
      if (const ImplInfo* info = find_implementation(*id, d)) return info->model;
  return {};
}

// The node kind of the file, scaled to a row's shape. `nic_ceiling`: the row's measured path
// ceiling, which joins nodes whose kind describes no NICs (emulated nodes on one host).
std::optional<SystemTopology> scaled(const SystemTopology& t, int nodes, int ranks_per_node,
                                     std::optional<double> nic_ceiling, std::string* why) {
  if (ranks_per_node < 1) {
    *why = "no ranks per node in the row";
    return std::nullopt;
  }
  if (nodes > 1 && t.node.nics == 0 && !nic_ceiling) {
    *why = fmt::format(
        "topology {} describes no NICs, so its nodes cannot be joined (measured link ceilings "
        "would give each node one: --measure-ceilings or --ceilings)",
        t.name);
    return std::nullopt;
  }
  SystemTopology s = t;
  s.nodes = nodes;
  s.node.ranks = ranks_per_node;
  if (s.node.fabric == IntraFabric::pcie && s.node.gpus_per_switch > ranks_per_node)
    s.node.gpus_per_switch = ranks_per_node;
  return s;
}

// A measured pair ceiling as the ranks' link: in an NVLink mesh a rank's links are split over
// its peers, so the pair's figure is 1/(ranks-1) of the rank's.
void calibrate(SystemTopology& s, double pair_gbps) {
  const int peers = std::max(1, s.node.ranks - 1);
  s.node.gpu_link.bandwidth_gbps = s.node.fabric == IntraFabric::nvlink_mesh ? pair_gbps * peers : pair_gbps;
}

// Across nodes, the row's path ceiling (its lowest part: tcp, net/tcp; a pair measured alone, so
// one rank's NIC) as the bandwidth of every NIC; a node kind without NICs (emulated nodes on one
// host, joined by that path) gets one per node, with its link's latency.
void calibrate_nics(SystemTopology& s, double gbps) {
  if (s.node.nics == 0) {
    s.node.nics = 1;
    s.node.nic.latency_us = s.node.gpu_link.latency_us;
  }
  s.node.nic.bandwidth_gbps = gbps;
}

}  // namespace

RunModel load_run_model(const std::string& name_or_path) {
  RunModel m;
  m.source = resolve_topology_path(name_or_path, "--model");
  m.system = load_topology(m.source);
  return m;
}

RowPrediction predict_row(const RunModel& model, const RunRecord& row, const std::vector<LinkCeiling>& ceilings) {
  RowPrediction p;
  const std::vector<ModelSchedule> algos = algorithms_of(row);
  const auto coll = parse_collective(row.collective);
  if (algos.empty()) {
    p.reason = fmt::format("the model has no algorithm for impl {}", row.impl);
    return p;
  }
  if (!coll) {
    p.reason = "unknown collective";
    return p;
  }
  if (row.nodes * row.ranks_per_node != row.ranks) {
    p.reason = fmt::format("{} ranks on {} nodes: the model needs the same ranks on every node", row.ranks, row.nodes);
    return p;
  }
  const auto ceiling = path_ceiling_gbps(row.transport, row.device, ceilings);
  std::optional<SystemTopology> system = scaled(model.system, row.nodes, row.ranks_per_node, ceiling, &p.reason);
  if (!system) return p;
  if (ceiling) {
    if (row.nodes == 1) calibrate(*system, *ceiling);
    else calibrate_nics(*system, *ceiling);
    p.calibrated = true;
  }
  p.link_gbps = row.nodes == 1 ? system->node.gpu_link.bandwidth_gbps : system->node.nic.bandwidth_gbps;
  const KernelPipeline kernel = kernel_of(row, model.system.node.kernels, ceilings);
  for (ModelSchedule a : algos) {
    const Prediction pr = CollectiveModel(*system, *coll, a, kernel).predict(row.bytes);
    if (!pr.unsupported.empty()) {
      if (!p.time_us) p.reason = pr.unsupported;
      continue;
    }
    if (!p.time_us || pr.time_us < *p.time_us) {
      p.time_us = pr.time_us;
      p.busbw_gbps = pr.busbw_gbps;
      p.reason.clear();
    }
  }
  return p;
}

// Two ranks of the run on one GPU, from the context's ranks_detail ("ranks 0 and 2 share vm GPU
// 0: ..."). Their processes' kernels time-slice the GPU (4 ranks on 2 H200 as 2 emulated nodes
// ran at 0.11-0.27 of the prediction, h200x2-20261201-r18).
std::string shared_gpu_reason(const Json& context) {
  std::map<std::pair<std::string, std::string>, int> first;
  if (!context.contains("ranks_detail") || !context["ranks_detail"].is_array()) return "";
  for (const Json& r : context["ranks_detail"]) {
    const std::string device = r.value("device", "");
    if (device.rfind("GPU", 0) != 0) continue;
    const auto [it, fresh] = first.emplace(std::make_pair(r.value("host", ""), device), r.value("rank", -1));
    if (!fresh)
      return fmt::format(
          "ranks {} and {} share {} {} (--share-gpus): their kernels time-slice the GPU, which the "
          "model does not describe",
          it->second, r.value("rank", -1), r.value("host", ""), device.substr(0, device.find(" (")));
  }
  return "";
}

void set_model_columns(RunRecord& row, const RunModel& model, const std::vector<LinkCeiling>& ceilings,
                       const std::string& shared_gpu) {
  RowPrediction p;
  if (row.status != RowStatus::ok) p.reason = "not measured";
  else if (!shared_gpu.empty() && row.device == "gpu") p.reason = shared_gpu;
  else p = predict_row(model, row, ceilings);
  row.predicted_time_us = p.time_us;
  row.predicted_busbw_gbps = p.busbw_gbps;
  const bool has = p.busbw_gbps && *p.busbw_gbps > 0 && row.busbw_gbps > 0;
  row.model_efficiency = has ? std::optional(row.busbw_gbps / *p.busbw_gbps) : std::nullopt;
  row.model_link_gbps = p.link_gbps;
  row.model_link = !p.link_gbps ? "" : p.calibrated ? "measured ceiling" : "topology file";
  row.model_reason = p.reason;
}

Json model_context(const RunModel& model, bool calibrated) {
  return {{"topology", model.system.name},
          {"file", model.source},
          {"scaled", "the file's node kind, with each row's nodes and ranks per node"},
          {"calibrated", calibrated},
          {"kernels", model.system.node.kernels.described()
                          ? "GPU ring and tree rows as the kernels run them (node.kernels of the file)"
                          : "none in the file: GPU ring and tree rows by their schedules alone"},
          {"model_efficiency", "measured busbw / predicted busbw"}};
}

std::string model_report(const RunModel& model, const std::vector<RunRecord>& rows) {
  // (collective, impl) -> efficiencies, in first-seen order.
  std::vector<std::pair<std::string, std::string>> order;
  std::map<std::pair<std::string, std::string>, std::vector<double>> eff;
  std::map<std::pair<std::string, std::string>, std::string> reasons;
  for (const RunRecord& row : rows) {
    const auto key = std::make_pair(row.collective, row.impl);
    if (!eff.count(key)) order.push_back(key);
    auto& list = eff[key];
    if (row.model_efficiency) list.push_back(*row.model_efficiency);
    else if (!row.model_reason.empty()) reasons[key] = row.model_reason;
  }
  std::string report = fmt::format("# model {} ({}): measured busbw / predicted, per collective and implementation\n",
                                   model.system.name, model.source);
  for (const auto& key : order) {
    const auto& list = eff[key];
    if (list.empty()) {
      report += fmt::format("#   {} {}: no prediction ({})\n", key.first, key.second, reasons[key]);
      continue;
    }
    const TimeStats s = summarize(list);
    report += fmt::format("#   {} {}: efficiency {:.2f} median, {:.2f}-{:.2f} over {} rows\n", key.first, key.second,
                          s.median, s.min, s.max, list.size());
  }
  return report;
}

}  // namespace ccbench
