#include "collectives/gpu/cuda_resources.h"

#include <atomic>
#include <cstring>

#include "core/error.h"

namespace ccbench::gpu {

DeviceCounters::DeviceCounters(std::size_t n) {
  CCB_CUDA(cudaMalloc(&ptr_, n * sizeof(std::uint64_t)));
  CCB_CUDA(cudaMemset(ptr_, 0, n * sizeof(std::uint64_t)));
}

DeviceCounters::~DeviceCounters() { cudaFree(ptr_); }

DeviceErrors::DeviceErrors() {
  CCB_CUDA(cudaHostAlloc(&host_, sizeof(DeviceError), cudaHostAllocMapped));
  std::memset(host_, 0, sizeof(DeviceError));
  CCB_CUDA(cudaHostGetDevicePointer(reinterpret_cast<void**>(&dev_), host_, 0));
}

DeviceErrors::~DeviceErrors() { cudaFreeHost(host_); }

void DeviceErrors::check(const char* impl, int rank, std::chrono::milliseconds timeout) const {
  if (*reinterpret_cast<volatile int*>(&host_->code) == 0) return;
  std::atomic_thread_fence(std::memory_order_acquire);
  DeviceError e;
  std::memcpy(&e, host_, sizeof e);
  const char* what = e.what == kWaitData      ? "data"
                     : e.what == kWaitSlot    ? "a free slot"
                     : e.what == kWaitBarrier ? "a barrier"
                                              : "a round";
  fail(ExitCode::timeout,
       "{} kernel on rank {}: block {} waited more than {:.1f} s for {} from rank {} (flag {} of {}): a peer is "
       "stuck or gone",
       impl, rank, e.block, timeout.count() / 1000.0, what, e.peer, e.seen, e.target);
}

}  // namespace ccbench::gpu
