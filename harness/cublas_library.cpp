#include "harness/cublas_library.h"

#include <dlfcn.h>
#include <link.h>

#include <memory>
#include <mutex>
#include <vector>

#include <fmt/format.h>

#include "core/knobs.h"

namespace ccbench {

namespace {

template <typename F>
bool bind(void* lib, F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

std::unique_ptr<CublasApi> load(const std::string& path, std::string* why) {
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    *why = dlerror();
    return nullptr;
  }
  auto a = std::make_unique<CublasApi>();
  if (!(bind(lib, a->Create, "cublasCreate_v2") && bind(lib, a->Destroy, "cublasDestroy_v2") &&
        bind(lib, a->SetStream, "cublasSetStream_v2") && bind(lib, a->GemmEx, "cublasGemmEx") &&
        bind(lib, a->GetStatusString, "cublasGetStatusString") && bind(lib, a->GetProperty, "cublasGetProperty"))) {
    *why = fmt::format("{} is not a cuBLAS this ccbench can use: {}", path, dlerror());
    dlclose(lib);
    return nullptr;
  }
  int major = 0, minor = 0, patch = 0;
  a->GetProperty(MAJOR_VERSION, &major);
  a->GetProperty(MINOR_VERSION, &minor);
  a->GetProperty(PATCH_LEVEL, &patch);
  a->version = major * 10000 + minor * 100 + patch;
  link_map* map = nullptr;
  a->path = dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name ? map->l_name : path;
  return a;
}

}  // namespace

const CublasApi* cublas_api(std::string* why) {
  static std::mutex mu;
  static std::unique_ptr<CublasApi> api;
  static std::string failure;
  std::lock_guard lock(mu);
  if (!api && failure.empty()) {
    std::vector<std::string> candidates;
    if (auto given = env_text("CCBENCH_CUBLAS_LIBRARY")) candidates.push_back(*given);
    else candidates = {"libcublas.so.13", "libcublas.so.12", "/usr/local/cuda/lib64/libcublas.so.13",
                       "/usr/local/cuda/lib64/libcublas.so.12"};
    for (const std::string& c : candidates) {
      std::string reason;
      api = load(c, &reason);
      if (api) break;
      failure += (failure.empty() ? "" : "; ") + reason;
    }
    if (api) failure.clear();
    else failure += " (set CCBENCH_CUBLAS_LIBRARY to a libcublas.so)";
  }
  if (!api && why) *why = failure;
  return api.get();
}

}  // namespace ccbench
