#include "core/nvml_library.h"

#include <fmt/format.h>

namespace ccbench {

namespace {
constexpr int kNvmlNotSupported = 3, kNvmlNoPermission = 4;
}  // namespace

NvmlLibrary::NvmlLibrary(const std::string& path) {
  lib_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib_) {
    unavailable_ = fmt::format("{} not found (no NVIDIA driver)", path);
    return;
  }
  auto init = fn<int (*)()>("nvmlInit_v2");
  if (!init) {
    unavailable_ = fmt::format("{} has no nvmlInit_v2 (not NVML, or a driver too old)", path);
    return;
  }
  if (const int rc = init(); rc != kNvmlSuccess) {
    unavailable_ = fmt::format("nvmlInit failed: {}", error_text(rc));
    return;
  }
  initialised_ = true;
}

NvmlLibrary::~NvmlLibrary() {
  if (initialised_)
    if (auto shutdown = fn<int (*)()>("nvmlShutdown")) shutdown();
  if (lib_) dlclose(lib_);
}

std::string NvmlLibrary::error_text(int rc) const {
  if (rc == kNvmlNotSupported) return "not supported on this GPU";
  if (rc == kNvmlNoPermission) return "no permission";
  if (auto str = fn<const char* (*)(int)>("nvmlErrorString"))
    if (const char* s = str(rc)) return fmt::format("{} (NVML error {})", s, rc);
  return fmt::format("NVML error {}", rc);
}

std::string NvmlLibrary::driver_version() const {
  char buf[96] = {};
  auto driver = fn<int (*)(char*, unsigned)>("nvmlSystemGetDriverVersion");
  return driver && driver(buf, sizeof buf) == kNvmlSuccess ? buf : "";
}

}  // namespace ccbench
