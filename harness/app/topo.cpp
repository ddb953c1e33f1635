#include "harness/app/topo.h"

#include <sched.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/text_file.h"
#include "harness/engine/context.h"
#include "harness/job/bootstrap.h"
#include "harness/results_dir.h"
#include "topologies/discovery.h"
#include "topologies/expect.h"
#include "transports/ofi/ofi_transport.h"

namespace ccbench {

namespace {

using Json = nlohmann::ordered_json;

// This process's CPU binding as a list ("0-15,32-47").
std::string cpu_binding() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return "?";
  std::string out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    int last = c;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) ++last;
    out += (out.empty() ? "" : ",") + (last == c ? std::to_string(c) : fmt::format("{}-{}", c, last));
    c = last;
  }
  return out;
}

// describe_this_node() and the libfabric providers and domains this host offers (listed here only:
// loading libfabric's providers takes a third of a second, too long for every run's context).
Json node_with_fabrics() {
  Json node = describe_this_node();
  node["ofi"] = ofi_discovery();
  return node;
}

// {"hosts": [{"host", "ranks": [{"rank", "cpus"}], "node": node_with_fabrics()}]} on rank 0.
Json gather_cluster(const RankLayout& layout) {
  const auto nodes = gather_strings(MPI_COMM_WORLD, layout.local_rank() == 0 ? node_with_fabrics().dump() : "");
  const auto bindings = gather_strings(MPI_COMM_WORLD, cpu_binding());
  Json hosts = Json::array();
  if (layout.rank != 0) return {{"hosts", hosts}};
  for (int node = 0; node < layout.nodes; ++node) {
    Json h = {{"host", ""}, {"ranks", Json::array()}};
    for (int r = 0; r < layout.nranks; ++r) {
      if (layout.node_of[static_cast<size_t>(r)] != node) continue;
      h["host"] = layout.host_of[static_cast<size_t>(r)];
      h["ranks"].push_back({{"rank", r}, {"cpus", bindings[static_cast<size_t>(r)]}});
      if (!nodes[static_cast<size_t>(r)].empty()) h["node"] = Json::parse(nodes[static_cast<size_t>(r)]);
    }
    hosts.push_back(h);
  }
  return {{"hosts", hosts}};
}

std::string describe_cluster(const Json& cluster) {
  std::string s;
  for (const auto& h : cluster["hosts"]) {
    s += fmt::format("== host {} ({} rank{})\n", h["host"].get<std::string>(), h["ranks"].size(),
                     h["ranks"].size() == 1 ? "" : "s");
    s += describe_node(h["node"]);
    for (const auto& r : h["ranks"])
      s += fmt::format("  rank {}: CPUs {}\n", r["rank"].get<int>(), r["cpus"].get<std::string>());
  }
  if (cluster["hosts"].size() > 1) s += "between hosts: NET (the NICs above)\n";
  return s;
}

// `out_dir`: the results folder, or "" for no file.
int check_and_report(const TopoRequest& req, const Json& cluster, const std::string& out_dir) {
  if (req.json) fmt::print("{}\n", cluster.dump(2));
  else fmt::print("{}", describe_cluster(cluster));
  if (!out_dir.empty()) {
    const std::string path = out_dir + "/topology.json";
    write_text_file(path, cluster.dump(2) + "\n");
    // With --json, stdout holds the JSON alone: where the file went is said on stderr.
    fmt::print(req.json ? stderr : stdout, "# topology written to {}\n", path);
  }
  if (req.expect.empty()) return 0;
  const auto diffs = topology_differences(load_expectation(req.expect), cluster);
  for (const std::string& d : diffs) fmt::print("DIFFERENCE: {}\n", d);
  fmt::print("# expected topology ({}): {}\n", req.expect,
             diffs.empty() ? "every host matches" : fmt::format("{} difference(s)", diffs.size()));
  return diffs.empty() ? 0 : static_cast<int>(ExitCode::threshold);
}

}  // namespace

int run_topology(const TopoRequest& req, int* argc, char*** argv) {
  if (!req.expect.empty()) load_expectation(req.expect);  // a bad file is a usage error before MPI
  // One writer per folder; an earlier topology.json is replaced only with --overwrite.
  ResultsFolder folder;
  if (launcher_rank() == 0 && req.out != "none")
    folder = prepare_output_dir({req.out, {"topology.json"}, req.overwrite, req.command_line});
  const std::string out_dir = folder.path();
  if (!out_dir.empty()) folder.mark_used();
  mpi_start(argc, argv);
  const RankLayout layout = discover_layout(MPI_COMM_WORLD);
  const Json cluster = gather_cluster(layout);
  Outcome mine = run_catching([&] {
    if (layout.rank == 0) {
      const int rc = check_and_report(req, cluster, out_dir);
      if (rc) throw Error(static_cast<ExitCode>(rc), "the topology differs from the expected one");
    }
  });
  if (mine.code != ExitCode::ok && mine.code != ExitCode::threshold)
    fmt::print(stderr, "ccbench: error: {}\n", mine.message);
  const ExitCode code = agree_exit_code(MPI_COMM_WORLD, mine.code);
  mpi_stop();
  return static_cast<int>(code);
}

}  // namespace ccbench
