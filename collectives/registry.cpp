#include <algorithm>

#include <fmt/format.h>

#include "collectives/cpu/cpu_common.h"
#include "core/build_config.h"
#include "core/knobs.h"
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

// An entry's factory where the build has what it needs (the .def's `needs`), else none: the
// factory's name is then never compiled.
#define CCBENCH_FACTORY_always(f) Factory(f)
#define CCBENCH_FACTORY_mpi(f) Factory(f)
#if CCBENCH_HAVE_CUDA
#define CCBENCH_FACTORY_cuda(f) Factory(f)
#else
#define CCBENCH_FACTORY_cuda(f) Factory()
#endif
#if CCBENCH_HAVE_NCCL
#define CCBENCH_FACTORY_nccl(f) Factory(f)
#else
#define CCBENCH_FACTORY_nccl(f) Factory()
#endif
// The .def's `selection`: `default` is a C++ keyword, so it is read through a macro name.
#define CCBENCH_SELECTED_default true
#define CCBENCH_SELECTED_optional false

std::string missing_reason(ImplInfo::Needs needs) {
  switch (needs) {
    case ImplInfo::Needs::always:
    case ImplInfo::Needs::mpi: return "";
    case ImplInfo::Needs::cuda:
      return CCBENCH_HAVE_CUDA ? "" : "this ccbench was built without CUDA (install the CUDA Toolkit and rebuild)";
    case ImplInfo::Needs::nccl:
      return CCBENCH_HAVE_NCCL ? ""
                               : "this ccbench was built without NCCL (install libnccl-dev and CUDA, then rebuild)";
  }
  return "";
}

// An entry's schedules as the .def lists them ("none": no prediction).
std::vector<ModelSchedule> schedules_of(std::initializer_list<std::optional<ModelSchedule>> listed) {
  std::vector<ModelSchedule> out;
  for (const auto& s : listed)
    if (s) out.push_back(*s);
  return out;
}

std::vector<ImplInfo> build_registry() {
  using enum ModelSchedule;
  constexpr std::optional<ModelSchedule> none;
  std::vector<ImplInfo> r;
#define CCBENCH_SUPPORT(id_, device_, needs_, selection, factory, collectives, summary_, ...) \
  r.push_back({.id = ImplId::id_,                                                             \
               .name = std::string(name(ImplId::id_)),                                        \
               .device = Device::device_,                                                     \
               .summary = summary_,                                                           \
               .make = CCBENCH_FACTORY_##needs_(factory),                                     \
               .missing = missing_reason(ImplInfo::Needs::needs_),                            \
               .by_default = CCBENCH_SELECTED_##selection,                                    \
               .needs = ImplInfo::Needs::needs_,                                              \
               .model = schedules_of({__VA_ARGS__})});
#include "collectives/implementations.def"
  return r;
}

}  // namespace

std::string_view name(ImplInfo::Needs n) {
  switch (n) {
    case ImplInfo::Needs::always: return "always";
    case ImplInfo::Needs::mpi: return "mpi";
    case ImplInfo::Needs::cuda: return "cuda";
    case ImplInfo::Needs::nccl: return "nccl";
  }
  return "?";
}

const std::vector<ImplInfo>& implementations() {
  static const std::vector<ImplInfo> registry = build_registry();
  return registry;
}

const ImplInfo* find_implementation(ImplId id, Device device) {
  for (const ImplInfo& i : implementations())
    if (i.id == id && i.device == device) return &i;
  return nullptr;
}

bool is_nccl(ImplId id) {
  const auto& r = implementations();
  return std::any_of(r.begin(), r.end(),
                     [&](const ImplInfo& i) { return i.id == id && i.needs == ImplInfo::Needs::nccl; });
}

std::vector<ImplInfo> nccl_config_variants(const ImplInfo& info, const std::vector<NcclConfig>& configs) {
  std::vector<ImplInfo> out;
  if (info.needs != ImplInfo::Needs::nccl || !info.make) return out;
#if CCBENCH_HAVE_NCCL
  for (const NcclConfig& c : configs) {
    ImplInfo v = info;
    v.setting = c.label();
    v.make = [id = info.id, c] { return make_nccl_configured(id, c); };
    out.push_back(std::move(v));
  }
#else
  (void)configs;
#endif
  return out;
}

void check_tuning_environment() {
  check_knob_spellings();
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

}  // namespace ccbench
