#include "harness/app/model.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "results/csv_reader.h"
#include "core/error.h"
#include "topologies/discovery.h"
#include "harness/model/acceptance_plan.h"
#include "harness/model/model.h"
#include "topologies/system.h"

namespace ccbench {

namespace {

namespace fs = std::filesystem;

// Paper figures for a node described by discovery alone (calibrate with measured ones): an NVLink 4
// link carries 26.56 GB/s per direction (NV18 = 478 GB/s); a PCIe Gen5 x16 slot 63 GB/s raw, of
// which NCCL plans with 48; an NDR InfiniBand port 50 GB/s.
constexpr double kNvlinkGbpsPerLink = 26.56;
constexpr double kPcieGbps = 48;
constexpr double kNicGbps = 50;
constexpr double kNvlinkLatencyUs = 2.5;
constexpr double kPcieLatencyUs = 5;
constexpr double kNicLatencyUs = 2;

SystemTopology topology_from_discovery(const nlohmann::ordered_json& node) {
  SystemTopology t;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  t.name = host;
  const auto& gpus = node["gpus"];
  if (gpus.value("available", false) && !gpus["gpus"].empty()) {
    t.node.ranks = static_cast<int>(gpus["gpus"].size());
    int links = 0;
    for (const auto& g : gpus["gpus"]) links = std::max(links, g.value("nvlinks_active", 0));
    if (links > 0) {
      t.node.fabric = t.node.ranks <= 2 ? IntraFabric::nvlink_mesh : IntraFabric::nvswitch;
      t.node.gpu_link = {links * kNvlinkGbpsPerLink, kNvlinkLatencyUs};
    } else {
      t.node.fabric = IntraFabric::pcie;
      t.node.gpus_per_switch = t.node.ranks;
      t.node.gpu_link = {kPcieGbps, kPcieLatencyUs};
    }
    t.description = fmt::format("discovered: {} x {}, paper link figures", t.node.ranks,
                                gpus["gpus"][0].value("name", std::string("GPU")));
  } else {
    t.node.ranks = node["cpu"].value("cores", 1);
    t.node.fabric = IntraFabric::host;
    t.node.gpu_link = {kPcieGbps, kPcieLatencyUs};
    t.description = "discovered: CPU ranks only (one per core); link figure is a placeholder: calibrate it";
  }
  const auto& rdma = node["rdma"];
  if (rdma.value("available", false))
    for (const auto& d : rdma["devices"])
      for (const auto& p : d.value("ports", nlohmann::ordered_json::array()))
        if (p.value("state", std::string()) == "PORT_ACTIVE") ++t.node.nics;
  if (t.node.nics > 0) t.node.nic = {kNicGbps, kNicLatencyUs};
  return t;
}

void print_predictions(const ModelRequest& req, const SystemTopology& t, const std::vector<std::uint64_t>& sizes) {
  const std::vector<std::string>& algos = req.algorithms.empty() ? model_algorithms() : req.algorithms;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  if (req.format == "csv")
    fmt::print("{}", csv_line({"topology", "collective", "algorithm", "ranks", "size[B]", "time[us]", "algbw[GB/s]",
                               "busbw[GB/s]", "reason"}));
  for (Collective coll : req.collectives) {
    std::vector<CollectiveModel> models;
    for (const std::string& a : algos) models.emplace_back(t, coll, a);
    if (req.format == "table") {
      fmt::print("# model: {} ({} node(s) x {} ranks, {} {} GB/s{}), {}, {} ranks\n", t.name, t.nodes, t.node.ranks,
                 name(t.node.fabric), t.node.gpu_link.bandwidth_gbps,
                 t.node.nics ? fmt::format(", {} NICs x {} GB/s", t.node.nics, t.node.nic.bandwidth_gbps) : "",
                 name(coll), t.ranks());
      fmt::print("# {:>12}", "size");
      for (const std::string& a : algos) fmt::print("  {:>10} {:>9}", a + " us", "busbw");
      fmt::print("\n");
    }
    for (std::uint64_t bytes : sizes) {
      if (req.format == "table") fmt::print("  {:>12}", format_size(bytes));
      for (size_t i = 0; i < algos.size(); ++i) {
        const Prediction p = models[i].predict(bytes);
        if (req.format == "table") {
          if (p.unsupported.empty()) fmt::print("  {:>10.2f} {:>9.2f}", p.time_us, p.busbw_gbps);
          else fmt::print("  {:>10} {:>9}", "-", "-");
        } else if (req.format == "csv") {
          fmt::print("{}", csv_line({t.name, std::string(name(coll)), algos[i], std::to_string(t.ranks()),
                                     std::to_string(bytes), fmt::format("{:.3f}", p.time_us),
                                     fmt::format("{:.3f}", p.algbw_gbps), fmt::format("{:.3f}", p.busbw_gbps),
                                     p.unsupported}));
        } else {
          nlohmann::ordered_json r = {
              {"collective", name(coll)}, {"algorithm", algos[i]}, {"ranks", t.ranks()}, {"size", bytes}};
          if (p.unsupported.empty()) {
            r["time_us"] = p.time_us;
            r["algbw_gbps"] = p.algbw_gbps;
            r["busbw_gbps"] = p.busbw_gbps;
          } else {
            r["unsupported"] = p.unsupported;
          }
          rows.push_back(r);
        }
      }
      if (req.format == "table") fmt::print("\n");
    }
    if (req.format == "table")
      for (size_t i = 0; i < algos.size(); ++i)
        if (auto why = models[i].predict(sizes.front()).unsupported; !why.empty())
          fmt::print("# {}: {}\n", algos[i], why);
  }
  if (req.format == "json")
    fmt::print("{}\n", nlohmann::ordered_json{{"topology", t.name}, {"ranks", t.ranks()}, {"rows", rows}}.dump(2));
}

// --acceptance: the phases of accepting the fleet and their wall times (table or JSON).
void print_acceptance(const ModelRequest& req, const SystemTopology& t, const std::vector<std::uint64_t>& sizes) {
  AcceptanceRequest a;
  a.collective = req.collectives.front();
  a.algorithm = req.algorithms.empty() ? name(ModelSchedule::ring) : req.algorithms.front();
  a.sizes = sizes;
  a.warmup = req.warmup;
  a.iterations = req.iterations;
  a.step_setup_s = req.step_setup_s;
  const AcceptanceEstimate e = estimate_acceptance(t, a);
  if (req.format == "json") {
    nlohmann::ordered_json phases = nlohmann::ordered_json::array();
    for (const AcceptancePhase& p : e.phases)
      phases.push_back({{"phase", p.name},
                        {"steps", p.steps},
                        {"groups_per_step", p.groups_per_step},
                        {"seconds", p.seconds},
                        {"note", p.note}});
    fmt::print("{}\n", nlohmann::ordered_json{{"topology", t.name},
                                              {"nodes", t.nodes},
                                              {"collective", name(a.collective)},
                                              {"algorithm", a.algorithm},
                                              {"step_setup_s", a.step_setup_s},
                                              {"phases", phases},
                                              {"sequence_seconds", e.sequence_seconds},
                                              {"serial_sequence_seconds", e.serial_sequence_seconds}}
                           .dump(2));
    return;
  }
  fmt::print(
      "# acceptance of {} nodes of {} ({} ranks each): {} {}, {} size{} from {} to {}, {} warm-up + 2 x {} timed "
      "calls per size, {} s set-up per step\n",
      t.nodes, t.name, t.node.ranks, name(a.collective), a.algorithm, sizes.size(), sizes.size() == 1 ? "" : "s",
      format_size(sizes.front()), format_size(sizes.back()), a.warmup, a.iterations, a.step_setup_s);
  fmt::print("# {:<26} {:>10} {:>12} {:>12}  {}\n", "phase", "steps", "at a time", "wall time", "");
  for (const AcceptancePhase& p : e.phases)
    fmt::print("  {:<26} {:>10} {:>12} {:>12}  {}\n", p.name, p.steps, p.groups_per_step, human_duration(p.seconds),
               p.note);
  fmt::print("# sequence (whole job, pairs in rounds, culprit search): {}; with pairs one at a time: {}\n",
             human_duration(e.sequence_seconds), human_duration(e.serial_sequence_seconds));
}

}  // namespace

int run_model(const ModelRequest& req) {
  SystemTopology t = load_topology(resolve_topology_path(req.topology));
  if (req.nodes > 0) {
    if (req.nodes > 1 && t.node.nics == 0)
      fail(ExitCode::usage, "--nodes {}: topology {} describes no NICs, so its nodes cannot be joined", req.nodes,
           t.name);
    t.nodes = req.nodes;
  }
  if (req.acceptance) {
    if (req.format == "csv")
      fail(ExitCode::usage, "model --acceptance: --format table or json (csv holds predictions)");
    print_acceptance(req, t, sweep_sizes(req.sweep));
    return 0;
  }
  print_predictions(req, t, sweep_sizes(req.sweep));
  return 0;
}

int dump_local_topology(const std::string& path) {
  const std::string yaml =
      "# Written by ccbench topo --dump: the node as discovery sees it. Link figures are\n"
      "# paper values: replace them with measured ones (ccbench links) for predictions.\n" +
      dump_topology(topology_from_discovery(discover_node()));
  if (path == "-") {
    fmt::print("{}", yaml);
    return 0;
  }
  std::ofstream out(path);
  if (!out || !(out << yaml)) fail(ExitCode::usage, "topo --dump {}: cannot write the file", path);
  fmt::print("topology written to {}\n", path);
  return 0;
}

}  // namespace ccbench
