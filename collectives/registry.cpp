#include <algorithm>

#include <fmt/format.h>

#include "collectives/cpu/cpu_common.h"
#include "core/build_config.h"
#include "collectives/cpu/cpu_impls.h"
#include "collectives/implementation.h"
#if CCBENCH_HAVE_CUDA
#include "collectives/gpu/gpu_impls.h"
#endif
#if CCBENCH_HAVE_NCCL
#include "collectives/nccl/nccl_impls.h"
#endif

namespace ccbench {

std::string_view name(Device d) { return d == Device::cpu ? "cpu" : "gpu"; }
std::string_view name(schedule::TreeShape s) { return s == schedule::TreeShape::binary ? "binary" : "double"; }

namespace {

using Factory = std::function<std::unique_ptr<Implementation>()>;

#if CCBENCH_HAVE_CUDA
constexpr const char* kNoCuda = "";
#else
constexpr const char* kNoCuda = "this ccbench was built without CUDA (install the CUDA Toolkit and rebuild)";
#endif
#if CCBENCH_HAVE_NCCL
constexpr const char* kNoNccl = "";
#else
constexpr const char* kNoNccl = "this ccbench was built without NCCL (install libnccl-dev and CUDA, then rebuild)";
#endif

std::vector<ImplInfo> build_registry() {
  std::vector<ImplInfo> r;
  // Baselines first: the comparison summary reads left to right from them.
  r.push_back({"mpi", Device::cpu, "the MPI library's own collectives (MPI_Allreduce, MPI_Alltoall, ...)",
               make_mpi_baseline, ""});
  r.push_back(
      {"ring", Device::cpu, "pipelined ring over shared memory (same node) or MPI point-to-point", make_ring_cpu, ""});
  r.push_back({"tree", Device::cpu, "double binary tree all-reduce, log-depth (Bruck) all-gather", make_tree_cpu, ""});
  r.push_back({"direct", Device::cpu, "pairwise exchange over a channel per pair: all-to-all(v), gather, scatter",
               make_direct_cpu, ""});
  r.push_back({"hier", Device::cpu,
               "hierarchical all-reduce: reduce to each node's leader, ring among the leaders, broadcast in the node",
               make_hier_cpu, ""});
#if CCBENCH_HAVE_NCCL
  r.push_back({"nccl", Device::gpu, "NCCL, its own choice of algorithm and protocol", make_nccl_default, ""});
  r.push_back({"nccl-ring", Device::gpu, "NCCL with NCCL_ALGO=Ring", make_nccl_ring, ""});
  r.push_back({"nccl-tree", Device::gpu, "NCCL with NCCL_ALGO=Tree", make_nccl_tree, ""});
  r.push_back(
      {"nccl-symm", Device::gpu, "NCCL on ncclMemAlloc buffers registered as symmetric windows", make_nccl_symm, ""});
#else
  for (const char* n : {"nccl", "nccl-ring", "nccl-tree", "nccl-symm"})
    r.push_back({n, Device::gpu, "NCCL", {}, kNoNccl});
#endif
#if CCBENCH_HAVE_CUDA
  r.push_back({"ring", Device::gpu, "ring CUDA kernel over FIFOs on any GPU path (p2p, host, net)", make_ring_gpu, ""});
  r.push_back({"tree", Device::gpu,
               "double binary tree all-reduce over FIFOs on any GPU path; log-depth all-gather over p2p", make_tree_gpu,
               ""});
  r.push_back({"oneshot", Device::gpu,
               "one-shot all-reduce: every rank pushes its input to every peer as LL lines; reduce: the root reads "
               "every input",
               make_oneshot_gpu, ""});
  r.push_back({"twoshot", Device::gpu, "two-shot all-reduce: reduce-scatter by direct reads, then all-gather",
               make_twoshot_gpu, ""});
  r.push_back({"ce", Device::gpu,
               "copy engines: all-gather, all-to-all, alltoallv, gather, scatter as cudaMemcpyAsync between "
               "peers' buffers",
               make_ce_gpu, ""});
  r.push_back({"best", Device::gpu, "the fastest of our kernels for each collective and size", make_best_gpu, ""});
  r.push_back({"hier", Device::gpu,
               "two-level all-reduce / all-gather: ring in the node, ring across the nodes per local rank",
               make_hier_gpu, ""});
#else
  for (const char* n : {"ring", "tree", "oneshot", "twoshot", "ce", "best", "hier"})
    r.push_back({n, Device::gpu, "CUDA kernel", {}, kNoCuda});
#endif
  // Without --impl: the baseline, our ring and tree, and on GPUs our fastest kernel for each size.
  for (ImplInfo& i : r)
    i.by_default = i.device == Device::cpu
                       ? (i.name == "mpi" || i.name == "ring" || i.name == "tree")
                       : (i.name == "nccl" || i.name == "ring" || i.name == "tree" || i.name == "best");
  return r;
}

}  // namespace

const std::vector<ImplInfo>& implementations() {
  static const std::vector<ImplInfo> registry = build_registry();
  return registry;
}

bool is_known_implementation(std::string_view name) {
  const auto& r = implementations();
  return std::any_of(r.begin(), r.end(), [&](const ImplInfo& i) { return i.name == name; });
}

const ImplInfo* find_implementation(std::string_view name, Device device) {
  for (const ImplInfo& i : implementations())
    if (i.name == name && i.device == device) return &i;
  return nullptr;
}

std::vector<ImplInfo> nccl_config_variants(const ImplInfo& info, const std::vector<NcclConfig>& configs) {
  std::vector<ImplInfo> out;
  const bool nccl =
      info.name == "nccl" || info.name == "nccl-ring" || info.name == "nccl-tree" || info.name == "nccl-symm";
  if (!nccl || !info.make) return out;
#if CCBENCH_HAVE_NCCL
  for (const NcclConfig& c : configs) {
    ImplInfo v = info;
    v.setting = c.label();
    v.make = [name = info.name, c] { return make_nccl_configured(name, c); };
    out.push_back(std::move(v));
  }
#else
  (void)configs;
#endif
  return out;
}

void check_tuning_environment() {
  cpu::slot_config_from_env();
#if CCBENCH_HAVE_CUDA
  check_gpu_tuning_environment();
#endif
}

std::optional<std::string> undeclared_collective(const Implementation& impl, std::string_view impl_name, Collective c) {
  const CollectiveSet declared = impl.collectives();
  if (declared.contains(c)) return std::nullopt;
  return fmt::format("{} implements {}; not {}", impl_name, join_names(declared.list()), name(c));
}

std::optional<std::string> case_unsupported(const Implementation& impl, std::string_view impl_name,
                                            const CaseSpec& spec, const ImplContext& ctx) {
  if (auto why = undeclared_collective(impl, impl_name, spec.coll)) return why;
  return impl.unsupported(spec, ctx);
}

std::string valid_implementations() {
  std::vector<std::string> names;
  for (const ImplInfo& i : implementations())
    if (std::find(names.begin(), names.end(), i.name) == names.end()) names.push_back(i.name);
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace ccbench
