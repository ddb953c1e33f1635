#include "collectives/nccl/nccl_profiler.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <vector>

#include <fmt/format.h>
#include <nccl.h>

namespace ccbench {

namespace nccl_plugin_abi {

// The parts of NCCL's profiler plugin ABI, version 4, that ccbench reads. Layouts follow NCCL's
// ext-profiler documentation: an event descriptor is {type, parent, rank, union of per-type
// fields}; only the collective member is read here.
constexpr int kEventColl = 1 << 1;

struct EventDescrV4 {
  std::uint8_t type;
  void* parent;
  int rank;
  union {
    struct {
      std::uint64_t seq_number;
      const char* func;
      const void* send;
      void* recv;
      std::size_t count;
      int root;
      const char* datatype;
      std::uint8_t channels;
      std::uint8_t warps;
      const char* algo;
      const char* proto;
    } coll;
  };
};

struct ProfilerV4 {
  const char* name;
  ncclResult_t (*init)(void** context, int* activation_mask, const char* comm_name, std::uint64_t comm_hash, int nodes,
                       int nranks, int rank, void* logger);
  ncclResult_t (*start_event)(void* context, void** handle, EventDescrV4* descr);
  ncclResult_t (*stop_event)(void* handle);
  ncclResult_t (*record_event_state)(void* handle, int state, void* args);
  ncclResult_t (*finalize)(void* context);
};

}  // namespace nccl_plugin_abi

namespace {

using nccl_plugin_abi::EventDescrV4;
using nccl_plugin_abi::kEventColl;

// NCCL hands every communicator the same process-wide mask; it is read atomically on each call.
std::atomic<int*> activation_mask{nullptr};
std::mutex choices_mutex;
std::vector<std::string> choices;  // distinct choices seen since arm

void set_mask(int value) {
  if (int* m = activation_mask.load()) __atomic_store_n(m, value, __ATOMIC_RELAXED);
}

ncclResult_t plugin_init(void** context, int* mask, const char*, std::uint64_t, int, int, int, void*) {
  *context = nullptr;
  *mask = 0;
  activation_mask.store(mask);
  return ncclSuccess;
}

ncclResult_t plugin_start_event(void*, void** handle, EventDescrV4* d) {
  *handle = nullptr;  // no stop events wanted
  if (d->type != kEventColl) return ncclSuccess;
  std::string c = fmt::format("{}/{} {}ch", d->coll.algo ? d->coll.algo : "?", d->coll.proto ? d->coll.proto : "?",
                              static_cast<int>(d->coll.channels));
  std::lock_guard lock(choices_mutex);
  for (const auto& seen : choices)
    if (seen == c) return ncclSuccess;
  choices.push_back(std::move(c));
  return ncclSuccess;
}

ncclResult_t plugin_stop_event(void*) { return ncclSuccess; }
ncclResult_t plugin_record_event_state(void*, int, void*) { return ncclSuccess; }
ncclResult_t plugin_finalize(void*) { return ncclSuccess; }

}  // namespace

void enable_nccl_choice_probe() { setenv("NCCL_PROFILER_PLUGIN", "STATIC_PLUGIN", /*overwrite=*/0); }

void arm_nccl_choice_probe() {
  {
    std::lock_guard lock(choices_mutex);
    choices.clear();
  }
  set_mask(kEventColl);
}

std::string take_nccl_choice() {
  set_mask(0);
  std::lock_guard lock(choices_mutex);
  std::string out;
  for (const auto& c : choices) out += (out.empty() ? "" : "+") + c;
  choices.clear();
  return out;
}

}  // namespace ccbench

// Found by NCCL with dlsym() in the executable (NCCL_PROFILER_PLUGIN=STATIC_PLUGIN); the link
// step exports this one symbol (harness/CMakeLists.txt).
extern "C" {
__attribute__((visibility("default")))
ccbench::nccl_plugin_abi::ProfilerV4 ncclProfiler_v4 = {"ccbench-choice",
                                                        ccbench::plugin_init,
                                                        ccbench::plugin_start_event,
                                                        ccbench::plugin_stop_event,
                                                        ccbench::plugin_record_event_state,
                                                        ccbench::plugin_finalize};
}
