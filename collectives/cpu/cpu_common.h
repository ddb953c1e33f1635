#pragma once
// What the CPU implementations (ring, tree) share: slot settings, context checks, the 1-rank case.
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "collectives/implementation.h"
#include "core/knob_table.h"
#include "transports/connect.h"

namespace ccbench::cpu {

// CCBENCH_CPU_SLOT_BYTES and CCBENCH_CPU_SLOT_DEPTH, or the defaults where unset.
// Throws Error(usage) naming the variable and what is valid. Depth is at least 2: a fused ring
// step holds a received slot while it waits for a free one to send into.
struct SlotConfig {
  size_t slot_bytes = knob_default<size_t>(Knob::cpu_slot_bytes);
  int depth = knob_default<int>(Knob::cpu_slot_depth);
};
SlotConfig slot_config_from_env();

// Why a CPU implementation named `impl` cannot run in `ctx` (GPU ranks, a transport other than
// auto/shm/mpi, shm across nodes), or nullopt.
std::optional<std::string> unsupported_context(const ImplContext& ctx, std::string_view impl);

// Channel options for ctx from the slot settings.
ChannelOptions channel_options(const ImplContext& ctx, const SlotConfig& cfg);

// Elements per slot and the piece alignment (64 bytes) in elements, for element size `esz`.
inline size_t slice_elements(const SlotConfig& c, size_t esz) { return c.slot_bytes / esz; }
inline size_t align_elements(size_t esz) { return esz >= 64 ? 1 : 64 / esz; }

// Sets cpu_oversubscribed (executor.h) when this node has more ranks than online cores.
void note_node_load(const RankLayout& layout);

// The collective on one rank: output from input (copies; avg finalizes, a no-op for one rank).
void run_single_rank(const CallArgs& args);

// What the CPU implementations (ring, tree, direct) share: the checks of unsupported() (a
// declared collective, a CPU context), the start of setup(), the channels and their label.
class CpuImplementation : public Implementation {
 public:
  explicit CpuImplementation(ImplId id) : name_(name(id)) {}
  std::optional<std::string> unsupported(const CaseSpec& spec, const ImplContext& ctx) const override;
  std::string transport() const override;

 protected:
  // Reads the slot settings, notes the node's load, finds this rank. False when the context
  // cannot run this implementation (unsupported() then skips every case with the reason).
  bool begin_setup(const ImplContext& ctx);
  // Throws unless setup() connected the channels and the collective is one this implementation
  // declares.
  void check_runnable(const CallArgs& a) const;
  // "allreduce/ring over ofi:tcp;ofi_rxm:rma": what run_flows() names in its errors, so that a
  // wait for a peer that is gone names the transport it waited on too.
  std::string over_transport(std::string_view what) const;

  std::string name_;  // name(id), for messages
  SlotConfig cfg_;
  std::chrono::milliseconds timeout_{};
  int rank_ = 0, n_ = 1;
  std::unique_ptr<ChannelSet> channels_;
};

}  // namespace ccbench::cpu
