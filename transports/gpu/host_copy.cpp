#include "transports/gpu/host_copy.h"

#include <string>
#include <vector>

#include "core/knobs.h"

namespace ccbench {

namespace {

// In HostCopy's order.
const std::vector<std::string_view>& host_copy_names() {
  static const std::vector<std::string_view> names{"sm", "ce"};
  return names;
}

HostCopy env_host_copy(const char* name) { return static_cast<HostCopy>(env_choice(name, 0, host_copy_names())); }

}  // namespace

std::string_view host_copy_name(HostCopy c) { return host_copy_names()[static_cast<std::size_t>(c)]; }

std::string host_copy_note(const HostCopyModes& m) {
  if (!m.any_ce()) return "";
  const bool both = m.recv == HostCopy::ce && m.send == HostCopy::ce;
  return both ? " (host ce:recv+send)" : m.recv == HostCopy::ce ? " (host ce:recv)" : " (host ce:send)";
}

HostCopyModes host_copy_modes() {
  return {env_host_copy("CCBENCH_GPU_HOST_RECV"), env_host_copy("CCBENCH_GPU_HOST_SEND")};
}

bool host_copy_forced() {
  return env_text("CCBENCH_GPU_HOST_RECV").has_value() || env_text("CCBENCH_GPU_HOST_SEND").has_value();
}

std::size_t host_ce_min_bytes() {
  return static_cast<std::size_t>(env_size("CCBENCH_GPU_HOST_CE_MIN_BYTES", kDefaultHostCeMinBytes, KnobRange{}));
}

}  // namespace ccbench
