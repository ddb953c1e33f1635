#include "core/data_dir.h"

#include "core/knobs.h"

namespace ccbench {

namespace fs = std::filesystem;

fs::path executable_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe.parent_path();
}

std::vector<fs::path> data_dirs(const std::string& sub) {
  if (const auto dir = env_text(Knob::data_dir)) return {fs::path(*dir) / sub};
  const fs::path exe = executable_dir();
  if (exe.empty()) return {};
  return {exe / "share/ccbench" / sub, exe / "../share/ccbench" / sub};
}

}  // namespace ccbench
