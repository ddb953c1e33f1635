#include "transports/gpu/host_copy.h"

#include <string>
#include <vector>

#include "core/knobs.h"

namespace ccbench {

static_assert(kHostCopyWords[static_cast<std::size_t>(HostCopy::sm)] == "sm" &&
                  kHostCopyWords[static_cast<std::size_t>(HostCopy::ce)] == "ce",
              "core/knob_table.h: the words of CCBENCH_GPU_HOST_RECV and _SEND in HostCopy's order");

std::string_view host_copy_name(HostCopy c) { return kHostCopyWords[static_cast<std::size_t>(c)]; }

std::string host_copy_note(const HostCopyModes& m) {
  if (!m.any_ce()) return "";
  const bool both = m.recv == HostCopy::ce && m.send == HostCopy::ce;
  return both ? " (host ce:recv+send)" : m.recv == HostCopy::ce ? " (host ce:recv)" : " (host ce:send)";
}

HostCopyModes host_copy_modes() {
  return {static_cast<HostCopy>(env_choice(Knob::gpu_host_recv)),
          static_cast<HostCopy>(env_choice(Knob::gpu_host_send))};
}

bool host_copy_forced() {
  return env_text(Knob::gpu_host_recv).has_value() || env_text(Knob::gpu_host_send).has_value();
}

std::size_t host_ce_min_bytes() { return static_cast<std::size_t>(env_size(Knob::gpu_host_ce_min_bytes)); }

}  // namespace ccbench
