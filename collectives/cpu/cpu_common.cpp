#include "collectives/cpu/cpu_common.h"

#include <charconv>
#include <cstdlib>
#include <thread>

#include <fmt/format.h>

#include "collectives/cpu/executor.h"
#include "collectives/cpu/reduce_kernels.h"
#include "results/error.h"

namespace ccbench::cpu {

namespace {

constexpr size_t kMaxSlotBytes = 64ull << 20;
constexpr int kMaxDepth = 64;

// "4096", "256K", "1M" (binary); nullopt when malformed.
std::optional<size_t> parse_bytes(std::string_view s) {
  size_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p == s.data()) return std::nullopt;
  std::string_view suffix(p, static_cast<size_t>(s.data() + s.size() - p));
  size_t mult = 1;
  if (suffix == "K" || suffix == "k" || suffix == "KiB") mult = 1024;
  else if (suffix == "M" || suffix == "m" || suffix == "MiB") mult = 1024 * 1024;
  else if (!suffix.empty()) return std::nullopt;
  if (v > kMaxSlotBytes) return v;  // out of range, reported by the caller
  return v * mult;
}

}  // namespace

SlotConfig slot_config_from_env() {
  SlotConfig c;
  if (const char* s = std::getenv("CCBENCH_CPU_SLOT_BYTES"); s && *s) {
    auto v = parse_bytes(s);
    if (!v || *v < 64 || *v > kMaxSlotBytes || *v % 64 != 0)
      fail(ExitCode::usage, "CCBENCH_CPU_SLOT_BYTES='{}' is invalid: give the CPU channel slot size in bytes (K and "
           "M suffixes are binary), a multiple of 64 from 64 to 64M (default 256K)", s);
    c.slot_bytes = *v;
  }
  if (const char* s = std::getenv("CCBENCH_CPU_SLOT_DEPTH"); s && *s) {
    int v = 0;
    std::string_view sv(s);
    auto [p, ec] = std::from_chars(sv.data(), sv.data() + sv.size(), v);
    if (ec != std::errc() || p != sv.data() + sv.size() || v < 2 || v > kMaxDepth)
      fail(ExitCode::usage, "CCBENCH_CPU_SLOT_DEPTH='{}' is invalid: give the number of slots per CPU channel, an "
           "integer from 2 to {} (default {})", s, kMaxDepth, kDefaultSlotDepth);
    c.depth = v;
  }
  return c;
}

std::optional<std::string> unsupported_context(const ImplContext& ctx, std::string_view impl) {
  if (ctx.device != Device::cpu)
    return fmt::format("{} here is the CPU implementation: it needs CPU ranks with host buffers", impl);
  bool known = ctx.transport == "auto";
  for (const TransportOps& t : cpu_transports()) known = known || t.name == ctx.transport;
  if (!known)
    return fmt::format("{} on CPU ranks moves data over a CPU transport, not {} (valid: {})", impl, ctx.transport,
                       valid_cpu_transports());
  if (ctx.transport == "shm" && ctx.layout && ctx.layout->nodes > 1)
    return fmt::format("transport shm connects ranks of one node only and this run spans {} nodes (valid here: "
                       "auto, mpi)", ctx.layout->nodes);
  return std::nullopt;
}

std::optional<std::string> CpuImplementation::unsupported(const CaseSpec& spec, const ImplContext& ctx) const {
  if (auto why = undeclared_collective(*this, name_, spec.coll)) return why;
  return unsupported_context(ctx, name_);
}

std::string CpuImplementation::transport() const { return channels_ ? channels_->label() : "none"; }

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
