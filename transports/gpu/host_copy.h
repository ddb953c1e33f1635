#pragma once
// Who moves each half of a GPU `host` connection (pure: no CUDA, testable without a GPU).
//   sm  the SMs themselves: the sender's kernel stores the slot across PCIe into the shared host
//       FIFO, the receiver's kernel loads it back across PCIe (the default).
//   ce  the copy engines: that half's kernel uses a FIFO in its own GPU memory, and a CPU proxy
//       thread of its rank copies each step between it and the shared host FIFO with
//       cudaMemcpyAsync (transports/gpu/gpu_host_ce.h).
// CCBENCH_GPU_HOST_RECV picks the receiving half, CCBENCH_GPU_HOST_SEND the sending half; every
// rank must use the same values (GpuFifoMesh checks it).
#include <cstddef>
#include <string>
#include <string_view>

namespace ccbench {

enum class HostCopy { sm, ce };

struct HostCopyModes {
  HostCopy recv = HostCopy::sm;
  HostCopy send = HostCopy::sm;
  bool any_ce() const { return recv == HostCopy::ce || send == HostCopy::ce; }
  bool operator==(const HostCopyModes&) const = default;
};

std::string_view host_copy_name(HostCopy c);

// What the `algorithm` column adds for these modes: "" for sm/sm, else " (host ce:recv)",
// " (host ce:send)" or " (host ce:recv+send)".
std::string host_copy_note(const HostCopyModes& m);

// CCBENCH_GPU_HOST_RECV and CCBENCH_GPU_HOST_SEND: `sm` or `ce`, sm when unset; Error(usage)
// naming a bad value and the valid ones.
HostCopyModes host_copy_modes();
// Whether either variable is set (non-empty): then every host connection uses host_copy_modes().
// When neither is, the ring picks per call: sm below host_ce_min_bytes(), ce for both halves from
// there (where every rank has a GPU of its own).
bool host_copy_forced();

// CCBENCH_GPU_HOST_CE_MIN_BYTES (a size such as 32M; its default and the measurement behind it:
// core/knob_table.h): the ring over host takes the copy engines from this call size. The bytes are
// the ring's measure of a call: a rank's input (all-reduce, reduce) or the whole output
// (all-gather, reduce-scatter). Error(usage) naming a bad value.
std::size_t host_ce_min_bytes();

}  // namespace ccbench
