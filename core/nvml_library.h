#pragma once
// NVML (libnvidia-ml) loaded at run time with dlopen, as NCCL does: a build needs no NVML header
// and runs where no NVIDIA driver is installed. One object opens the library and initialises NVML
// (nvmlInit_v2); its destructor shuts NVML down and closes the library (NVML counts its
// initialisations, so several objects may live at once). Users look up the entry points they
// need with fn<>(); a missing one is null, so a feature of a newer driver can be left out.
#include <dlfcn.h>

#include <string>

namespace ccbench {

inline constexpr const char* kNvmlLibrary = "libnvidia-ml.so.1";
inline constexpr int kNvmlSuccess = 0;

class NvmlLibrary {
 public:
  explicit NvmlLibrary(const std::string& path = kNvmlLibrary);
  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  // "" when NVML is initialised, else why not: "<path> not found (no NVIDIA driver)", "<path> has
  // no nvmlInit_v2 (not NVML, or a driver too old)", "nvmlInit failed: <error_text>".
  const std::string& unavailable() const { return unavailable_; }
  // The entry point `name` (null when absent or the library is not open).
  template <typename F>
  F fn(const char* name) const {
    return lib_ ? reinterpret_cast<F>(dlsym(lib_, name)) : nullptr;
  }
  // An NVML return code in words: "not supported on this GPU", "no permission", else NVML's
  // string with the code.
  std::string error_text(int rc) const;
  // nvmlSystemGetDriverVersion, or "".
  std::string driver_version() const;

 private:
  void* lib_ = nullptr;
  bool initialised_ = false;
  std::string unavailable_;
};

}  // namespace ccbench
