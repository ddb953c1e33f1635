#include "collectives/cpu/cpu_common.h"

#include <thread>

#include <fmt/format.h>

#include "collectives/cpu/executor.h"
#include "collectives/cpu/reduce_kernels.h"
#include "core/error.h"
#include "core/knobs.h"
#include "core/transport_names.h"

namespace ccbench::cpu {

SlotConfig slot_config_from_env() {
  SlotConfig c;
  c.slot_bytes = static_cast<size_t>(env_size(Knob::cpu_slot_bytes));
  c.depth = static_cast<int>(env_int(Knob::cpu_slot_depth));
  return c;
}

std::optional<std::string> unsupported_context(const ImplContext& ctx, std::string_view impl) {
  if (ctx.device != Device::cpu)
    return fmt::format("{} here is the CPU implementation: it needs CPU ranks with host buffers", impl);
  const std::optional<Transport> t = parse_transport(ctx.transport);
  if (!t || !valid_in(*t, kCpuRanks))
    return fmt::format("{} on CPU ranks moves data over a CPU transport, not {} (valid: {})", impl, ctx.transport,
                       valid_cpu_transports());
  if (t == Transport::shm && ctx.layout && ctx.layout->nodes > 1)
    return fmt::format(
        "transport shm connects ranks of one node only and this run spans {} nodes (valid here: "
        "auto, mpi)",
        ctx.layout->nodes);
  return std::nullopt;
}

std::optional<std::string> CpuImplementation::unsupported(const CaseSpec& spec, const ImplContext& ctx) const {
  if (auto why = undeclared_collective(*this, name_, spec.coll)) return why;
  return unsupported_context(ctx, name_);
}

std::string CpuImplementation::transport() const { return channels_ ? channels_->label() : "none"; }

std::string CpuImplementation::over_transport(std::string_view what) const {
  return fmt::format("{} over {}", what, transport());
}

bool CpuImplementation::begin_setup(const ImplContext& ctx) {
  if (!ctx.layout) fail(ExitCode::runtime, "{}: setup() needs the rank layout", name_);
  if (unsupported_context(ctx, name_)) return false;
  cfg_ = slot_config_from_env();
  timeout_ = ctx.timeout;
  note_node_load(*ctx.layout);
  MPI_Comm_rank(ctx.comm, &rank_);
  MPI_Comm_size(ctx.comm, &n_);
  return true;
}

void CpuImplementation::check_runnable(const CallArgs& a) const {
  if (!channels_) fail(ExitCode::runtime, "{}: run() before setup()", name_);
  if (auto why = undeclared_collective(*this, name_, a.spec.coll)) fail(ExitCode::usage, "{}", *why);
}

ChannelOptions channel_options(const ImplContext& ctx, const SlotConfig& cfg) {
  ChannelOptions o;
  o.slot_bytes = cfg.slot_bytes;
  o.depth = cfg.depth;
  o.transport = ctx.transport;
  o.timeout = ctx.timeout;
  return o;
}

void note_node_load(const RankLayout& layout) {
  const unsigned cores = std::thread::hardware_concurrency();
  cpu_oversubscribed = cores > 0 && static_cast<unsigned>(layout.local_ranks()) > cores;
}

void run_single_rank(const CallArgs& a) {
  const bool reduces = has_reduce_op(a.spec.coll);
  ReduceKernels k(a.spec.dtype, reduces ? a.spec.op : ReduceOp::none, 1);
  void* dst = a.recv;
  k.reduce_multi(&dst, 1, &a.send, 1, a.count, reduces);
}

}  // namespace ccbench::cpu
