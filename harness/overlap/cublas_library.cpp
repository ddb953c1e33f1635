#include "harness/overlap/cublas_library.h"

#include <dlfcn.h>
#include <link.h>

#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "core/error.h"
#include "core/knobs.h"

namespace ccbench {

namespace {

template <typename F>
bool bind(void* lib, F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

// Opens `path` and looks up every entry point; the reason in `why` when it cannot.
std::unique_ptr<CublasApi> load(const std::string& path, std::string* why) {
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    *why = fmt::format("{} (set CCBENCH_CUBLAS_LIBRARY to a cuBLAS library)", dlerror());
    return nullptr;
  }
  auto a = std::make_unique<CublasApi>();
  const bool ok = bind(lib, a->Create, "cublasCreate_v2") && bind(lib, a->Destroy, "cublasDestroy_v2") &&
                  bind(lib, a->SetStream, "cublasSetStream_v2") && bind(lib, a->GemmEx, "cublasGemmEx") &&
                  bind(lib, a->SetSmCountTarget, "cublasSetSmCountTarget") &&
                  bind(lib, a->GetStatusString, "cublasGetStatusString") &&
                  bind(lib, a->GetProperty, "cublasGetProperty");
  if (!ok) {
    *why = fmt::format("{} is not a cuBLAS this ccbench can use: {} is missing (cuBLAS 11.4 or newer needed)", path,
                       dlerror());
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

std::string CublasApi::version_text() const {
  return fmt::format("{}.{}.{}", version / 10000, (version % 10000) / 100, version % 100);
}

std::string cublas_library_path() {
  return env_text(Knob::cublas_library).value_or(fmt::format("libcublas.so.{}", CUBLAS_VER_MAJOR));
}

const CublasApi* cublas_api(std::string* why) {
  static std::once_flag once;
  static std::unique_ptr<CublasApi> api;
  static std::string failure;
  std::call_once(once, [] { api = load(cublas_library_path(), &failure); });
  if (!api && why) *why = "cuBLAS could not be loaded: " + failure;
  return api.get();
}

const CublasApi& cublas() {
  std::string why;
  const CublasApi* a = cublas_api(&why);
  if (!a) throw Error(ExitCode::precondition, why);
  return *a;
}

cublasStatus_t check_cublas(cublasStatus_t rc, const char* call, const char* file, int line) {
  if (rc != CUBLAS_STATUS_SUCCESS) {
    const CublasApi& a = cublas();
    fail(ExitCode::runtime, "cuBLAS error {} ({}) in {} at {}:{} (cuBLAS {} from {})", static_cast<int>(rc),
         a.GetStatusString(rc), call, file, line, a.version_text(), a.path);
  }
  return rc;
}

}  // namespace ccbench
