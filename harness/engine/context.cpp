#include "harness/engine/context.h"

#include <array>
#include <chrono>
#include <cstdlib>
#include <ctime>

#include <fmt/format.h>

#include "collectives/cpu/cpu_vectors.h"
#include "core/build_config.h"
#include "core/git_hash.h"
#include "harness/job/bootstrap.h"
#include "harness/engine/sizes.h"
#include "results/store.h"
#include "topologies/discovery.h"
#if CCBENCH_HAVE_LIBFABRIC
#include "transports/ofi/fabric.h"
#endif
#if CCBENCH_HAVE_NCCL
#include "collectives/nccl/nccl_impls.h"
#include "collectives/nccl/nccl_library.h"
#endif

extern char** environ;

namespace ccbench {

Json gpu_runtime_versions();  // gpu_backend.cpp (an empty object without CUDA)

namespace {

std::string started_utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// NCCL_*, UCX_*, OMPI_MCA_*, CCBENCH_*, CUDA_VISIBLE_DEVICES and friends: the settings that
// change what is measured.
Json relevant_environment() {
  Json env = Json::object();
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    std::string key = kv.substr(0, eq);
    // OpenMPI's launcher-internal variables (URIs, job keys) say nothing about the measurement.
    bool internal = false;
    for (const char* inner : {"OMPI_MCA_orte_", "OMPI_MCA_ess_", "OMPI_MCA_pmix", "OMPI_MCA_shmem_RUNTIME",
                              "OMPI_MCA_initial_wdir", "OMPI_MCA_mpi_oversubscribe", "OMPI_MCA_rmaps_"})
      internal |= key.rfind(inner, 0) == 0;
    if (internal) continue;
    for (const char* prefix :
         {"NCCL_", "UCX_", "OMPI_MCA_", "CCBENCH_", "CUDA_", "NVSHMEM_", "TORCH_SYMM", "SLURM_JOB"}) {
      if (key.rfind(prefix, 0) == 0) {
        env[key] = without_store_secrets(kv.substr(eq + 1));  // CCBENCH_DB may be a URL with a password
        break;
      }
    }
  }
  return env;
}

template <typename T>
Json context_names(const std::vector<T>& v) {
  Json a = Json::array();
  for (const T& x : v) a.push_back(std::string(name(x)));
  return a;
}

}  // namespace

