#pragma once
// Who moves each half of a GPU `host` connection (pure: no CUDA, testable without a GPU).
//   sm  the SMs themselves: the sender's kernel stores the slot across PCIe into the shared host
//       FIFO, the receiver's kernel loads it back across PCIe (the default).
//   ce  the copy engines: that half's kernel uses a FIFO in its own GPU memory, and a CPU proxy
//       thread of its rank copies each step between it and the shared host FIFO with
//       cudaMemcpyAsync (transports/gpu_host_ce.h).
// CCBENCH_GPU_HOST_RECV picks the receiving half, CCBENCH_GPU_HOST_SEND the sending half; every
// rank must use the same values (GpuFifoMesh checks it).
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

}  // namespace ccbench
