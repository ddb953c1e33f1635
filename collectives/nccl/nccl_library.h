#pragma once
// NCCL loaded at run time with dlopen, as NVML is (core/nvml_library.h): one ccbench binary starts
// on a CPU-only node, where no libnccl exists, and a launch can load another NCCL than the one it
// was built against (CCBENCH_NCCL_LIBRARY=PATH or --nccl-library PATH), so two NCCL versions are
// compared launch by launch on the same buffers. <nccl.h> is needed at build time only, for the
// types, constants and the entry points' signatures (decltype keeps them checked).
//
// Loaded once per process on first use, never unloaded. Required entry points missing make the
// library unusable (with the reason); those of newer NCCL (symmetric windows, ncclMemAlloc:
// 2.19-2.27) may be null, and their users say so.
#include <nccl.h>

#include <string>

namespace ccbench {

struct NcclApi {
  std::string path;  // the file dlopen loaded, as the dynamic linker resolved it
  int version = 0;   // ncclGetVersion: major*10000 + minor*100 + patch (NCCL >= 2.9)
  decltype(&ncclGetVersion) GetVersion = nullptr;
  decltype(&ncclGetErrorString) GetErrorString = nullptr;
  decltype(&ncclGetLastError) GetLastError = nullptr;
  decltype(&ncclGetUniqueId) GetUniqueId = nullptr;
  decltype(&ncclCommInitRankConfig) CommInitRankConfig = nullptr;
  decltype(&ncclCommFinalize) CommFinalize = nullptr;
  decltype(&ncclCommDestroy) CommDestroy = nullptr;
  decltype(&ncclCommAbort) CommAbort = nullptr;
  decltype(&ncclCommGetAsyncError) CommGetAsyncError = nullptr;
  decltype(&ncclAllReduce) AllReduce = nullptr;
  decltype(&ncclAllGather) AllGather = nullptr;
  decltype(&ncclReduceScatter) ReduceScatter = nullptr;
  decltype(&ncclBroadcast) Broadcast = nullptr;
  decltype(&ncclReduce) Reduce = nullptr;
  decltype(&ncclSend) Send = nullptr;
  decltype(&ncclRecv) Recv = nullptr;
  decltype(&ncclGroupStart) GroupStart = nullptr;
  decltype(&ncclGroupEnd) GroupEnd = nullptr;
  // Optional (null in older NCCL).
  decltype(&ncclMemAlloc) MemAlloc = nullptr;
  decltype(&ncclMemFree) MemFree = nullptr;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 27, 0)
  decltype(&ncclCommWindowRegister) CommWindowRegister = nullptr;
  decltype(&ncclCommWindowDeregister) CommWindowDeregister = nullptr;
#endif
  // "2.28.3".
  std::string version_text() const;
};

// The library this process loads: CCBENCH_NCCL_LIBRARY, else "libnccl.so.2" (the dynamic linker's
// search path). Set by --nccl-library before MPI starts (set_nccl_library_path).
std::string nccl_library_path();
void set_nccl_library_path(const std::string& path);

// The process's NCCL, loaded on first call; nullptr when it cannot be, with `why` (if given) saying
// why: "<path>: cannot open shared object file ... (set CCBENCH_NCCL_LIBRARY or --nccl-library)",
// "<path> is not NCCL: no ncclCommInitRankConfig". Thread-safe.
const NcclApi* nccl_api(std::string* why = nullptr);

// nccl_api(), or Error(precondition) with the reason.
const NcclApi& nccl();

}  // namespace ccbench

// An NCCL call's result once checked: ncclSuccess or ncclInProgress (a non-blocking communicator's
// call goes on in the background); any other result is Error(runtime) with the call's text, NCCL's
// error string and file:line, as NCCL's NCCLCHECK.
namespace ccbench {
ncclResult_t check_nccl(ncclResult_t rc, const char* call, const char* file, int line);
}  // namespace ccbench
#define CCB_NCCL(call) ::ccbench::check_nccl((call), #call, __FILE__, __LINE__)
