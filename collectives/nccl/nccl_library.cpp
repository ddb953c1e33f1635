#include "collectives/nccl/nccl_library.h"

#include <dlfcn.h>
#include <link.h>

#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "core/error.h"
#include "core/knobs.h"

namespace ccbench {

namespace {

std::mutex g_mu;
std::string g_path;  // set_nccl_library_path(); "" = the environment or the default

template <typename F>
bool bind(void* lib, F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  return f != nullptr;
}

// Opens `path` and looks up every entry point; the reason in `why` when it cannot.
std::unique_ptr<NcclApi> load(const std::string& path, std::string* why) {
  void* lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    *why = fmt::format("{} (set CCBENCH_NCCL_LIBRARY or --nccl-library to an NCCL library)", dlerror());
    return nullptr;
  }
  auto a = std::make_unique<NcclApi>();
  bool ok = bind(lib, a->GetVersion, "ncclGetVersion") && bind(lib, a->GetErrorString, "ncclGetErrorString") &&
            bind(lib, a->GetLastError, "ncclGetLastError") && bind(lib, a->GetUniqueId, "ncclGetUniqueId") &&
            bind(lib, a->CommInitRankConfig, "ncclCommInitRankConfig") &&
            bind(lib, a->CommFinalize, "ncclCommFinalize") && bind(lib, a->CommDestroy, "ncclCommDestroy") &&
            bind(lib, a->CommAbort, "ncclCommAbort") && bind(lib, a->CommGetAsyncError, "ncclCommGetAsyncError") &&
            bind(lib, a->AllReduce, "ncclAllReduce") && bind(lib, a->AllGather, "ncclAllGather") &&
            bind(lib, a->ReduceScatter, "ncclReduceScatter") && bind(lib, a->Broadcast, "ncclBroadcast") &&
            bind(lib, a->Reduce, "ncclReduce") && bind(lib, a->Send, "ncclSend") && bind(lib, a->Recv, "ncclRecv") &&
            bind(lib, a->GroupStart, "ncclGroupStart") && bind(lib, a->GroupEnd, "ncclGroupEnd");
  if (!ok) {
    *why = fmt::format("{} is not an NCCL this ccbench can use: {} is missing (NCCL 2.14 or newer needed)", path,
                       dlerror());
    dlclose(lib);
    return nullptr;
  }
  bind(lib, a->MemAlloc, "ncclMemAlloc");
  bind(lib, a->MemFree, "ncclMemFree");
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
  bind(lib, a->CommWindowRegister, "ncclCommWindowRegister");
  bind(lib, a->CommWindowDeregister, "ncclCommWindowDeregister");
#endif
  a->GetVersion(&a->version);
  link_map* map = nullptr;
  a->path = dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name ? map->l_name : path;
  return a;
}

}  // namespace

std::string NcclApi::version_text() const {
  return fmt::format("{}.{}.{}", version / 10000, (version % 10000) / 100, version % 100);
}

std::string nccl_library_path() {
  std::lock_guard lock(g_mu);
  if (!g_path.empty()) return g_path;
  return env_text_or_default(Knob::nccl_library);
}

void set_nccl_library_path(const std::string& path) {
  std::lock_guard lock(g_mu);
  g_path = path;
}

const NcclApi* nccl_api(std::string* why) {
  static std::once_flag once;
  static std::unique_ptr<NcclApi> api;
  static std::string failure;
  std::call_once(once, [] { api = load(nccl_library_path(), &failure); });
  if (!api && why) *why = "NCCL could not be loaded: " + failure;
  return api.get();
}

const NcclApi& nccl() {
  std::string why;
  const NcclApi* a = nccl_api(&why);
  if (!a) throw Error(ExitCode::precondition, why);
  return *a;
}

ncclResult_t check_nccl(ncclResult_t rc, const char* call, const char* file, int line) {
  if (rc != ncclSuccess && rc != ncclInProgress)
    fail(ExitCode::runtime, "NCCL error {} ({}) in {} at {}:{}", static_cast<int>(rc), nccl().GetErrorString(rc), call,
         file, line);
  return rc;
}

}  // namespace ccbench