Json library_versions() {
  Json v = Json::object();
  char mpi[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  if (MPI_Get_library_version(mpi, &len) != MPI_SUCCESS) len = 0;  // then the context says ""
  std::string mpi_s(mpi, static_cast<size_t>(len));
  if (auto nl = mpi_s.find_first_of("\r\n,"); nl != std::string::npos) mpi_s.resize(nl);
  v["mpi"] = mpi_s;
  const Json gpu = gpu_runtime_versions();
  for (auto& [k, val] : gpu.items()) v[k] = val;
#if CCBENCH_HAVE_NCCL
  // The NCCL this process loads (CCBENCH_NCCL_LIBRARY / --nccl-library), so two launches with two
  // NCCL versions say which ran.
  v["nccl"] = nccl_library_version();
  if (const NcclApi* api = nccl_api()) v["nccl_library"] = api->path;
#endif
#if CCBENCH_HAVE_LIBFABRIC
  v["libfabric"] = ofi_library_version();
#endif
  return v;
}

std::string version_text() {
  std::string parts;
  auto add = [&](bool on, const std::string& what) {
    parts += fmt::format("\n  {:<8} {}", what, on ? "built in" : "not built in");
  };
  add(CCBENCH_HAVE_CUDA, "CUDA");
  add(CCBENCH_HAVE_NCCL, "NCCL");
  add(CCBENCH_HAVE_IBVERBS, "ibverbs");
  add(CCBENCH_HAVE_LIBFABRIC, "libfabric");
  add(CCBENCH_HAVE_HWLOC, "hwloc");
  add(CCBENCH_HAVE_POSTGRESQL, "postgres");  // libpq: --db postgresql://...
  std::string text = fmt::format("ccbench {} (git {})\nparts:{}", CCBENCH_VERSION, CCBENCH_GIT_HASH, parts);
#if CCBENCH_HAVE_CUDA
  text += fmt::format("\nCUDA architectures: {}", CCBENCH_CUDA_ARCHITECTURES);
#endif
  text += "\nlibraries:";
  const Json libs = library_versions();
  for (auto& [k, v] : libs.items()) text += fmt::format("\n  {:<14} {}", k, v.get<std::string>());
  return text;
}

Json describe_this_node() {
  Json node = discover_node();
  node["cpu"]["reduce_vector_set"] = std::string(name(best_vector_isa()));
  return node;
}

Json build_context(const RunOptions& opts, const SweepPlan& plan, const RankLayout& layout, MPI_Comm comm,
                   const Backend& backend) {
  auto devices = gather_strings(comm, backend.description());
  // One description per node, from its first rank.
  auto nodes = gather_strings(comm, layout.local_rank() == 0 ? describe_this_node().dump() : std::string());
  Json c = Json::object();
  c["schema_version"] = kSchemaVersion;
  c["ccbench_version"] = CCBENCH_VERSION;
  c["git_hash"] = CCBENCH_GIT_HASH;
  c["built_in"] = {{"cuda", bool(CCBENCH_HAVE_CUDA)},       {"nccl", bool(CCBENCH_HAVE_NCCL)},
                   {"ibverbs", bool(CCBENCH_HAVE_IBVERBS)}, {"libfabric", bool(CCBENCH_HAVE_LIBFABRIC)},
                   {"hwloc", bool(CCBENCH_HAVE_HWLOC)},     {"postgresql", bool(CCBENCH_HAVE_POSTGRESQL)}};
  c["started_utc"] = started_utc_now();
  c["command_line"] = opts.command_line;
  c["notes"] = opts.notes;  // what options given do here, and those that change nothing (start-up block too)
  c["oversubscribed"] = opts.oversubscribed.empty() ? Json(nullptr) : Json(opts.oversubscribed);
  c["ranks"] = layout.nranks;
  c["nodes"] = layout.nodes;
  c["ranks_per_node"] = layout.max_ranks_per_node();
  c["device"] = std::string(name(plan.device));
  c["ring_order"] = ring_order(opts.ring_order, layout);  // the ring of our ring implementations, by position
  Json hosts = Json::array();
  for (int r = 0; r < layout.nranks; ++r) {
    Json h = {{"rank", r},
              {"host", layout.host_of[static_cast<size_t>(r)]},
              {"local_rank", layout.local_rank_of[static_cast<size_t>(r)]}};
    if (static_cast<size_t>(r) < devices.size()) h["device"] = devices[static_cast<size_t>(r)];
    hosts.push_back(h);
  }
  c["ranks_detail"] = hosts;
  Json node_info = Json::array();
  for (size_t r = 0; r < nodes.size(); ++r)
    if (!nodes[r].empty()) node_info.push_back({{"host", layout.host_of[r]}, {"node", Json::parse(nodes[r])}});
  c["nodes_detail"] = node_info;
  c["versions"] = library_versions();
  c["environment"] = relevant_environment();
  Json impls = Json::array();
  for (const ImplInfo* i : plan.impls) impls.push_back(i->name);
  Json skipped = Json::array();
  for (const auto& [n, why] : plan.skipped) skipped.push_back({{"impl", n}, {"reason", why}});
  c["options"] = {
      {"collectives", context_names(opts.collectives)},
      {"implementations", impls},
      {"implementations_skipped", skipped},
      {"dtypes", context_names(opts.dtypes)},
      {"ops", context_names(opts.ops)},
      {"min_bytes", plan.sizes.front()},
      {"max_bytes", plan.sizes.back()},
      {"sizes", plan.sizes.size()},
      {"iterations", opts.iterations},
      {"warmup", opts.warmup},
      {"agg_iters", opts.agg_iters},
      {"check", opts.check},
      {"rank_time",
       std::array{"rank 0", "mean over ranks", "fastest rank", "slowest rank"}[static_cast<int>(opts.rank_time)]},
      {"misalign_elements", opts.misalign},
      {"graph_launches", opts.graph_launches},
      {"in_place", opts.in_place == InPlaceChoice::both  ? "both"
                   : opts.in_place == InPlaceChoice::yes ? "yes"
                                                         : "no"},
      {"transport", opts.transport},
      {"ring_order", opts.ring_order.text},
      {"tree", name(opts.tree)},
      {"seed", opts.seed},
      {"pattern", name(opts.pattern)},
      {"timeout_s", static_cast<double>(opts.timeout.count()) / 1000.0},
      {"cycles", opts.cycles},
  };
  c["timing"] =
      plan.device == Device::gpu
          ? "CUDA events on each rank's stream; time_avg = back-to-back batch / (iterations x agg_iters) (as "
            "nccl-tests), median/min/p95/cv over single iterations (each / agg_iters) started together after a "
            "barrier; slowest rank per figure"
          : "steady clock; time_avg = back-to-back batch / (iterations x agg_iters) (as nccl-tests), "
            "median/min/p95/cv over single iterations (each / agg_iters) started together after a barrier; "
            "slowest rank per figure";
  c["units"] = "sizes in bytes (K = 1024 on the command line), bandwidth in GB/s (1e9 B/s), times in microseconds";
  return c;
}

}  // namespace ccbench
